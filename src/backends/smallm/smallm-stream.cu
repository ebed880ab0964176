/* smallm stream kernel (sm_90, M <= 64): the decode kernel's work and sums (same split, warp
 * groups, k permutation, MMA order, reduction tree) with the weights and x brought in by
 * tensor-map bulk copies instead of register loads. Each warp streams its own 16 rows over its
 * group's range of sub-chunks through a private ring of shared-memory stages (one 2-D box of
 * weights and one of x per stage, 1 to 7 sub-chunks of them, one mbarrier each), issued by its
 * lane 0: no block barrier in the main loop, and the copies in flight cost no registers. The
 * copies, unlike register loads (which ptxas places below griddepcontrol.wait), start while a
 * previous kernel under programmatic dependent launch finishes. On the H200 at 2048 x 7168
 * (smallm-probe --stream-sweep, docs/smallm-notes.md sessions 10 and 12), against the decode
 * kernel: M = 1 (stages of 7 sub-chunks) 9.28 us against 10.79, and 7.48 against 9.98 in a PDL
 * chain; M = 16 (of 5) 11.57 against 13.22; M = 32 (of 3) 13.5 against 16.0; M = 64 (of 1, where
 * the x rows fill most of a stage) 16.7 against 20.1.
 *
 * With groups (GR = 2, one K slice, WK = 8; bf16fp32__smallm_use_stream): a cluster of two
 * blocks shares 32 rows, rank r summing chains 4r .. 4r + 3, and the two warps of a chain (rows
 * 0-15 and 16-31) share one ring, so each x stage is fetched once for 32 rows instead of 16: at
 * M = 16-64 the x rows are most of what a stage brings. The chain sums are added in chain order
 * by the cluster (bf16fp32__smallm_finish_groups), as one block adds them. On the H200 at
 * 2048 x 7168, stages of 3 sub-chunks x 3: M = 32 12.87 us against 13.53 with a ring per warp,
 * M = 64 15.12 against 17.06; slower at M <= 16 (the cluster sum, half the rings in flight).
 *
 * Where x's boxes go out (XMode, per launch kind, bf16fp32__smallm_stream_launch): after
 * griddepcontrol.wait; in plain launches with a ring per warp, two stages and up to 16 tokens,
 * or with 17-64 tokens, each first stage's x box right after its weights (XIL); under
 * programmatic dependent launch after the wait, with the warp's x boxes requested into L2
 * before it. */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

#include "smallm-cluster-sum.cuh"
#include "smallm-launch-config.cuh"
#include "smallm-launch.h"
#include "smallm-tiles.cuh"
#include "smallm-trace.cuh"
#include "smallm-warp-place.cuh"

namespace {

constexpr int MAXG = BF16FP32__SMALLM_STREAM_MAX_SUBS; /* sub-chunks a stage holds at most */

/* A template argument, so that each launch kind keeps its own code. */
enum XMode { X_AFTER_WAIT, X_BESIDE_WEIGHTS, X_L2_BEFORE_WAIT };

struct SArgs {
  CUtensorMap tw; /* w as K x N bf16, boxes of 32 box x 16 GR (box: subs rounded up to odd) */
  CUtensorMap tx; /* x as K x M bf16, boxes of 32 box x M */
  float *out;
  long long ldo;
  int m, k;
  int rows, ksplit, kwarps; /* rows: of a block (the split's, times GR) */
  bf16fp32__smallm_slices slices; /* the K slices (bf16fp32__smallm_fill_slices) */
  int mpad;        /* 8 * MT: tokens of the partial sums */
  int subs;        /* sub-chunks per stage (an even count leaves its box's last one a pad) */
  int pitch;       /* bytes per row of a stage: 64 box, 64 mod 128 */
  int stages;      /* stages per ring */
  int stage_bytes; /* the weight box, the x box (M rows), to 128 bytes */
  int tx_bytes;    /* what the two boxes bring: (16 GR + M) * pitch */
  int w_to_l2;     /* the config's stream_wl2 (read under PDL only) */
  int early;       /* the config's stream_early (read under PDL only) */
  int part_over;   /* the config's stream_over */
  /* With token blocks (above M = 64): tx's boxes have 64 rows, those of the last block's x
   * come from tx_tail (m_tail rows). */
  CUtensorMap tx_tail;
  int m_tail;
};

/* The main loop of smallm_stream_kernel below, once for both of its forms: the stages of the
 * warp's range in order, the sub-chunks of each unrolled UNROLL times, those for which TAKE holds
 * (p: the sub-chunk's place in the stage) and that lie in the range multiplied; then the slot is
 * handed back to the ring's issuer for the stage `stages` later. */
#define STREAM_STAGES(UNROLL, TAKE)                                                              \
  do {                                                                                           \
    int slot = 0;                                                                                \
    uint32_t phase = 0;                                                                          \
    for (int q = 0; q < nst; q++) {                                                              \
      BF16FP32__SMALLM_WAIT_BEGIN();                                                             \
      bf16fp32__bar_wait(bars + 8 * slot, phase);                                                \
      BF16FP32__SMALLM_WAIT_END();                                                               \
      const unsigned char *st = smem + ring_off + slot * a.stage_bytes;                          \
      _Pragma("unroll") for (int p = 0; p < (UNROLL); p++) if ((TAKE) && G * q + p < nq) {       \
        const uint4 r0 = bf16fp32__lds16(st + arow + 64 * p);                                    \
        const uint4 r8 = bf16fp32__lds16(st + arow8 + 64 * p);                                   \
        _Pragma("unroll") for (int j = 0; j < MT; j++)                                           \
            bf16fp32__smallm_mma_sub(acc[j], r0, r8, bf16fp32__lds16(st + brow[j] + 64 * p));    \
      }                                                                                          \
      __syncwarp(); /* the warp is done with the slot: it takes stage q + stages */              \
      if (GR > 1 && !leader && lane == 0) /* ... once the ring's other warp is too */            \
        asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(empty + 8 * slot)          \
                     : "memory");                                                                \
      if (issuer && q + a.stages < nst) {                                                        \
        if (GR > 1) bf16fp32__bar_wait(empty + 8 * slot, phase);                                 \
        load_w(q + a.stages, slot), load_x(q + a.stages, slot);                                  \
      }                                                                                          \
      if (++slot == a.stages) slot = 0, phase ^= 1;                                              \
    }                                                                                            \
  } while (0)

/* Block (rank, blockIdx.y) and warp (wk, wn) as in the decode kernel: rows n0 + 16 wn .. + 15,
 * group wk's range of the rank's K slice, summed in increasing order, two MMAs per sub-chunk;
 * then the partial sums go to the cluster sum (with groups: the chains' sums, in chain order).
 * TB: token block blockIdx.z of 64 tokens (the last one the rest), each as a call of its own.
 * PAIR: the instance of paired launches (bf16fp32__smallm_stream_pair), which may have up to
 * twice the threads; those past the eight warps leave at once (they only hold registers). */
template <int MT, int GR, int XM, bool TB = false, bool PAIR = false>
__global__ void __launch_bounds__((PAIR ? 2 : 1) * BF16FP32__SMALLM_THREADS, 1)
    smallm_stream_kernel(const __grid_constant__ SArgs a) {
  constexpr bool XIL = XM == X_BESIDE_WEIGHTS;
  constexpr int NT = PAIR ? BF16FP32__SMALLM_THREADS : 0; /* the sums' threads: the workers */
  extern __shared__ __align__(128) unsigned char smem[];
  if (PAIR && threadIdx.x >= BF16FP32__SMALLM_THREADS) return;
  BF16FP32__SMALLM_STAMP(0);
  /* this block's tokens, the first of them, its x boxes and what a stage's two boxes bring */
  const bool tail = TB && blockIdx.z + 1 == gridDim.z;
  const int mb = !TB ? a.m : tail ? a.m_tail : BF16FP32__SMALLM_DECODE_MAX_M;
  const int tok0 = TB ? BF16FP32__SMALLM_DECODE_MAX_M * static_cast<int>(blockIdx.z) : 0;
  const CUtensorMap *const txm = tail ? &a.tx_tail : &a.tx;
  const int tx_bytes = TB ? (16 * GR + mb) * a.pitch : a.tx_bytes;
  /* The copies' descriptors start on their way before the arithmetic below. */
  if (threadIdx.x == 0)
    asm volatile("prefetch.tensormap [%0];\n\tprefetch.tensormap [%1];" ::"l"(&a.tw), "l"(txm)
                 : "memory");
  /* Under PDL the next call may launch now where the table says so (stream_early), its blocks
   * then fetching their weights while this call still waits; elsewhere only after the wait: the
   * extra calls in flight crowd the SMs (smallm-config.c, session 22). */
  constexpr bool PDL_LAUNCH = XM == X_L2_BEFORE_WAIT;
  if (PDL_LAUNCH && a.early) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const bf16fp32__smallm_place pl =
      GR == 1 ? bf16fp32__smallm_place_warp(a.slices, a.ksplit, a.kwarps)
              : bf16fp32__smallm_place_group(a.k, a.kwarps, GR);
  /* the warp's ring, whether it issues the ring's copies, its first row in a stage */
  const int ring = GR == 1 ? pl.warp : pl.warp & (a.kwarps / GR - 1); /* powers of two */
  const bool leader = GR == 1 || pl.wn == 0;
  const int row0 = GR == 1 ? 0 : 16 * pl.wn;
  const int lane = pl.lane, g = pl.g, t = pl.t, wk = pl.wk, wn = pl.wn;
  const int nq = pl.j1 - pl.j0;       /* this warp's sub-chunks */
  const int G = a.subs;
  const int nst = (nq + G - 1) / G;   /* ... in stages of G */
  const int col0 = static_cast<int>(pl.kb) + 32 * pl.j0;
  /* the stage's first weight row: the warp's own 16 (GR = 1), or the block's 32 (GR = 2) */
  const int n0 = static_cast<int>(blockIdx.y) * a.rows + (GR == 1 ? 16 * wn : 0);
  const bool issuer = leader && lane == 0;

  /* The rings' barriers (first 64 bytes per warp: a ring's stages are full; with GR = 2 the
   * next 64 its stages are free, once the ring's other warp is done with them), then their
   * stages. */
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const uint32_t bars = base + 64 * GR * ring, empty = bars + 64;
  const int ring_off = BF16FP32__SMALLM_STREAM_BARS + ring * a.stages * a.stage_bytes;
  const int wbytes = 16 * GR * a.pitch;
  if (issuer) {
    for (int s = 0; s < a.stages; s++) {
      bf16fp32__bar_init(bars + 8 * s);
      if (GR > 1) bf16fp32__bar_init(empty + 8 * s);
    }
    bf16fp32__bar_init_fence();
  }
  if (GR == 1) __syncwarp();
  else __syncthreads(); /* the ring's other warp waits on these barriers too */
  BF16FP32__SMALLM_STAMP(2);
  /* Stage q of the warp's range into ring slot `slot` (q mod stages): the weight box sets the bytes
   * the slot's barrier expects; x follows on the same barrier. */
  auto load_w = [&](int q, int slot) {
    const uint32_t bar = bars + 8 * slot;
    bf16fp32__bar_expect(bar, tx_bytes);
    bf16fp32__tma_box(base + ring_off + slot * a.stage_bytes, &a.tw, col0 + 32 * G * q, n0, bar);
  };
  auto load_x = [&](int q, int slot) {
    bf16fp32__tma_box(base + ring_off + slot * a.stage_bytes + wbytes, txm, col0 + 32 * G * q, tok0,
                      bars + 8 * slot);
  };
  /* The weights do not depend on the previous kernel: under programmatic dependent launch the
   * first stages' weights are fetched while it finishes, x only after it is done. XIL (plain
   * launches, bf16fp32__smallm_stream_launch): each stage's x box right after its weights. */
  if (issuer)
    for (int s = 0; s < a.stages && s < nst; s++) {
      load_w(s, s);
      if (XIL) load_x(s, s);
    }
  /* Under PDL x may be the previous kernel's output, so its boxes are copied only after the
   * wait; requesting them into L2 before it is safe all the same (L2 is where that kernel's
   * writes land), and the copies after it then find x there, not in DRAM. Each box once per
   * call: box q of a warp's range by block q (of the blocks that share the range). Where the
   * table says so, the weights past the first ring fill too. */
  if (XM == X_L2_BEFORE_WAIT && issuer) {
    for (int q = static_cast<int>(blockIdx.y); q < nst; q += static_cast<int>(gridDim.y))
      bf16fp32__tma_box_to_l2(txm, col0 + 32 * G * q, tok0);
    if (a.w_to_l2)
      for (int q = a.stages; q < nst; q++) bf16fp32__tma_box_to_l2(&a.tw, col0 + 32 * G * q, n0);
  }
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (!PDL_LAUNCH || !a.early) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  BF16FP32__SMALLM_STAMP(1);
  if (issuer && !XIL)
    for (int s = 0; s < a.stages && s < nst; s++) load_x(s, s);

  float acc[MT][4];
#pragma unroll
  for (int j = 0; j < MT; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
  /* lane (g, t): 16 bytes at k = 8t of rows g and g + 8 and of token g in each sub-chunk, the
   * decode kernel's fragments. A stage holds exactly M token rows (zero-filling rows past the
   * tensor's end made the copies slower: 2048x7168 M = 1 13.7 us against 12.0 at M = 16, and
   * the space goes to more stages); tokens past M read token M - 1, whose products go only to
   * outputs of tokens past M, which are never stored. */
  const int arow = (row0 + g) * a.pitch + 16 * t, arow8 = arow + 8 * a.pitch;
  int brow[MT];
#pragma unroll
  for (int j = 0; j < MT; j++) brow[j] = wbytes + min(8 * j + g, mb - 1) * a.pitch + 16 * t;
  /* The stages. Under programmatic dependent launch, and at 33-64 tokens, the stage size is a
   * compile-time constant where the table uses it (1, 3, 4 or 5 sub-chunks), so that a stage's
   * sub-chunks are unrolled under the range's end alone. On the H200 the loop below, unrolled
   * under predicates on the run-time size too, took about 200 cycles per sub-chunk with the data
   * already in shared memory against about 115 (docs/smallm-notes.md, session 19); it is what
   * the chain's MMAs wait on once the previous kernel is done. Plain launches at up to 32 tokens
   * keep that loop: their weights stream from DRAM, and the compile-time sizes measured about 1 %
   * slower there (2048x7168, 256x7168). */
  if constexpr (XM != X_L2_BEFORE_WAIT && MT < 8) {
    STREAM_STAGES(MAXG, p < G);
  } else {
    auto stages_of = [&](auto g_const) {
      constexpr int GC = decltype(g_const)::value; /* 0: G at run time */
      constexpr int UNROLL = GC > 0 ? GC : MAXG;
      STREAM_STAGES(UNROLL, GC > 0 || p < G);
    };
    switch (G) {
      case 1: stages_of(std::integral_constant<int, 1>{}); break;
      case 3: stages_of(std::integral_constant<int, 3>{}); break;
      case 4: stages_of(std::integral_constant<int, 4>{}); break;
      case 5: stages_of(std::integral_constant<int, 5>{}); break;
      default: stages_of(std::integral_constant<int, 0>{}); break; /* 2, 6, 7 */
    }
  }
  BF16FP32__SMALLM_STAMP(3);

  /* The partial sums: after the rings, or, where a block would not fit otherwise
   * (bf16fp32__smallm_use_stream), over the end of them once every warp is done with its ring;
   * with groups over their start (session 13). Session 18 on the H200 (smallm-probe --chosen,
   * three interleaved runs): a ring per warp with the sums over the rings' start was 3-6 % slower
   * at M <= 8, over their end as fast as after them (not explained); with groups the end was
   * 0.4-1 % slower than the start at 2048x7168 M = 20-32. With groups the warp's local chain is
   * recomputed, not `ring`: holding that across the loop changed ptxas's code for the measured
   * kernel, 109 -> 101 registers at MT = 8. The offset is computed here, as the configuration
   * sizes it: passed in from the configuration instead, the same offsets measured 6-9 % slower at
   * 1024x7168 M = 8 and 512x7168 M = 6 under PDL (session 18). */
  const bool over = GR > 1 || a.part_over;
  if (over) bf16fp32__smallm_workers_sync<NT>();
  const int rings_end = BF16FP32__SMALLM_WARPS * a.stages * a.stage_bytes; /* GR = 1 */
  const int part_bytes = (a.kwarps * a.mpad * (a.rows + 4) * 4 + 127) / 128 * 128;
  const int part_off = GR > 1 ? 0 : over ? max(rings_end - part_bytes, 0) : rings_end;
  float *out = a.out + static_cast<long long>(blockIdx.y) * a.rows + tok0 * a.ldo;
  float *part = reinterpret_cast<float *>(smem + BF16FP32__SMALLM_STREAM_BARS + part_off);
  if (GR == 1)
    bf16fp32__smallm_finish_warps<MT, NT>(
        acc, part, wk, wn, mb, a.mpad, a.rows, a.kwarps, a.ksplit, out, a.ldo);
  else
    bf16fp32__smallm_finish_groups<MT>(acc, part, pl.warp % (a.kwarps / GR), wn, mb, a.mpad,
                                       a.rows, a.kwarps / GR, GR, out, a.ldo);
}

#undef STREAM_STAGES

/* The instance a launch runs, for mt token tiles (1, 2, 4 or 8), GR blocks per tile and token
 * blocks (tb, with mt = 8): the x mode of its launch kind, why at
 * bf16fp32__smallm_stream_launch. Only these are instantiated. */
using StreamKernel = void (*)(SArgs);
template <int GR>
StreamKernel stream_kernel_gr(int mt, bool pdl, bool two_stages, bool tb) {
  constexpr int L2 = X_L2_BEFORE_WAIT, BW = X_BESIDE_WEIGHTS, AW = X_AFTER_WAIT;
  if (tb) return pdl ? smallm_stream_kernel<8, GR, L2, true> : smallm_stream_kernel<8, GR, BW, true>;
  if (pdl)
    return mt == 1   ? smallm_stream_kernel<1, GR, L2>
           : mt == 2 ? smallm_stream_kernel<2, GR, L2>
           : mt == 4 ? smallm_stream_kernel<4, GR, L2>
                     : smallm_stream_kernel<8, GR, L2>;
  if (mt >= 4) return mt == 4 ? smallm_stream_kernel<4, GR, BW> : smallm_stream_kernel<8, GR, BW>;
  if (GR == 1 && two_stages) /* up to 16 tokens: beside the weights with a two-stage ring per warp */
    return mt == 1 ? smallm_stream_kernel<1, 1, BW> : smallm_stream_kernel<2, 1, BW>;
  return mt == 1 ? smallm_stream_kernel<1, GR, AW> : smallm_stream_kernel<2, GR, AW>;
}
StreamKernel stream_kernel(int mt, int gr, bool pdl, bool two_stages, bool tb) {
  return gr == 2 ? stream_kernel_gr<2>(mt, pdl, two_stages, tb)
                 : stream_kernel_gr<1>(mt, pdl, two_stages, tb);
}
/* Paired launches' instances (bf16fp32__smallm_stream_pair: a ring per warp, under PDL). */
StreamKernel pair_kernel(int mt) {
  return mt == 1 ? smallm_stream_kernel<1, 1, X_L2_BEFORE_WAIT, false, true>
                 : smallm_stream_kernel<2, 1, X_L2_BEFORE_WAIT, false, true>;
}

}  // namespace

extern "C" int bf16fp32__smallm_stream_load(size_t smem_limit) {
  cudaError_t e = bf16fp32__smallm_allow_smem(smem_limit, pair_kernel(1), pair_kernel(2));
  /* A paired block of more than half an SM's shared memory would otherwise get the smallest
   * carveout that holds one block, which leaves no room for the other footprint beside it. */
  for (int mt = 1; mt <= 2 && e == cudaSuccess; mt++)
    e = cudaFuncSetAttribute(pair_kernel(mt), cudaFuncAttributePreferredSharedMemoryCarveout,
                             cudaSharedmemCarveoutMaxShared);
  for (int mt = 1; mt <= 8 && e == cudaSuccess; mt *= 2)
    for (int gr = 1; gr <= 2 && e == cudaSuccess; gr++)
      e = bf16fp32__smallm_allow_smem(smem_limit, stream_kernel(mt, gr, true, false, false),
                                      stream_kernel(mt, gr, false, false, false),
                                      stream_kernel(mt, gr, false, true, false),
                                      stream_kernel(mt, gr, true, false, true),
                                      stream_kernel(mt, gr, false, false, true));
  return static_cast<int>(e);
}

extern "C" int bf16fp32__smallm_stream_launch(const bf16fp32__smallm_config *c, int64_t m,
                                              int64_t n, int64_t k, const uint16_t *x,
                                              int64_t ldx, const uint16_t *w, int64_t ldw,
                                              float *out, int64_t ldo, void *stream, int use_pdl) {
  SArgs a;
  const int box = 32 * bf16fp32__smallm_stream_box_subs(c->stream_subs);
  const int gr = c->stream_groups;
  const int wrows = 16 * gr; /* weight rows of a stage: 16 per warp sharing the ring */
  const int tblocks = c->stream_tblocks > 1 ? c->stream_tblocks : 1;
  const int mfull = tblocks > 1 ? BF16FP32__SMALLM_DECODE_MAX_M : static_cast<int>(m);
  a.m_tail = static_cast<int>(m) - (tblocks - 1) * mfull;
  if (!bf16fp32__smallm_encode_map(&a.tw, w, n, k, ldw, box, wrows) ||
      !bf16fp32__smallm_encode_map(&a.tx, x, m, k, ldx, box, mfull) ||
      (tblocks > 1 && !bf16fp32__smallm_encode_map(&a.tx_tail, x, m, k, ldx, box, a.m_tail)))
    return static_cast<int>(cudaErrorInvalidValue);
  if (tblocks == 1) a.tx_tail = a.tx; /* never read */
  a.out = out, a.ldo = ldo;
  /* with groups, a block's rows are the tile its cluster's gr blocks share */
  bf16fp32__smallm_fill_split(a, c, m, k, c->split.rows * gr);
  a.k = static_cast<int>(k);
  a.subs = c->stream_subs;
  a.stages = c->stream_stages;
  a.pitch = 2 * box;
  a.stage_bytes = bf16fp32__smallm_stream_stage_bytes(mfull, c->stream_subs, wrows);
  a.tx_bytes = (wrows + mfull) * a.pitch;
  a.w_to_l2 = c->stream_wl2;
  a.early = c->stream_early;
  a.part_over = c->stream_over;
  cudaLaunchAttribute attr[2];
  const cudaLaunchConfig_t cfg = bf16fp32__smallm_launch_config(
      c, c->stream_smem, static_cast<cudaStream_t>(stream), use_pdl, attr);
  /* Launched plainly with two-stage rings and up to 16 tokens, each stage's x box goes out right
   * after its weights instead of after all of them: on the H200 (smallm-probe --chosen, two
   * interleaved runs; docs/smallm-notes.md, session 15) 2048x4096 M = 2 / 4 (4 x 2) 7.13 / 7.28
   * -> 6.91 / 7.01 us, 1024x7168 M = 1 / 16 (7 x 2, 5 x 2) 6.93 / 7.97 -> 6.72 / 7.60,
   * 2048x7168 M = 8 / 16 (7 x 2, 5 x 2) 10.06 / 11.41 -> 9.80 / 11.01; with three stages
   * (2048x7168 M = 1, 7 x 3) 1 % slower, so not there. At 17-64 tokens (stages of three or one
   * sub-chunks, two or three of them, with or without two blocks per tile) the same order took
   * 3-9 % off (session 16: 2048x7168 M = 32 / 64 12.73 / 15.02 -> 11.99 / 14.34, 1024x4096 M = 32
   * 6.72 -> 6.30). */
  if (c->stream_pair && !bf16fp32__smallm_pair_applies(c, use_pdl))
    return static_cast<int>(cudaErrorInvalidValue); /* bf16fp32__smallm_stream_pair refuses it */
  const StreamKernel kern =
      c->stream_pair ? pair_kernel(c->mt)
                     : stream_kernel(c->mt, gr, use_pdl != 0, c->stream_stages == 2, tblocks > 1);
  return static_cast<int>(cudaLaunchKernelEx(&cfg, kern, a));
}

extern "C" int bf16fp32__smallm_stream_pair_fit(int device, size_t smem_limit,
                                                bf16fp32__smallm_pair *p) {
  int regs_sm = 0, smem_sm = 0, reserved = 0, threads_sm = 0;
  cudaError_t e =
      cudaDeviceGetAttribute(&regs_sm, cudaDevAttrMaxRegistersPerMultiprocessor, device);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&threads_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device);
  p->threads[0] = p->threads[1] = 0, p->smem = 0, p->max_smem = 0;
  if (e != cudaSuccess) return static_cast<int>(e);
  /* the shared-memory-heavy footprint: two of it with their reserves take more than an SM */
  const size_t res = static_cast<size_t>(reserved), sm = static_cast<size_t>(smem_sm);
  const size_t smem = (sm / 2 - res) / 128 * 128 + 128;
  if (smem > smem_limit || 2 * (smem + res) <= sm) return 0;
  for (int mt = 1; mt <= 2; mt++) {
    cudaFuncAttributes fa;
    e = cudaFuncGetAttributes(&fa, pair_kernel(mt));
    if (e != cudaSuccess) return static_cast<int>(e);
    /* the register-heavy one: registers go to a warp in units of 256; w warps of it take more
     * than half the SM's, and fit beside the other's eight */
    const int warp_regs = (32 * fa.numRegs + 255) / 256 * 256, warps = BF16FP32__SMALLM_WARPS;
    for (int w = warps + 1; w <= 2 * warps && p->threads[mt - 1] == 0; w++)
      if (2 * w * warp_regs > regs_sm && (warps + w) * warp_regs <= regs_sm &&
          32 * (warps + w) <= threads_sm)
        p->threads[mt - 1] = 32 * w;
  }
  p->smem = smem, p->max_smem = sm - 2 * res - smem;
  return 0;
}
