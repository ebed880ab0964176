/* cpu-simd's AVX-512 BF16 kernel: VDPBF16PS dot products of x rows with w rows, both read where
 * they lie (no packing: at small M the weights are read once, at memory speed). */
#include <immintrin.h>

#include "blocking.h"

#define AI static inline __attribute__((always_inline))

/* Register tile: MR rows of x by NR rows of w, one 16-lane accumulator each (4 x 6 = 24 of the
 * 32 ZMM registers, plus 4 for x and 1 for w). Fewer x rows leave room for 8 w rows. */
#define MR_MAX 4
#define NR_MAX 8

typedef __m512bh bh;

/* Horizontal sums of 16 accumulators at once, into one vector (lane q: the sum of in[q]). Every
 * accumulator goes through the same tree whatever its partners (lanes i + 8, then i + 4, i + 2,
 * i + 1 added pairwise), so a sum does not depend on the tile it came from; the shuffles move
 * data, never mix lanes of different accumulators. About 3 instructions a sum instead of 9. */
AI __m512 halves(__m512 a, __m512 b) { /* [a.q0+a.q2, a.q1+a.q3, b.q0+b.q2, b.q1+b.q3] */
  return _mm512_add_ps(_mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(1, 0, 1, 0)),
                       _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
}
AI __m512 quarters(__m512 a, __m512 b) { /* [a.q0+a.q1, a.q2+a.q3, b.q0+b.q1, b.q2+b.q3] */
  return _mm512_add_ps(_mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                       _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
}
AI __m512 pairs_far(__m512 a, __m512 b) { /* per 128 bits: [a0+a2, a1+a3, b0+b2, b1+b3] */
  return _mm512_add_ps(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(1, 0, 1, 0)),
                       _mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
}
AI __m512 pairs_near(__m512 a, __m512 b) { /* per 128 bits: [a0+a1, a2+a3, b0+b1, b2+b3] */
  return _mm512_add_ps(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                       _mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
}

AI __m512 sum16(const __m512 *in) {
  /* The tree leaves the sum of v[L + 4 p] in lane 4 L + p: feed v so that lane q gets in[q]. */
  __m512 v[16], t[8], u[4], w[2];
BF16FP32__SIMD_UNROLL(16)
  for (int i = 0; i < 16; i++) v[i] = in[4 * (i % 4) + i / 4];
BF16FP32__SIMD_UNROLL(8)
  for (int i = 0; i < 8; i++) t[i] = halves(v[2 * i], v[2 * i + 1]);
BF16FP32__SIMD_UNROLL(4)
  for (int i = 0; i < 4; i++) u[i] = quarters(t[2 * i], t[2 * i + 1]);
  w[0] = pairs_far(u[0], u[1]);
  w[1] = pairs_far(u[2], u[3]);
  return pairs_near(w[0], w[1]);
}

/* o[i * ldo + j] = sum of acc[i][j]: the accumulators taken 16 at a time in row-major order,
 * each row written by masked stores of the lanes that hold it (nothing else is touched). */
AI void store_sums(__m512 acc[MR_MAX][NR_MAX], float *o, int64_t ldo, const int mr, const int nr) {
  const int count = mr * nr;
BF16FP32__SIMD_UNROLL(2)
  for (int g = 0; g * 16 < count; g++) {
    __m512 in[16];
BF16FP32__SIMD_UNROLL(16)
    for (int q = 0; q < 16; q++) {
      const int f = 16 * g + q;
      in[q] = f < count ? acc[f / nr][f % nr] : _mm512_setzero_ps();
    }
    const __m512 r = sum16(in);
BF16FP32__SIMD_UNROLL(4)
    for (int i = 0; i < mr; i++) {
      const int lo = i * nr - 16 * g, hi = lo + nr; /* row i's lanes in this group */
      if (hi <= 0 || lo >= 16) continue;
      const int a = lo > 0 ? lo : 0, b = hi < 16 ? hi : 16;
      const __mmask16 mask = (__mmask16)(((1u << (b - a)) - 1) << a);
      /* Lane q goes to column q - lo of row i; the base stays inside the row's tile. */
      _mm512_mask_storeu_ps(o + i * ldo - lo, mask, r);
    }
  }
}

/* Every element: lane j sums pairs (32 s + 2 j, 32 s + 2 j + 1) over s in order, the tail pair
 * masked (zeros multiply to zero, never into NaN), then the one fixed tree of sum16. With copy,
 * the w rows loaded are also stored to wc (stride ldc, the tail zero-filled to 32): the copy
 * costs stores only. With check, they are also tested for the bf16 subnormals VDPBF16PS takes as
 * zero (two mask tests a load; the result). Each step also prefetches the same k range of
 * pf_rows rows at pf. */
AI int tile(const uint16_t *x, int64_t ldx, const uint16_t *w, int64_t ldw, float *o, int64_t ldo,
            int64_t k, uint16_t *wc, int64_t ldc, const uint16_t *pf, int pf_rows, int64_t pfld,
            const int mr, const int nr, const int mode) {
  const int copy = mode & BF16FP32__SIMD_COPY, check = mode & BF16FP32__SIMD_CHECK;
  __mmask32 subnormal = 0;
  __m512 acc[MR_MAX][NR_MAX];
BF16FP32__SIMD_UNROLL(4)
  for (int i = 0; i < mr; i++)
BF16FP32__SIMD_UNROLL(8)
    for (int j = 0; j < nr; j++) acc[i][j] = _mm512_setzero_ps();
  int64_t kk = 0;
  for (; kk + 32 <= k; kk += 32) {
    __m512i xv[MR_MAX];
BF16FP32__SIMD_UNROLL(4)
    for (int i = 0; i < mr; i++) xv[i] = _mm512_loadu_si512(x + i * ldx + kk);
BF16FP32__SIMD_UNROLL(8)
    for (int j = 0; j < nr; j++) {
      __m512i wv = _mm512_loadu_si512(w + j * ldw + kk);
      if (copy) _mm512_storeu_si512(wc + j * ldc + kk, wv);
      if (check) subnormal |= BF16FP32__SIMD_SUBNORMALS_512(wv);
BF16FP32__SIMD_UNROLL(4)
      for (int i = 0; i < mr; i++) acc[i][j] = _mm512_dpbf16_ps(acc[i][j], (bh)xv[i], (bh)wv);
    }
    /* prefetcht1: to L2 (to L1, prefetcht0 gained nothing: the lines are needed much later) */
    for (int r = 0; r < pf_rows; r++) __builtin_prefetch(pf + r * pfld + kk, 0, 2);
  }
  if (kk < k) {
    const __mmask32 mask = (__mmask32)((1ull << (k - kk)) - 1);
    __m512i xv[MR_MAX];
BF16FP32__SIMD_UNROLL(4)
    for (int i = 0; i < mr; i++) xv[i] = _mm512_maskz_loadu_epi16(mask, x + i * ldx + kk);
BF16FP32__SIMD_UNROLL(8)
    for (int j = 0; j < nr; j++) {
      __m512i wv = _mm512_maskz_loadu_epi16(mask, w + j * ldw + kk);
      if (copy) _mm512_storeu_si512(wc + j * ldc + kk, wv);
      if (check) subnormal |= BF16FP32__SIMD_SUBNORMALS_512(wv);
BF16FP32__SIMD_UNROLL(4)
      for (int i = 0; i < mr; i++) acc[i][j] = _mm512_dpbf16_ps(acc[i][j], (bh)xv[i], (bh)wv);
    }
  }
  store_sums(acc, o, ldo, mr, nr);
  return subnormal != 0;
}

/* One function per tile shape and mode (blocking.h): plain, checking, checking and copying. */
#define CHECKING BF16FP32__SIMD_CHECK
#define COPYING (BF16FP32__SIMD_CHECK | BF16FP32__SIMD_COPY)
BF16FP32__SIMD_TILES_8(1, 0, _r) BF16FP32__SIMD_TILES_8(2, 0, _r) BF16FP32__SIMD_TILES_8(3, 0, _r)
BF16FP32__SIMD_TILES_8(4, 0, _r)
BF16FP32__SIMD_TILES_8(1, CHECKING, _k) BF16FP32__SIMD_TILES_8(2, CHECKING, _k)
BF16FP32__SIMD_TILES_8(3, CHECKING, _k) BF16FP32__SIMD_TILES_8(4, CHECKING, _k)
BF16FP32__SIMD_TILES_8(1, COPYING, _c) BF16FP32__SIMD_TILES_8(2, COPYING, _c)
BF16FP32__SIMD_TILES_8(3, COPYING, _c) BF16FP32__SIMD_TILES_8(4, COPYING, _c)
static const bf16fp32__simd_tile_fn tiles[3][MR_MAX * NR_MAX] = {
    {BF16FP32__SIMD_ROW_8(1, _r), BF16FP32__SIMD_ROW_8(2, _r), BF16FP32__SIMD_ROW_8(3, _r),
     BF16FP32__SIMD_ROW_8(4, _r)},
    {BF16FP32__SIMD_ROW_8(1, _k), BF16FP32__SIMD_ROW_8(2, _k), BF16FP32__SIMD_ROW_8(3, _k),
     BF16FP32__SIMD_ROW_8(4, _k)},
    {BF16FP32__SIMD_ROW_8(1, _c), BF16FP32__SIMD_ROW_8(2, _c), BF16FP32__SIMD_ROW_8(3, _c),
     BF16FP32__SIMD_ROW_8(4, _c)}};

int bf16fp32__simd_block_avx512bf16(const bf16fp32__simd_args *a, int64_t m0, int64_t m1,
                                    int64_t n0, int64_t n1, uint16_t *scratch) {
  return bf16fp32__simd_blocked(a, m0, m1, n0, n1, scratch, tiles[0], tiles[1], tiles[2], MR_MAX,
                                6, NR_MAX);
}
