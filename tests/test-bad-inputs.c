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
      /* out's span one row of 2^56 - 2 and its n = 5: just past 2^56 elements */
      {"m x ldo just past 2^56", 0, 2, N, K, x, LD, w, LD, o, ((int64_t)1 << 56) - 2,
       BF16FP32_BAD_SIZE},
      /* spans of exactly 2^56 elements pass the size check: the short ldx after it answers */
      {"ldo 2^56, one row", 0, 1, N, K, x, K - 1, w, LD, o, (int64_t)1 << 56, BF16FP32_BAD_LEADING_DIM},
      {"m x ldo 2^56", 0, 2, N, K, x, K - 1, w, LD, o, ((int64_t)1 << 56) - N, BF16FP32_BAD_LEADING_DIM},
      {"m x ldo 2^56 + 1", 0, 2, N, K, x, K - 1, w, LD, o, ((int64_t)1 << 56) - N + 1, BF16FP32_BAD_SIZE},
      {"bad location", 7, M, N, K, x, LD, w, LD, o, LD, BF16FP32_BAD_OPTION},
      {"negative location", -1, M, N, K, x, LD, w, LD, o, LD, BF16FP32_BAD_OPTION},
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
  /* without a device, a device call is NO_DEVICE before its operands are looked at: not the
   * OVERLAP of a w placed inside out */
  if (!sup_gpu_available()) {
    st = bf16fp32_linear(ctx, BF16FP32_DEVICE, M, N, K, x, LD, (const uint16_t *)obuf, LD, o, LD, NULL);
    EXPECT(st == BF16FP32_NO_DEVICE && strstr(bf16fp32_last_error(), "no CUDA device"),
           "device call, no device, out inside w: %s (%s)", bf16fp32_status_name(st),
           bf16fp32_last_error());
  }
}

/* out must not share a byte with x's or w's rows: OVERLAP, nothing written. Rows that interleave
 * in one buffer without touching are allowed and computed. */
static void test_overlap(bf16fp32_context *ctx) {
  enum { P = 64 }; /* bytes per row of a shared buffer: x's row (2 K bytes) then out's (4 N) */
  static float shared[M * P / 4];
  uint16_t *xs = (uint16_t *)shared;
  float *os = shared + 2 * K / 4 + 1; /* 16 bytes past x's row start, after its 14 */
  sup_fill_bf16(xs, M * P / 2, 3);
  /* out's rows over x's rows: every row */
  CHECK(bf16fp32_linear(ctx, BF16FP32_HOST, M, N, K, xs, P / 2, wbuf, LD, (float *)shared, P / 4,
                        NULL) == BF16FP32_OVERLAP);
  /* out's one element over x's last one only (x's row ends 2 bytes into it) */
  CHECK(bf16fp32_linear(ctx, BF16FP32_HOST, 1, 1, K, xs, K, wbuf, LD, (float *)(xs + K - 1), 1,
                        NULL) == BF16FP32_OVERLAP);
  /* ... and just past it: allowed */
  CHECK_OK(bf16fp32_linear(ctx, BF16FP32_HOST, 1, 1, K - 1, xs, K, wbuf, LD,
                           (float *)(xs + K - 1), 1, NULL));
  /* out on w (w's first row) */
  CHECK(bf16fp32_linear(ctx, BF16FP32_HOST, M, N, K, xbuf, LD, wbuf, LD, (float *)(wbuf + 8), LD,
                        NULL) == BF16FP32_OVERLAP);
  CHECK(strstr(bf16fp32_last_error(), "with w") != NULL);
  /* interleaved: x's row r at r P, out's row r at r P + 16 (x's row is 14 bytes): allowed */
  uint16_t xc[M * K];
  for (int i = 0; i < M; i++) memcpy(xc + i * K, xs + i * P / 2, sizeof(uint16_t) * K);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) os[i * P / 4 + j] = -1.0f;
  CHECK_OK(bf16fp32_linear(ctx, BF16FP32_HOST, M, N, K, xs, P / 2, wbuf, LD, os, P / 4, NULL));
  float oc[M * N];
  for (int i = 0; i < M; i++) {
    CHECK(memcmp(xc + i * K, xs + i * P / 2, sizeof(uint16_t) * K) == 0); /* x as it was */
    memcpy(oc + i * N, os + i * P / 4, sizeof(float) * N);
  }
  sup_check_result r = sup_check(M, N, K, xc, K, wbuf, LD, oc, N);
  CHECK(sup_check_ok(&r));
  /* out's row just before x's next row: the touching case, one byte apart, is allowed too */
  CHECK_OK(bf16fp32_linear(ctx, BF16FP32_HOST, M, 4, K, xs, P / 2, wbuf, LD, os + 8, P / 4, NULL));
}

/* Random layouts of out and one operand (x, or w with its own ldw) in one buffer: OVERLAP exactly
 * when some byte of out's rows is a byte of that operand's rows (a byte map says which). The other
 * operand has rows of LD elements in a buffer of its own, large enough for them (n = 6 rows of
 * wbuf read 2 bytes past its end, which ASan missed where cpu-simd's masked loads ran). */
static void test_overlap_random(bf16fp32_context *ctx, int shared_is_w) {
  enum { BYTES = 4096, ROWS = 6 };
  static float buf[BYTES / 4];
  static unsigned char mark[BYTES];
  static uint16_t other[ROWS * LD]; /* m <= 4 rows of x or n <= 6 rows of w, k <= 9 */
  sup_fill_bf16(other, ROWS * LD, 4);
  uint64_t seed = shared_is_w ? 54321 : 12345;
  int overlapping = 0, apart = 0;
  for (int t = 0; t < 3000; t++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t v = seed >> 11;
    const int64_t m = 1 + (int64_t)(v % 4), n = 1 + (int64_t)(v / 4 % ROWS);
    const int64_t k = 1 + (int64_t)(v / 24 % 9), rows = shared_is_w ? n : m; /* the shared one's */
    const int64_t lds = k + (int64_t)(v / 216 % 20), ldo = n + (int64_t)(v / 4320 % 12);
    const int64_t so = 2 * (int64_t)(v / 51840 % 800), oo = 4 * (int64_t)(v / 41472000 % 400);
    if (so + 2 * ((rows - 1) * lds + k) > BYTES || oo + 4 * ((m - 1) * ldo + n) > BYTES) continue;
    memset(mark, 0, sizeof mark);
    for (int64_t i = 0; i < rows; i++) memset(mark + so + 2 * i * lds, 1, (size_t)(2 * k));
    int want = 0;
    for (int64_t i = 0; i < m && !want; i++)
      for (int64_t b = 0; b < 4 * n && !want; b++) want = mark[oo + 4 * i * ldo + b];
    const uint16_t *s = (const uint16_t *)((char *)buf + so);
    const uint16_t *x = shared_is_w ? other : s, *w = shared_is_w ? s : other;
    const int64_t ldx = shared_is_w ? LD : lds, ldw = shared_is_w ? lds : LD;
    float *out = (float *)((char *)buf + oo);
    bf16fp32_status st = bf16fp32_linear(ctx, BF16FP32_HOST, m, n, k, x, ldx, w, ldw, out, ldo, NULL);
    EXPECT(st == (want ? BF16FP32_OVERLAP : BF16FP32_OK),
           "%s at %lld (ld %lld), out at %lld (ld %lld), m %lld n %lld k %lld: %s", shared_is_w ? "w" : "x",
           (long long)so, (long long)lds, (long long)oo, (long long)ldo, (long long)m, (long long)n,
           (long long)k, bf16fp32_status_name(st));
    overlapping += want, apart += !want;
  }
  EXPECT(overlapping > 100 && apart > 100, "%d overlapping, %d apart", overlapping, apart); /* both drawn */
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
  /* a NULL ms of count 1 is refused before it is read (the check is count > 0, not > 1) */
  EXPECT(bf16fp32_prewarm(ctx, BF16FP32_HOST, N, K, NULL, 1, NULL) == BF16FP32_NULL_POINTER, "%s",
         bf16fp32_last_error());
  /* each bound of prewarm's and select's sizes and location, at its first bad value */
  const int64_t minus_one[] = {-1};
  EXPECT(bf16fp32_prewarm(ctx, BF16FP32_HOST, N, K, minus_one, 1, NULL) == BF16FP32_BAD_SIZE, "m -1");
  EXPECT(bf16fp32_prewarm(ctx, BF16FP32_HOST, N, -1, ms, 2, NULL) == BF16FP32_BAD_SIZE, "k -1");
  EXPECT(bf16fp32_prewarm(ctx, (bf16fp32_location)2, N, K, ms, 2, NULL) == BF16FP32_BAD_OPTION,
         "where 2");
  /* sizes that every call of the shape refuses (a matrix past 2^56 elements): so do prewarm and
   * select, rather than ready or name a backend for it */
  const int64_t big = (int64_t)1 << 29, huge[] = {big};
  EXPECT(bf16fp32_prewarm(ctx, BF16FP32_HOST, big, big, ms, 2, NULL) == BF16FP32_BAD_SIZE, "n x k 2^58");
  EXPECT(bf16fp32_prewarm(ctx, BF16FP32_HOST, big, 1, huge, 1, NULL) == BF16FP32_BAD_SIZE, "m x n 2^58");
  EXPECT(bf16fp32_prewarm(ctx, BF16FP32_HOST, 1, big, huge, 1, NULL) == BF16FP32_BAD_SIZE, "m x k 2^58");
  EXPECT(bf16fp32_prewarm(ctx, BF16FP32_HOST, INT64_MAX, INT64_MAX, ms, 2, NULL) == BF16FP32_BAD_SIZE,
         "n = k = INT64_MAX");
  /* ... but M = 0 computes nothing whatever n and k are, as a call of it does */
  const int64_t none[] = {0};
  EXPECT(bf16fp32_prewarm(ctx, BF16FP32_HOST, INT64_MAX, INT64_MAX, none, 1, NULL) == BF16FP32_OK,
         "M = 0: %s", bf16fp32_last_error());
  static const struct { int where; int64_t m, n, k; bf16fp32_status expect; } bad_select[] = {
      {BF16FP32_HOST, 1, 0, K, BF16FP32_BAD_SIZE},  {BF16FP32_HOST, 1, N, 0, BF16FP32_BAD_SIZE},
      {BF16FP32_HOST, 1, -1, K, BF16FP32_BAD_SIZE}, {BF16FP32_HOST, 1, N, -1, BF16FP32_BAD_SIZE},
      {BF16FP32_HOST, -1, N, K, BF16FP32_BAD_SIZE}, {2, 1, N, K, BF16FP32_BAD_OPTION},
      {-1, 1, N, K, BF16FP32_BAD_OPTION},
      {BF16FP32_HOST, 1, (int64_t)1 << 29, (int64_t)1 << 29, BF16FP32_BAD_SIZE},
      {BF16FP32_HOST, (int64_t)1 << 29, (int64_t)1 << 29, 1, BF16FP32_BAD_SIZE},
      {BF16FP32_HOST, INT64_MAX, INT64_MAX, INT64_MAX, BF16FP32_BAD_SIZE},
  };
  for (size_t i = 0; i < sizeof bad_select / sizeof bad_select[0]; i++) {
    /* a refused select leaves no name and no reason behind (not the caller's stale ones) */
    char why[64] = "stale";
    name = "stale";
    const int where = bad_select[i].where;
    const int64_t m = bad_select[i].m, n = bad_select[i].n, k = bad_select[i].k;
    const bf16fp32_location at = (bf16fp32_location)where;
    const bf16fp32_status st = bf16fp32_select(ctx, at, m, n, k, &name, why, sizeof why);
    EXPECT(st == bad_select[i].expect && name == NULL && why[0] == '\0',
           "select where %d m %lld n %lld k %lld: %s, name %s, why '%s'", where, (long long)m,
           (long long)n, (long long)k, bf16fp32_status_name(st), name ? name : "NULL", why);
  }
  CHECK(bf16fp32_select(ctx, BF16FP32_HOST, 1, N, K, NULL, NULL, 0) == BF16FP32_NULL_POINTER);
  CHECK(bf16fp32_select(ctx, BF16FP32_HOST, 0, N, K, &name, NULL, 0) == BF16FP32_BAD_SIZE);
  CHECK(bf16fp32_force_backend(ctx, "no-such-backend") == BF16FP32_UNKNOWN_BACKEND);
  CHECK(bf16fp32_force_backend(NULL, "auto") == BF16FP32_NULL_POINTER);
  CHECK(bf16fp32_backend_info_get(ctx, -1, &info) == BF16FP32_BAD_SIZE);
  CHECK(bf16fp32_backend_info_get(ctx, 0, NULL) == BF16FP32_NULL_POINTER);
  CHECK(bf16fp32_quarantine_list(ctx, NULL, 3, &count) == BF16FP32_NULL_POINTER);
  CHECK(bf16fp32_quarantine_list(ctx, NULL, 0, NULL) == BF16FP32_NULL_POINTER);
  /* a negative capacity is a bad count, as the status says, not an empty list */
  EXPECT(bf16fp32_quarantine_list(ctx, NULL, -1, &count) == BF16FP32_BAD_SIZE, "cap -1");
  CHECK(bf16fp32_reset(NULL) == BF16FP32_NULL_POINTER);
  bf16fp32_options_init(NULL); /* returns nothing: it must not crash */
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
  /* each status has its own name and message, as the header's list pairs them */
  static const struct { const char *name, *message; } listed[] = {
#define LISTED(name, msg) {#name, msg},
      BF16FP32_STATUS_MAP(LISTED)
#undef LISTED
  };
  CHECK(sizeof listed / sizeof listed[0] == BF16FP32_STATUS_COUNT);
  for (int s = 0; s < BF16FP32_STATUS_COUNT; s++) {
    EXPECT(strcmp(bf16fp32_status_name((bf16fp32_status)s), listed[s].name) == 0, "status %d: %s", s,
           bf16fp32_status_name((bf16fp32_status)s));
    EXPECT(strcmp(bf16fp32_status_message((bf16fp32_status)s), listed[s].message) == 0,
           "status %d: %s", s, bf16fp32_status_message((bf16fp32_status)s));
  }
  CHECK(strcmp(bf16fp32_status_name(BF16FP32_OK), "OK") == 0);
  CHECK(strcmp(bf16fp32_status_name((bf16fp32_status)-1), "UNKNOWN_STATUS") == 0);
  CHECK(strcmp(bf16fp32_status_name(BF16FP32_STATUS_COUNT), "UNKNOWN_STATUS") == 0);
  /* a value outside the table has a message of its own, not a neighbour's */
  CHECK(strcmp(bf16fp32_status_message(BF16FP32_STATUS_COUNT), "unknown status value") == 0);
  CHECK(strcmp(bf16fp32_status_message((bf16fp32_status)-1), "unknown status value") == 0);
}

/* describe: its arguments, a short buffer cut without writing past len, and the lines of a
 * context without a tuned table (no file, no built-in table). */
static void test_describe(bf16fp32_context *ctx) {
  char buf[64];
  CHECK(bf16fp32_describe(NULL, buf, sizeof buf) == BF16FP32_NULL_POINTER);
  CHECK(bf16fp32_describe(ctx, NULL, sizeof buf) == BF16FP32_NULL_POINTER);
  memset(buf, 'x', sizeof buf);
  CHECK(bf16fp32_describe(ctx, buf, 0) == BF16FP32_BAD_SIZE && buf[0] == 'x');
  CHECK_OK(bf16fp32_describe(ctx, buf, 8));
  EXPECT(strlen(buf) == 7 && buf[8] == 'x' && buf[63] == 'x', "cut at 8: '%s'", buf);
  setenv("BF16FP32_TUNE_FILE", "", 1);
  setenv("BF16FP32_TUNE_BUILTIN", "0", 1);
  bf16fp32_context *plain = NULL;
  CHECK_OK(bf16fp32_create(&plain, NULL));
  unsetenv("BF16FP32_TUNE_BUILTIN");
  if (!plain) return;
  char text[4096], head[64];
  CHECK_OK(bf16fp32_describe(plain, text, sizeof text));
  snprintf(head, sizeof head, "bf16fp32 %s\n", BF16FP32_VERSION);
  EXPECT(strncmp(text, head, strlen(head)) == 0, "first line:\n%s", text);
  /* a GPU's line where there is one, else the host-only one */
  EXPECT(strstr(text, "\ndevice ") || strstr(text, "\ndevice: none (host backends only)\n"),
         "device line:\n%s", text);
  EXPECT(strstr(text, "\ncpu: ") != NULL, "cpu line:\n%s", text);
  EXPECT(strstr(text, "\nalgo: auto; tune file: (none)\n") != NULL, "algo line:\n%s", text);
  EXPECT(strstr(text, "\ntuned table: none (built-in rules decide)\n") != NULL, "table:\n%s",
         text);
  bf16fp32_destroy(plain);
}

int main(void) {
  bf16fp32_context *ctx = NULL;
  sup_fill_bf16(xbuf, sizeof xbuf / sizeof xbuf[0], 1);
  sup_fill_bf16(wbuf, sizeof wbuf / sizeof wbuf[0], 2);
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  if (!ctx) return testing_summary("test-bad-inputs");
  test_bad_calls(ctx);
  test_overlap(ctx);
  test_overlap_random(ctx, 0);
  test_overlap_random(ctx, 1);
  test_empty_sizes(ctx);
  test_other_entry_points(ctx);
  test_status_table();
  test_version();
  test_describe(ctx);
  bf16fp32_destroy(ctx);
  return testing_summary("test-bad-inputs");
}
