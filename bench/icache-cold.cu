// icache-cold: does a short kernel pay for fetching its own code? The smallm kernels are 1200-3800
// SASS instructions, much of it unrolled and executed once per call, and the M > 64 probe's sum
// cost about 1.5 us more unrolled than the same loads, adds and stores should (session 29).
// Two kernels execute the same FFMAs (8 independent chains per thread, after the read below):
// "straight" as one unrolled run of I instructions (16 I bytes of code), "rolled" as a loop over
// a 64-FFMA body. Each block first reads 32 KB: of a copy rotated per call over 512 MB (cold L2,
// as the library's weights, which also evicts the code from L2) or of one copy (warm).
// Grid: 132 blocks of 128 threads. Timing: graph of 200 calls, median of 7 replays.
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a bench/icache-cold.cu -o icache-cold
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "bench-cuda.cuh"

namespace {

constexpr int BLOCKS = 132, THREADS = 128, BLOCK_BYTES = 32768;

template <int I, bool STRAIGHT>
__global__ void __launch_bounds__(THREADS) ffma_kernel(const uint4 *src, float *out) {
  const uint4 *p = src + static_cast<size_t>(blockIdx.x) * (BLOCK_BYTES / 16);
  uint32_t h = 0;
#pragma unroll
  for (int i = 0; i < BLOCK_BYTES / 16 / THREADS; i++) {
    const uint4 v = __ldcs(p + i * THREADS + threadIdx.x);
    h ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  float a[8];
#pragma unroll
  for (int j = 0; j < 8; j++) a[j] = static_cast<float>(h & 0xff) + static_cast<float>(threadIdx.x + j);
  if constexpr (STRAIGHT) {
#pragma unroll
    for (int i = 0; i < I / 8; i++)
#pragma unroll
      for (int j = 0; j < 8; j++) a[j] = fmaf(a[j], 1.0001f, 0.5f);
  } else {
#pragma unroll 1
    for (int o = 0; o < I / 64; o++)
#pragma unroll
      for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) a[j] = fmaf(a[j], 1.0001f, 0.5f);
  }
  float s = 0.0f;
#pragma unroll
  for (int j = 0; j < 8; j++) s += a[j];
  out[blockIdx.x * THREADS + threadIdx.x] = s;
}

template <int I>
void run(const std::vector<uint4 *> &copies, float *out, cudaStream_t s) {
  double t[2][2];  // [straight][cold]
  for (int straight = 0; straight < 2; straight++)
    for (int cold = 0; cold < 2; cold++) {
      auto kern = straight ? ffma_kernel<I, true> : ffma_kernel<I, false>;
      t[straight][cold] = bench_time_graph(s, 200, [&](int i) {
        const uint4 *src = copies[cold ? i % copies.size() : 0];
        kern<<<BLOCKS, THREADS, 0, s>>>(src, out);
      });
    }
  printf("%6d FFMA (%4d KB straight) | warm: rolled %6.2f us, straight %6.2f (+%.2f) | cold: rolled %6.2f, "
         "straight %6.2f (+%.2f)\n",
         I, I * 16 / 1024, t[0][0], t[1][0], t[1][0] - t[0][0], t[0][1], t[1][1], t[1][1] - t[0][1]);
}

}  // namespace

int main() {
  const size_t bytes = static_cast<size_t>(BLOCKS) * BLOCK_BYTES;
  std::vector<uint4 *> copies(static_cast<size_t>((512ull << 20) / bytes + 1));
  for (auto &c : copies) {
    CK(cudaMalloc(&c, bytes));
    CK(cudaMemset(c, 1, bytes));
  }
  float *out;
  CK(cudaMalloc(&out, BLOCKS * THREADS * sizeof(float)));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  printf("%d blocks x %d threads, %d KB read per block first (cold: %zu copies rotated)\n", BLOCKS, THREADS,
         BLOCK_BYTES / 1024, copies.size());
  run<64>(copies, out, s);
  run<512>(copies, out, s);
  run<1024>(copies, out, s);
  run<2048>(copies, out, s);
  run<4096>(copies, out, s);
  run<8192>(copies, out, s);
  for (auto c : copies) CK(cudaFree(c));
  CK(cudaFree(out));
  return 0;
}
