/* smallm wide kernel (sm_90, M > 64): the same sums as smallm-kernel.cu and smallm-decode.cu
 * (same split, k permutation, MMA order and reduction tree), computed by output tiles. A block
 * owns `br` weight rows times `bt` tokens over the K slice of its cluster rank; one thread streams
 * weight and x tiles into a ring of shared-memory buffers with tensor-map bulk copies (TMA, rows
 * of 320 or 448 bytes for stages of 4, 5 or 7 sub-chunks, zeros past the matrix edges), and each
 * warp keeps, for its 32-row tile, the warp-group chain in progress and the block sum of the
 * chains closed before it in registers; the S block sums are then added in rank order
 * (smallm-cluster-sum.cuh). With one K slice, a cluster of blocks may share a tile, each summing
 * some of the chains (bf16fp32__smallm_use_groups). */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "smallm-launch-config.cuh"
#include "smallm-launch.h"
#include "smallm-tiles.cuh"
#include "smallm-trace.cuh"

namespace {

/* Ring of NST buffers of G sub-chunks each (smallm-tiles.cuh). */
constexpr int NST = BF16FP32__SMALLM_WIDE_STAGES;

using WArgs = bf16fp32__smallm_tile_args;

/* Token tiles (8 tokens) per warp: WK chains of 2 x TT accumulator tiles stay in registers. */
template <int WK>
struct Tiles {
  static constexpr int TT = BF16FP32__SMALLM_WIDE_WARP_TOKENS(WK) / 8;
};

/* Block (rank, token block, row block). The slice's sub-chunks arrive in k order; each goes to
 * the chain whose range holds it (bf16fp32__smallm_chain), whose sum is built exactly as one
 * warp group of the other kernels builds it (zero start, increasing order, two MMAs per
 * sub-chunk). The chains' ranges are contiguous, so they arrive one after another and the
 * block sum ((chain 0 + chain 1) + chain 2) + ..., empty chains included (zeros), as the other
 * kernels add their warp groups, is kept as the chains close: two sets of accumulators.
 * GROUPS: the block is one rank of a cluster sharing the tile, and sums only its group's
 * chains (bf16fp32__smallm_use_groups). G: sub-chunks per stage (4, 5 or 7). */
template <int WK, bool GROUPS, int G>
__global__ void __launch_bounds__(256, 1) smallm_wide_kernel(const __grid_constant__ WArgs a) {
  constexpr int TT = Tiles<WK>::TT;
  constexpr int PITCH = BF16FP32__SMALLM_TILE_PITCH(G);
  extern __shared__ __align__(128) unsigned char smem[];
  const int tid = threadIdx.x;
  const int lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int wr = warp / a.wt, wc = warp - wr * a.wt; /* the warp's 32 rows and 8 TT tokens */
  BF16FP32__SMALLM_STAMP(0);
  const bf16fp32__smallm_tile_block<NST, G> blk(&a, smem);
  blk.start();
  BF16FP32__SMALLM_STAMP(1);

  /* cur: the chain in progress; sum: the block sum of the chains closed before it */
  float cur[2][TT][4], sum[2][TT][4];
#pragma unroll
  for (int i = 0; i < 2; i++)
#pragma unroll
    for (int j = 0; j < TT; j++)
#pragma unroll
      for (int e = 0; e < 4; e++) cur[i][j][e] = 0.0f, sum[i][j][e] = BF16FP32__SMALLM_SUM_START;
  /* The warp's tile of v into part[token][row] (blk.sums() layout). */
  const int rs = blk.sums_pitch();
  auto put = [&](const float (&v)[2][TT][4], float *part) {
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
      for (int j = 0; j < TT; j++) {
        float *p = part + (8 * TT * wc + 8 * j + 2 * t) * rs + 32 * wr + 16 * i + g;
        p[0] = v[i][j][0];
        p[rs] = v[i][j][1];
        p[8] = v[i][j][2];
        p[rs + 8] = v[i][j][3];
      }
  };
  /* A group's rank 0 adds its chains as one block would; the other ranks keep each chain's sum
   * apart, for the cluster to add in chain order (bf16fp32__smallm_cluster_pull). */
  const bool apart = GROUPS && blk.rank > 0;
  const int chains = GROUPS ? WK / a.groups : WK;
  int closed = 0;
  auto close_chain = [&]() {
    if (apart) {
      put(cur, blk.chain_set(closed++));
      float *c = &cur[0][0][0];
#pragma unroll
      for (int e = 0; e < 2 * TT * 4; e++) c[e] = 0.0f;
    } else {
      bf16fp32__smallm_close_chain<2 * TT * 4>(&cur[0][0][0], &sum[0][0][0], closed);
    }
  };

  const int arow = (32 * wr + g) * PITCH + 16 * t;                 /* rows g (+8, +16, +24) */
  const int brow = (a.br + 8 * TT * wc + g) * PITCH + 16 * t;      /* tokens g (+8, ...) */
  /* sub-chunk p of the stage into accumulators d */
  auto mma_sub = [&](const unsigned char *st, int p, float (&d)[2][TT][4]) {
    const unsigned char *sc = st + 64 * p;
    uint4 av[2][2], bv[TT];
#pragma unroll
    for (int i = 0; i < 2; i++) {
      av[i][0] = bf16fp32__lds16(sc + arow + i * 16 * PITCH);
      av[i][1] = bf16fp32__lds16(sc + arow + (i * 16 + 8) * PITCH);
    }
#pragma unroll
    for (int j = 0; j < TT; j++) bv[j] = bf16fp32__lds16(sc + brow + j * 8 * PITCH);
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
      for (int j = 0; j < TT; j++) bf16fp32__smallm_mma_sub(d[i][j], av[i][0], av[i][1], bv[j]);
  };
  /* where the chain in progress ends (ranges of bf16fp32__smallm_chain) */
  const int per = bf16fp32__smallm_chain_len(blk.slice_subs, WK);
  int chain_end = per;
  for (int s = 0; s < blk.nstages; s++) {
    const unsigned char *st = blk.wait(s);
    if (s == 0) BF16FP32__SMALLM_STAMP(2);
    const int left = blk.nsubs - G * s; /* sub-chunks of the slice in this stage (G or fewer) */
#pragma unroll
    for (int p = 0; p < G; p++)
      if (p < left) {
        if (G * s + p == chain_end) close_chain(), chain_end += per;
        mma_sub(st, p, cur);
      }
    __syncthreads(); /* everyone is done with buffer s % NST: refill it */
    blk.refill(s);
  }
  /* The next kernel's blocks may start now, not earlier: started at the top they held shared
   * memory and warps through this whole loop (2048x7168 M = 128: 30.1 -> 41.8 us under PDL;
   * docs/smallm-notes.md, session 4). */
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  BF16FP32__SMALLM_STAMP(3);
  /* every copy has landed (each stage was waited for); the ring becomes the block sums */

  /* The last chain with sub-chunks, then the empty ones (zeros), close; the block sums go to
   * blk.sums() (a group's rank 0: to its first chain set). */
  while (closed < chains) close_chain();
  if (!apart) put(sum, GROUPS ? blk.chain_set(0) : blk.sums());
  BF16FP32__SMALLM_STAMP(4);
  blk.template finish<GROUPS>();
  BF16FP32__SMALLM_STAMP(5);
}

/* The driver's tensor-map encoder, looked up once through the runtime (no link to libcuda);
 * a process-wide constant after the first call. */
using encode_fn = CUresult (*)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                               const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                               const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                               CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
encode_fn tensor_map_encoder() {
  static const encode_fn fn = [] {
    void *p = nullptr;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                         &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      p = nullptr;
    return reinterpret_cast<encode_fn>(p);
  }();
  return fn;
}

}  // namespace

bool bf16fp32__smallm_encode_map_swizzled(CUtensorMap *map, const uint16_t *base, int64_t rows,
                                          int64_t cols, int64_t ld, int box_cols, int box_rows,
                                          CUtensorMapSwizzle swizzle) {
  const encode_fn fn = tensor_map_encoder();
  if (!fn) return false;
  const cuuint64_t dim[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t stride[1] = {static_cast<cuuint64_t>(ld) * 2};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t estride[2] = {1, 1};
  return fn(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<uint16_t *>(base), dim, stride,
            box, estride, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
            CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

bool bf16fp32__smallm_encode_map(CUtensorMap *map, const uint16_t *base, int64_t rows,
                                 int64_t cols, int64_t ld, int box_cols, int box_rows) {
  return bf16fp32__smallm_encode_map_swizzled(map, base, rows, cols, ld, box_cols, box_rows,
                                              CU_TENSOR_MAP_SWIZZLE_NONE);
}

bool bf16fp32__smallm_tile_setup(bf16fp32__smallm_tile_args *a, bf16fp32__smallm_config *c,
                                 int64_t m, int64_t n, int64_t k, const uint16_t *x, int64_t ldx,
                                 const uint16_t *w, int64_t ldw, float *out, int64_t ldo,
                                 int token_warp) {
  const int pitch = BF16FP32__SMALLM_TILE_PITCH(c->wide_subs);
  a->br = c->wide_rows, a->bt = c->wide_tokens;
  if (!bf16fp32__smallm_encode_map(&a->tw, w, n, k, ldw, pitch / 2, a->br) ||
      !bf16fp32__smallm_encode_map(&a->tx, x, m, k, ldx, pitch / 2, a->bt))
    return false;
  a->out = out;
  a->ldo = ldo;
  a->m = static_cast<int>(m), a->k = static_cast<int>(k);
  a->ksplit = c->split.ksplit;
  a->kwarps = c->split.kwarps;
  a->groups = c->wide_groups;
  a->wt = a->bt / token_warp;
  a->tbk_log = 0;
  while ((8 << a->tbk_log) < a->bt) a->tbk_log++;
  a->stage_bytes = (a->br + a->bt) * pitch;
  c->grid_x = a->ksplit * a->groups * static_cast<int>((m + a->bt - 1) / a->bt);
  c->grid_y = static_cast<int>(n / a->br);
  return true;
}

namespace {

template <int WK>
cudaError_t launch_t(const WArgs &a, const cudaLaunchConfig_t &cfg, int subs) {
  return bf16fp32__smallm_tile_subs_call(subs, [&](auto g) {
    constexpr int G = decltype(g)::value;
    if constexpr (WK > 1) /* groups need WK to be a multiple of them */
      if (a.groups > 1) return cudaLaunchKernelEx(&cfg, smallm_wide_kernel<WK, true, G>, a);
    return cudaLaunchKernelEx(&cfg, smallm_wide_kernel<WK, false, G>, a);
  });
}

}  // namespace

extern "C" int bf16fp32__smallm_wide_load(size_t smem_limit) {
  if (!tensor_map_encoder()) return static_cast<int>(cudaErrorSymbolNotFound);
  return static_cast<int>(bf16fp32__smallm_tile_subs_each([&](auto g) {
    constexpr int G = decltype(g)::value;
    return bf16fp32__smallm_allow_smem(
        smem_limit, smallm_wide_kernel<1, false, G>, smallm_wide_kernel<2, false, G>,
        smallm_wide_kernel<4, false, G>, smallm_wide_kernel<8, false, G>,
        smallm_wide_kernel<2, true, G>, smallm_wide_kernel<4, true, G>,
        smallm_wide_kernel<8, true, G>);
  }));
}

extern "C" int bf16fp32__smallm_wide_launch(const bf16fp32__smallm_config *c, int64_t m,
                                            int64_t n, int64_t k, const uint16_t *x, int64_t ldx,
                                            const uint16_t *w, int64_t ldw, float *out, int64_t ldo,
                                            void *stream, int use_pdl) {
  WArgs a;
  bf16fp32__smallm_config gc = *c;
  if (!bf16fp32__smallm_tile_setup(&a, &gc, m, n, k, x, ldx, w, ldw, out, ldo,
                                   BF16FP32__SMALLM_WIDE_WARP_TOKENS(c->split.kwarps)))
    return static_cast<int>(cudaErrorInvalidValue);
  gc.threads = 32 * (a.br / 32) * a.wt;
  cudaLaunchAttribute attr[2];
  const cudaLaunchConfig_t cfg = bf16fp32__smallm_launch_config(
      &gc, c->wide_smem, static_cast<cudaStream_t>(stream), use_pdl, attr);
  switch (c->split.kwarps) {
    case 1: return static_cast<int>(launch_t<1>(a, cfg, c->wide_subs));
    case 2: return static_cast<int>(launch_t<2>(a, cfg, c->wide_subs));
    case 4: return static_cast<int>(launch_t<4>(a, cfg, c->wide_subs));
    default: return static_cast<int>(launch_t<8>(a, cfg, c->wide_subs));
  }
}
