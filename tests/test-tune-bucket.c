/* M buckets and the tuned table's lookup: which entry a call's M uses, and what the
 * dispatcher gets back (registry indices, the reason). */
#include <stdio.h>
#include <string.h>

#include "tune-table.h"
#include "tune.h"
#include "support.h"
#include "testing.h"


static void test_bucket(void) {
  for (int64_t m = 1; m <= 16; m++) EXPECT(bf16fp32__tune_bucket(m) == m, "m=%lld", (long long)m);
  for (int64_t m = 17; m <= 64; m++)
    EXPECT(bf16fp32__tune_bucket(m) == (m + 7) / 8 * 8, "m=%lld", (long long)m);
  EXPECT(bf16fp32__tune_bucket(24) == 24 && bf16fp32__tune_bucket(25) == 32, "24, 25");
  EXPECT(bf16fp32__tune_bucket(65) == 128 && bf16fp32__tune_bucket(128) == 128, "65, 128");
  EXPECT(bf16fp32__tune_bucket(129) == 256, "129");
  EXPECT(bf16fp32__tune_bucket(4096) == 4096, "4096");
  EXPECT(bf16fp32__tune_bucket(4097) == 8192, "4097");
  EXPECT(bf16fp32__tune_bucket(0) == 1 && bf16fp32__tune_bucket(-5) == 1, "m < 1");
  EXPECT(bf16fp32__tune_bucket(((int64_t)1 << 40) + 1) == (int64_t)1 << 41, "2^40+1");
  /* Every bucket is its own representative, and every M maps to a bucket at or above it. */
  for (int64_t m = 1; m < 100000; m += 1 + m / 7) {
    int64_t b = bf16fp32__tune_bucket(m);
    EXPECT(b >= m && bf16fp32__tune_is_bucket(b) && bf16fp32__tune_bucket(b) == b, "m=%lld b=%lld",
           (long long)m, (long long)b);
  }
  EXPECT(!bf16fp32__tune_is_bucket(17) && !bf16fp32__tune_is_bucket(44) &&
             !bf16fp32__tune_is_bucket(72) && !bf16fp32__tune_is_bucket(96) && !bf16fp32__tune_is_bucket(0),
         "not buckets");
  EXPECT(bf16fp32__tune_is_bucket(13) && bf16fp32__tune_is_bucket(24) && bf16fp32__tune_is_bucket(48) &&
             bf16fp32__tune_is_bucket(1024),
         "buckets");
  /* a list's buckets: each once, ascending, whatever the order and repeats of its M values */
  const int64_t ms[] = {100, 3, 20, 1, 24, 17, 3, 129, 65};
  int64_t b[9];
  const int nb = bf16fp32__tune_buckets(ms, 9, b);
  EXPECT(nb == 5 && b[0] == 1 && b[1] == 3 && b[2] == 24 && b[3] == 128 && b[4] == 256,
         "buckets of a list: %d", nb);
}

/* A call as the dispatcher sees it, packed operands. */
static bf16fp32__shape call_shape(int where, int64_t m, int64_t n, int64_t k) {
  bf16fp32__shape s;
  memset(&s, 0, sizeof s);
  s.where = where, s.m = m, s.n = n, s.k = k, s.ldx = k, s.ldw = k, s.ldo = n;
  return s;
}

static void test_lookup(void) {
  bf16fp32__tune_table t;
  memset(&t, 0, sizeof t);
  snprintf(t.file, sizeof t.file, "/tmp/x.tsv");
  snprintf(t.builtin, sizeof t.builtin, "NVIDIA H200");
  /* Added out of order, with a duplicate key whose later addition must win. */
  const int64_t ms[] = {64, 1, 4, 16, 32, 4096, 40};
  for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
    bf16fp32__tune_entry e = sup_tune_entry(BF16FP32_HOST, 256, 4096, ms[i], "cpu-ref", (double)ms[i], "", 0, (int)i + 10);
    EXPECT(bf16fp32__tune_table_add(&t, &e) == BF16FP32_OK, "add");
  }
  bf16fp32__tune_entry dup = sup_tune_entry(BF16FP32_HOST, 256, 4096, 16, "later", 1.5, "cpu-ref", 2.5, 99);
  bf16fp32__tune_table_add(&t, &dup);
  bf16fp32__tune_entry other = sup_tune_entry(BF16FP32_HOST, 512, 4096, 1, "cpu-ref", 7, "", 0, 100);
  bf16fp32__tune_table_add(&t, &other);
  bf16fp32__tune_entry dev = sup_tune_entry(BF16FP32_DEVICE, 256, 4096, 1, "smallm", 2.1, "cublas", 6.3, 0);
  bf16fp32__tune_table_add(&t, &dev);
  bf16fp32__tune_table_finish(&t);
  EXPECT(t.count == 9, "count %d", t.count); /* 7 buckets (one twice), 1 other, 1 device */

  struct { int64_t m, want; } cases[] = {
      {1, 1}, {2, 4}, {3, 4}, {4, 4}, {5, 16}, {16, 16}, {17, 32}, {32, 32}, {33, 40}, {40, 40},
      {41, 64}, {64, 64},
      {65, 4096}, {1000, 4096}, {4096, 4096}, {4097, 4096}, {1000000, 4096},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const bf16fp32__tune_entry *e = bf16fp32__tune_table_lookup(&t, BF16FP32_HOST, 0, 256, 4096, cases[i].m);
    EXPECT(e && e->m == cases[i].want, "m=%lld -> %lld, want %lld", (long long)cases[i].m,
           e ? (long long)e->m : -1LL, (long long)cases[i].want);
  }
  const bf16fp32__tune_entry *e16 = bf16fp32__tune_table_lookup(&t, BF16FP32_HOST, 0, 256, 4096, 16);
  EXPECT(e16 && strcmp(e16->winner, "later") == 0 && e16->line == 99, "duplicate: the later wins");
  /* Only the pair's own entries: 512 x 4096 has bucket 1 only; 256 x 7168 none. */
  const bf16fp32__tune_entry *o = bf16fp32__tune_table_lookup(&t, BF16FP32_HOST, 0, 512, 4096, 300);
  EXPECT(o && o->n == 512 && o->m == 1, "other pair");
  EXPECT(!bf16fp32__tune_table_lookup(&t, BF16FP32_HOST, 0, 256, 7168, 1), "untuned pair");
  EXPECT(!bf16fp32__tune_table_lookup(&t, BF16FP32_HOST, 0, 128, 4096, 1), "untuned smaller n");
  const bf16fp32__tune_entry *d = bf16fp32__tune_table_lookup(&t, BF16FP32_DEVICE, 0, 256, 4096, 9);
  EXPECT(d && strcmp(d->winner, "smallm") == 0, "device entry");
  EXPECT(bf16fp32__tune_table_has_pair(&t, BF16FP32_HOST, 0, 512, 4096) &&
             !bf16fp32__tune_table_has_pair(&t, BF16FP32_DEVICE, 0, 512, 4096),
         "has_pair");

  /* The dispatcher's view. */
  bf16fp32__shape s = call_shape(BF16FP32_HOST, 20, 256, 4096);
  int b[2];
  char why[512];
  int n = bf16fp32__tune_choice(&t, &s, false, b, NULL, why, sizeof why);
  int ref = bf16fp32__registry_find("cpu-ref");
  EXPECT(ref >= 0, "cpu-ref is registered");
  EXPECT(n == 1 && b[0] == ref && b[1] == -1, "m=20 -> bucket 32: cpu-ref alone (n=%d)", n);
  EXPECT(strstr(why, "file /tmp/x.tsv line 14") && strstr(why, "M bucket 32") && strstr(why, "cpu-ref"),
         "why: %s", why);
  s.m = 10; /* bucket 16: winner "later" is no backend, runner-up cpu-ref */
  n = bf16fp32__tune_choice(&t, &s, false, b, NULL, why, sizeof why);
  EXPECT(n == 1 && b[0] == ref, "unknown winner skipped: n=%d", n);
  EXPECT(strstr(why, "not in this build") && strstr(why, "runner-up cpu-ref"), "why: %s", why);
  s.n = 777;
  n = bf16fp32__tune_choice(&t, &s, false, b, NULL, why, sizeof why);
  EXPECT(n == 0 && b[0] == -1 && strcmp(why, "not tuned") == 0, "untuned: %d %s", n, why);
  EXPECT(bf16fp32__tune_choice(&t, &s, false, b, NULL, NULL, 0) == 0, "why may be NULL");
  /* A device entry naming a host backend, or a host backend asked at device: never returned. */
  s.where = BF16FP32_DEVICE, s.n = 256, s.m = 1;
  n = bf16fp32__tune_choice(&t, &s, false, b, NULL, why, sizeof why);
  for (int i = 0; i < n; i++)
    EXPECT(bf16fp32__registry[b[i]].where == BF16FP32_DEVICE && bf16fp32__registry[b[i]].ops,
           "device choice %d is a built device backend", b[i]);
  EXPECT(strstr(why, "built-in table (NVIDIA H200)"), "built-in source: %s", why);
  bf16fp32__tune_table_clear(&t);
  EXPECT(!bf16fp32__tune_table_lookup(&t, BF16FP32_HOST, 0, 256, 4096, 1), "empty table");
  bf16fp32__tune_free(NULL);
}

/* A winner only just ahead of the cuBLAS baseline lets it go first: a vendor library's within
 * 5 % (margins from the H200 tables: 0.7 % and 3.2 % yield, 5.2 % does not), our kernel's within
 * 2 % (1.6 % yields, 3.0 % does not). */
static void test_baseline_first(void) {
  bf16fp32__tune_entry e;
  memset(&e, 0, sizeof e);
  snprintf(e.winner, sizeof e.winner, "cublaslt");
  snprintf(e.runner_up, sizeof e.runner_up, "cublas");
  e.winner_us = 9.557, e.runner_up_us = 9.627;
  EXPECT(bf16fp32__tune_baseline_first(&e), "0.7 %% lead yields to cublas");
  e.winner_us = 10.319, e.runner_up_us = 10.657;
  EXPECT(bf16fp32__tune_baseline_first(&e), "3.2 %% lead yields to cublas");
  e.winner_us = 11.264, e.runner_up_us = 11.870;
  EXPECT(!bf16fp32__tune_baseline_first(&e), "5.2 %% lead keeps the winner first");
  snprintf(e.winner, sizeof e.winner, "smallm");
  e.winner_us = 6.722, e.runner_up_us = 6.928;
  EXPECT(!bf16fp32__tune_baseline_first(&e), "our kernel's 3.0 %% lead keeps it first");
  e.winner_us = 8.427, e.runner_up_us = 8.561;
  EXPECT(bf16fp32__tune_baseline_first(&e), "our kernel's 1.6 %% lead yields to cublas");
  snprintf(e.winner, sizeof e.winner, "cublaslt");
  e.winner_us = 6.722, e.runner_up_us = 6.928;
  EXPECT(bf16fp32__tune_baseline_first(&e), "a vendor library's 3.0 %% lead yields to cublas");
  e.runner_up_us = -1;
  EXPECT(!bf16fp32__tune_baseline_first(&e), "no runner-up time");
  snprintf(e.runner_up, sizeof e.runner_up, "cublaslt");
  snprintf(e.winner, sizeof e.winner, "smallm");
  e.winner_us = 6.496, e.runner_up_us = 6.690;
  EXPECT(!bf16fp32__tune_baseline_first(&e), "runner-up not the baseline");
  /* A variant has its backend's margin (cuBLASLt: a vendor library's 5 %). */
  snprintf(e.winner, sizeof e.winner, "cublaslt@66.12.35.1.0.0.0.0.3");
  snprintf(e.runner_up, sizeof e.runner_up, "cublas");
  e.winner_us = 12.52, e.runner_up_us = 12.85;
  EXPECT(bf16fp32__tune_baseline_first(&e), "a variant's 2.6 %% lead yields to cublas");
  e.winner_us = 7.90, e.runner_up_us = 8.64;
  EXPECT(!bf16fp32__tune_baseline_first(&e), "a variant's 8.6 %% lead keeps it first");
  EXPECT(bf16fp32__tune_within_margin("smallm", 8.427, 8.561), "the rule alone: our 1.6 %%");
  EXPECT(!bf16fp32__tune_within_margin("smallm", 6.722, 6.928), "the rule alone: our 3.0 %%");
  EXPECT(!bf16fp32__tune_within_margin("cublaslt@1.2", 9.0, -1), "no baseline time");
  /* the fp32 path runs cuBLAS's kernels: a vendor library's 5 %, not our kernels' 2 % */
  EXPECT(bf16fp32__tune_within_margin("fp32", 6.722, 6.928), "the rule alone: fp32's 3.0 %%");
}

/* A table of the H200's built-in kind holding the given entries. */
static void h200_table(bf16fp32__tune_table *t, const bf16fp32__tune_entry *const *e, int count) {
  memset(t, 0, sizeof *t);
  snprintf(t->builtin, sizeof t->builtin, "NVIDIA H200");
  for (int i = 0; i < count; i++) bf16fp32__tune_table_add(t, e[i]);
  bf16fp32__tune_table_finish(t);
}

/* Entries measured under PDL are their own keys; a PDL context's device calls use them where
 * the pair has them and the plain ones elsewhere; host calls and plain contexts never. */
static void test_pdl(void) {
  bf16fp32__tune_table t;
  bf16fp32__tune_entry plain = sup_tune_entry(BF16FP32_DEVICE, 384, 7168, 64, "cublas", 7.37, "smallm", 7.61, 0);
  bf16fp32__tune_entry pdl = sup_tune_entry(BF16FP32_DEVICE, 384, 7168, 64, "smallm", 6.27, "cublas", 7.39, 0);
  pdl.pdl = 1;
  bf16fp32__tune_entry other = sup_tune_entry(BF16FP32_DEVICE, 512, 7168, 64, "cublas", 7.44, "smallm", 8.99, 0);
  bf16fp32__tune_entry host = sup_tune_entry(BF16FP32_HOST, 384, 7168, 64, "cpu-ref", 900, "", 0, 0);
  const bf16fp32__tune_entry *all[] = {&pdl, &plain, &other, &host};
  h200_table(&t, all, 4);
  EXPECT(t.count == 4, "the PDL entry is a key of its own: %d entries", t.count);
  const bf16fp32__tune_entry *p = bf16fp32__tune_table_lookup(&t, BF16FP32_DEVICE, 1, 384, 7168, 40);
  const bf16fp32__tune_entry *q = bf16fp32__tune_table_lookup(&t, BF16FP32_DEVICE, 0, 384, 7168, 40);
  EXPECT(p && p->pdl == 1 && strcmp(p->winner, "smallm") == 0, "PDL lookup");
  EXPECT(q && q->pdl == 0 && strcmp(q->winner, "cublas") == 0, "plain lookup");
  EXPECT(bf16fp32__tune_table_has_pair(&t, BF16FP32_DEVICE, 1, 384, 7168) &&
             !bf16fp32__tune_table_has_pair(&t, BF16FP32_DEVICE, 1, 512, 7168),
         "has_pair under PDL");

  bf16fp32__shape s = call_shape(BF16FP32_DEVICE, 64, 384, 7168);
  int b[2];
  char why[512];
  bf16fp32__tune_choice(&t, &s, true, b, NULL, why, sizeof why);
  EXPECT(strstr(why, "under PDL: M bucket 64: smallm 6.27 us"), "PDL context: %s", why);
  bf16fp32__tune_choice(&t, &s, false, b, NULL, why, sizeof why);
  EXPECT(!strstr(why, "under PDL") && strstr(why, "cublas 7.37 us"), "plain context: %s", why);
  s.n = 512; /* no PDL entries for this pair: the plain ones */
  bf16fp32__tune_choice(&t, &s, true, b, NULL, why, sizeof why);
  EXPECT(!strstr(why, "under PDL") && strstr(why, "cublas 7.44 us"), "PDL context, plain pair: %s", why);
  /* Above the largest PDL bucket the plain entries, timed at the call's own bucket, decide. */
  bf16fp32__tune_entry wide = sup_tune_entry(BF16FP32_DEVICE, 384, 7168, 256, "cublaslt", 8.30, "cublas", 8.31, 0);
  bf16fp32__tune_table_add(&t, &wide);
  bf16fp32__tune_table_finish(&t);
  s = call_shape(BF16FP32_DEVICE, 200, 384, 7168);
  bf16fp32__tune_choice(&t, &s, true, b, NULL, why, sizeof why);
  EXPECT(!strstr(why, "under PDL") && strstr(why, "M bucket 256"), "PDL context above its buckets: %s", why);
  s.m = 64;
  bf16fp32__tune_choice(&t, &s, true, b, NULL, why, sizeof why);
  EXPECT(strstr(why, "under PDL: M bucket 64"), "PDL context within its buckets: %s", why);
  s.n = 512, s.m = 200; /* no PDL entries for this pair: the plain ones, nearest below */
  bf16fp32__tune_choice(&t, &s, true, b, NULL, why, sizeof why);
  EXPECT(!strstr(why, "under PDL") && strstr(why, "cublas 7.44 us"), "PDL context, plain pair: %s", why);
  s.where = BF16FP32_HOST, s.n = 384, s.m = 64; /* PDL is a device launch option */
  int n = bf16fp32__tune_choice(&t, &s, true, b, NULL, why, sizeof why);
  EXPECT(n == 1 && b[0] == bf16fp32__registry_find("cpu-ref") && !strstr(why, "under PDL"),
         "host call in a PDL context: %s", why);
  bf16fp32__tune_table_clear(&t);
}

/* Under PDL our winner also yields to cuBLAS where its time is not shorter than cuBLAS's own in
 * the plain entry of the same bucket (the pair's time made cuBLAS pay for following us). */
static void test_pdl_plain_baseline(void) {
  bf16fp32__tune_table t;
  /* 2048x7168 M = 64 as the H200's table has it: smallm 13.00 against the pair's 14.51 and
   * cuBLAS's own 12.73. */
  bf16fp32__tune_entry pdl = sup_tune_entry(BF16FP32_DEVICE, 2048, 7168, 64, "smallm@1.5.2.1.0.0", 13.00, "cublaslt", 14.51, 0);
  pdl.pdl = 1;
  bf16fp32__tune_entry plain = sup_tune_entry(BF16FP32_DEVICE, 2048, 7168, 64, "cublas", 12.73, "cublaslt", 12.74, 0);
  /* a lead: 12.32 against 12.46 (2048x7168 M = 48) */
  bf16fp32__tune_entry pdl4 = sup_tune_entry(BF16FP32_DEVICE, 2048, 7168, 48, "smallm", 12.32, "cublas", 13.77, 0);
  pdl4.pdl = 1;
  bf16fp32__tune_entry plain4 = sup_tune_entry(BF16FP32_DEVICE, 2048, 7168, 48, "cublas", 12.46, "cublaslt", 12.47, 0);
  /* a clear lead: 6.00 against 7.37 */
  bf16fp32__tune_entry pdl2 = sup_tune_entry(BF16FP32_DEVICE, 384, 7168, 64, "smallm", 6.00, "cublaslt", 7.50, 0);
  pdl2.pdl = 1;
  bf16fp32__tune_entry plain2 = sup_tune_entry(BF16FP32_DEVICE, 384, 7168, 64, "cublas", 7.37, "smallm", 7.61, 0);
  /* the plain entry is another bucket's: no cuBLAS time for this one */
  bf16fp32__tune_entry pdl3 = sup_tune_entry(BF16FP32_DEVICE, 1024, 7168, 64, "smallm", 9.42, "cublaslt", 9.97, 0);
  pdl3.pdl = 1;
  bf16fp32__tune_entry plain3 = sup_tune_entry(BF16FP32_DEVICE, 1024, 7168, 56, "cublas", 8.94, "smallm", 9.90, 0);
  const bf16fp32__tune_entry *all[] = {&pdl, &plain, &pdl2, &plain2, &pdl3, &plain3, &pdl4, &plain4};
  h200_table(&t, all, 8);
  const int cublas = bf16fp32__registry_find("cublas"), smallm = bf16fp32__registry_find("smallm");

  bf16fp32__shape s = call_shape(BF16FP32_DEVICE, 64, 2048, 7168);
  int b[2] = {-1, -1};
  const char *v[2] = {NULL, NULL};
  char why[512];
  if (cublas < 0 || smallm < 0 || !bf16fp32__registry[cublas].ops ||
      !bf16fp32__registry[smallm].ops) { /* a build without CUDA runs neither */
    bf16fp32__tune_table_clear(&t);
    return;
  }
  int n = bf16fp32__tune_choice(&t, &s, true, b, v, why, sizeof why);
  EXPECT(n == 2 && b[0] == cublas && b[1] == smallm, "cuBLAS first under PDL: %s", why);
  EXPECT(v[0] == NULL && v[1] && strcmp(v[1], "1.5.2.1.0.0") == 0, "the winner keeps its variant");
  EXPECT(strstr(why, "not shorter than cublas's plain 12.73 us: cublas first"), "why: %s", why);
  n = bf16fp32__tune_choice(&t, &s, false, b, v, why, sizeof why);
  EXPECT(n == 2 && b[0] == cublas && strstr(why, "cublas 12.73 us") && !strstr(why, "first"),
         "plain context: %s", why);
  s.m = 48;
  n = bf16fp32__tune_choice(&t, &s, true, b, v, why, sizeof why);
  EXPECT(n == 2 && b[0] == smallm && b[1] == cublas && !strstr(why, "first"), "a 1 %% lead: %s", why);
  s.n = 384, s.m = 64;
  n = bf16fp32__tune_choice(&t, &s, true, b, v, why, sizeof why);
  EXPECT(n >= 1 && b[0] == smallm && !strstr(why, "first"), "a clear lead: %s", why);
  s.n = 1024;
  n = bf16fp32__tune_choice(&t, &s, true, b, v, why, sizeof why);
  EXPECT(n >= 1 && b[0] == smallm && !strstr(why, "first"), "another bucket's plain entry: %s", why);
  bf16fp32__tune_table_clear(&t);
}

/* At a bucket's other M a smallm winner with a variant stays first and runs its tables' staging
 * for that M; a cuBLASLt variant (an algorithm timed at that M only) yields to a plain runner-up. */
static void test_variant_elsewhere(void) {
  bf16fp32__tune_table t;
  /* 2048x4096 bucket 32 as the flash step file has it under PDL; 512x4096 M = 128 as the
   * built-in table has 256x4096. */
  bf16fp32__tune_entry fitted = sup_tune_entry(BF16FP32_DEVICE, 2048, 4096, 32, "smallm@1.3.3.2.1.0", 7.45, "cublas", 11.49, 0);
  bf16fp32__tune_entry fixed = sup_tune_entry(BF16FP32_DEVICE, 512, 4096, 128, "cublaslt@66.12.35.3.2.0.2.0.7", 6.71, "cublas", 7.30, 0);
  bf16fp32__tune_entry both = sup_tune_entry(BF16FP32_DEVICE, 1024, 4096, 40, "smallm@1.1.3.1.0.0", 7.00, "smallm@1.1.4.1.0.0", 7.10, 0);
  const bf16fp32__tune_entry *all[] = {&fitted, &fixed, &both};
  h200_table(&t, all, 3);
  const int cublas = bf16fp32__registry_find("cublas"), smallm = bf16fp32__registry_find("smallm"),
            lt = bf16fp32__registry_find("cublaslt");
  if (cublas < 0 || smallm < 0 || lt < 0 || !bf16fp32__registry[smallm].ops || !bf16fp32__registry[lt].ops) {
    bf16fp32__tune_table_clear(&t); /* a build without CUDA runs none of them */
    return;
  }
  int b[2] = {-1, -1};
  const char *v[2] = {NULL, NULL};
  char why[512];
  bf16fp32__shape s = call_shape(BF16FP32_DEVICE, 32, 2048, 4096);
  int n = bf16fp32__tune_choice(&t, &s, false, b, v, why, sizeof why);
  EXPECT(n == 2 && b[0] == smallm && v[0] && strcmp(v[0], "1.3.3.2.1.0") == 0 && b[1] == cublas,
         "own M: %s", why);
  s.m = 27;
  n = bf16fp32__tune_choice(&t, &s, false, b, v, why, sizeof why);
  EXPECT(n == 2 && b[0] == smallm && !v[0] && b[1] == cublas && !v[1], "M = 27: smallm's default: %s", why);
  EXPECT(strstr(why, "a variant timed at M=32 only: the default here"), "why: %s", why);
  s.n = 1024, s.m = 33;
  n = bf16fp32__tune_choice(&t, &s, false, b, v, why, sizeof why);
  EXPECT(n == 1 && b[0] == smallm && !v[0], "M = 33: smallm's default (listed once): %s", why);
  s.n = 512, s.m = 100;
  n = bf16fp32__tune_choice(&t, &s, false, b, v, why, sizeof why);
  EXPECT(n == 2 && b[0] == cublas && b[1] == lt && !v[0] && !v[1], "M = 100: cuBLASLt's algorithm yields: %s", why);
  EXPECT(strstr(why, "timed at M=128 only"), "why: %s", why);
  s.m = 128;
  n = bf16fp32__tune_choice(&t, &s, false, b, v, why, sizeof why);
  EXPECT(n == 2 && b[0] == lt && v[0] && strcmp(v[0], "66.12.35.3.2.0.2.0.7") == 0, "M = 128: %s", why);
  bf16fp32__tune_table_clear(&t);
}

/* A step-tuned file keeps the context's entries above its largest bucket, for the shapes it
 * measured (with calls in the step), at its location and launch, marked to fill keys only. */
static void test_carry_larger(void) {
  bf16fp32__tune_table from, to;
  memset(&from, 0, sizeof from);
  memset(&to, 0, sizeof to);
  const int64_t ms[] = {16, 64, 256, 512, 4096};
  for (int pdl = 0; pdl < 2; pdl++)
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
      bf16fp32__tune_entry e = sup_tune_entry(BF16FP32_DEVICE, 256, 4096, ms[i], "cublas", 5, "", 0, 0);
      e.pdl = pdl;
      bf16fp32__tune_table_add(&from, &e);
    }
  /* Each of these fails exactly one rule: not measured in this run (two: the second shares its
   * N with a measured shape), no calls, on the host. */
  bf16fp32__tune_entry unmeasured = sup_tune_entry(BF16FP32_DEVICE, 512, 4096, 4096, "cublas", 9, "", 0, 0);
  bf16fp32__tune_entry same_n =
      sup_tune_entry(BF16FP32_DEVICE, 256, 7168, 4096, "cublas", 9, "", 0, 0);
  bf16fp32__tune_entry idle = sup_tune_entry(BF16FP32_DEVICE, 384, 7168, 4096, "cublas", 9, "", 0, 0);
  bf16fp32__tune_entry host = sup_tune_entry(BF16FP32_HOST, 256, 4096, 4096, "cpu-ref", 9, "", 0, 0);
  unmeasured.pdl = same_n.pdl = idle.pdl = host.pdl = 1;
  bf16fp32__tune_table_add(&from, &unmeasured);
  bf16fp32__tune_table_add(&from, &same_n);
  bf16fp32__tune_table_add(&from, &idle);
  bf16fp32__tune_table_add(&from, &host);
  bf16fp32__tune_table_finish(&from);
  const int64_t pairs[] = {256, 4096, 384, 7168, 512, 4096};
  const int calls[] = {3, 0, 2};
  const int64_t m[] = {1, 64};
  /* Measured in this run: 256x4096 and 384x7168 (the latter's calls are 0 in the request). */
  bf16fp32__tune_entry a = sup_tune_entry(BF16FP32_DEVICE, 256, 4096, 64, "smallm", 4, "", 0, 0);
  bf16fp32__tune_entry b = sup_tune_entry(BF16FP32_DEVICE, 384, 7168, 64, "smallm", 4, "", 0, 0);
  a.pdl = b.pdl = 1;
  bf16fp32__tune_table_add(&to, &a);
  bf16fp32__tune_table_add(&to, &b);
  bf16fp32__tune_request r;
  memset(&r, 0, sizeof r);
  r.where = BF16FP32_DEVICE, r.nk_pairs = pairs, r.calls = calls, r.pair_count = 3, r.ms = m, r.m_count = 2;
  EXPECT(bf16fp32__tune_carry_larger(&from, &r, 64, 1, &to) == BF16FP32_OK, "carry");
  EXPECT(to.count == 5, "2 measured + 256x4096 device-pdl at 256, 512, 4096: %d", to.count);
  for (int i = 2; i < to.count; i++)
    EXPECT(to.entries[i].n == 256 && to.entries[i].pdl == 1 && to.entries[i].m > 64 &&
               to.entries[i].where == BF16FP32_DEVICE && to.entries[i].line == -1,
           "entry %d: %lldx%lld m=%lld pdl=%d line %d", i, (long long)to.entries[i].n,
           (long long)to.entries[i].k, (long long)to.entries[i].m, (int)to.entries[i].pdl,
           (int)to.entries[i].line);
  bf16fp32__tune_table_clear(&to);
  bf16fp32__tune_table_clear(&from);
}

/* Edges of the table: a key added only twice, plain and PDL entries of one pair, a lookup
 * before finish, a lead of exactly the margin, and the dispatcher's use of host backends. */
static void test_table_edges(void) {
  bf16fp32__tune_table t;
  memset(&t, 0, sizeof t);
  bf16fp32__tune_entry a = sup_tune_entry(BF16FP32_HOST, 256, 4096, 16, "cpu-ref", 1, "", 0, 1);
  bf16fp32__tune_entry b = sup_tune_entry(BF16FP32_HOST, 256, 4096, 16, "cpu-simd", 2, "", 0, 2);
  bf16fp32__tune_table_add(&t, &a);
  bf16fp32__tune_table_add(&t, &b);
  EXPECT(!bf16fp32__tune_table_lookup(&t, BF16FP32_HOST, 0, 256, 4096, 16), "not finished: none");
  bf16fp32__tune_table_finish(&t);
  EXPECT(t.count == 1 && t.entries[0].line == 2, "one key twice: the later alone (%d)", t.count);
  bf16fp32__tune_table_clear(&t);

  /* Plain M = 1 and PDL M = 1..64: beyond the plain bucket the plain entry still answers. */
  bf16fp32__tune_entry plain = sup_tune_entry(BF16FP32_DEVICE, 384, 7168, 1, "cublas", 3, "", 0, 1);
  bf16fp32__tune_entry pdl = sup_tune_entry(BF16FP32_DEVICE, 384, 7168, 1, "smallm", 2, "", 0, 2);
  bf16fp32__tune_entry pdl64 =
      sup_tune_entry(BF16FP32_DEVICE, 384, 7168, 64, "smallm", 9, "", 0, 3);
  pdl.pdl = pdl64.pdl = 1;
  bf16fp32__tune_entry only_pdl =
      sup_tune_entry(BF16FP32_DEVICE, 512, 7168, 8, "smallm", 2, "", 0, 4);
  only_pdl.pdl = 1;
  bf16fp32__tune_table_add(&t, &pdl64);
  bf16fp32__tune_table_add(&t, &only_pdl);
  bf16fp32__tune_table_add(&t, &pdl);
  bf16fp32__tune_table_add(&t, &plain);
  bf16fp32__tune_table_finish(&t);
  const bf16fp32__tune_entry *e =
      bf16fp32__tune_table_lookup(&t, BF16FP32_DEVICE, 0, 384, 7168, 64);
  EXPECT(e && e->pdl == 0 && e->m == 1, "plain above its buckets: %s", e ? e->winner : "none");
  EXPECT(!bf16fp32__tune_table_lookup(&t, BF16FP32_DEVICE, 0, 512, 7168, 8) &&
             !bf16fp32__tune_table_has_pair(&t, BF16FP32_DEVICE, 0, 512, 7168),
         "a PDL entry is no plain one");
  bf16fp32__tune_table_clear(&t);

  /* A lead of exactly the margin is not within it. */
  const double at = 200 * (1.0 - BF16FP32__TUNE_OWN_MARGIN);
  EXPECT(!bf16fp32__tune_within_margin("smallm", at, 200), "exactly 2 %%");

  /* A device entry naming a host backend gives nothing; a winner that is also the runner-up is
   * returned once; a call at its entry's own bucket gets no "nearest" note. */
  bf16fp32__tune_entry dev =
      sup_tune_entry(BF16FP32_DEVICE, 256, 4096, 1, "cpu-ref", 1, "cpu-simd", 2, 1);
  bf16fp32__tune_entry twice =
      sup_tune_entry(BF16FP32_HOST, 256, 4096, 32, "cpu-ref", 1, "cpu-ref", 2, 2);
  bf16fp32__tune_table_add(&t, &dev);
  bf16fp32__tune_table_add(&t, &twice);
  EXPECT(bf16fp32__tune_table_has_key(&t, &twice), "has_key sees the last entry");
  bf16fp32__tune_table_finish(&t);
  snprintf(t.file, sizeof t.file, "/tmp/x.tsv");
  int be[2];
  char why[512];
  bf16fp32__shape s = call_shape(BF16FP32_DEVICE, 1, 256, 4096);
  EXPECT(bf16fp32__tune_choice(&t, &s, false, be, NULL, why, sizeof why) == 0 && be[0] == -1,
         "host backends at device: %s", why);
  s = call_shape(BF16FP32_HOST, 26, 256, 4096);
  int n = bf16fp32__tune_choice(&t, &s, false, be, NULL, why, sizeof why);
  EXPECT(n == 1 && be[0] == bf16fp32__registry_find("cpu-ref") && be[1] == -1, "once: n=%d", n);
  EXPECT(!strstr(why, "nearest"), "M=26 is bucket 32's own: %s", why);
  s.m = 33; /* bucket 40, answered by 32: the nearest */
  bf16fp32__tune_choice(&t, &s, false, be, NULL, why, sizeof why);
  EXPECT(strstr(why, "(nearest tuned for M=33)"), "nearest: %s", why);
  bf16fp32__tune_table_clear(&t);
}

/* finish's fallback for a failed scratch allocation (an insertion sort in place) must give the
 * same table: sorted, the later of equal keys kept. Reached by failing malloc here, over glibc's
 * (__libc_malloc); the sanitizers' own malloc rules it out. */
#if !defined(__GLIBC__) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FAIL_MALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FAIL_MALLOC 0
#endif
#endif
#ifndef FAIL_MALLOC
#define FAIL_MALLOC 1
#endif
#if FAIL_MALLOC
extern void *__libc_malloc(size_t size);
static int malloc_fails; /* while set, every malloc returns NULL (one thread only here) */
void *malloc(size_t size) { return malloc_fails ? NULL : __libc_malloc(size); }
#endif

static void test_finish_without_memory(void) {
#if FAIL_MALLOC
  bf16fp32__tune_table t;
  memset(&t, 0, sizeof t);
  const int64_t ms[] = {64, 1, 16, 4, 16, 1};
  for (int i = 0; i < 6; i++) {
    bf16fp32__tune_entry e =
        sup_tune_entry(BF16FP32_HOST, 256, 4096, ms[i], "cpu-ref", 1, "", 0, i + 1);
    bf16fp32__tune_table_add(&t, &e);
  }
  bf16fp32__tune_entry dev = sup_tune_entry(BF16FP32_DEVICE, 256, 4096, 1, "smallm", 2, "", 0, 7);
  bf16fp32__tune_table_add(&t, &dev);
  malloc_fails = 1;
  bf16fp32__tune_table_finish(&t);
  malloc_fails = 0;
  const int64_t want_m[] = {1, 4, 16, 64, 1};
  const int want_line[] = {6, 4, 5, 1, 7};
  EXPECT(t.sorted && t.count == 5, "count %d", t.count);
  for (int i = 0; i < 5 && i < t.count; i++)
    EXPECT(t.entries[i].m == want_m[i] && t.entries[i].line == want_line[i],
           "entry %d: m=%lld line %d", i, (long long)t.entries[i].m, (int)t.entries[i].line);
  bf16fp32__tune_table_clear(&t);
#endif
}

int main(void) {
  test_bucket();
  test_carry_larger();
  test_lookup();
  test_pdl();
  test_pdl_plain_baseline();
  test_variant_elsewhere();
  test_baseline_first();
  test_table_edges();
  test_finish_without_memory();
  return testing_summary("test-tune-bucket");
}
