/* Bad input gets a clear status and nothing is written: NULL pointers, negative sizes, short
 * leading dimensions, misaligned pointers, host/device mismatch, bad locations. Also what
 * m = 0, n = 0 and k = 0 mean, and the status table itself. */
#include <stdlib.h>
#include <string.h>

#include "support.h"
#include "testing.h"

enum { M = 3, N = 5, K = 7, LD = 9 };

static uint16_t xbuf[M * LD + 8], wbuf[N * LD + 8];
static float obuf[M * LD + 8];

static int all_poisoned(void) { return sup_poisoned(obuf, sizeof obuf / sizeof obuf[0]); }

typedef struct bad_case {
  const char *what;
  int where;
  int64_t m, n, k;
  const uint16_t *x;
  int64_t ldx;
  const uint16_t *w;
  int64_t ldw;
  float *out;
  int64_t ldo;
  bf16fp32_status expect;
} bad_case;

static void test_bad_calls(bf16fp32_context *ctx) {
  const uint16_t *x = xbuf, *w = wbuf;
  float *o = obuf;
  const bad_case cases[] = {
      {"x NULL", 0, M, N, K, NULL, LD, w, LD, o, LD, BF16FP32_NULL_POINTER},
      {"w NULL", 0, M, N, K, x, LD, NULL, LD, o, LD, BF16FP32_NULL_POINTER},
      {"out NULL", 0, M, N, K, x, LD, w, LD, NULL, LD, BF16FP32_NULL_POINTER},
      {"m < 0", 0, -1, N, K, x, LD, w, LD, o, LD, BF16FP32_BAD_SIZE},
      {"n < 0", 0, M, -5, K, x, LD, w, LD, o, LD, BF16FP32_BAD_SIZE},
      {"k < 0", 0, M, N, -7, x, LD, w, LD, o, LD, BF16FP32_BAD_SIZE},
      {"ldx < k", 0, M, N, K, x, K - 1, w, LD, o, LD, BF16FP32_BAD_LEADING_DIM},
      {"ldw < k", 0, M, N, K, x, LD, w, K - 1, o, LD, BF16FP32_BAD_LEADING_DIM},
      {"ldo < n", 0, M, N, K, x, LD, w, LD, o, N - 1, BF16FP32_BAD_LEADING_DIM},
      {"ldx negative", 0, M, N, K, x, -LD, w, LD, o, LD, BF16FP32_BAD_LEADING_DIM},
      {"x odd address", 0, M, N, K, (const uint16_t *)((const char *)x + 1), LD, w, LD, o, LD,
       BF16FP32_MISALIGNED},
      {"w odd address", 0, M, N, K, x, LD, (const uint16_t *)((const char *)w + 1), LD, o, LD,
       BF16FP32_MISALIGNED},
      {"out 2-byte aligned", 0, M, N, K, x, LD, w, LD, (float *)((char *)o + 2), LD, BF16FP32_MISALIGNED},
      {"huge sizes", 0, (int64_t)1 << 40, N, K, x, (int64_t)1 << 40, w, LD, o, LD, BF16FP32_BAD_SIZE},
      /* one row: the span is one row long, but k, n and the leading dimensions are still bounded */
      {"one row, huge k", 0, 1, N, INT64_MAX, x, INT64_MAX, w, INT64_MAX, o, LD, BF16FP32_BAD_SIZE},
      {"one row, huge n", 0, 1, (int64_t)1 << 61, 0, x, LD, w, LD, o, (int64_t)1 << 61,
       BF16FP32_BAD_SIZE},
      {"one row of w, huge ldw", 0, M, 1, K, x, LD, w, INT64_MAX, o, LD, BF16FP32_BAD_SIZE},
      {"one row of x, huge ldx", 0, 1, N, K, x, (int64_t)1 << 57, w, LD, o, LD, BF16FP32_BAD_SIZE},
      {"bad location", 7, M, N, K, x, LD, w, LD, o, LD, BF16FP32_BAD_OPTION},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const bad_case *c = &cases[i];
    sup_poison_f32(obuf, sizeof obuf / sizeof obuf[0]);
    bf16fp32_status st = bf16fp32_linear(ctx, (bf16fp32_location)c->where, c->m, c->n, c->k, c->x,
                                         c->ldx, c->w, c->ldw, c->out, c->ldo, NULL);
    if (st != c->expect)
      fprintf(stderr, "case '%s': got %s, expected %s\n", c->what, bf16fp32_status_name(st),
              bf16fp32_status_name(c->expect));
    CHECK(st == c->expect);
    CHECK(strlen(bf16fp32_last_error()) > 0);
    CHECK(all_poisoned());
  }
  CHECK(bf16fp32_linear(NULL, BF16FP32_HOST, M, N, K, x, LD, w, LD, o, LD, NULL) == BF16FP32_NULL_POINTER);
  /* a host buffer in a device call: no device here, or the wrong kind of memory */
  sup_poison_f32(obuf, sizeof obuf / sizeof obuf[0]);
  bf16fp32_status st = bf16fp32_linear(ctx, BF16FP32_DEVICE, M, N, K, x, LD, w, LD, o, LD, NULL);
  CHECK(st == (sup_gpu_available() ? BF16FP32_WRONG_MEMORY : BF16FP32_NO_DEVICE));
  CHECK(all_poisoned());
}

static void test_empty_sizes(bf16fp32_context *ctx) {
  /* m == 0 or n == 0: nothing to do, pointers are not looked at */
  CHECK_OK(bf16fp32_linear(ctx, BF16FP32_HOST, 0, N, K, NULL, 0, NULL, 0, NULL, 0, NULL));
  CHECK_OK(bf16fp32_linear(ctx, BF16FP32_HOST, M, 0, K, NULL, 0, NULL, 0, NULL, 0, NULL));
  /* k == 0: the empty sum, out set to zero, padding untouched; x and w may be NULL */
  sup_poison_f32(obuf, sizeof obuf / sizeof obuf[0]);
  CHECK_OK(bf16fp32_linear(ctx, BF16FP32_HOST, M, N, 0, NULL, 0, NULL, 0, obuf, LD, NULL));
  for (int i = 0; i < M; i++)
    for (int j = 0; j < LD; j++) {
      uint32_t bits;
      memcpy(&bits, &obuf[i * LD + j], sizeof bits);
      CHECK(j < N ? bits == 0 : bits == SUP_POISON_BITS);
    }
}

static void test_other_entry_points(bf16fp32_context *ctx) {
  const int64_t ms[] = {1, 4};
  const char *name = NULL;
  int count = 0;
  bf16fp32_backend_info info;
  CHECK(bf16fp32_prewarm(NULL, BF16FP32_HOST, N, K, ms, 2, NULL) == BF16FP32_NULL_POINTER);
  CHECK(bf16fp32_prewarm(ctx, BF16FP32_HOST, N, K, NULL, 2, NULL) == BF16FP32_NULL_POINTER);
  CHECK(bf16fp32_prewarm(ctx, BF16FP32_HOST, N, K, ms, -1, NULL) == BF16FP32_BAD_SIZE);
  CHECK(bf16fp32_prewarm(ctx, BF16FP32_HOST, -N, K, ms, 2, NULL) == BF16FP32_BAD_SIZE);
  const int64_t neg[] = {1, -4};
  CHECK(bf16fp32_prewarm(ctx, BF16FP32_HOST, N, K, neg, 2, NULL) == BF16FP32_BAD_SIZE);
  CHECK_OK(bf16fp32_prewarm(ctx, BF16FP32_HOST, N, K, ms, 2, NULL));
  CHECK_OK(bf16fp32_prewarm(ctx, BF16FP32_HOST, N, K, NULL, 0, NULL));
  CHECK(bf16fp32_select(ctx, BF16FP32_HOST, 1, N, K, NULL, NULL, 0) == BF16FP32_NULL_POINTER);
  CHECK(bf16fp32_select(ctx, BF16FP32_HOST, 0, N, K, &name, NULL, 0) == BF16FP32_BAD_SIZE);
  CHECK(bf16fp32_force_backend(ctx, "no-such-backend") == BF16FP32_UNKNOWN_BACKEND);
  CHECK(bf16fp32_force_backend(NULL, "auto") == BF16FP32_NULL_POINTER);
  CHECK(bf16fp32_backend_info_get(ctx, -1, &info) == BF16FP32_BAD_SIZE);
  CHECK(bf16fp32_backend_info_get(ctx, 0, NULL) == BF16FP32_NULL_POINTER);
  CHECK(bf16fp32_quarantine_list(ctx, NULL, 3, &count) == BF16FP32_NULL_POINTER);
  CHECK(bf16fp32_quarantine_list(ctx, NULL, 0, NULL) == BF16FP32_NULL_POINTER);
  CHECK(bf16fp32_reset(NULL) == BF16FP32_NULL_POINTER);
  CHECK(bf16fp32_create(NULL, NULL) == BF16FP32_NULL_POINTER);
  bf16fp32_destroy(NULL); /* a no-op, like free(NULL) */
}

/* The library reports the version its header declares. */
static void test_version(void) { CHECK(strcmp(bf16fp32_version(), BF16FP32_VERSION) == 0); }

static void test_status_table(void) {
  for (int s = 0; s < BF16FP32_STATUS_COUNT; s++) {
    CHECK(strcmp(bf16fp32_status_name((bf16fp32_status)s), "UNKNOWN_STATUS") != 0);
    CHECK(strlen(bf16fp32_status_message((bf16fp32_status)s)) > 5);
    for (int t = 0; t < s; t++)
      CHECK(strcmp(bf16fp32_status_name((bf16fp32_status)s), bf16fp32_status_name((bf16fp32_status)t)) != 0);
  }
  CHECK(strcmp(bf16fp32_status_name(BF16FP32_OK), "OK") == 0);
  CHECK(strcmp(bf16fp32_status_name((bf16fp32_status)-1), "UNKNOWN_STATUS") == 0);
  CHECK(strcmp(bf16fp32_status_name(BF16FP32_STATUS_COUNT), "UNKNOWN_STATUS") == 0);
}

int main(void) {
  bf16fp32_context *ctx = NULL;
  sup_fill_bf16(xbuf, sizeof xbuf / sizeof xbuf[0], 1);
  sup_fill_bf16(wbuf, sizeof wbuf / sizeof wbuf[0], 2);
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  if (!ctx) return testing_summary("test-bad-inputs");
  test_bad_calls(ctx);
  test_empty_sizes(ctx);
  test_other_entry_points(ctx);
  test_status_table();
  test_version();
  bf16fp32_destroy(ctx);
  return testing_summary("test-bad-inputs");
}
