/* The end of every smallm kernel: a block's partial sums (one set per warp group) added into its
 * block sums, and the block sums of a cluster's S ranks (one per K slice) added into the outputs,
 * always as ((p0 + p1) + p2) + ... over warp groups 0..WK-1, then ((b0 + b1) + b2) + ... over
 * ranks 0..S-1. One definition, so that every kernel adds alike (the batch invariance across
 * kernels rests on it). A wide-kernel tile shared by a group of blocks on one K slice ends with
 * the same pull over its ranks' chain sums, added in chain order as one block adds them.
 *
 * The ranks' block sums stay in their own shared memory; after a cluster barrier each rank reads
 * its share of the outputs (units of four rows of one token) from all S ranks and adds them. On
 * the H200 this pull measured faster than pushing the block sums to their owner with
 * asynchronous remote stores counted on an mbarrier (the decode kernel's reduction of sessions
 * 2-5): by 0.3-0.6 us per call in the tiled kernel and 0.2-0.5 us in the decode kernel, and by
 * far more where one thread has several remote stores to make (docs/smallm-notes.md,
 * session 6). The share kernel pushes (bf16fp32__smallm_cluster_push, below): st.async from
 * the registers that add a unit's block sum, one unit per thread, and no barrier after the
 * entry's; 1-4 % faster than its pull at 14 of its cells with a K split, within 1 % elsewhere
 * (session 37; session 36's form, one thread adding and sending a unit of every owner in turn,
 * lost 0.5-1.9 us). */
#ifndef BF16FP32_SMALLM_CLUSTER_SUM_CUH
#define BF16FP32_SMALLM_CLUSTER_SUM_CUH

#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "smallm-config.h"
#include "smallm-fragments.cuh" /* the mbarrier wait */
#include "smallm-trace.cuh"

/* A cluster barrier after which each block's shared-memory writes are visible to the other
 * ranks' reads: a release restricted to this block's shared memory, then an acquire for the
 * reads from the others'. The plain cluster barrier's release is a GPU-wide memory barrier
 * (MEMBAR.ALL.GPU in the SASS), about 0.35 us on the H200; this one is a block-wide one
 * (docs/smallm-notes.md, session 9). */
static __device__ __forceinline__ void bf16fp32__smallm_cluster_share() {
  asm volatile(
      "fence.release.sync_restrict::shared::cta.cluster;\n\t"
      "barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;\n\t"
      "fence.acquire.sync_restrict::shared::cluster.cluster;" ::: "memory");
}
/* The barrier before a block of the cluster leaves: no block leaves while another may still
 * read its shared memory; the values read are already in registers, so no memory ordering is
 * needed. */
static __device__ __forceinline__ void bf16fp32__smallm_cluster_exit() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
}

/* s += v, component by component (fp32 adds, in the order of the callers' loops). */
static __device__ __forceinline__ void bf16fp32__smallm_add4(float4 &s, const float4 &v) {
  s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
}

/* The threads that take part in a block's sums: NT, or with NT = 0 the whole block (a paired
 * stream launch's extra warps leave at entry: bf16fp32__smallm_stream_pair). */
template <int NT>
static __device__ __forceinline__ int bf16fp32__smallm_workers() {
  return NT > 0 ? NT : static_cast<int>(blockDim.x);
}

/* A barrier of those threads: __syncthreads, or with NT > 0 named barrier 1 for NT threads. The
 * hardware lets a __syncthreads pass once the other warps have left, but compute-sanitizer's
 * racecheck stopped at it in the paired kernel's register footprint (session 61, a deadlock it
 * reported at the barrier), so the paired launches give their count. */
template <int NT>
static __device__ __forceinline__ void bf16fp32__smallm_workers_sync() {
  if constexpr (NT > 0)
    asm volatile("bar.sync 1, %0;" ::"n"(NT) : "memory");
  else
    __syncthreads();
}

/* The pull: after a __syncthreads that makes each rank's sets visible, a cluster barrier, then
 * each of the `ranks` ranks finishes its share of the units (four rows of one token: unit u at
 * tok * rs + 4 * r4 of a set, tok = u / r4n, r4 = u % r4n, r4n a power of two) from the sets of
 * all ranks: rank 0 holds one set, every other rank `chains` sets (`set` floats apart), added
 * left to right in rank and set order. SINGLE: one set per rank (chains = 1), the K split's
 * block sums; else the chains of a tile shared by a group (bf16fp32__smallm_use_groups), which
 * one block would have added in the same order. An exit barrier keeps every block's shared
 * memory until all have read it. */
template <bool SINGLE, int NT = 0>
static __device__ __forceinline__ void bf16fp32__smallm_cluster_pull(float *sets, int set, int rs,
                                                                     int units, int r4n,
                                                                     int ranks, int chains,
                                                                     float *out, long long ldo) {
  const int lg = __ffs(r4n) - 1, total = SINGLE ? ranks : 1 + (ranks - 1) * chains;
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  bf16fp32__smallm_cluster_share(); /* the sets visible to the whole cluster */
  BF16FP32__SMALLM_STAMP(6);
  const int u1 = bf16fp32__smallm_share(rank + 1, units, ranks);
  for (int u = bf16fp32__smallm_share(rank, units, ranks) + threadIdx.x; u < u1;
       u += bf16fp32__smallm_workers<NT>()) {
    const int tok = u >> lg, r4 = u & (r4n - 1), off = tok * rs + 4 * r4;
    float4 v[BF16FP32__SMALLM_MAX_SPLIT]; /* all loads issued first */
#pragma unroll
    for (int i = 0; i < BF16FP32__SMALLM_MAX_SPLIT; i++)
      if (i < total) {
        const int q = SINGLE || i == 0 ? i : 1 + (i - 1) / chains;
        const int j = SINGLE || i == 0 ? 0 : (i - 1) % chains;
        v[i] = *reinterpret_cast<const float4 *>(cluster.map_shared_rank(sets, q) + j * set + off);
      }
    float4 sum = v[0];
#pragma unroll
    for (int i = 1; i < BF16FP32__SMALLM_MAX_SPLIT; i++)
      if (i < total) bf16fp32__smallm_add4(sum, v[i]);
    *reinterpret_cast<float4 *>(out + tok * ldo + 4 * r4) = sum;
  }
  bf16fp32__smallm_cluster_exit();
}

/* One unit's block sum: its kwarps partial sums, gstride floats apart from p, in group order. */
template <int MAXG>
static __device__ __forceinline__ float4 bf16fp32__smallm_unit_sum(const float *p, int gstride,
                                                                   int kwarps) {
  float4 v[MAXG]; /* all loads issued first */
#pragma unroll
  for (int h = 0; h < MAXG; h++)
    if (h < kwarps) v[h] = *reinterpret_cast<const float4 *>(p + h * gstride);
  float4 sum = v[0];
#pragma unroll
  for (int h = 1; h < MAXG; h++)
    if (h < kwarps) bf16fp32__smallm_add4(sum, v[h]);
  return sum;
}
/* By every thread of the block, after a __syncthreads that makes the partial sums visible:
 * warp group h's partial sum of unit u (token tok = u / r4n, rows 4 r4 .. 4 r4 + 3, r4 = u % r4n;
 * r4n a power of two) is the float4 at part + h * gstride + tok * rs + 4 * r4 (MAXG: the most
 * warp groups the kernel has, so that their loads stay in registers). The block sum goes to
 * out + tok * ldo + 4 * r4 (to_out), else to group 0's slot. */
template <int MAXG, int NT = 0>
static __device__ __forceinline__ void bf16fp32__smallm_block_sum(float *part, int gstride, int rs,
                                                                  int kwarps, int units, int r4n,
                                                                  bool to_out, float *out,
                                                                  long long ldo) {
  const int lg = __ffs(r4n) - 1;
  for (int u = threadIdx.x; u < units; u += bf16fp32__smallm_workers<NT>()) {
    const int tok = u >> lg, r4 = u & (r4n - 1);
    float *p = part + tok * rs + 4 * r4;
    const float4 sum = bf16fp32__smallm_unit_sum<MAXG>(p, gstride, kwarps);
    if (to_out)
      *reinterpret_cast<float4 *>(out + tok * ldo + 4 * r4) = sum;
    else
      *reinterpret_cast<float4 *>(p) = sum;
  }
}

/* The block sums (above), then with a K split the cluster's sum of its ranks' block sums. */
template <int MAXG, int NT = 0>
static __device__ __forceinline__ void bf16fp32__smallm_cluster_sum(float *part, int gstride, int rs,
                                                                    int kwarps, int units, int r4n,
                                                                    int ksplit, float *out,
                                                                    long long ldo) {
  if (kwarps > 1 || ksplit <= 1)
    bf16fp32__smallm_block_sum<MAXG, NT>(part, gstride, rs, kwarps, units, r4n, ksplit <= 1, out,
                                         ldo);
  if (ksplit <= 1) return;
  bf16fp32__smallm_cluster_pull<true, NT>(part, 0, rs, units, r4n, ksplit, 1, out, ldo);
}

/* The push (the share kernel): the K split's block sums sent to their owners by asynchronous
 * remote stores from registers instead of pulled, so that no cluster barrier waits for the
 * slowest rank before the loads and no exit barrier after them. recv (`ranks` slots of cmax
 * float4): slot i of rank q holds rank i's block sums of q's units; q's mbarrier `bar`, armed
 * early in the kernel with the bytes of the S - 1 other slots (bf16fp32__smallm_push_arm) and
 * made known to the cluster by an arrival (bf16fp32__smallm_push_arrive) whose wait comes
 * before the first store. Every block sum is added as in the block sum above and the owner adds
 * the ranks' in rank order, so the bits are the pull's. A rank's shared memory is written only
 * until its own mbarrier completes, and it waits for that, so no rank needs to wait for another
 * to leave. */
/* By thread 0, after the mbarrier's init and fence: its one arrival, with the others' bytes. */
static __device__ __forceinline__ void bf16fp32__smallm_push_arm(uint32_t bar, int units) {
  const int ranks = static_cast<int>(cooperative_groups::this_cluster().num_blocks());
  const int rank = static_cast<int>(cooperative_groups::this_cluster().block_rank());
  const int own = bf16fp32__smallm_share(rank + 1, units, ranks) -
                  bf16fp32__smallm_share(rank, units, ranks);
  bf16fp32__bar_expect(bar, (ranks - 1) * own * 16);
}
/* By every thread, after thread 0's bf16fp32__smallm_push_arm: the arrival whose wait
 * (bf16fp32__smallm_cluster_push's first step) makes every rank's mbarrier ready for the
 * stores. */
static __device__ __forceinline__ void bf16fp32__smallm_push_arrive() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}
template <int MAXG>
static __device__ __forceinline__ void bf16fp32__smallm_cluster_push(float *part, int gstride,
                                                                     int rs, int kwarps,
                                                                     int units, int r4n,
                                                                     float4 *recv, uint32_t bar,
                                                                     float *out, long long ldo) {
  const int lg = __ffs(r4n) - 1;
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int ranks = static_cast<int>(cluster.num_blocks());
  const int cmax = bf16fp32__smallm_push_slot(units, ranks);
  asm volatile("barrier.cluster.wait.aligned;" ::: "memory"); /* entry's arrivals */
  BF16FP32__SMALLM_STAMP(6);
  /* Unit u's block sum by thread u, as in bf16fp32__smallm_block_sum, straight to its owner:
   * one unit per thread, so that no thread adds or sends the units of several owners in turn
   * (a thread that did took 0.95 us plus 0.2 per rank at M = 1, docs/smallm-notes.md,
   * session 37). */
  for (int u = threadIdx.x; u < units; u += blockDim.x) {
    const int tok = u >> lg, r4 = u & (r4n - 1);
    const float4 sum = bf16fp32__smallm_unit_sum<MAXG>(part + tok * rs + 4 * r4, gstride, kwarps);
    const int q = bf16fp32__smallm_owner(u, units, ranks);
    const int at = rank * cmax + u - bf16fp32__smallm_share(q, units, ranks);
    if (q == rank) {
      recv[at] = sum;
    } else {
      const uint32_t local = static_cast<uint32_t>(__cvta_generic_to_shared(recv + at));
      uint32_t rslot, rbar;
      asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rslot) : "r"(local), "r"(q));
      asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rbar) : "r"(bar), "r"(q));
      asm volatile(
          "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, "
          "%4}, [%5];" ::"r"(rslot),
          "f"(sum.x), "f"(sum.y), "f"(sum.z), "f"(sum.w), "r"(rbar)
          : "memory");
    }
  }
  __syncthreads(); /* this rank's own slot */
  bf16fp32__bar_wait<true>(bar, 0); /* the other ranks' */
  const int u0 = bf16fp32__smallm_share(rank, units, ranks);
  const int u1 = bf16fp32__smallm_share(rank + 1, units, ranks);
  for (int u = u0 + threadIdx.x; u < u1; u += blockDim.x) {
    const int tok = u >> lg, r4 = u & (r4n - 1);
    /* the ranks' block sums of unit u, 4 cmax floats apart, in rank order */
    const float4 sum = bf16fp32__smallm_unit_sum<BF16FP32__SMALLM_MAX_SPLIT>(
        reinterpret_cast<const float *>(recv + u - u0), 4 * cmax, ranks);
    *reinterpret_cast<float4 *>(out + tok * ldo + 4 * r4) = sum;
  }
}

/* Warp (h, wn)'s MT token tiles of its 16 rows (the mma.sync accumulator layout) into
 * part[h][token][row], rows padded by 4 floats against bank conflicts (rs = rows + 4); tokens
 * below m only, the others are never read. */
template <int MT>
static __device__ __forceinline__ void bf16fp32__smallm_store_warp(const float (&acc)[MT][4],
                                                                   float *part, int h, int wn,
                                                                   int m, int mpad, int rs) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int j = 0; j < MT; j++)
    if (8 * j + 2 * t < m) {
      float *p = part + (h * mpad + 8 * j + 2 * t) * rs + 16 * wn + g;
      p[0] = acc[j][0];
      p[rs] = acc[j][1];
      p[8] = acc[j][2];
      p[rs + 8] = acc[j][3];
    }
}

/* The end of the decode, tiled, stream and share kernels, by every thread: warp (wk, wn)'s
 * partial sums into part[wk][token][row], a barrier, then the block and cluster sums of rows
 * out[.., 0 .. rows - 1]. A share block of TL row blocks of the split (share_tiles) has `rows`
 * rows in all: the warp's sums of row block b are its 16-row set b * tile_sets + wn of the
 * block's, so that the block and cluster sums add every output as for one row block. */
template <int MT, int TL, int NT = 0>
static __device__ __forceinline__ void bf16fp32__smallm_finish_tiles(
    const float (&acc)[TL][MT][4], float *part, int wk, int wn, int tile_sets, int m, int mpad,
    int rows, int kwarps, int ksplit, float *out, long long ldo, float4 *recv = nullptr,
    uint32_t rbar = 0) {
  const int rs = rows + 4;
#pragma unroll
  for (int b = 0; b < TL; b++)
    bf16fp32__smallm_store_warp<MT>(acc[b], part, wk, b * tile_sets + wn, m, mpad, rs);
  bf16fp32__smallm_workers_sync<NT>();
  BF16FP32__SMALLM_STAMP(4);
  if (recv != nullptr && ksplit > 1)
    bf16fp32__smallm_cluster_push<BF16FP32__SMALLM_WARPS>(part, mpad * rs, rs, kwarps,
                                                          m * (rows >> 2), rows >> 2, recv, rbar,
                                                          out, ldo);
  else
    bf16fp32__smallm_cluster_sum<BF16FP32__SMALLM_WARPS, NT>(part, mpad * rs, rs, kwarps,
                                                             m * (rows >> 2), rows >> 2, ksplit,
                                                             out, ldo);
  BF16FP32__SMALLM_STAMP(5);
}
template <int MT, int NT = 0>
static __device__ __forceinline__ void bf16fp32__smallm_finish_warps(const float (&acc)[MT][4],
                                                                     float *part, int wk, int wn,
                                                                     int m, int mpad, int rows,
                                                                     int kwarps, int ksplit,
                                                                     float *out, long long ldo) {
  bf16fp32__smallm_finish_tiles<MT, 1, NT>(reinterpret_cast<const float(&)[1][MT][4]>(acc), part,
                                           wk, wn, 0, m, mpad, rows, kwarps, ksplit, out, ldo);
}

/* The end of the stream kernel with groups (one K slice; rank r of `groups` holds chains
 * r * chains .. + chains - 1 of rows out[.., 0 .. rows - 1], its warp (c, wn) chain c's sums):
 * rank 0 adds its chains into one block sum, the other ranks keep theirs apart, and the cluster
 * adds them all in chain order, as one block of the split adds its warp groups. */
template <int MT>
static __device__ __forceinline__ void bf16fp32__smallm_finish_groups(const float (&acc)[MT][4],
                                                                      float *part, int c, int wn,
                                                                      int m, int mpad, int rows,
                                                                      int chains, int groups,
                                                                      float *out, long long ldo) {
  const int rs = rows + 4, units = m * (rows >> 2);
  bf16fp32__smallm_store_warp<MT>(acc, part, c, wn, m, mpad, rs);
  __syncthreads();
  BF16FP32__SMALLM_STAMP(4);
  if (cooperative_groups::this_cluster().block_rank() == 0)
    bf16fp32__smallm_block_sum<BF16FP32__SMALLM_WARPS>(part, mpad * rs, rs, chains, units,
                                                       rows >> 2, false, out, ldo);
  bf16fp32__smallm_cluster_pull<false>(part, mpad * rs, rs, units, rows >> 2, groups, chains, out,
                                       ldo);
  BF16FP32__SMALLM_STAMP(5);
}

#endif
