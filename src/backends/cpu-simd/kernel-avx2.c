/* cpu-simd's AVX2 + FMA kernel, for CPUs without AVX-512 BF16: bf16 pairs widened to fp32 with a
 * shift and a mask (exact, NaN and Inf kept), then FMA dot products of x rows with w rows. */
#include <immintrin.h>
#include <string.h>

#include "blocking.h"

#define AI static inline __attribute__((always_inline))

/* 16 YMM registers: 2 x 4 accumulators, 4 for the x halves, 2 for w, the mask. One row of x
 * leaves room for 8 rows of w. */
#define MR_MAX 2
#define NR_MAX 8

/* Lane j gets the even element 2j (shifted up) and the odd element 2j + 1 (low half cleared). */
AI void widen(__m256i v, __m256i hi_mask, __m256 *even, __m256 *odd) {
  *even = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
  *odd = _mm256_castsi256_ps(_mm256_and_si256(v, hi_mask));
}

AI float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 0x55));
  return _mm_cvtss_f32(s);
}

AI void step(const __m256i *xv, const uint16_t *w, int64_t ldw, __m256 acc[MR_MAX][NR_MAX],
             __m256i hi_mask, int mr, int nr, int64_t kk, const uint16_t (*wtail)[16],
             uint16_t *wc, int64_t ldc, int copy) {
  __m256 xe[MR_MAX], xo[MR_MAX];
BF16FP32__SIMD_UNROLL(2)
  for (int i = 0; i < mr; i++) widen(xv[i], hi_mask, &xe[i], &xo[i]);
BF16FP32__SIMD_UNROLL(8)
  for (int j = 0; j < nr; j++) {
    __m256 we, wo;
    __m256i wv = wtail ? _mm256_loadu_si256((const __m256i *)wtail[j])
                       : _mm256_loadu_si256((const __m256i *)(w + j * ldw + kk));
    if (copy) _mm256_storeu_si256((__m256i *)(wc + j * ldc + kk), wv);
    widen(wv, hi_mask, &we, &wo);
BF16FP32__SIMD_UNROLL(2)
    for (int i = 0; i < mr; i++) {
      acc[i][j] = _mm256_fmadd_ps(xe[i], we, acc[i][j]);
      acc[i][j] = _mm256_fmadd_ps(xo[i], wo, acc[i][j]);
    }
  }
}

/* Every element: lane j sums the products of pairs (16 s + 2 j, 16 s + 2 j + 1) in order of s,
 * the tail zero-padded, then one fixed horizontal reduction. With copy, the w rows loaded are
 * also stored to wc (stride ldc, the tail zero-filled to 16). Every other step also prefetches
 * the same k range (one line) of pf_rows rows at pf. */
AI int tile(const uint16_t *x, int64_t ldx, const uint16_t *w, int64_t ldw, float *o, int64_t ldo,
            int64_t k, uint16_t *wc, int64_t ldc, const uint16_t *pf, int pf_rows, int64_t pfld,
            const int mr, const int nr, const int copy) {
  const __m256i hi_mask = _mm256_set1_epi32((int)0xffff0000u);
  __m256 acc[MR_MAX][NR_MAX];
BF16FP32__SIMD_UNROLL(2)
  for (int i = 0; i < mr; i++)
BF16FP32__SIMD_UNROLL(8)
    for (int j = 0; j < nr; j++) acc[i][j] = _mm256_setzero_ps();
  int64_t kk = 0;
  for (; kk + 16 <= k; kk += 16) {
    __m256i xv[MR_MAX];
BF16FP32__SIMD_UNROLL(2)
    for (int i = 0; i < mr; i++) xv[i] = _mm256_loadu_si256((const __m256i *)(x + i * ldx + kk));
    /* Before the step: after it, clang put this branch between the step's loads and its FMAs
     * and spilled accumulators around it (docs/cpu-results.md). */
    if (!(kk & 31))
      for (int r = 0; r < pf_rows; r++) __builtin_prefetch(pf + r * pfld + kk, 0, 2);
    step(xv, w, ldw, acc, hi_mask, mr, nr, kk, NULL, wc, ldc, copy);
  }
  if (kk < k) {
    /* No 16-bit masked loads in AVX2: copy the tail into zeroed rows. */
    uint16_t xt[MR_MAX][16], wt[NR_MAX][16];
    const size_t bytes = (size_t)(k - kk) * 2;
    memset(xt, 0, sizeof xt);
    memset(wt, 0, sizeof wt);
    __m256i xv[MR_MAX];
    for (int i = 0; i < mr; i++) {
      memcpy(xt[i], x + i * ldx + kk, bytes);
      xv[i] = _mm256_loadu_si256((const __m256i *)xt[i]);
    }
    for (int j = 0; j < nr; j++) memcpy(wt[j], w + j * ldw + kk, bytes);
    step(xv, w, ldw, acc, hi_mask, mr, nr, kk, (const uint16_t(*)[16])wt, wc, ldc, copy);
  }
BF16FP32__SIMD_UNROLL(2)
  for (int i = 0; i < mr; i++)
BF16FP32__SIMD_UNROLL(8)
    for (int j = 0; j < nr; j++) o[i * ldo + j] = hsum(acc[i][j]);
  return 0; /* widened exactly: no subnormal to report */
}

/* One function per tile shape and copy mode (blocking.h): one row 8 wide, two rows 4. */
BF16FP32__SIMD_TILES_8(1, 0, _r) BF16FP32__SIMD_TILES_4(2, 0, _r)
BF16FP32__SIMD_TILES_8(1, 1, _c) BF16FP32__SIMD_TILES_4(2, 1, _c)
static const bf16fp32__simd_tile_fn tiles[2][MR_MAX * NR_MAX] = {
    {BF16FP32__SIMD_ROW_8(1, _r), BF16FP32__SIMD_ROW_4(2, _r)},
    {BF16FP32__SIMD_ROW_8(1, _c), BF16FP32__SIMD_ROW_4(2, _c)}};

int bf16fp32__simd_block_avx2(const bf16fp32__simd_args *a, int64_t m0, int64_t m1, int64_t n0,
                              int64_t n1, uint16_t *scratch) {
  return bf16fp32__simd_blocked(a, m0, m1, n0, n1, scratch, tiles[0], tiles[0], tiles[1], MR_MAX,
                                4, NR_MAX);
}

/* With the sign shifted out a bf16 subnormal is 2..0xfe; less 2 (wrapping) it is the only value
 * below 0xfd, so one running minimum finds any. */
int bf16fp32__simd_subnormal_avx2(const uint16_t *p, int64_t k) {
  const __m256i two = _mm256_set1_epi16(2);
  __m256i lo0 = _mm256_set1_epi16(-1), lo1 = lo0;
  int64_t i = 0;
  for (; i + 32 <= k; i += 32) {
    const __m256i a = _mm256_slli_epi16(_mm256_loadu_si256((const __m256i *)(p + i)), 1);
    const __m256i b = _mm256_slli_epi16(_mm256_loadu_si256((const __m256i *)(p + i + 16)), 1);
    lo0 = _mm256_min_epu16(lo0, _mm256_sub_epi16(a, two));
    lo1 = _mm256_min_epu16(lo1, _mm256_sub_epi16(b, two));
  }
  unsigned any = 0;
  for (; i < k; i++) any |= (uint16_t)((p[i] << 1) - 2) < 0xfd;
  const __m256i lo = _mm256_min_epu16(lo0, lo1);
  const __m128i m = _mm_min_epu16(_mm256_castsi256_si128(lo), _mm256_extracti128_si256(lo, 1));
  return any || (uint16_t)_mm_cvtsi128_si32(_mm_minpos_epu16(m)) < 0xfd;
}
