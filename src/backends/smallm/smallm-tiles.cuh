/* What the two tile kernels (smallm-wide.cu on mma.sync, smallm-wgmma-sm90a.cu on wgmma) share:
 * the ring of tensor-map bulk copies that brings weight and x tiles into shared memory, and the
 * end of a block, where its block sums (in shared memory) go to the cluster sum. One definition,
 * so that both kernels lay out, wait for and add their tiles alike. */
#ifndef BF16FP32_SMALLM_TILES_CUH
#define BF16FP32_SMALLM_TILES_CUH

#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

#include "smallm-cluster-sum.cuh"
#include "smallm-fragments.cuh"

/* rows x cols bf16, row stride ld elements, as a tensor map of boxes of box_cols columns x
 * box_rows rows, zeros outside (smallm-wide.cu). false when the driver's encoder is missing or
 * refuses. */
bool bf16fp32__smallm_encode_map(CUtensorMap *map, const uint16_t *base, int64_t rows,
                                 int64_t cols, int64_t ld, int box_cols, int box_rows);
/* The same with the shared-memory swizzle of a wgmma operand (bench/bigtile.cu's x' boxes). */
bool bf16fp32__smallm_encode_map_swizzled(CUtensorMap *map, const uint16_t *base, int64_t rows,
                                          int64_t cols, int64_t ld, int box_cols, int box_rows,
                                          CUtensorMapSwizzle swizzle);

/* One box of a 2-D tensor map into shared memory, counted on mbarrier bar. */
static __device__ __forceinline__ void bf16fp32__tma_box(uint32_t dst, const CUtensorMap *map,
                                                         int c0, int c1, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}
/* Box (c0, c1) of a 2-D tensor map requested into L2 only: nothing lands in shared memory,
 * nothing to wait for. */
static __device__ __forceinline__ void bf16fp32__tma_box_to_l2(const CUtensorMap *map, int c0,
                                                               int c1) {
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(c0), "r"(c1)
               : "memory");
}
static __device__ __forceinline__ uint4 bf16fp32__lds16(const unsigned char *p) {
  return *reinterpret_cast<const uint4 *>(p);
}
/* A block sum before its first chain closes: -0.0f, the identity of fp32 addition (-0 + x is x
 * bit for bit for every number x, +0 included; a NaN stays a NaN, with the adder's payload, as
 * it has after any later chain or rank is added), so that adding the first chain gives the
 * chain itself. */
#define BF16FP32__SMALLM_SUM_START (-0.0f)

/* The tile kernels' chains (bf16fp32__smallm_chain ranges) close in k order: each is added to
 * the block sum, which starts at BF16FP32__SMALLM_SUM_START (c0, then (c0 + c1) + c2 and so on,
 * the order in which the other kernels add their warp groups; empty chains add zeros), and the
 * next chain starts from zero. Adding always, rather than taking the first chain as it is, lets
 * ptxas add into the sum's registers (the select cost a move per accumulator at every close).
 * N accumulators of one thread; `closed` counts the closes. */
template <int N>
static __device__ __forceinline__ void bf16fp32__smallm_close_chain(float *cur, float *sum,
                                                                    int &closed) {
#pragma unroll
  for (int e = 0; e < N; e++) {
    sum[e] += cur[e];
    cur[e] = 0.0f;
  }
  closed++;
}

/* The stage sizes the tile kernels are built for (bf16fp32__smallm_use_tile_subs): f called
 * with `subs` (4, 5 or 7; anything else as 5) as a compile-time constant, to pick an instance. */
template <class F>
static inline cudaError_t bf16fp32__smallm_tile_subs_call(int subs, F &&f) {
  if (subs == 4) return f(std::integral_constant<int, 4>{});
  if (subs == 7) return f(std::integral_constant<int, 7>{});
  return f(std::integral_constant<int, 5>{});
}
/* f for every stage size in turn, up to the first error (the opt-ins at module load). */
template <class F>
static inline cudaError_t bf16fp32__smallm_tile_subs_each(F &&f) {
  cudaError_t e = f(std::integral_constant<int, 4>{});
  if (e == cudaSuccess) e = f(std::integral_constant<int, 5>{});
  if (e == cudaSuccess) e = f(std::integral_constant<int, 7>{});
  return e;
}

/* The launch arguments of both tile kernels. */
struct bf16fp32__smallm_tile_args {
  CUtensorMap tw; /* w as K x N bf16, boxes of 32 (G | 1) x br (G: sub-chunks per stage) */
  CUtensorMap tx; /* x as K x M bf16, boxes of 32 (G | 1) x bt */
  float *out;
  long long ldo;
  int m, k;
  int ksplit;      /* S of the split */
  int kwarps;      /* WK of the split (also the kernels' template parameter) */
  int groups;      /* ranks sharing a tile (bf16fp32__smallm_use_groups), else 1 */
  int br, bt;      /* block rows and tokens */
  int wt;          /* warps (wide) or warpgroups (wgmma) along tokens */
  int tbk_log;     /* log2(bt / 8) */
  int stage_bytes; /* one ring buffer: (br + bt) * BF16FP32__SMALLM_TILE_PITCH(G) */
};

/* Fills a with the tensor maps and sizes of one launch with block rows br, tokens bt and
 * token_warp tokens per warp (or warpgroup), and the grid of c: one cluster of S blocks per
 * (token block, row block). false when a tensor map cannot be made. */
bool bf16fp32__smallm_tile_setup(bf16fp32__smallm_tile_args *a, bf16fp32__smallm_config *c,
                                 int64_t m, int64_t n, int64_t k, const uint16_t *x, int64_t ldx,
                                 const uint16_t *w, int64_t ldw, float *out, int64_t ldo,
                                 int token_warp);

/* One tile block's place (rank's K slice, or its group's chains of the one slice; row and token
 * block) and its ring of NST buffers: NST mbarriers in the first 128 bytes of shared memory,
 * then the buffers, each the weight box (br rows) and the x box (bt tokens) of one stage of G
 * sub-chunks, then (groups only) the chain sums. Thread 0 issues every copy. */
template <int NST, int G>
struct bf16fp32__smallm_tile_block {
  const bf16fp32__smallm_tile_args *a;
  unsigned char *smem;
  uint32_t bars, ring;
  long long n0, t0;
  int m;          /* tokens of this block */
  int rank;       /* in the cluster */
  int kb;         /* the first k this block sums */
  int slice_subs; /* 32-wide sub-chunks of the K slice (the chains' length comes from it) */
  int nsubs;      /* those this block sums: the slice, or its group's chains */
  int nstages;    /* ring stages: ceil(nsubs / G) */

  __device__ __forceinline__ bf16fp32__smallm_tile_block(const bf16fp32__smallm_tile_args *args,
                                                         unsigned char *shared)
      : a(args), smem(shared) {
    const int ranks = a->ksplit * a->groups;
    const int tb = static_cast<int>(blockIdx.x) / ranks;
    n0 = static_cast<long long>(blockIdx.y) * a->br;
    t0 = static_cast<long long>(tb) * a->bt;
    m = static_cast<int>(min(static_cast<long long>(a->bt), a->m - t0));
    rank = ranks > 1 ? static_cast<int>(cooperative_groups::this_cluster().block_rank()) : 0;
    int64_t k0, k1;
    bf16fp32__smallm_slice(a->k, a->ksplit, a->groups > 1 ? 0 : rank, &k0, &k1);
    slice_subs = static_cast<int>((k1 - k0 + 31) >> 5);
    int j0 = 0, j1 = slice_subs;
    if (a->groups > 1) bf16fp32__smallm_group(slice_subs, rank, a->kwarps, a->groups, &j0, &j1);
    kb = static_cast<int>(k0) + 32 * j0;
    nsubs = j1 - j0;
    nstages = (nsubs + G - 1) / G;
    bars = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
    ring = bars + 128;
  }
  /* Stage q: sub-chunks G q .. G q + G - 1 of the slice (the box may run past the slice: those
   * columns are never used; past K they are zeros). The weight box also sets the bytes the
   * stage's barrier expects. */
  __device__ __forceinline__ void load_w(int q) const {
    const uint32_t bar = bars + 8 * (q % NST);
    bf16fp32__bar_expect(bar, a->stage_bytes);
    bf16fp32__tma_box(ring + (q % NST) * a->stage_bytes, &a->tw, kb + 32 * G * q,
                      static_cast<int>(n0), bar);
  }
  __device__ __forceinline__ void load_x(int q) const {
    bf16fp32__tma_box(ring + (q % NST) * a->stage_bytes + a->br * BF16FP32__SMALLM_TILE_PITCH(G),
                      &a->tx, kb + 32 * G * q, static_cast<int>(t0), bars + 8 * (q % NST));
  }
  /* Barriers set up, the first NST stages on their way. The weights do not depend on the
   * previous kernel: under programmatic dependent launch the first stage's weights are fetched
   * while it finishes, x only after it is done. The other stages follow in stage order (w, x),
   * so that stage 0 is complete first: issuing the second weight box before x of stage 0 cost up
   * to 9 % without PDL (docs/smallm-notes.md, session 4). */
  __device__ __forceinline__ void start() const {
    if (threadIdx.x == 0) {
      for (int s = 0; s < NST; s++)
        bf16fp32__bar_init(bars + 8 * s);
      bf16fp32__bar_init_fence();
    }
    __syncthreads();
    if (threadIdx.x == 0 && nstages > 0) load_w(0);
    asm volatile("griddepcontrol.wait;" ::: "memory");
    if (threadIdx.x == 0 && nstages > 0) {
      load_x(0);
      for (int s = 1; s < NST && s < nstages; s++) load_w(s), load_x(s);
    }
  }
  /* Stage s's buffer once its copies have landed. */
  __device__ __forceinline__ const unsigned char *wait(int s) const {
    bf16fp32__bar_wait(bars + 8 * (s % NST), (s / NST) & 1);
    return smem + 128 + (s % NST) * a->stage_bytes;
  }
  /* After every thread is done with stage s (a __syncthreads): its buffer takes stage s + NST. */
  __device__ __forceinline__ void refill(int s) const {
    if (threadIdx.x == 0 && s + NST < nstages) load_w(s + NST), load_x(s + NST);
  }
  /* Where the block sums go once the main loop is done (every copy landed): over the ring,
   * sums()[token * sums_pitch() + row], rows padded by 4 floats against bank conflicts. */
  __device__ __forceinline__ float *sums() const { return reinterpret_cast<float *>(smem + 128); }
  __device__ __forceinline__ int sums_pitch() const { return a->br + 4; }
  /* With groups: set j of the chain sums (laid out as sums()), beside the ring. */
  __device__ __forceinline__ float *chain_set(int j) const {
    return reinterpret_cast<float *>(smem + 128 + NST * a->stage_bytes) + j * a->bt * sums_pitch();
  }
  /* The end: the block sums (br rows x m tokens; with GROUPS, the chain sums) are written by the
   * block's threads, not yet synchronised. */
  template <bool GROUPS = false>
  __device__ __forceinline__ void finish() const {
    __syncthreads();
    if (GROUPS)
      bf16fp32__smallm_cluster_pull<false>(chain_set(0), a->bt * sums_pitch(), sums_pitch(),
                                           m * (a->br >> 2), a->br >> 2, a->groups,
                                           a->kwarps / a->groups, a->out + t0 * a->ldo + n0, a->ldo);
    else
      bf16fp32__smallm_cluster_sum<1>(sums(), 0, sums_pitch(), 1, m * (a->br >> 2), a->br >> 2,
                                      a->ksplit, a->out + t0 * a->ldo + n0, a->ldo);
  }
};

#endif
