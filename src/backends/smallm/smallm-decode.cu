/* smallm decode kernel (sm_90, M <= 64): the same arithmetic as smallm-kernel.cu (same split,
 * k permutation, MMA order, reduction tree), with no barrier in the main loop: each lane keeps a
 * ring of weight and x fragments in flight (x read straight from global memory, L1-cached);
 * the K slices are added as in every smallm kernel (smallm-cluster-sum.cuh). */
#include <cuda_runtime.h>
#include <stdint.h>

#include "smallm-cluster-sum.cuh"
#include "smallm-fragments.cuh"
#include "smallm-launch-config.cuh"
#include "smallm-launch.h"
#include "smallm-trace.cuh"
#include "smallm-warp-place.cuh"

namespace {

struct DArgs {
  const uint16_t *x;
  const uint16_t *w;
  float *out;
  long long ldx, ldw, ldo;
  int m, k;
  int rows, ksplit, kwarps;
  bf16fp32__smallm_slices slices; /* the K slices (bf16fp32__smallm_fill_slices) */
  int mpad;        /* 8 * MT: tokens of the partial sums */
  int pdl;         /* launched with programmatic dependent launch */
};

/* 16 bytes of x, which every warp group of the block re-reads: kept in L1. Zeros past m or k. */
__device__ __forceinline__ uint4 ldg_x(const uint16_t *p, bool pred) {
  uint4 v;
  asm volatile(
      "{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %5, 0;\n\t"
      "mov.b32 %0, 0;\n\tmov.b32 %1, 0;\n\tmov.b32 %2, 0;\n\tmov.b32 %3, 0;\n\t"
      "@q ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];\n\t}"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p), "r"(static_cast<int>(pred)));
  return v;
}

/* Ring depths: DW weight sub-chunks (DRAM latency) and DX x sub-chunks (L1/L2 latency) in
 * flight per lane; DW is a multiple of DX so that one unrolled pass cycles both rings. The deep
 * ring (MT <= 2) doubles DW and gives up the second block per SM to hold it. */
template <int MT, bool DEEP>
struct Depth {
  static constexpr int RING = BF16FP32__SMALLM_DECODE_RING;
  static constexpr int DW = MT <= 2 ? (DEEP ? 2 * RING : RING) : MT == 4 ? 6 : 4;
  static constexpr int DX = MT == 1 ? 4 : 2;
  static constexpr int MINB = MT <= 2 && !DEEP ? 2 : 1;
};

/* Block (rank, blockIdx.y): rows n0 .. n0 + rows - 1 over the K slice of its cluster rank.
 * Warp (wk, wn) owns rows 16 wn .. 16 wn + 15 and sums its group's range of the slice's
 * sub-chunks (bf16fp32__smallm_chain) in increasing order, two MMAs per sub-chunk exactly as
 * smallm-kernel.cu does; its partial sums then go to the cluster sum. */
template <int MT, bool DEEP>
__global__ void __launch_bounds__(BF16FP32__SMALLM_THREADS, (Depth<MT, DEEP>::MINB))
    smallm_decode_kernel(const __grid_constant__ DArgs a) {
  constexpr int DW = Depth<MT, DEEP>::DW, DX = Depth<MT, DEEP>::DX;
  extern __shared__ __align__(16) float smem[]; /* the partial sums */
  BF16FP32__SMALLM_STAMP(0);
  const bf16fp32__smallm_place pl = bf16fp32__smallm_place_warp(a.slices, a.ksplit, a.kwarps);
  const int lane = pl.lane, warp = pl.warp, g = pl.g, t = pl.t, wk = pl.wk, wn = pl.wn;
  const int64_t kb = pl.kb, ke = pl.ke;
  const int nsubs = pl.nsubs, j0 = pl.j0;
  const int nq = pl.j1 - j0; /* this warp's sub-chunks */
  const long long n0 = static_cast<long long>(blockIdx.y) * a.rows;

  /* Under PDL this block may start while the previous kernel finishes, but ptxas places the
   * wait above the weight loads below: ask L2 for what the ring's first fill loads (one bulk
   * prefetch per row and warp group), so the wait overlaps that fetch. Measured on the H200
   * (session 4 of docs/smallm-notes.md): 0.2-0.3 us less at MT = 1 with the shallow ring, whose
   * blocks fit beside the previous kernel's; slower with the deep ring (one block per SM: it
   * starts only when an SM is free, and the prefetch is then a second request for the same
   * lines), at MT = 2 and without PDL. Lane 0 of each warp issues a few rows: the instruction takes a
   * uniform address, so more lanes would only take turns. */
  if (MT == 1 && !DEEP && a.pdl && lane == 0) {
    for (int c = 0; c < a.kwarps; c++) {
      int c0, c1;
      bf16fp32__smallm_chain(nsubs, c, a.kwarps, &c0, &c1);
      const int64_t k0 = 32 * c0, k1 = min(ke - kb, static_cast<int64_t>(32 * min(c1, c0 + DW)));
      if (k1 <= k0) continue;
      for (int r = warp; r < a.rows; r += BF16FP32__SMALLM_WARPS)
        bf16fp32__bulk_to_l2(a.w + (n0 + r) * a.ldw + kb + k0, static_cast<uint32_t>(2 * (k1 - k0)));
    }
  }

  const uint16_t *wrow = a.w + (n0 + 16 * wn + g) * a.ldw + kb; /* + lane k offset */
  const long long w8 = 8 * a.ldw;
  const int kfirst = 32 * j0 + 8 * t; /* this lane's k offset in sub-chunk q = 0 */
  const int klim = static_cast<int>(ke - kb);  /* slice length */
  uint4 rw[DW][2];
#pragma unroll
  for (int i = 0; i < DW; i++) {
    const int kk = kfirst + 32 * i;
    const bool ok = i < nq && kk < klim;
    rw[i][0] = ldg_w(wrow + kk, ok);
    rw[i][1] = ldg_w(wrow + w8 + kk, ok);
  }
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  BF16FP32__SMALLM_STAMP(1);

  /* x rows g, g + 8, ... of the tiles (zeros past m); kk is relative to the slice start. */
  const uint16_t *xrow = a.x + static_cast<long long>(g) * a.ldx + kb;
  const long long x8 = 8 * a.ldx;
  uint4 rx[DX][MT];
#pragma unroll
  for (int i = 0; i < DX; i++) {
    const int kk = kfirst + 32 * i;
    const bool ok = i < nq && kk < klim;
#pragma unroll
    for (int j = 0; j < MT; j++) rx[i][j] = ldg_x(xrow + j * x8 + kk, ok && 8 * j + g < a.m);
  }

  float acc[MT][4];
#pragma unroll
  for (int j = 0; j < MT; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;

  for (int q0 = 0; q0 < nq; q0 += DW) {
#pragma unroll
    for (int i = 0; i < DW; i++) {
      const int q = q0 + i;
      const int xi = i % DX;
      if (q < nq) {
#pragma unroll
        for (int j = 0; j < MT; j++) bf16fp32__smallm_mma_sub(acc[j], rw[i][0], rw[i][1], rx[xi][j]);
      }
      {
        const int qw = q + DW, kk = kfirst + 32 * qw;
        const bool ok = qw < nq && kk < klim;
        rw[i][0] = ldg_w(wrow + kk, ok);
        rw[i][1] = ldg_w(wrow + w8 + kk, ok);
      }
      {
        const int qx = q + DX, kk = kfirst + 32 * qx;
        const bool ok = qx < nq && kk < klim;
#pragma unroll
        for (int j = 0; j < MT; j++)
          rx[xi][j] = ldg_x(xrow + j * x8 + kk, ok && 8 * j + g < a.m);
      }
    }
  }

  BF16FP32__SMALLM_STAMP(3);
  bf16fp32__smallm_finish_warps<MT>(acc, smem, wk, wn, a.m, a.mpad, a.rows, a.kwarps, a.ksplit,
                                    a.out + n0, a.ldo);
}

template <int MT, bool DEEP>
cudaError_t launch_t(const DArgs &a, const bf16fp32__smallm_config *c, cudaStream_t stream,
                     int use_pdl) {
  cudaLaunchAttribute attr[2];
  cudaLaunchConfig_t cfg =
      bf16fp32__smallm_launch_config(c, c->decode_smem, stream, use_pdl, attr);
  return cudaLaunchKernelEx(&cfg, smallm_decode_kernel<MT, DEEP>, a);
}

}  // namespace

extern "C" int bf16fp32__smallm_decode_load(size_t smem_limit) {
  return static_cast<int>(bf16fp32__smallm_allow_smem(
      smem_limit, smallm_decode_kernel<1, false>, smallm_decode_kernel<2, false>,
      smallm_decode_kernel<4, false>, smallm_decode_kernel<8, false>, smallm_decode_kernel<1, true>,
      smallm_decode_kernel<2, true>));
}

extern "C" int bf16fp32__smallm_decode_launch(const bf16fp32__smallm_config *c, int64_t m,
                                              int64_t k, const uint16_t *x, int64_t ldx,
                                              const uint16_t *w, int64_t ldw, float *out,
                                              int64_t ldo, void *stream, int use_pdl) {
  DArgs a;
  bf16fp32__smallm_fill_operands(a, x, ldx, w, ldw, out, ldo);
  bf16fp32__smallm_fill_split(a, c, m, k, c->split.rows);
  a.k = static_cast<int>(k);
  a.pdl = use_pdl;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (c->mt) {
    case 1: return static_cast<int>(c->deep ? launch_t<1, true>(a, c, s, use_pdl)
                                            : launch_t<1, false>(a, c, s, use_pdl));
    case 2: return static_cast<int>(c->deep ? launch_t<2, true>(a, c, s, use_pdl)
                                            : launch_t<2, false>(a, c, s, use_pdl));
    case 4: return static_cast<int>(launch_t<4, false>(a, c, s, use_pdl));
    default: return static_cast<int>(launch_t<8, false>(a, c, s, use_pdl));
  }
}
