/* smallm kernel (sm_90): out^T = w . x^T with bf16 mma.sync (fp32 accumulation). Each block's
 * weight slice is prefetched into L2 before griddepcontrol.wait, then loaded from global memory
 * straight into registers as MMA fragments (16-byte loads, double-buffered batches); x is
 * staged in shared memory; K is split over a thread-block cluster and the slices added through
 * distributed shared memory in a fixed order (smallm-cluster-sum.cuh: no atomics, no
 * workspace). */
#include <cuda_runtime.h>
#include <stdint.h>

#include "smallm-cluster-sum.cuh"
#include "smallm-fragments.cuh"
#include "smallm-launch-config.cuh"
#include "smallm-launch.h"
#include "smallm-trace.cuh"
#include "smallm-warp-place.cuh"

namespace {

struct Args {
  const uint16_t *x;
  const uint16_t *w;
  float *out;
  long long ldx, ldw, ldo;
  int m, k;
  int rows, ksplit, kwarps;
  bf16fp32__smallm_slices slices; /* the K slices (bf16fp32__smallm_fill_slices) */
  int rshift; /* log2(rows): the index splits below are shifts, not divisions */
  int mpad, sb, xk, dbuf;
  int xbuf_bytes;
};

/* 16 bytes global -> shared, L1 bypassed; src_bytes 0 writes zeros (past m or past k). */
__device__ __forceinline__ void cp16(uint32_t dst, const void *src, uint32_t src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

/* One block: `rows` rows of w (n0..) times all m tokens over the K slice of its cluster rank.
 * Warp (wk, wn) owns rows 16 wn .. 16 wn + 15 and all tokens (MT 8-token tiles), and sums its
 * group's range of the slice's 32-wide sub-chunks (bf16fp32__smallm_chain), in increasing order.
 *
 * Fragments without ldmatrix: within a sub-chunk, lane (g = lane/4, t = lane%4) loads the 16
 * contiguous bytes k = 8t..8t+7 of weight rows g and g+8 and of token g. The MMA's k order is a
 * free permutation when both operands use it, so the first two 32-bit words serve as the A
 * (rows g, g+8) and B (token g) fragments of one m16n8k16 and the last two of the next: every
 * k of the sub-chunk is used exactly once.
 *
 * X_TO_L2 (launches under programmatic dependent launch): x is requested into L2 before
 * griddepcontrol.wait, and staged from there after it. */
template <int MT, bool X_TO_L2>
__global__ void __launch_bounds__(BF16FP32__SMALLM_THREADS, (MT <= 8 ? 2 : 1))
    smallm_kernel(const __grid_constant__ Args a) {
  constexpr int SB = BF16FP32__SMALLM_SB_MAX(MT);
  extern __shared__ __align__(128) unsigned char smem[];
  BF16FP32__SMALLM_STAMP(0);
  const int tid = threadIdx.x;
  const bf16fp32__smallm_place pl = bf16fp32__smallm_place_warp(a.slices, a.ksplit, a.kwarps);
  const int g = pl.g, t = pl.t, wk = pl.wk, wn = pl.wn;
  const int64_t kb = pl.kb, ke = pl.ke;
  const int nsubs = pl.nsubs, j0 = pl.j0;                       /* sub-chunks of this slice */
  const int nq = pl.j1 - j0;                                    /* ... of this warp */
  const long long n0 = static_cast<long long>(blockIdx.y) * a.rows;
  const int nqb = bf16fp32__smallm_chain_len(nsubs, a.kwarps);  /* ... of the longest range */
  const int sb = a.sb;
  const int nb = (nqb + sb - 1) / sb;                           /* batches (block-uniform) */
  const uint32_t xs = static_cast<uint32_t>(__cvta_generic_to_shared(smem));

  /* Weight sub-chunk q (this warp's q-th) into registers: rows g and g+8 of the warp's tile. */
  const uint16_t *wrow = a.w + (n0 + 16 * wn + g) * a.ldw + kb + 8 * t;
  const long long w8 = 8 * a.ldw;
  auto load_w = [&](uint4 (&r)[SB][2], int b) {
#pragma unroll
    for (int i = 0; i < SB; i++) {
      const int q = b * sb + i;
      const long long kk = static_cast<long long>(j0 + q) * 32;
      const bool ok = i < sb && q < nq && kb + kk + 8 * t < ke;
      r[i][0] = ldg_w(wrow + kk, ok);
      r[i][1] = ldg_w(wrow + w8 + kk, ok);
    }
  };
  /* x batch b into buffer buf, zeros past m and k: segment c of the batch holds sub-chunks
   * [b sb, (b+1) sb) of group c's range. Each thread keeps one 16-byte column of the batch and
   * steps over token rows, so the loop does no division. */
  const int ups = 4 * sb * a.kwarps; /* 16-byte units per token row of a full batch (<= 128) */
  const int xtok0 = tid / ups, xu = tid - xtok0 * ups;
  const int xstep = BF16FP32__SMALLM_THREADS / ups;
  const int xseg = xu / (4 * sb), xin = xu - xseg * 4 * sb; /* the column's group and place */
  int xj0, xj1;
  bf16fp32__smallm_chain(nsubs, xseg, a.kwarps, &xj0, &xj1);
  auto load_x = [&](int b, int buf) {
    const int sub = xj0 + b * sb + (xin >> 2);
    if (sub >= xj1 || xtok0 >= xstep) return; /* (threads past xstep whole rows idle) */
    const long long kk = kb + 32LL * sub + 8 * (xin & 3);
    const uint32_t dst = xs + buf * a.xbuf_bytes + 16 * xu;
    const uint16_t *src = a.x + xtok0 * a.ldx + kk;
    const long long src_step = xstep * a.ldx;
    for (int tok = xtok0; tok < a.mpad; tok += xstep, src += src_step) {
      const bool ok = tok < a.m && kk < ke;
      cp16(dst + bf16fp32__smallm_rowoff(tok, a.xk), ok ? src : a.x, ok ? 16u : 0u);
    }
  };

  float acc[MT][4];
#pragma unroll
  for (int j = 0; j < MT; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
  /* x is staged for all 8 * MT token rows (zeros past m): no per-tile branch in the MMA loop. */
  const int xrow = bf16fp32__smallm_rowoff(g, a.xk) + 16 * t;
  const int xtile = 4 * (4 * a.xk + 64); /* bytes between token tiles (8 rows) */
  auto compute = [&](const uint4 (&r)[SB][2], int b, int buf) {
    const unsigned char *xb = smem + buf * a.xbuf_bytes + xrow;
#pragma unroll
    for (int i = 0; i < SB; i++) {
      if (i < sb && b * sb + i < nq) {
        const unsigned char *xl = xb + 64 * (wk * sb + i); /* sub-chunk within the batch */
        constexpr int G = MT < 8 ? MT : 8; /* B fragments loaded 8 tiles at a time */
#pragma unroll
        for (int j0 = 0; j0 < MT; j0 += G) {
          uint4 bv[G];
#pragma unroll
          for (int j = 0; j < G; j++) bv[j] = *reinterpret_cast<const uint4 *>(xl + (j0 + j) * xtile);
#pragma unroll
          for (int j = 0; j < G; j++) bf16fp32__smallm_mma_sub(acc[j0 + j], r[i][0], r[i][1], bv[j]);
        }
      }
    }
  };

  /* The whole weight slice of the block is requested into L2 first, earliest K first, so
   * that all of it is in flight at once; the register loads below then mostly hit L2. The
   * weights do not depend on the previous kernel: with programmatic dependent launch these
   * requests go out while it finishes (ptxas keeps prefetches, unlike register loads, ahead of
   * griddepcontrol.wait). x is read only after the wait. Without the launch attribute both
   * griddepcontrol instructions do nothing. */
  {
    const int lines = static_cast<int>((ke - kb + 63) >> 6); /* 128-byte lines per row */
    const uint16_t *w0 = a.w + n0 * a.ldw + kb;
    for (int i = tid; i < lines * a.rows; i += BF16FP32__SMALLM_THREADS) {
      const int l = i >> a.rshift, r = i & (a.rows - 1);
      asm volatile("prefetch.global.L2 [%0];" ::"l"(w0 + r * a.ldw + 64 * l));
    }
  }
  /* x may be the previous kernel's output, so it is staged only after the wait; requested into
   * L2 before it all the same (L2 is where that kernel's writes land): each token row of the
   * slice by one of the blocks that share the slice. */
  if (X_TO_L2 && ke > kb) /* (a cluster's last slices can be empty) */
    for (int tok = static_cast<int>(blockIdx.y) + static_cast<int>(gridDim.y) * tid; tok < a.m;
         tok += static_cast<int>(gridDim.y) * BF16FP32__SMALLM_THREADS)
      bf16fp32__bulk_to_l2(a.x + tok * a.ldx + kb, static_cast<uint32_t>(2 * (ke - kb)));
  uint4 wa[SB][2], wb[SB][2];
  load_w(wa, 0);
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  BF16FP32__SMALLM_STAMP(1);
  load_x(0, 0);
  cp_commit();

  /* Batch b: prefetch batch b+1 (weights into the other registers, x into the other buffer
   * when double-buffered), then compute b. */
  auto step = [&](const uint4 (&cur)[SB][2], uint4 (&nxt)[SB][2], int b) {
    const bool more = b + 1 < nb;
    if (more) load_w(nxt, b + 1);
    if (a.dbuf) {
      if (more) load_x(b + 1, (b + 1) & 1);
      cp_commit();
      cp_wait<1>();
    } else {
      if (b > 0) {
        __syncthreads(); /* everyone is done with the one buffer */
        load_x(b, 0);
        cp_commit();
      }
      cp_wait<0>();
    }
    __syncthreads();
    compute(cur, b, a.dbuf ? (b & 1) : 0);
    if (a.dbuf) __syncthreads(); /* buffer b & 1 is refilled by the next step */
  };
  for (int b = 0; b < nb; b += 2) {
    step(wa, wb, b);
    if (b + 1 < nb) step(wb, wa, b + 1);
  }
  __syncthreads(); /* the x buffers become the partial sums */
  BF16FP32__SMALLM_STAMP(3);

  bf16fp32__smallm_finish_warps<MT>(acc, reinterpret_cast<float *>(smem), wk, wn, a.m, a.mpad,
                                    a.rows, a.kwarps, a.ksplit, a.out + n0, a.ldo);
}

template <int MT>
cudaError_t launch_t(const Args &a, const bf16fp32__smallm_config *c, cudaStream_t stream,
                     int use_pdl) {
  cudaLaunchAttribute attr[2];
  cudaLaunchConfig_t cfg =
      bf16fp32__smallm_launch_config(c, c->smem_bytes, stream, use_pdl, attr);
  return cudaLaunchKernelEx(&cfg, use_pdl ? smallm_kernel<MT, true> : smallm_kernel<MT, false>, a);
}

}  // namespace

extern "C" int bf16fp32__smallm_load(size_t smem_limit) {
  int e = static_cast<int>(bf16fp32__smallm_allow_smem(
      smem_limit, smallm_kernel<1, false>, smallm_kernel<2, false>, smallm_kernel<4, false>,
      smallm_kernel<8, false>, smallm_kernel<16, false>, smallm_kernel<32, false>,
      smallm_kernel<1, true>, smallm_kernel<2, true>, smallm_kernel<4, true>,
      smallm_kernel<8, true>, smallm_kernel<16, true>, smallm_kernel<32, true>));
  if (e == 0) e = bf16fp32__smallm_decode_load(smem_limit);
  if (e == 0) e = bf16fp32__smallm_wide_load(smem_limit);
  if (e == 0) e = bf16fp32__smallm_stream_load(smem_limit);
  if (e == 0) e = bf16fp32__smallm_wgmma_load(smem_limit);
  if (e == 0) e = bf16fp32__smallm_share_load(smem_limit);
  if (e == 0) e = bf16fp32__smallm_fold_load(smem_limit);
  return e;
}

extern "C" int bf16fp32__smallm_launch(const bf16fp32__smallm_config *c, int64_t m, int64_t n,
                                       int64_t k, const uint16_t *x, int64_t ldx,
                                       const uint16_t *w, int64_t ldw, float *out, int64_t ldo,
                                       void *stream, int use_pdl) {
  if (c->wgmma)
    return bf16fp32__smallm_wgmma_launch(c, m, n, k, x, ldx, w, ldw, out, ldo, stream, use_pdl);
  if (c->wide) return bf16fp32__smallm_wide_launch(c, m, n, k, x, ldx, w, ldw, out, ldo, stream, use_pdl);
  if (c->fold) return bf16fp32__smallm_fold_launch(c, m, k, x, ldx, w, ldw, out, ldo, stream, use_pdl);
  if (c->share) return bf16fp32__smallm_share_launch(c, m, k, x, ldx, w, ldw, out, ldo, stream, use_pdl);
  if (c->stream) return bf16fp32__smallm_stream_launch(c, m, n, k, x, ldx, w, ldw, out, ldo, stream, use_pdl);
  if (c->decode) return bf16fp32__smallm_decode_launch(c, m, k, x, ldx, w, ldw, out, ldo, stream, use_pdl);
  Args a;
  bf16fp32__smallm_fill_operands(a, x, ldx, w, ldw, out, ldo);
  bf16fp32__smallm_fill_split(a, c, m, k, c->split.rows);
  a.k = static_cast<int>(k);
  a.rshift = 0;
  while ((1 << a.rshift) < a.rows) a.rshift++;
  a.sb = c->sb, a.xk = c->xk, a.dbuf = c->dbuf;
  a.xbuf_bytes = static_cast<int>(c->xbuf_bytes);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (c->mt) {
    case 1: return static_cast<int>(launch_t<1>(a, c, s, use_pdl));
    case 2: return static_cast<int>(launch_t<2>(a, c, s, use_pdl));
    case 4: return static_cast<int>(launch_t<4>(a, c, s, use_pdl));
    case 8: return static_cast<int>(launch_t<8>(a, c, s, use_pdl));
    case 16: return static_cast<int>(launch_t<16>(a, c, s, use_pdl));
    default: return static_cast<int>(launch_t<32>(a, c, s, use_pdl));
  }
}
