// mma-rate: how many cycles one mma.sync.m16n8k16 (bf16, fp32 accumulators) costs a scheduler
// when 8 warps per SM (two per scheduler, as in the smallm kernels) keep MT independent
// accumulators each, on every SM. Four forms, each a warp's loop of S sub-chunks (2 MT MMAs per
// sub-chunk per row tile, the stream kernel's order):
//   regs  the operands in registers (the tensor pipe alone);
//   w     the two weight fragments read from shared memory per sub-chunk, x in registers;
//   wx    the weight fragments and MT token fragments read per sub-chunk, as the stream kernel
//         reads a stage (192-byte rows, 16 weight rows and 8 MT token rows per warp);
//   wx32  the same with 32 weight rows per warp (4 MT MMAs per sub-chunk: each token fragment
//         feeds two row tiles).
// "+copy": lane 0 of each warp also brings 9,216 bytes per stage of 3 sub-chunks into the
// warp's shared memory by bulk copies from L2 (two or three in flight; each warp its own bytes,
// or all of them the same), what a stage of the stream kernel at 2048x7168 M = 64 brings per
// warp (32 weight and 64 token rows of 192 bytes, one ring per two warps). They land over the stage the warp reads: the values only feed sums that are
// thrown away; the point is the shared memory's bandwidth, which the copies share. The copies
// alone are also timed on fewer SMs: a limit per SM stays, one of the whole chip shows as more
// per SM. Figures: docs/smallm-notes.md, session 34.
// Cycles per warp's loop (clock64, median over the grid's warps), then per MMA per scheduler.
// Build: nvcc -O3 -std=c++17 -Isrc -gencode=arch=compute_90a,code=sm_90a bench/mma-rate.cu -o mma-rate
#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <vector>
#include <cuda_runtime.h>
#include "backends/smallm/smallm-fragments.cuh"
#include "bench-cuda.cuh"
#include "backends/smallm/smallm-tiles.cuh"

constexpr int PITCH = 192, SUBS = 3, WARPS = 8, S = 48, COPY = 9216;

/* A warp's shared memory: its stage, or the two copies' slots where they are larger. */
template <int MT, int FORM>
__host__ __device__ constexpr int region() {
  return (16 * (FORM == 3 ? 2 : 1) + 8 * MT) * PITCH > 3 * COPY ? (16 * (FORM == 3 ? 2 : 1) + 8 * MT) * PITCH
                                                                 : 3 * COPY;
}

/* FORM: 0 regs, 1 w, 2 wx, 3 wx32; TL: row tiles per warp (2 for wx32); CP: copies in flight
 * per warp (0: none) */
template <int MT, int FORM, int CP>
__global__ void __launch_bounds__(256, 1) rate(float *out, long long *cyc, const uint4 *src, int shared) {
  constexpr int TL = FORM == 3 ? 2 : 1;
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ __align__(8) uint64_t bars[WARPS][3];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int stage = region<MT, FORM>(); /* a warp's shared memory */
  for (int i = threadIdx.x; i < WARPS * stage / 4; i += blockDim.x)
    reinterpret_cast<uint32_t *>(smem)[i] = 0x3f803f80u ^ (i * 2654435761u & 0x00ff00ffu);
  const uint32_t bar0 = static_cast<uint32_t>(__cvta_generic_to_shared(&bars[warp][0]));
  if constexpr (CP > 0) if (lane == 0) {
    for (int c = 0; c < CP; c++) bf16fp32__bar_init(bar0 + 8 * c);
    bf16fp32__bar_init_fence();
  }
  __syncthreads();
  const unsigned char *st = smem + warp * stage;
  const uint32_t st_s = static_cast<uint32_t>(__cvta_generic_to_shared(st));
  const int arow = g * PITCH + 16 * t, arow8 = arow + 8 * PITCH;
  int brow[MT];
#pragma unroll
  for (int j = 0; j < MT; j++) brow[j] = (16 * TL + 8 * j + g) * PITCH + 16 * t;
  float acc[TL][MT][4];
#pragma unroll
  for (int b = 0; b < TL; b++)
#pragma unroll
    for (int j = 0; j < MT; j++) acc[b][j][0] = acc[b][j][1] = acc[b][j][2] = acc[b][j][3] = 0.0f;
  uint4 r0[TL], r8[TL];
#pragma unroll
  for (int b = 0; b < TL; b++) {
    r0[b] = *reinterpret_cast<const uint4 *>(st + arow + 16 * b * PITCH);
    r8[b] = *reinterpret_cast<const uint4 *>(st + arow8 + 16 * b * PITCH);
  }
  uint4 b[MT];
#pragma unroll
  for (int j = 0; j < MT; j++) b[j] = *reinterpret_cast<const uint4 *>(st + brow[j]);
  __syncwarp();
  const long long t0 = clock64();
  for (int q = 0; q < S / SUBS; q++) {
    if constexpr (CP > 0) if (lane == 0) { /* stage q's copy into slot q % CP, once the one CP stages back is in */
      const uint32_t bar = bar0 + 8 * (q % CP);
      if (q >= CP) bf16fp32__bar_wait(bar, (q / CP - 1) & 1);
      bf16fp32__bar_expect(bar, COPY);
      bf16fp32__bulk_copy(st_s + (q % CP) * COPY, src + (shared ? 0 : (blockIdx.x * WARPS + warp) * (COPY / 16)),
                          COPY, bar);
    }
#pragma unroll
    for (int p = 0; p < SUBS; p++) {
      if (FORM >= 1)
#pragma unroll
        for (int b = 0; b < TL; b++) {
          r0[b] = *reinterpret_cast<const uint4 *>(st + arow + 16 * b * PITCH + 64 * p);
          r8[b] = *reinterpret_cast<const uint4 *>(st + arow8 + 16 * b * PITCH + 64 * p);
        }
      if (FORM >= 2)
#pragma unroll
        for (int j = 0; j < MT; j++) b[j] = *reinterpret_cast<const uint4 *>(st + brow[j] + 64 * p);
#pragma unroll
      for (int j = 0; j < MT; j++)
#pragma unroll
        for (int bt = 0; bt < TL; bt++) bf16fp32__smallm_mma_sub(acc[bt][j], r0[bt], r8[bt], b[j]);
    }
    if (FORM == 0) /* a new operand each stage, so that the loop is not folded */
      r0[0].x ^= static_cast<uint32_t>(q), b[0].y ^= static_cast<uint32_t>(q);
    __syncwarp();
  }
  if constexpr (CP > 0) if (lane == 0) /* the last copies in before the warp leaves */
    for (int q = S / SUBS - CP; q < S / SUBS; q++) bf16fp32__bar_wait(bar0 + 8 * (q % CP), (q / CP) & 1);
  float v = 0.0f;
#pragma unroll
  for (int bt = 0; bt < TL; bt++)
#pragma unroll
    for (int j = 0; j < MT; j++) v += acc[bt][j][0] + acc[bt][j][1] + acc[bt][j][2] + acc[bt][j][3];
  const long long t1 = clock64();
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
  if (lane == 0) cyc[blockIdx.x * WARPS + warp] = t1 - t0;
}

template <int MT, int FORM, int CP>
static void run(const char *form, int sms, float *out, long long *cyc, const uint4 *src,
                int shared = 0) {
  constexpr int TL = FORM == 3 ? 2 : 1;
  const int smem = WARPS * region<MT, FORM>();
  CK(cudaFuncSetAttribute(rate<MT, FORM, CP>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  std::vector<long long> h(sms * WARPS);
  double best = 1e30;
  for (int rep = 0; rep < 5; rep++) {
    rate<MT, FORM, CP><<<sms, 32 * WARPS, smem>>>(out, cyc, src, shared);
    CK(cudaGetLastError());
    CK(cudaMemcpy(h.data(), cyc, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    best = std::min(best, static_cast<double>(bench_median(h)));
  }
  /* 2 TL MT MMAs a sub-chunk, 2 warps a scheduler */
  const double per_sub = best / S, per_mma_sched = per_sub / (2 * TL * MT) / 2;
  printf("%-5s%-6s MT=%d: %7.0f cycles a warp's loop, %6.1f per sub-chunk, %5.2f per MMA per scheduler",
         form, CP ? "+copy" : "", MT, best, per_sub, per_mma_sched);
  if (CP) /* what the copies brought per SM per cycle, and over the grid */
    printf("; %d blocks, %d copies in flight a warp%s: %.1f B/cycle a SM, %.0f in all",
           sms, CP, shared ? ", one source for all" : "", static_cast<double>(WARPS) * COPY * (S / SUBS) / best,
           sms * static_cast<double>(WARPS) * COPY * (S / SUBS) / best);
  printf("\n");
}

template <int MT>
static void forms(int sms, float *out, long long *cyc, const uint4 *src) {
  run<MT, 0, 0>("regs", sms, out, cyc, src);
  run<MT, 1, 0>("w", sms, out, cyc, src);
  run<MT, 2, 0>("wx", sms, out, cyc, src);
  run<MT, 3, 0>("wx32", sms, out, cyc, src);
  if (MT >= 4) {
    run<MT, 0, 2>("regs", sms, out, cyc, src);
    run<MT, 2, 2>("wx", sms, out, cyc, src);
    run<MT, 3, 2>("wx32", sms, out, cyc, src);
  }
}

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float *out;
  long long *cyc;
  CK(cudaMalloc(&out, sms * 256 * sizeof(float)));
  CK(cudaMalloc(&cyc, sms * WARPS * sizeof(long long)));
  uint4 *src; /* each warp's copy source: 9 MB, L2-resident after the first run */
  CK(cudaMalloc(&src, static_cast<size_t>(sms) * WARPS * COPY));
  CK(cudaMemset(src, 0, static_cast<size_t>(sms) * WARPS * COPY));
  printf("%d blocks of %d warps, %d sub-chunks a warp\n", sms, WARPS, S);
  forms<1>(sms, out, cyc, src);
  forms<2>(sms, out, cyc, src);
  forms<4>(sms, out, cyc, src);
  forms<8>(sms, out, cyc, src);
  /* the copies alone (MMAs from registers) on fewer SMs and with more in flight: a limit per SM
   * stays, one of the whole chip's L2 shows as more per SM on fewer of them */
  for (int blocks = sms; blocks >= sms / 8; blocks /= 2) {
    run<8, 0, 2>("regs", blocks, out, cyc, src);
    run<8, 0, 3>("regs", blocks, out, cyc, src);
  }
  /* every warp copying the same 9 KB, as every block copies the same x */
  run<8, 0, 2>("regs", sms, out, cyc, src, 1);
  run<8, 0, 3>("regs", sms, out, cyc, src, 1);
  run<8, 2, 2>("wx", sms, out, cyc, src, 1);
  run<8, 3, 2>("wx32", sms, out, cyc, src, 1);
  return 0;
}
