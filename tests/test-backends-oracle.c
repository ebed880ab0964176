/* Every available backend, forced in turn (host ones always, device ones when a GPU is there),
 * against the fp64 oracle on one grid of shapes: odd sizes, padded leading dimensions, pointers
 * offset by one element, M = 1, K = 1, K not a multiple of anything, NaN, Inf and subnormal
 * inputs. Outputs are poisoned first, padding columns must stay untouched; the inputs' padding
 * holds NaN, which a backend must not read. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu-simd/cpu-simd.h"
#include "internal.h"
#include "support.h"
#include "testing.h"

typedef struct grid_case {
  int64_t m, n, k;
  int64_t pad_x, pad_w, pad_o; /* leading dimension = row length + pad */
  int offset;                  /* operands start this many elements into their buffers */
  int special;                 /* plant NaN, Inf and subnormals */
} grid_case;

static const grid_case grid[] = {
    {1, 1, 1, 0, 0, 0, 0, 0},        {1, 7, 13, 3, 5, 1, 1, 0},     {3, 5, 33, 0, 0, 0, 0, 0},
    {17, 31, 65, 1, 2, 3, 1, 0},     {7, 129, 1000, 8, 8, 4, 0, 0}, {33, 65, 257, 5, 0, 7, 1, 0},
    {5, 64, 256, 0, 0, 0, 0, 0},     {1, 256, 4096, 0, 0, 0, 0, 0}, {13, 384, 7168, 0, 0, 0, 0, 0},
    {64, 256, 4096, 0, 0, 0, 0, 0},  {2, 96, 520, 8, 16, 4, 0, 0},  {9, 40, 136, 0, 0, 0, 0, 1},
    {4, 16, 3, 0, 0, 0, 0, 1},       {70, 33, 129, 2, 2, 2, 1, 0},  {1, 2048, 7168, 0, 0, 0, 0, 0},
};

/* Poisoned floats after the output's last row: a write past it shows. */
enum { OUT_GUARD = 64 };

typedef struct operands {
  uint16_t *x, *w;
  float *out;
  size_t nx, nw, no;
} operands;

static void make_operands(const grid_case *c, uint64_t seed, operands *o) {
  int64_t ldx = c->k + c->pad_x, ldw = c->k + c->pad_w, ldo = c->n + c->pad_o;
  o->nx = (size_t)(c->m * ldx + c->offset), o->nw = (size_t)(c->n * ldw + c->offset);
  o->no = (size_t)(c->m * ldo + c->offset) + OUT_GUARD;
  o->x = malloc(o->nx * 2), o->w = malloc(o->nw * 2), o->out = malloc(o->no * 4);
  sup_fill_bf16(o->x, o->nx, seed);
  sup_fill_bf16(o->w, o->nw, seed + 1);
  sup_nan_outside(o->x, o->nx, o->x + c->offset, c->m, c->k, ldx);
  sup_nan_outside(o->w, o->nw, o->w + c->offset, c->n, c->k, ldw);
  sup_poison_f32(o->out, o->no);
  if (c->special) {
    const uint16_t nan = 0x7fc0, inf = 0x7f80, ninf = 0xff80;
    uint16_t *x = o->x + c->offset, *w = o->w + c->offset;
    x[0 * ldx + 1] = nan;  /* row 0 of out: all NaN */
    x[1 * ldx + 2] = inf;  /* row 1: +-Inf, or NaN where w is 0 */
    w[2 * ldw + 2] = 0;    /* Inf * 0 = NaN in column 2 of row 1 */
    x[2 * ldx + 0] = 0x3f80;
    w[3 * ldw + 0] = ninf; /* x = 1 times -Inf: row 2, column 3 is -Inf */
    sup_plant_subnormals(x, ldx, w, ldw, c->k); /* row 3, columns 4 and 5: exactly 1 */
  }
}

static void free_operands(operands *o) { free(o->x), free(o->w), free(o->out); }

static uint64_t calls_of(bf16fp32_context *ctx, int b) {
  bf16fp32_backend_info info;
  if (b < 0 || bf16fp32_backend_info_get(ctx, b, &info) != BF16FP32_OK) return 0;
  return info.calls;
}

/* Runs one case with the backend forced; returns 1 when that backend itself ran it. */
static int run_case(bf16fp32_context *ctx, int b, const bf16fp32_backend_info *bi,
                    const grid_case *c, uint64_t seed) {
  int64_t ldx = c->k + c->pad_x, ldw = c->k + c->pad_w, ldo = c->n + c->pad_o;
  operands h;
  make_operands(c, seed, &h);
  uint16_t *x = h.x + c->offset, *w = h.w + c->offset;
  float *out = h.out + c->offset;
  void *dx = NULL, *dw = NULL, *dout = NULL;
  if (bi->where == BF16FP32_DEVICE) {
    dx = sup_gpu_alloc(h.nx * 2), dw = sup_gpu_alloc(h.nw * 2), dout = sup_gpu_alloc(h.no * 4);
    CHECK(dx && dw && dout);
    CHECK(!sup_gpu_upload(dx, h.x, h.nx * 2) && !sup_gpu_upload(dw, h.w, h.nw * 2) &&
          !sup_gpu_upload(dout, h.out, h.no * 4));
    x = (uint16_t *)dx + c->offset, w = (uint16_t *)dw + c->offset, out = (float *)dout + c->offset;
  }
  uint64_t before = calls_of(ctx, b);
  CHECK_OK(bf16fp32_linear(ctx, bi->where, c->m, c->n, c->k, x, ldx, w, ldw, out, ldo, NULL));
  int ran = calls_of(ctx, b) == before + 1;
  if (bi->where == BF16FP32_DEVICE) {
    CHECK(!sup_gpu_sync() && !sup_gpu_download(h.out, dout, h.no * 4));
    sup_gpu_free(dx), sup_gpu_free(dw), sup_gpu_free(dout);
  }
  sup_check_result r = sup_check(c->m, c->n, c->k, h.x + c->offset, ldx, h.w + c->offset, ldw,
                                 h.out + c->offset, ldo);
  if (!sup_check_ok(&r))
    fprintf(stderr, "%s (%s) m=%lld n=%lld k=%lld: %lld violations, %lld unwritten, %lld overwritten, worst %.3g of bound at (%lld,%lld)\n",
            bi->name, ran ? "ran" : "fell back", (long long)c->m, (long long)c->n, (long long)c->k,
            (long long)r.violations, (long long)r.unwritten, (long long)r.overwritten, r.worst_ratio,
            (long long)r.worst_i, (long long)r.worst_j);
  CHECK(sup_check_ok(&r));
  /* the regions before and after the output must be untouched too */
  CHECK(sup_poisoned(h.out, (size_t)c->offset));
  CHECK(sup_poisoned(h.out + c->offset + c->m * ldo, OUT_GUARD));
  free_operands(&h);
  return ran;
}

/* Results stored short: 64 values that need fp32's low bits, correct to the last bit (none
 * counted), rounded to bf16 (all), or with a few cleared by chance (not enough). */
static void test_stored_short_seen(void) {
  bf16fp32__rounding_tally exact = {0, 0}, rounded = {0, 0}, few = {0, 0};
  for (int i = 0; i < 64; i++) {
    const double ref = 1.0 + (2 * i + 1) * 0x1p-23; /* the last significand bit set */
    bf16fp32__rounding_add(&exact, (float)ref, ref);
    bf16fp32__rounding_add(&rounded, bf16fp32__bf16_to_float(bf16fp32__float_to_bf16((float)ref)), ref);
    bf16fp32__rounding_add(&few, i < 7 ? 1.0f : (float)ref, ref);
  }
  CHECK(exact.needing == 64 && exact.cleared == 0 && !bf16fp32__rounding_seen(&exact));
  CHECK(rounded.needing == 64 && rounded.cleared == 64 && bf16fp32__rounding_seen(&rounded));
  CHECK(few.cleared == 7 && !bf16fp32__rounding_seen(&few));
  /* values that fit 16 significand bits say nothing either way */
  bf16fp32__rounding_tally short_values = {0, 0};
  for (int i = 0; i < 64; i++) bf16fp32__rounding_add(&short_values, 1.0f + i * 0x1p-8f, 1.0 + i * 0x1p-8);
  CHECK(short_values.needing == 0 && !bf16fp32__rounding_seen(&short_values));
}

/* The check itself can fail: an answer just outside the bound, a number where NaN is due (and
 * the reverse), an infinity of the wrong sign; a loosened or tightened bound would pass or fail
 * the wrong ones. */
static void test_check_can_fail(void) {
  const int64_t k = 1000;
  const double ref = 10.0, absdot = 1000.0, bound = bf16fp32__error_bound(k, absdot);
  /* gamma_(k+1) |x|.|w| (DESIGN.md), pinned here rather than taken from the code under test */
  const double expected = (double)(k + 1) * 0x1p-24 * absdot;
  CHECK(bound >= expected && bound <= 1.001 * expected);
  CHECK(bf16fp32__within_bound((float)(ref + 0.5 * bound), ref, absdot, k));
  CHECK(bf16fp32__within_bound((float)(ref - 0.9 * bound), ref, absdot, k));
  CHECK(!bf16fp32__within_bound((float)(ref + 1.1 * bound), ref, absdot, k));
  CHECK(!bf16fp32__within_bound((float)(ref - 2.0 * bound), ref, absdot, k));
  CHECK(!bf16fp32__within_bound(NAN, ref, absdot, k));
  CHECK(!bf16fp32__within_bound((float)ref, NAN, absdot, k));
  CHECK(bf16fp32__within_bound(NAN, NAN, absdot, k));
  CHECK(!bf16fp32__within_bound(-INFINITY, INFINITY, absdot, k));
  CHECK(!bf16fp32__within_bound(INFINITY, -INFINITY, absdot, k));
  CHECK(!bf16fp32__within_bound((float)ref, INFINITY, absdot, k));
  CHECK(bf16fp32__within_bound(-INFINITY, -INFINITY, absdot, k));
  /* Products whose magnitudes add past FLT_MAX may overflow an fp32 partial sum in some order:
   * an infinity of either sign or NaN is then an fp32 answer, even for a finite fp64 sum. */
  const double huge = 3.0 * (double)FLT_MAX;
  CHECK(bf16fp32__within_bound(NAN, 0.0, huge, 2));
  CHECK(bf16fp32__within_bound(-INFINITY, 1.0, huge, 3));
  CHECK(bf16fp32__within_bound(INFINITY, -1.0, huge, 3));
  CHECK(!bf16fp32__within_bound(NAN, 0.0, 0.5 * (double)FLT_MAX, 2));
  /* An infinity is the fp32 answer only for a sum that may round to it, of the same sign. */
  CHECK(!bf16fp32__within_bound(INFINITY, ref, absdot, k));
  CHECK(bf16fp32__within_bound(INFINITY, (double)FLT_MAX, absdot, k));
  CHECK(!bf16fp32__within_bound(-INFINITY, (double)FLT_MAX, absdot, k));
  /* gamma's denominator, seen where k u is not small (k = 2^20: 6.7% instead of 6.25%). */
  const int64_t big = (int64_t)1 << 20;
  const double ku = (double)(big + 1) * 0x1p-24;
  const double gamma = ku / (1.0 - ku) * absdot + (double)(big + 1) * FLT_MIN;
  CHECK(fabs(bf16fp32__error_bound(big, absdot) - gamma) <= 1e-12 * gamma);
  /* The term for flushed products and sums ((k + 1) FLT_MIN): all of the bound at absdot 0, and
   * no more: an error of 1e-36 at k = 10 (85 FLT_MIN against 11) is outside it. */
  CHECK(bf16fp32__error_bound(k, 0.0) == (double)(k + 1) * FLT_MIN);
  CHECK(bf16fp32__within_bound(0.0f, 1e-40, 1e-40, 1));
  CHECK(!bf16fp32__within_bound(2e-36f, 1e-36, 1e-36, 10));
  /* Through sup_check: a right answer passes, each planted fault is counted once. */
  enum { M = 3, N = 4, K = 64 };
  uint16_t x[M * K], w[N * K];
  float out[M * N];
  double ref_m[M * N], ad[M * N];
  sup_fill_bf16(x, M * K, 5);
  sup_fill_bf16(w, N * K, 6);
  bf16fp32__oracle(M, N, K, x, K, w, K, ref_m, ad);
  for (int i = 0; i < M * N; i++) out[i] = (float)ref_m[i];
  sup_check_result r = sup_check(M, N, K, x, K, w, K, out, N);
  CHECK(sup_check_ok(&r));
  out[1] = (float)(ref_m[1] + 2.0 * bf16fp32__error_bound(K, ad[1]) + fabs(ref_m[1]) * 0x1p-20);
  out[6] = NAN;
  out[11] = ref_m[11] > 0 ? -INFINITY : INFINITY;
  r = sup_check(M, N, K, x, K, w, K, out, N);
  CHECK(!sup_check_ok(&r) && r.violations == 3 && r.unwritten == 0);
}

int main(void) {
  test_check_can_fail();
  test_stored_short_seen();
  bf16fp32_context *ctx = NULL;
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  if (!ctx) return testing_summary("test-backends-oracle");
  int gpu = sup_gpu_available();
  for (int b = 0; b < bf16fp32_backend_count(); b++) {
    bf16fp32_backend_info bi;
    CHECK_OK(bf16fp32_backend_info_get(ctx, b, &bi));
    if (!bi.available) {
      printf("%-10s unavailable: %s\n", bi.name, bi.reason);
      /* cpu-ref is always there, cpu-simd wherever detection finds a level (x86 with AVX2 and
       * FMA, aarch64 with NEON), the device backends wherever there is a GPU */
      const int simd_absent = strcmp(bi.name, "cpu-simd") == 0 &&
                              bf16fp32__simd_detect() == BF16FP32__ISA_NONE;
      CHECK((bi.where == BF16FP32_DEVICE && !gpu) || simd_absent);
      continue;
    }
    CHECK(bi.reason[0] == '\0'); /* a reason is for an unavailable backend only */
    CHECK_OK(bf16fp32_force_backend(ctx, bi.name));
    int ran = 0, total = (int)(sizeof grid / sizeof grid[0]);
    for (int i = 0; i < total; i++) ran += run_case(ctx, b, &bi, &grid[i], 1000u + (uint64_t)i);
    printf("%-10s ran %d of %d cases itself (the rest it declined: the fallback was checked)\n",
           bi.name, ran, total);
    CHECK(ran > 0);
  }
  /* auto, on the host and on the device */
  CHECK_OK(bf16fp32_force_backend(ctx, "auto"));
  for (int where = 0; where <= (gpu ? 1 : 0); where++) {
    bf16fp32_backend_info autob = {.name = "auto", .where = (bf16fp32_location)where};
    for (size_t i = 0; i < sizeof grid / sizeof grid[0]; i++) run_case(ctx, -1, &autob, &grid[i], 7u + i);
  }
  bf16fp32_destroy(ctx);
  return testing_summary("test-backends-oracle");
}
