// tma-rate: how fast one block brings tiles into shared memory through a ring of bulk copies,
// by the form of the copy (the smallm tile kernels' ring, loads only). Each block reads 64 rows x
// KB bf16 of its own, in stages of 64 rows x 128 k (16 KB), NST stages in flight, one thread
// issuing; data cold (copies rotated over 512 MB) or warm (one copy, in L2). Timing: a graph of
// 200 calls, median of 7 replays (bench-cuda.cuh).
// Forms: 0 tensor map, no swizzle, boxes 160 wide (the kernels' 320-byte pitch); 1 no swizzle,
// boxes 128 wide; 2 128-byte swizzle, two boxes 64 wide; 3 one 1-D bulk copy per row (256 B).
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a bench/tma-rate.cu -o tma-rate
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../src/backends/smallm/smallm-tiles.cuh" /* the library's bf16fp32__tma_box; through
                                                      smallm-fragments.cuh its bulk copy and
                                                      mbarrier helpers */
#include "bench-tma.cuh"


constexpr int ROWS = 64, KS = 128;

struct Args {
  CUtensorMap map;
  const uint16_t *base;
  long long ld;
  int kb, nst, form;
  unsigned *sink;
};

__global__ void __launch_bounds__(128, 1) reader(const __grid_constant__ Args a) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const uint32_t bars = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const uint32_t ring = bars + 1024;
  const int pitch = a.form == 0 ? 320 : 256;
  const int stage_bytes = ROWS * pitch;
  const int row0 = blockIdx.x * ROWS;
  const int nstages = a.kb / KS;
  auto issue = [&](int s) {
    const uint32_t bar = bars + 8 * (s % a.nst), dst = ring + (s % a.nst) * stage_bytes;
    bf16fp32__bar_expect(bar, stage_bytes);
    const int k0 = s * KS;
    if (a.form <= 1) {
      bf16fp32__tma_box(dst, &a.map, k0, row0, bar);
    } else if (a.form == 2) {
      for (int h = 0; h < 2; h++) bf16fp32__tma_box(dst + h * ROWS * 128, &a.map, k0 + 64 * h, row0, bar);
    } else {
      for (int r = 0; r < ROWS; r++) bf16fp32__bulk_copy(dst + r * 256, a.base + (row0 + r) * a.ld + k0, 256, bar);
    }
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < a.nst; s++) bf16fp32__bar_init(bars + 8 * s);
    bf16fp32__bar_init_fence();
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (int s = 0; s < a.nst && s < nstages; s++) issue(s);
  unsigned acc = 0;
  for (int s = 0; s < nstages; s++) {
    bf16fp32__bar_wait(bars + 8 * (s % a.nst), (s / a.nst) & 1);
    acc += *reinterpret_cast<const unsigned *>(smem + 1024 + (s % a.nst) * stage_bytes + threadIdx.x * 4);
    __syncthreads();
    if (threadIdx.x == 0 && s + a.nst < nstages) issue(s + a.nst);
  }
  if (acc == 0x12345678u) a.sink[0] = acc;
}

int main() {
  const bench_encode_fn enc = bench_map_encoder();
  const size_t pool_bytes = 512ull << 20;
  uint16_t *pool;
  unsigned *sink;
  CK(cudaMalloc(&pool, pool_bytes));
  CK(cudaMalloc(&sink, 4));
  CK(cudaMemset(pool, 0x3c, pool_bytes));
  CK(cudaFuncSetAttribute(reader, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  printf("us per call (and GB/s per block): blocks KB NST | form0 none/160 | form1 none/128 | form2 sw128/64x2 | form3 1-D rows\n");
  for (int warm = 0; warm < 2; warm++)
    for (int blocks : {32, 128})
      for (int kb : {512, 2048})
        for (int nst : {2, 4, 8}) {
          const long long ld = kb;
          const size_t copy_bytes = (size_t)blocks * ROWS * kb * 2;
          const int copies = warm ? 1 : (int)(pool_bytes / copy_bytes);
          printf("%s %4d %5d %d |", warm ? "warm" : "cold", blocks, kb, nst);
          for (int form = 0; form < 4; form++) {
            const int pitch = form == 0 ? 320 : 256;
            if (1024 + nst * ROWS * pitch > 200 * 1024) { printf("      -       |"); continue; }
            std::vector<Args> args(copies);
            for (int c = 0; c < copies; c++) {
              Args &a = args[c];
              a.base = pool + (size_t)c * copy_bytes / 2;
              a.ld = ld, a.kb = kb, a.nst = nst, a.form = form, a.sink = sink;
              const cuuint64_t dim[2] = {(cuuint64_t)kb, (cuuint64_t)blocks * ROWS};
              const cuuint64_t stride[1] = {(cuuint64_t)ld * 2};
              const cuuint32_t box[2] = {form == 0 ? 160u : form == 1 ? 128u : 64u, (cuuint32_t)ROWS};
              const cuuint32_t es[2] = {1, 1};
              if (form <= 2 &&
                  enc(&a.map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, (void *)a.base, dim, stride, box, es,
                      CU_TENSOR_MAP_INTERLEAVE_NONE, form == 2 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                      CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
                printf("encode failed\n");
                return 2;
              }
            }
            const int smem = 1024 + nst * ROWS * pitch;
            const int calls = 200;
            for (int i = 0; i < 20; i++) reader<<<blocks, 128, smem, st>>>(args[i % copies]);
            const double us = bench_time_graph(st, calls, [&](int i) {
              reader<<<blocks, 128, smem, st>>>(args[i % copies]);
            });
            printf(" %6.2f (%4.0f) |", us, ROWS * kb * 2 / (us * 1000.0));
          }
          printf("\n");
          fflush(stdout);
        }
  return 0;
}
