/* The fp64 oracle every backend is checked against, and the element-wise error bound of an
 * fp32 accumulation (DESIGN.md, numerical contract). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "fp-mode.h"
#include "internal.h"
#include "oracle.h"

double bf16fp32__dot_f64(const uint16_t *x, const uint16_t *w, int64_t k, double *absdot) {
  /* Products of two bf16 values are exact in fp64; sums of them are nearly so. */
  double sum = 0.0, abs_sum = 0.0;
  for (int64_t i = 0; i < k; i++) {
    double p = (double)bf16fp32__bf16_to_float(x[i]) * (double)bf16fp32__bf16_to_float(w[i]);
    sum += p;
    abs_sum += fabs(p);
  }
  if (absdot) *absdot = abs_sum;
  return sum;
}

void bf16fp32__oracle(int64_t m, int64_t n, int64_t k, const uint16_t *x, int64_t ldx,
                      const uint16_t *w, int64_t ldw, double *ref, double *absdot) {
  const bf16fp32__fp_mode mode = bf16fp32__fp_mode_ieee(); /* subnormals kept (fp-mode.h) */
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++)
      ref[i * n + j] = bf16fp32__dot_f64(x + i * ldx, w + j * ldw, k,
                                         absdot ? &absdot[i * n + j] : NULL);
  bf16fp32__fp_mode_restore(mode);
}

double bf16fp32__error_bound(int64_t k, double absdot) {
  /* gamma_k = k u / (1 - k u), u = 2^-24, for k - 1 additions of exact products in any order;
   * plus k times the smallest normal for products or sums flushed to zero (FTZ hardware). */
  const double u = ldexp(1.0, -24);
  double ku = (double)(k + 1) * u;
  double gamma = ku < 0.5 ? ku / (1.0 - ku) : 1.0;
  return gamma * absdot + (double)(k + 1) * (double)FLT_MIN;
}

bool bf16fp32__within_bound(float got, double ref, double absdot, int64_t k) {
  if (isnan(ref)) return isnan(got);
  if (isinf(ref)) return isinf(got) && (got > 0) == (ref > 0);
  /* The fp64 sum stays finite where fp32's may not: a product or a partial sum past FLT_MAX
   * gives an infinity of its sign, and a later one of the other sign NaN. */
  if (!isfinite(got) && absdot > (double)FLT_MAX) return true;
  if (isnan(got)) return false;
  double bound = bf16fp32__error_bound(k, absdot);
  /* A finite sum near FLT_MAX may round to infinity in fp32: that is the fp32 answer. */
  if (isinf(got)) return fabs(ref) + bound >= (double)FLT_MAX && (got > 0) == (ref > 0);
  return fabs((double)got - ref) <= bound;
}

void bf16fp32__rounding_add(bf16fp32__rounding_tally *t, float got, double ref) {
  const float want = (float)ref;
  if (!isfinite(got) || !isfinite(want)) return;
  uint32_t got_bits, want_bits;
  memcpy(&got_bits, &got, sizeof got_bits);
  memcpy(&want_bits, &want, sizeof want_bits);
  if ((want_bits & 0xffu) == 0) return; /* the value itself fits 16 significand bits */
  t->needing++;
  t->cleared += (got_bits & 0xffu) == 0;
}

bool bf16fp32__rounding_seen(const bf16fp32__rounding_tally *t) {
  return t->cleared >= 8 && 2 * t->cleared >= t->needing;
}
