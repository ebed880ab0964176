// mma-chain-latency: cycles per mma.sync.m16n8k16 (bf16, fp32 accumulators) when each one adds
// into the previous one's result, as a smallm warp's chain of sums does (64 against 16 MMAs in one
// warp), and the SM clock against the global timer. docs/smallm-notes.md, session 19.
// Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a bench/mma-chain-latency.cu -o mma-chain-latency
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>

#include "bench-cuda.cuh"
__device__ __forceinline__ void mma(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0, uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
template <int N>
__global__ void chain(float *out, long long *cyc, uint32_t s) {
  float d[4] = {0, 0, 0, 0};
  uint32_t a = s * threadIdx.x;
  long long t0 = clock64();
#pragma unroll
  for (int i = 0; i < N; i++) mma(d, a, a + 1, a + 2, a + 3, a + 4, a + 5);
  asm volatile("" : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]));
  float v = d[0] + d[1] + d[2] + d[3];
  long long t1 = clock64();
  out[threadIdx.x] = v;
  if (threadIdx.x == 0) cyc[0] = t1 - t0;
}
int main() {
  float *o; long long *c;
  cudaMalloc(&o, 4096); cudaMallocManaged(&c, 64);
  for (int rep = 0; rep < 3; rep++) {
    chain<16><<<1, 32>>>(o, c, 0x3f803f80u); cudaDeviceSynchronize(); long long c16 = c[0];
    chain<64><<<1, 32>>>(o, c, 0x3f803f80u); cudaDeviceSynchronize(); long long c64 = c[0];
    printf("16 mma: %lld cycles, 64 mma: %lld cycles -> %.1f cycles per dependent mma\n", c16, c64, (c64 - c16) / 48.0);
  }
  std::printf("clock: %.3f GHz (clock64 against the global timer)\n", bench_sm_ghz());
  return 0;
}
