/* cpu-simd's NEON kernel (aarch64 Advanced SIMD): bf16 pairs widened to fp32 with a shift and a
 * mask (exact, NaN and Inf kept), then fused multiply-adds (FMLA) of x rows with w rows, as the
 * AVX2 kernel does on 4 lanes instead of 8. Not timed on an Arm machine yet (README). */
#include <arm_neon.h>
#include <string.h>

#include "blocking.h"

#define AI static inline __attribute__((always_inline))

/* 32 vector registers: 4 x 4 accumulators, 8 for the x halves, 2 for w, the mask and a load:
 * 28. Fewer x rows leave room for 6 rows of w (3 x 6: 18 + 6 + 2 + 2). In GCC 12's code (-O3)
 * the 4 x 4 and 1 x 6 steps stay in registers (the 4 x 4 with 5 register moves and 2 w loads
 * again a step); the 3 x 6 step spills 2 vectors. */
#define MR_MAX 4
#define NR_MAX 8 /* the tile table's row stride (blocking.h); no tile is wider than 6 */
#define STEP 8   /* bf16 elements per 16-byte load */

/* Lane j gets the even element 2j (shifted up) and the odd element 2j + 1 (low half cleared). */
AI void widen(uint32x4_t v, uint32x4_t hi_mask, float32x4_t *even, float32x4_t *odd) {
  *even = vreinterpretq_f32_u32(vshlq_n_u32(v, 16));
  *odd = vreinterpretq_f32_u32(vandq_u32(v, hi_mask));
}

AI uint32x4_t load8(const uint16_t *p) { return vreinterpretq_u32_u16(vld1q_u16(p)); }

/* One fixed tree: (lane 0 + lane 1) + (lane 2 + lane 3). */
AI float hsum(float32x4_t v) {
  return vpadds_f32(vpadd_f32(vget_low_f32(v), vget_high_f32(v)));
}

AI void step(const uint32x4_t *xv, const uint16_t *w, int64_t ldw, float32x4_t acc[MR_MAX][NR_MAX],
             uint32x4_t hi_mask, int mr, int nr, int64_t kk, const uint16_t (*wtail)[STEP],
             uint16_t *wc, int64_t ldc, int copy) {
  float32x4_t xe[MR_MAX], xo[MR_MAX];
BF16FP32__SIMD_UNROLL(4)
  for (int i = 0; i < mr; i++) widen(xv[i], hi_mask, &xe[i], &xo[i]);
BF16FP32__SIMD_UNROLL(8)
  for (int j = 0; j < nr; j++) {
    float32x4_t we, wo;
    const uint32x4_t wv = wtail ? load8(wtail[j]) : load8(w + j * ldw + kk);
    if (copy) vst1q_u16(wc + j * ldc + kk, vreinterpretq_u16_u32(wv));
    widen(wv, hi_mask, &we, &wo);
BF16FP32__SIMD_UNROLL(4)
    for (int i = 0; i < mr; i++) {
      acc[i][j] = vfmaq_f32(acc[i][j], xe[i], we);
      acc[i][j] = vfmaq_f32(acc[i][j], xo[i], wo);
    }
  }
}

/* Every element: lane j sums the products of pairs (8 s + 2 j, 8 s + 2 j + 1) in order of s,
 * the tail zero-padded, then one fixed horizontal reduction. With copy, the w rows loaded are
 * also stored to wc (stride ldc, the tail zero-filled to 8). Every fourth step (one 64-byte
 * line) also prefetches the same k range of pf_rows rows at pf. */
AI int tile(const uint16_t *x, int64_t ldx, const uint16_t *w, int64_t ldw, float *o, int64_t ldo,
            int64_t k, uint16_t *wc, int64_t ldc, const uint16_t *pf, int pf_rows, int64_t pfld,
            const int mr, const int nr, const int copy) {
  const uint32x4_t hi_mask = vdupq_n_u32(0xffff0000u);
  float32x4_t acc[MR_MAX][NR_MAX];
BF16FP32__SIMD_UNROLL(4)
  for (int i = 0; i < mr; i++)
BF16FP32__SIMD_UNROLL(8)
    for (int j = 0; j < nr; j++) acc[i][j] = vdupq_n_f32(0.0f);
  int64_t kk = 0;
  for (; kk + STEP <= k; kk += STEP) {
    uint32x4_t xv[MR_MAX];
BF16FP32__SIMD_UNROLL(4)
    for (int i = 0; i < mr; i++) xv[i] = load8(x + i * ldx + kk);
    /* Before the step, as in the AVX2 kernel (where clang spilled around it after the step). */
    if (!(kk & 31))
      for (int r = 0; r < pf_rows; r++) __builtin_prefetch(pf + r * pfld + kk, 0, 2);
    step(xv, w, ldw, acc, hi_mask, mr, nr, kk, NULL, wc, ldc, copy);
  }
  if (kk < k) {
    /* The tail through zeroed rows, so that no load reads past an operand's end. */
    uint16_t xt[MR_MAX][STEP], wt[NR_MAX][STEP];
    const size_t bytes = (size_t)(k - kk) * 2;
    memset(xt, 0, sizeof xt);
    memset(wt, 0, sizeof wt);
    uint32x4_t xv[MR_MAX];
    for (int i = 0; i < mr; i++) {
      memcpy(xt[i], x + i * ldx + kk, bytes);
      xv[i] = load8(xt[i]);
    }
    for (int j = 0; j < nr; j++) memcpy(wt[j], w + j * ldw + kk, bytes);
    step(xv, w, ldw, acc, hi_mask, mr, nr, kk, (const uint16_t(*)[STEP])wt, wc, ldc, copy);
  }
BF16FP32__SIMD_UNROLL(4)
  for (int i = 0; i < mr; i++)
BF16FP32__SIMD_UNROLL(8)
    for (int j = 0; j < nr; j++) o[i * ldo + j] = hsum(acc[i][j]);
  return 0; /* widened exactly: no subnormal to report */
}

/* One function per tile shape and copy mode (blocking.h): full-height tiles 4 wide, shorter
 * ones up to 6. */
BF16FP32__SIMD_TILES_6(1, 0, _r) BF16FP32__SIMD_TILES_6(2, 0, _r) BF16FP32__SIMD_TILES_6(3, 0, _r)
BF16FP32__SIMD_TILES_4(4, 0, _r)
BF16FP32__SIMD_TILES_6(1, 1, _c) BF16FP32__SIMD_TILES_6(2, 1, _c) BF16FP32__SIMD_TILES_6(3, 1, _c)
BF16FP32__SIMD_TILES_4(4, 1, _c)
static const bf16fp32__simd_tile_fn tiles[2][MR_MAX * NR_MAX] = {
    {BF16FP32__SIMD_ROW_6(1, _r), BF16FP32__SIMD_ROW_6(2, _r), BF16FP32__SIMD_ROW_6(3, _r),
     BF16FP32__SIMD_ROW_4(4, _r)},
    {BF16FP32__SIMD_ROW_6(1, _c), BF16FP32__SIMD_ROW_6(2, _c), BF16FP32__SIMD_ROW_6(3, _c),
     BF16FP32__SIMD_ROW_4(4, _c)}};

int bf16fp32__simd_block_neon(const bf16fp32__simd_args *a, int64_t m0, int64_t m1, int64_t n0,
                              int64_t n1, uint16_t *scratch) {
  return bf16fp32__simd_blocked(a, m0, m1, n0, n1, scratch, tiles[0], tiles[0], tiles[1], MR_MAX,
                                4, 6);
}
