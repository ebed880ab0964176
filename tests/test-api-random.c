/* Host calls of bf16fp32_linear whose arguments are drawn at random, each valid or broken in one
 * of the ways test-bad-inputs lists one at a time (negative sizes, short leading dimensions, NULL
 * and misaligned pointers, a bad location), so that faults also meet each other, odd sizes, k = 0
 * and forced backends. A call the contract accepts must pass the fp64 oracle with its padding
 * untouched; any other must return a status other than OK, say why, and write nothing. */
#include <stdlib.h>
#include <string.h>

#include "support.h"
#include "testing.h"

#define CALLS 20000
#define MAX_DIM 40 /* sizes drawn up to this: every valid call is computed and checked */
#define MAX_PAD 9  /* leading dimensions drawn up to this much past their row */

static uint64_t rng = 0x5eed0f0a11ca11ull;
static int64_t below(int64_t n) { return (int64_t)(sup_rng_next(&rng) % (uint64_t)n); }

/* m, n or k: mostly 1..MAX_DIM, sometimes 0 or negative. */
static int64_t draw_size(void) {
  const int64_t r = below(20);
  return r == 0 ? 0 : r == 1 ? -1 - below(3) : 1 + below(MAX_DIM);
}
/* A leading dimension for rows of `cols`: mostly cols plus padding, sometimes one short or
 * negative. */
static int64_t draw_ld(int64_t cols) {
  const int64_t r = below(12);
  return r == 0 ? cols - 1 : r == 1 ? -1 - below(MAX_DIM) : cols + below(MAX_PAD + 1);
}

typedef enum { PTR_OK, PTR_NULL, PTR_MISALIGNED } ptr_kind;
static ptr_kind draw_ptr(void) {
  const int64_t r = below(16);
  return r == 0 ? PTR_NULL : r == 1 ? PTR_MISALIGNED : PTR_OK;
}
/* p, NULL, or p moved by half an element (an odd address for bf16, 2 bytes off for float). */
static const void *apply(const void *p, ptr_kind kind, size_t elem) {
  return kind == PTR_NULL ? NULL : kind == PTR_MISALIGNED ? (const char *)p + elem / 2 : p;
}

/* One call; returns 1 when it was a call the contract accepts. */
static int one_call(bf16fp32_context *ctx) {
  const int64_t m = draw_size(), n = draw_size(), k = draw_size();
  const int64_t ldx = draw_ld(k), ldw = draw_ld(k), ldo = draw_ld(n);
  const ptr_kind px = draw_ptr(), pw = draw_ptr(), po = draw_ptr();
  const int where = below(25) == 0 ? 2 + (int)below(5) : BF16FP32_HOST;
  /* The contract (bf16fp32.h, README): m or n zero does nothing and looks at no pointer; k zero
   * sets out to zero and looks at neither x nor w. */
  const int sizes_ok = m >= 0 && n >= 0 && k >= 0 && where == BF16FP32_HOST;
  const int empty = m == 0 || n == 0;
  const int out_ok = ldo >= n && po == PTR_OK;
  const int xw_ok = k == 0 || (ldx >= k && ldw >= k && px == PTR_OK && pw == PTR_OK);
  const int valid = sizes_ok && (empty || (out_ok && xw_ok));

  /* Buffers as large as the call could touch were its strides at least their rows, plus one row,
   * so that a library that went ahead past a refusal would still stay inside them (ASan sees the
   * rest). */
  const int64_t rows_x = m > 0 ? m + 1 : 1, rows_w = n > 0 ? n + 1 : 1, rows_o = rows_x;
  const int64_t cx = (ldx > k ? ldx : k) + 1, cw = (ldw > k ? ldw : k) + 1, co = (ldo > n ? ldo : n) + 1;
  const size_t nx = (size_t)(rows_x * (cx > 0 ? cx : 1)), nw = (size_t)(rows_w * (cw > 0 ? cw : 1));
  const size_t no = (size_t)(rows_o * (co > 0 ? co : 1));
  uint16_t *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w);
  float *out = malloc(no * sizeof *out);
  if (!x || !w || !out) {
    CHECK(!"out of memory in the test");
    free(x), free(w), free(out);
    return 0;
  }
  sup_fill_bf16(x, nx, sup_rng_next(&rng));
  sup_fill_bf16(w, nw, sup_rng_next(&rng));
  if (below(8) == 0) x[below((int64_t)nx)] = 0x7f80; /* +Inf now and then */
  sup_poison_f32(out, no);
  const uint16_t *xa = apply(x, px, sizeof *x), *wa = apply(w, pw, sizeof *w);
  float *oa = (float *)apply(out, po, sizeof *out);
  const bf16fp32_status st =
      bf16fp32_linear(ctx, (bf16fp32_location)where, m, n, k, xa, ldx, wa, ldw, oa, ldo, NULL);
  if (!valid) {
    EXPECT(st != BF16FP32_OK && strlen(bf16fp32_last_error()) > 0 && sup_poisoned(out, no),
           "accepted or wrote: m=%lld n=%lld k=%lld ld %lld %lld %lld pointers %d %d %d where %d: %s\n",
           (long long)m, (long long)n, (long long)k, (long long)ldx, (long long)ldw, (long long)ldo,
           (int)px, (int)pw, (int)po, where, bf16fp32_status_name(st));
  } else if (empty) {
    EXPECT(st == BF16FP32_OK && sup_poisoned(out, no), "empty call: %s\n", bf16fp32_status_name(st));
  } else {
    EXPECT(st == BF16FP32_OK, "m=%lld n=%lld k=%lld ld %lld %lld %lld: %s (%s)\n", (long long)m,
           (long long)n, (long long)k, (long long)ldx, (long long)ldw, (long long)ldo,
           bf16fp32_status_name(st), bf16fp32_last_error());
    if (st == BF16FP32_OK) {
      const sup_check_result r = sup_check(m, n, k, x, ldx, w, ldw, out, ldo);
      EXPECT(sup_check_ok(&r), "m=%lld n=%lld k=%lld ld %lld %lld %lld: outside the bound\n",
             (long long)m, (long long)n, (long long)k, (long long)ldx, (long long)ldw, (long long)ldo);
      EXPECT(sup_poisoned(out + m * ldo, no - (size_t)(m * ldo)), "written past the last row\n");
    }
  }
  free(x), free(w), free(out);
  return valid;
}

int main(void) {
  bf16fp32_context *ctx = NULL;
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  if (!ctx) return testing_summary("test-api-random");
  const char *forced[] = {"auto", "cpu-simd", "cpu-ref"};
  int accepted = 0;
  for (int i = 0; i < CALLS; i++) {
    if (i % 2000 == 0) {
      /* cpu-simd is absent on CPUs without its kernels: forcing it is then refused, and the
       * calls run on auto */
      const bf16fp32_status st = bf16fp32_force_backend(ctx, forced[(i / 2000) % 3]);
      CHECK(st == BF16FP32_OK || st == BF16FP32_BACKEND_UNAVAILABLE);
    }
    if (i % 5000 == 4999) CHECK_OK(bf16fp32_reset(ctx));
    accepted += one_call(ctx);
  }
  /* the draws above give both kinds in numbers (about 40 % accepted) */
  CHECK(accepted > CALLS / 5 && accepted < CALLS - CALLS / 5);
  printf("test-api-random: %d calls, %d accepted\n", CALLS, accepted);
  bf16fp32_destroy(ctx);
  return testing_summary("test-api-random");
}
