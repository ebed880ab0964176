/* Where a warp of the decode, tiled and stream kernels sits in the split: its lane's fragment
 * coordinates, its warp group and rows, the block's K slice (by cluster rank) and the range of
 * the slice's sub-chunks its group sums. One place for both forms (a block per tile, or the
 * stream kernel's two), so that the kernels sum the same ranges in the same order. */
#ifndef BF16FP32_SMALLM_WARP_PLACE_CUH
#define BF16FP32_SMALLM_WARP_PLACE_CUH

#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "smallm-config.h"

struct bf16fp32__smallm_place {
  int lane, warp;
  int g, t;       /* the MMA fragment's row group and k quarter of this lane */
  int wk, wn;     /* warp group (its share of the slice) and 16-row set */
  int64_t kb, ke; /* the slice */
  int nsubs;      /* its 32-wide sub-chunks */
  int j0, j1;     /* the group's range of them */
};

/* A warp's place in its block: the cluster rank picks the block's K slice, whose bounds come from
 * the host (bf16fp32__smallm_fill_slices), so that nothing here divides. */
static __device__ __forceinline__ bf16fp32__smallm_place
bf16fp32__smallm_place_warp(const bf16fp32__smallm_slices &slices, int ksplit, int kwarps) {
  bf16fp32__smallm_place p;
  p.lane = threadIdx.x & 31, p.warp = threadIdx.x >> 5;
  p.g = p.lane >> 2, p.t = p.lane & 3;
  /* kwarps is 1, 2, 4 or 8: shifts, not divisions (bf16fp32__smallm_kwarps_log2) */
  p.wk = p.warp & (kwarps - 1), p.wn = p.warp >> bf16fp32__smallm_kwarps_log2(kwarps);
  /* the cluster rank picks the block's K slice */
  const int rank =
      ksplit > 1 ? static_cast<int>(cooperative_groups::this_cluster().block_rank()) : 0;
  p.kb = slices.k[rank], p.ke = slices.k[rank + 1];
  p.nsubs = static_cast<int>((p.ke - p.kb + 31) >> 5);
  bf16fp32__smallm_chain(p.nsubs, p.wk, kwarps, &p.j0, &p.j1);
  return p;
}

/* The stream kernel with groups (one K slice; bf16fp32__smallm_use_stream): rank r of `groups`
 * sums chains r * kl .. + kl - 1 (kl = kwarps / groups), its local group c = warp % kl chain
 * r * kl + c, over rows 16 wn .. + 15 (wn = warp / kl) of the block's; the ranges are
 * bf16fp32__smallm_chain's, as above. */
static __device__ __forceinline__ bf16fp32__smallm_place
bf16fp32__smallm_place_group(int k, int kwarps, int groups) {
  const int kl = kwarps / groups; /* a power of two, as kwarps and groups are */
  const int rank = static_cast<int>(cooperative_groups::this_cluster().block_rank());
  bf16fp32__smallm_place p;
  p.lane = threadIdx.x & 31, p.warp = threadIdx.x >> 5;
  p.g = p.lane >> 2, p.t = p.lane & 3;
  p.wn = p.warp >> bf16fp32__smallm_kwarps_log2(kl);
  p.wk = rank * kl + (p.warp & (kl - 1));
  p.kb = 0, p.ke = k;
  p.nsubs = (k + 31) >> 5;
  bf16fp32__smallm_chain(p.nsubs, p.wk, kwarps, &p.j0, &p.j1);
  return p;
}

#endif
