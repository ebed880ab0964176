/* smallm fold kernel (sm_90, M <= 8): the split's K slices folded into one block. A block holds
 * 16 weight rows over all of K (one bulk copy per row at entry, before griddepcontrol.wait; every
 * slice but the last ends at a sub-chunk's end, so each lies where the other kernels would put
 * it, its sub-chunks whole) and its 8 warps sum all ksplit x kwarps chains of
 * those rows (CPW per warp, interleaved), each chain warp group h of slice s as the other
 * kernels sum it (same k permutation, same MMA order). After the wait every lane loads all of its
 * x fragments at once, then runs its chains; the chains' sums meet in shared memory and each
 * output adds them in the library's tree (a slice's groups as its block sum, then the slices in
 * rank order as the cluster sum), so the bits are every other kernel's, with N / 16 blocks and
 * no cluster (bf16fp32__smallm_use_fold).
 *
 * Why: at 512x4096 under programmatic dependent launch the cluster sum and its barriers are a
 * large part of a call's span after the wait. On the H200 (docs/smallm-notes.md, session 55) the
 * fold took the bench's chain of such calls at M = 1 from 2.56 to 2.25 us, and the dsv4-flash
 * decode step at batch 1 / 2 / 3 / 4 from 345.2 / 363.4 / 368.7 / 374.7 to 335.0 / 356.1 /
 * 361.4 / 369.2 us. The next call's launch at this call's entry was faster alone and slower in
 * the step (a patched build). Loading x's fragments a few sub-chunks at a time (one trip to L2
 * each) and a copy per row and slice cost it 0.43 us there, weight-fragment loads behind a
 * branch about 0.7 more. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "smallm-cluster-sum.cuh"
#include "smallm-launch-config.cuh"
#include "smallm-launch.h"
#include "smallm-tiles.cuh"

namespace {

constexpr int ROWS = BF16FP32__SMALLM_FOLD_ROWS;
constexpr int RS = ROWS + 4; /* a token's rows of chain sums, padded as the other kernels pad */

struct FArgs {
  const uint16_t *x, *w;
  float *out;
  long long ldx, ldw, ldo;
  int m, ksplit, kwarps;
  bf16fp32__smallm_slices slices;
  int pitch; /* bytes per row in shared memory */
  int pdl;
};

/* CPW chains per warp (2 or 4), XN: the most sub-chunks of any chain (4 or 8). */
template <int CPW, int XN>
__global__ void __launch_bounds__(BF16FP32__SMALLM_THREADS, 1)
    smallm_fold_kernel(const __grid_constant__ FArgs a) {
  extern __shared__ __align__(128) unsigned char smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int n0 = static_cast<int>(blockIdx.y) * ROWS;
  const uint32_t bar = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  constexpr int BARS = BF16FP32__SMALLM_SHARE_BARS;
  const int k = a.slices.k[a.ksplit];
  if (threadIdx.x == 0) {
    bf16fp32__bar_init(bar);
    bf16fp32__bar_init_fence();
    bf16fp32__bar_expect(bar, ROWS * 2 * k);
  }
  /* K ending inside a sub-chunk: the rest of it reads as zeros. The copies write other bytes of
   * the rows. */
  const int tail = (32 - (k & 31)) & 31;
  if (tail)
    for (int r = threadIdx.x; r < ROWS; r += blockDim.x)
      for (int b = 2 * k; b < 2 * (k + tail); b += 16)
        *reinterpret_cast<uint4 *>(smem + BARS + r * a.pitch + b) = make_uint4(0u, 0u, 0u, 0u);
  __syncthreads();
  /* the weights before the wait (they do not depend on the previous kernel), the copies spread
   * over the warps as the share kernel's (row r by lane r / 8 of warp r % 8); x's rows requested
   * into L2, each by one block */
  constexpr int CW = BF16FP32__SMALLM_WARPS;
  for (int r = warp + CW * lane; r < ROWS; r += 32 * CW)
    bf16fp32__bulk_copy(bar + BARS + r * a.pitch, a.w + (n0 + r) * a.ldw, 2 * k, bar);
  if (warp == 1 && a.pdl)
    for (int r = lane; r < a.m; r += 32)
      if (r % gridDim.y == blockIdx.y) bf16fp32__bulk_to_l2(a.x + r * a.ldx, 2 * k);
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");

  /* the warp's chains: c = warp * CPW + i is group c % kwarps of slice c / kwarps */
  const int lg = bf16fp32__smallm_kwarps_log2(a.kwarps);
  int j0[CPW], j1[CPW], kb[CPW], len[CPW];
#pragma unroll
  for (int i = 0; i < CPW; i++) {
    const int c = warp * CPW + i, s = c >> lg;
    kb[i] = a.slices.k[s], len[i] = a.slices.k[s + 1] - kb[i];
    bf16fp32__smallm_chain((len[i] + 31) >> 5, c & (a.kwarps - 1), a.kwarps, &j0[i], &j1[i]);
  }
  /* lane (g, t): 16 bytes at k = 8t of rows g and g + 8 and of token g in each sub-chunk, the
   * decode kernel's fragments; tokens past M read token M - 1, whose sums are never stored;
   * columns past the slice read as zeros */
  uint4 xv[CPW][XN];
  const uint16_t *xg = a.x + min(g, a.m - 1) * a.ldx + 8 * t;
#pragma unroll
  for (int i = 0; i < CPW; i++)
#pragma unroll
    for (int q = 0; q < XN; q++) {
      const int col = 32 * (j0[i] + q);
      xv[i][q] = j0[i] + q < j1[i] && col + 8 * t < len[i]
                     ? *reinterpret_cast<const uint4 *>(xg + kb[i] + col)
                     : make_uint4(0u, 0u, 0u, 0u);
    }
  float acc[CPW][1][4]; /* one token tile per chain */
#pragma unroll
  for (int i = 0; i < CPW; i++) acc[i][0][0] = acc[i][0][1] = acc[i][0][2] = acc[i][0][3] = 0.0f;
  const unsigned char *wr = smem + BARS + g * a.pitch + 16 * t;
  bf16fp32__bar_wait(bar, 0);
#pragma unroll
  for (int q = 0; q < XN; q++)
#pragma unroll
    for (int i = 0; i < CPW; i++)
      if (j0[i] + q < j1[i]) {
        const unsigned char *p = wr + 2 * kb[i] + 64 * (j0[i] + q);
        bf16fp32__smallm_mma_sub(acc[i][0], bf16fp32__lds16(p),
                                 bf16fp32__lds16(p + 8 * a.pitch), xv[i][q]);
      }
  /* the chains' sums over the rows once every warp is done with them, chain c as warp group c
   * of the other kernels (part[c][token][row]) */
  __syncthreads();
  float *part = reinterpret_cast<float *>(smem + BARS);
#pragma unroll
  for (int i = 0; i < CPW; i++)
    bf16fp32__smallm_store_warp<1>(acc[i], part, warp * CPW + i, 0, a.m, 8, RS);
  __syncthreads();
  /* each unit (4 rows of one token): a slice's groups as its block sum adds them, then the
   * slices in rank order as the cluster sum adds the block sums */
  constexpr int R4 = ROWS / 4, GSTRIDE = 8 * RS;
  for (int u = threadIdx.x; u < R4 * a.m; u += blockDim.x) {
    const int tok = u / R4, r4 = u % R4;
    const float *p = part + tok * RS + 4 * r4;
    float4 sum = bf16fp32__smallm_unit_sum<CW>(p, GSTRIDE, a.kwarps);
    for (int s = 1; s < a.ksplit; s++)
      bf16fp32__smallm_add4(sum, bf16fp32__smallm_unit_sum<CW>(p + s * a.kwarps * GSTRIDE,
                                                               GSTRIDE, a.kwarps));
    *reinterpret_cast<float4 *>(a.out + tok * a.ldo + n0 + 4 * r4) = sum;
  }
}

using FoldKernel = void (*)(FArgs);
FoldKernel fold_kernel(int cpw, int xn) {
  return cpw == 2 ? (xn == 4 ? smallm_fold_kernel<2, 4> : smallm_fold_kernel<2, 8>)
                  : (xn == 4 ? smallm_fold_kernel<4, 4> : smallm_fold_kernel<4, 8>);
}

}  // namespace

extern "C" int bf16fp32__smallm_fold_load(size_t smem_limit) {
  return static_cast<int>(bf16fp32__smallm_allow_smem(smem_limit, fold_kernel(2, 4),
                                                      fold_kernel(2, 8), fold_kernel(4, 4),
                                                      fold_kernel(4, 8)));
}

extern "C" int bf16fp32__smallm_fold_launch(const bf16fp32__smallm_config *c, int64_t m, int64_t k,
                                            const uint16_t *x, int64_t ldx, const uint16_t *w,
                                            int64_t ldw, float *out, int64_t ldo, void *stream,
                                            int use_pdl) {
  FArgs a;
  bf16fp32__smallm_fill_operands(a, x, ldx, w, ldw, out, ldo);
  a.m = static_cast<int>(m), a.ksplit = c->split.ksplit, a.kwarps = c->split.kwarps;
  bf16fp32__smallm_fill_slices(k, a.ksplit, &a.slices);
  a.pitch = c->fold_pitch;
  a.pdl = use_pdl != 0;
  cudaLaunchAttribute attr[2];
  const cudaLaunchConfig_t cfg = bf16fp32__smallm_launch_config(
      c, c->fold_smem, static_cast<cudaStream_t>(stream), use_pdl, attr);
  const int cpw = c->split.ksplit * c->split.kwarps / BF16FP32__SMALLM_WARPS;
  return static_cast<int>(cudaLaunchKernelEx(&cfg, fold_kernel(cpw, c->fold_xn), a));
}
