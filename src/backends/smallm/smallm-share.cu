/* smallm share kernel (sm_90, M <= 64): the decode kernel's work and sums (same split, warp
 * groups, k permutation, MMA order, reduction tree) with each block's whole share of the weights
 * (its rows' K slice) brought into shared memory at entry by one 1-D bulk copy per row, on one
 * mbarrier; then, after griddepcontrol.wait, x's slice by one copy per token row on another, or
 * (share_xreg, M <= 16) each lane's x fragments straight into registers. With share_late the
 * last warp groups' columns of the rows are copied after the wait, on a third mbarrier: a
 * dependent grid's wait is released only once its own reads in flight have landed
 * (bench/pdl-drain.cu), so fewer of them before it can shorten the hand-over from the previous
 * call (docs/smallm-notes.md, session 26); with share_late_l2 those columns are also requested
 * into L2 before the wait, which holds it far less, so that their copies after it read L2
 * (session 30). With share_tiles = 2 a block holds two neighbouring row blocks of the split (same
 * K slice), each warp summing its rows of both with the same x fragments, and the grid along N
 * is halved: under PDL the next call's blocks then run on SMs of their own (session 31). With
 * share_xwide (one token tile) a lane holds up to 16 sub-chunks of x, so that rows that take all
 * of a block's shared memory (1024x7168, two row blocks) need no token rows beside them.
 *
 * Why: under programmatic dependent launch all of a block's weights are then requested before
 * the wait, in 16-32 copies as long as the slice's rows, where the stream kernel's rings hold a
 * few sub-chunks per warp in 2-D boxes of 16 rows. On the H200 (docs/smallm-notes.md, session 23,
 * trace of the last call of a PDL chain) at 384x7168 M = 1 the main loop after the wait took
 * 1.1 us here against 2.3 in the stream kernel, and a call 2.70 us against 3.19; where a block
 * needs more than half an SM (no room for the next call's block) it is slower, and so is a plain
 * launch at most shapes, whose loop waits for all of the block's weights.
 *
 * The rows: a row per slice of (sub-chunks | 1) x 64 bytes (64 mod 128, so that the 16-byte
 * fragment reads of rows g and g + 1 fall in different banks), within the shared memory of one
 * block (bf16fp32__smallm_use_share); the partial sums go over them at the end. With a K split
 * the block sums are pushed to their owner ranks (bf16fp32__smallm_cluster_push) into receive
 * slots after the rows. */
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "smallm-cluster-sum.cuh"
#include "smallm-launch-config.cuh"
#include "smallm-launch.h"
#include "smallm-tiles.cuh"
#include "smallm-trace.cuh"
#include "smallm-warp-place.cuh"

namespace {

constexpr int XR = BF16FP32__SMALLM_XREG_SUBS; /* share_xreg: sub-chunks of x a lane holds */
constexpr int XW = BF16FP32__SMALLM_XREG_WIDE_SUBS; /* share_xwide: the same, one token tile */

struct HArgs {
  const uint16_t *x, *w;
  float *out;
  long long ldx, ldw, ldo;
  int m;
  int rows, ksplit, kwarps;
  bf16fp32__smallm_slices slices;
  int mpad;
  int pitch; /* bytes per row in shared memory */
  int pdl;   /* launched with programmatic dependent launch */
  int late;  /* the last `late` warp groups' weight columns are copied after the wait */
  int late_l2; /* and (under PDL) requested into L2 before it */
  int recv;    /* with a K split: the push's receive slots, bytes from the start of shared memory */
#ifdef BF16FP32_SMALLM_DELAY
  long long delay[3]; /* smallm-probe --delay: the spins' cycles (smallm-trace.cuh) */
#endif
};

/* Block (rank, blockIdx.y) and warp (wk, wn) as in the decode kernel. WP (share_wpre, ranges of
 * at most XR sub-chunks, x's rows in shared memory): the warp's weight fragments go from shared
 * memory into registers once the weights have landed, before griddepcontrol.wait (1) or once x's
 * copies are on their way (2); then each sub-chunk's MMAs read only x's fragments. LATE
 * (share_late, WP = 0): instances of their own, so that the others' code stays as it was
 * measured (its branches cost 1-3 % under PDL where no group is late, session 26). TL: row
 * blocks of the split per block (share_tiles; 2 only with WP = 0). XN: sub-chunks of x a lane
 * holds (XREG). */
template <int MT, bool XREG, int WP, bool LATE = false, int TL = 1, int XN = XR>
__global__ void __launch_bounds__(BF16FP32__SMALLM_THREADS, 1)
    smallm_share_kernel(const __grid_constant__ HArgs a) {
  static_assert(TL == 1 || (TL == 2 && WP == 0),
                "two row blocks: the weight fragments from shared memory");
  extern __shared__ __align__(128) unsigned char smem[];
  BF16FP32__SMALLM_STAMP(0);
  BF16FP32__SMALLM_DELAY(a.delay[0]);
  const bf16fp32__smallm_place pl = bf16fp32__smallm_place_warp(a.slices, a.ksplit, a.kwarps);
  const int lane = pl.lane, warp = pl.warp, g = pl.g, t = pl.t;
  const int n0 = static_cast<int>(blockIdx.y) * a.rows;
  const int len = static_cast<int>(pl.ke - pl.kb); /* the slice's columns, a multiple of 8 */
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const uint32_t wbar = base, xbar = base + 8, lbar = base + 16, rbar = base + 24;
  /* byte offsets of the two row sets, after the barriers */
  const int wrows = BF16FP32__SMALLM_SHARE_BARS, xrows = wrows + a.rows * a.pitch;

  /* LATE (share_late): each row's bytes from column 32 js on (the last a.late warp groups'
   * ranges) come after the wait on lbar, which only those groups' warps wait for; the rest
   * before it on wbar. Without it, all of them before the wait on wbar. */
  int js = pl.nsubs, je;
  if (LATE) bf16fp32__smallm_chain(pl.nsubs, a.kwarps - a.late, a.kwarps, &js, &je);
  /* each row's bytes before and after the wait (LATE) */
  const int early_bytes = min(2 * len, 64 * js), late_bytes = 2 * len - early_bytes;
  const uint32_t mybar = LATE && pl.wk >= a.kwarps - a.late ? lbar : wbar;
  /* row r's late columns in global memory (LATE): what its L2 request and its late copy read */
  auto late_src = [&](int r) { return a.w + (n0 + r) * a.ldw + pl.kb + early_bytes / 2; };
  if (threadIdx.x == 0) {
    bf16fp32__bar_init(wbar);
    bf16fp32__bar_init(xbar);
    if (LATE) bf16fp32__bar_init(lbar);
    if (a.ksplit > 1) bf16fp32__bar_init(rbar);
    bf16fp32__bar_init_fence();
    /* each barrier's one arrival, with the bytes its copies bring (rbar's below) */
    bf16fp32__bar_expect(wbar, LATE ? a.rows * early_bytes : a.rows * 2 * len);
    if (!XREG) bf16fp32__bar_expect(xbar, a.m * 2 * len);
    if (LATE) bf16fp32__bar_expect(lbar, a.rows * late_bytes);
  }
  /* A slice that ends inside a sub-chunk (K's end): the rest of that sub-chunk reads as zeros, as
   * a tensor map's copies fill it. The copies write other bytes of the rows. */
  const int tail = (32 - (len & 31)) & 31;
  if (tail)
    for (int r = threadIdx.x; r < a.rows + (XREG ? 0 : a.m); r += blockDim.x) {
      unsigned char *row = smem + (r < a.rows ? wrows + r * a.pitch : xrows + (r - a.rows) * a.pitch);
      for (int b = 2 * len; b < 2 * (len + tail); b += 16)
        *reinterpret_cast<uint4 *>(row + b) = make_uint4(0u, 0u, 0u, 0u);
    }
  __syncthreads();
  /* The rows' copies, row r by lane r / 8 of warp r % 8: a warp issues its lanes' copies one
   * after another (about 60 cycles each on the H200, bench/bulk-issue.cu), so eight warps issue
   * 32 rows of 1 KB in about a quarter of one warp's time. The weights do not depend on the
   * previous kernel: they go before the wait (LATE: all but the late columns, copied after it
   * below); warp 1 also requests x's rows into L2 (where a previous kernel's writes land), each
   * once per call (by the slice's block blockIdx.y mod M). */
  constexpr int CW = BF16FP32__SMALLM_WARPS;
  if (!LATE || early_bytes)
    for (int r = warp + CW * lane; r < a.rows; r += 32 * CW)
      bf16fp32__bulk_copy(base + wrows + r * a.pitch, a.w + (n0 + r) * a.ldw + pl.kb,
                          LATE ? early_bytes : 2 * len, wbar);
  /* late_l2: the late columns requested into L2 before the wait, so that their copies after it
   * read L2; a dependent's wait waits for its own copies into shared memory in flight, much less
   * for its L2 requests (bench/pdl-drain.cu) */
  if (LATE && a.late_l2 && a.pdl && late_bytes)
    for (int r = warp + CW * lane; r < a.rows; r += 32 * CW)
      bf16fp32__bulk_to_l2(late_src(r), late_bytes);
  if (warp == 1 && a.pdl)
    for (int r = lane; r < a.m; r += 32)
      if (r % gridDim.y == blockIdx.y)
        bf16fp32__bulk_to_l2(a.x + r * a.ldx + pl.kb, 2 * len);
  /* The push's mbarrier armed with the other ranks' bytes and the arrival that tells them so,
   * after the copies have gone out: its divisions before them made every copy about 0.1 us
   * later (docs/smallm-notes.md, session 37). */
  if (a.ksplit > 1) {
    if (threadIdx.x == 0) bf16fp32__smallm_push_arm(rbar, a.m * (a.rows >> 2));
    bf16fp32__smallm_push_arrive();
  }
  /* lane (g, t): 16 bytes at k = 8t of rows g and g + 8 of the warp's 16 and of token g in each
   * sub-chunk, the decode kernel's fragments; TL = 2 (share_tiles): the same rows of the second
   * row block (a.rows / 2 rows on) at tb bytes on */
  const unsigned char *wr = smem + wrows + (16 * pl.wn + g) * a.pitch + 16 * t;
  const int trows = TL == 1 ? a.rows : a.rows >> 1, tb = trows * a.pitch;
  const int nq = pl.j1 - pl.j0; /* the warp's sub-chunks */
  /* WP: where each form measured faster, the table in smallm-config.c (share_132) says */
  uint4 w0[WP ? XR : 1], w8[WP ? XR : 1];
  auto read_w = [&]() {
    const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
    bf16fp32__bar_wait(mybar, 0);
#pragma unroll
    for (int q = 0; q < XR; q++) {
      w0[q] = q < nq ? bf16fp32__lds16(wr + 64 * (pl.j0 + q)) : zero;
      w8[q] = q < nq ? bf16fp32__lds16(wr + 8 * a.pitch + 64 * (pl.j0 + q)) : zero;
    }
  };
  if (WP == 1) read_w();
  asm volatile("griddepcontrol.wait;" ::: "memory");
  BF16FP32__SMALLM_STAMP(1);
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  BF16FP32__SMALLM_DELAY(a.delay[1]);
  if (!XREG)
    for (int r = warp + CW * lane; r < a.m; r += 32 * CW)
      bf16fp32__bulk_copy(base + xrows + r * a.pitch, a.x + r * a.ldx + pl.kb, 2 * len, xbar);
  if (LATE && late_bytes)
    for (int r = warp + CW * lane; r < a.rows; r += 32 * CW)
      bf16fp32__bulk_copy(base + wrows + r * a.pitch + early_bytes, late_src(r), late_bytes, lbar);

  float acc[TL][MT][4];
#pragma unroll
  for (int b = 0; b < TL; b++)
#pragma unroll
    for (int j = 0; j < MT; j++) acc[b][j][0] = acc[b][j][1] = acc[b][j][2] = acc[b][j][3] = 0.0f;
  /* tokens past M read token M - 1, whose products go only to outputs that are never stored */
  if constexpr (XREG) {
    /* x's fragments of the warp's whole range (at most XN sub-chunks) from global memory, where
     * the requests above put them in L2; columns past K read as zeros */
    uint4 xv[XN][MT];
#pragma unroll
    for (int j = 0; j < MT; j++) {
      const uint16_t *xg = a.x + min(8 * j + g, a.m - 1) * a.ldx + pl.kb + 32 * pl.j0 + 8 * t;
#pragma unroll
      for (int q = 0; q < XN; q++)
        xv[q][j] = pl.j0 + q < pl.j1 && 32 * (pl.j0 + q) + 8 * t < len
                       ? *reinterpret_cast<const uint4 *>(xg + 32 * q)
                       : make_uint4(0u, 0u, 0u, 0u);
    }
    bf16fp32__bar_wait(mybar, 0);
#pragma unroll
    for (int q = 0; q < XN; q++)
      if (pl.j0 + q < pl.j1) {
        uint4 r0[TL], r8[TL];
#pragma unroll
        for (int b = 0; b < TL; b++) {
          r0[b] = bf16fp32__lds16(wr + b * tb + 64 * (pl.j0 + q));
          r8[b] = bf16fp32__lds16(wr + b * tb + 8 * a.pitch + 64 * (pl.j0 + q));
        }
#pragma unroll
        for (int j = 0; j < MT; j++)
#pragma unroll
          for (int b = 0; b < TL; b++) bf16fp32__smallm_mma_sub(acc[b][j], r0[b], r8[b], xv[q][j]);
      }
  } else if constexpr (WP != 0) {
    if (WP == 2) read_w();
    const unsigned char *xr[MT];
#pragma unroll
    for (int j = 0; j < MT; j++) xr[j] = smem + xrows + min(8 * j + g, a.m - 1) * a.pitch + 16 * t;
    bf16fp32__bar_wait(xbar, 0);
    BF16FP32__SMALLM_STAMP(2);
#pragma unroll
    for (int q = 0; q < XR; q++)
      if (q < nq) {
        uint4 xf[MT];
#pragma unroll
        for (int j = 0; j < MT; j++) xf[j] = bf16fp32__lds16(xr[j] + 64 * (pl.j0 + q));
#pragma unroll
        for (int j = 0; j < MT; j++) bf16fp32__smallm_mma_sub(acc[0][j], w0[q], w8[q], xf[j]);
      }
  } else {
    const unsigned char *xr[MT];
#pragma unroll
    for (int j = 0; j < MT; j++) xr[j] = smem + xrows + min(8 * j + g, a.m - 1) * a.pitch + 16 * t;
    bf16fp32__bar_wait(mybar, 0);
    bf16fp32__bar_wait(xbar, 0);
    BF16FP32__SMALLM_STAMP(2);
    /* PF sub-chunks' fragments are read before their MMAs, so that the reads' latency is paid
     * once per PF sub-chunks and not between the chain's MMAs (on the H200 0.97-0.98x the time
     * under PDL at 256x7168, 384x7168 and 512x4096 M <= 8; docs/smallm-notes.md, session 24);
     * with two row blocks half as many, so that the fragments take as many registers */
    constexpr int PF = MT * TL >= 8 ? 1 : 8 / (MT * TL);
    for (int s0 = pl.j0; s0 < pl.j1; s0 += PF) {
      uint4 r0[PF][TL], r8[PF][TL], xf[PF][MT];
#pragma unroll
      for (int q = 0; q < PF; q++)
        if (s0 + q < pl.j1) {
#pragma unroll
          for (int b = 0; b < TL; b++) {
            r0[q][b] = bf16fp32__lds16(wr + b * tb + 64 * (s0 + q));
            r8[q][b] = bf16fp32__lds16(wr + b * tb + 8 * a.pitch + 64 * (s0 + q));
          }
#pragma unroll
          for (int j = 0; j < MT; j++) xf[q][j] = bf16fp32__lds16(xr[j] + 64 * (s0 + q));
        }
#pragma unroll
      for (int q = 0; q < PF; q++)
        if (s0 + q < pl.j1)
#pragma unroll
          for (int j = 0; j < MT; j++)
#pragma unroll
            for (int b = 0; b < TL; b++)
              bf16fp32__smallm_mma_sub(acc[b][j], r0[q][b], r8[q][b], xf[q][j]);
    }
  }
  BF16FP32__SMALLM_STAMP(3);
  /* The partial sums go over the rows, once every warp is done with them. */
  __syncthreads();
  bf16fp32__smallm_finish_tiles<MT, TL>(acc, reinterpret_cast<float *>(smem + wrows), pl.wk, pl.wn,
                                        trows >> 4, a.m, a.mpad, a.rows, a.kwarps, a.ksplit,
                                        a.out + n0, a.ldo,
                                        reinterpret_cast<float4 *>(smem + a.recv), rbar);
  BF16FP32__SMALLM_DELAY(a.delay[2]);
}

/* The instance a launch runs: mt token tiles, x in registers (xreg, mt <= 2; xwide: the longer
 * ranges, mt = 1, no late group) or the weight fragments in registers (wpre 1 or 2; not with
 * xreg), late warp groups (not with wpre), two row blocks (tiles = 2; not with wpre). */
using ShareKernel = void (*)(HArgs);
template <int WP, bool LATE = false, int TL = 1>
ShareKernel share_kernel_w(int mt) {
  return mt == 1   ? smallm_share_kernel<1, false, WP, LATE, TL>
         : mt == 2 ? smallm_share_kernel<2, false, WP, LATE, TL>
         : mt == 4 ? smallm_share_kernel<4, false, WP, LATE, TL>
                   : smallm_share_kernel<8, false, WP, LATE, TL>;
}
template <bool LATE, int TL = 1>
ShareKernel share_kernel_x(int mt) { /* x in registers: mt <= 2 */
  return mt == 1 ? smallm_share_kernel<1, true, 0, LATE, TL>
                 : smallm_share_kernel<2, true, 0, LATE, TL>;
}
template <int TL>
ShareKernel share_kernel_xwide() { /* x in registers, ranges of up to XW sub-chunks: mt = 1 */
  return smallm_share_kernel<1, true, 0, false, TL, XW>;
}
template <int TL>
ShareKernel share_kernel_t(int mt, bool xreg, bool late) { /* wpre 0 */
  if (xreg) return late ? share_kernel_x<true, TL>(mt) : share_kernel_x<false, TL>(mt);
  return late ? share_kernel_w<0, true, TL>(mt) : share_kernel_w<0, false, TL>(mt);
}
ShareKernel share_kernel(int mt, bool xreg, int wpre, bool late, int tiles, bool xwide) {
  if (xwide) return tiles == 2 ? share_kernel_xwide<2>() : share_kernel_xwide<1>();
  if (tiles == 2) return share_kernel_t<2>(mt, xreg, late);
  if (wpre == 0) return share_kernel_t<1>(mt, xreg, late);
  return wpre == 1 ? share_kernel_w<1>(mt) : share_kernel_w<2>(mt);
}

}  // namespace

extern "C" int bf16fp32__smallm_share_load(size_t smem_limit) {
  cudaError_t e = cudaSuccess;
  for (int tiles = 1; tiles <= 2; tiles++) {
    for (int mt = 1; mt <= 8 && e == cudaSuccess; mt *= 2)
      e = bf16fp32__smallm_allow_smem(smem_limit, share_kernel(mt, false, 0, false, tiles, false),
                                      share_kernel(mt, false, 0, true, tiles, false));
    for (int mt = 1; mt <= 2 && e == cudaSuccess; mt++) /* x in registers: mt <= 2 */
      e = bf16fp32__smallm_allow_smem(smem_limit, share_kernel(mt, true, 0, false, tiles, false),
                                      share_kernel(mt, true, 0, true, tiles, false));
  }
  if (e == cudaSuccess)
    e = bf16fp32__smallm_allow_smem(smem_limit, share_kernel(1, true, 0, false, 1, true),
                                    share_kernel(1, true, 0, false, 2, true));
  for (int mt = 1; mt <= 8 && e == cudaSuccess; mt *= 2)
    e = bf16fp32__smallm_allow_smem(smem_limit, share_kernel(mt, false, 1, false, 1, false),
                                    share_kernel(mt, false, 2, false, 1, false));
  return static_cast<int>(e);
}

#ifdef BF16FP32_SMALLM_DELAY
/* the probe's spins (a probe build's only state outside a context) */
static long long probe_delay[3];
#endif

extern "C" int bf16fp32__smallm_share_launch(const bf16fp32__smallm_config *c, int64_t m,
                                             int64_t k, const uint16_t *x, int64_t ldx,
                                             const uint16_t *w, int64_t ldw, float *out,
                                             int64_t ldo, void *stream, int use_pdl) {
  HArgs a;
  bf16fp32__smallm_fill_operands(a, x, ldx, w, ldw, out, ldo);
  bf16fp32__smallm_fill_split(a, c, m, k, c->share_tiles * c->split.rows);
  a.pitch = c->share_pitch;
  a.pdl = use_pdl != 0;
  a.late = c->share_late;
  a.late_l2 = c->share_late_l2;
  a.recv = static_cast<int>(c->share_smem - bf16fp32__smallm_share_recv(c, m));
#ifdef BF16FP32_SMALLM_DELAY
  for (int i = 0; i < 3; i++) a.delay[i] = probe_delay[i];
#endif
  cudaLaunchAttribute attr[2];
  const cudaLaunchConfig_t cfg = bf16fp32__smallm_launch_config(
      c, c->share_smem, static_cast<cudaStream_t>(stream), use_pdl, attr);
  const ShareKernel kern = share_kernel(c->mt, c->share_xreg != 0, c->share_wpre,
                                        c->share_late > 0, c->share_tiles, c->share_xwide != 0);
  return static_cast<int>(cudaLaunchKernelEx(&cfg, kern, a));
}

#ifdef BF16FP32_SMALLM_DELAY
/* bench/smallm-probe.cu --delay: the spins' cycles at points 0-2 of the launches that follow */
cudaError_t bf16fp32__smallm_set_delay(const long long cycles[3]) {
  for (int i = 0; i < 3; i++) probe_delay[i] = cycles[i];
  return cudaSuccess;
}
#endif
