/* bf16fp32_tune on the CPU backends, end to end: arguments, the file it writes, merging a
 * second run, and a context picking the tuned backend after reset (and falling back to the
 * rules when a tuned name is not a usable backend). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dispatch.h"
#include "measure.h"
#include "step.h"
#include "tune-file.h"
#include "tune.h"
#include "support.h"
#include "testing.h"


static int logged;
static char last_logged[1024];
static void count_log(void *user, int level, const char *line) {
  (void)user;
  (void)level;
  snprintf(last_logged, sizeof last_logged, "%s", line);
  logged++;
}

static bf16fp32__tune_file read_back(const char *path) {
  bf16fp32__tune_file f;
  int err = 0;
  if (bf16fp32__tune_file_read(path, &f, &err, NULL, NULL) != BF16FP32_OK) memset(&f, 0, sizeof f);
  return f;
}

/* The tuner's gate on a candidate's output (measure.h): the oracle on sampled rows, and the
 * poison over the whole output, so that an element left unwritten in a row it did not sample
 * still fails the candidate. */
static void test_check_ref(void) {
  enum { M = 64, N = 8, K = 32, ROWS = 4 };
  uint16_t x[M * K], w[N * K];
  float out[M * N];
  sup_fill_bf16(x, M * K, 11);
  sup_fill_bf16(w, N * K, 12);
  bf16fp32__check_ref r;
  CHECK_OK(bf16fp32__check_ref_init(&r, M, N, K, x, K, w, K, ROWS, 7));
  CHECK(r.rows == ROWS);
  double ref[M * N], absdot[M * N];
  bf16fp32__oracle(M, N, K, x, K, w, K, ref, absdot);
  for (int i = 0; i < M * N; i++) out[i] = (float)ref[i];
  bf16fp32__check_result res;
  bf16fp32__check_ref_compare(&r, out, N, &res);
  CHECK(bf16fp32__check_ok(&res, NULL, 0) && res.unwritten == 0 && res.violations == 0);
  /* a row it did not sample, left unwritten */
  int64_t unsampled = 1;
  for (int i = 0; i < r.rows; i++)
    if (r.row[i] == unsampled) unsampled++;
  bf16fp32__poison_f32(out + unsampled * N + 3, 1);
  char msg[256];
  bf16fp32__check_ref_compare(&r, out, N, &res);
  CHECK(!bf16fp32__check_ok(&res, msg, sizeof msg) && res.unwritten == 1 && res.violations == 0);
  CHECK(strstr(msg, "1 elements left unwritten") != NULL);
  /* a sampled row's element off by twice its bound */
  out[unsampled * N + 3] = (float)ref[unsampled * N + 3];
  const int64_t at = r.row[ROWS - 1] * N + 5;
  out[at] = (float)(ref[at] + 2.0 * bf16fp32__error_bound(K, absdot[at]) + fabs(ref[at]) * 0x1p-20);
  bf16fp32__check_ref_compare(&r, out, N, &res);
  CHECK(!bf16fp32__check_ok(&res, NULL, 0) && res.violations == 1 && res.unwritten == 0);
  bf16fp32__check_ref_free(&r);
}

/* The pick among measured candidates: the two least times of those OK with a time (a decline's
 * stale time and an OK without one pass), the baseline second where the winner's lead over it is
 * within its margin and never second to itself, and the key and launch recorded. */
static void test_pick(void) {
  bf16fp32__candidate c[] = {{.name = "a", .median_us = 2.0},
                             {.name = "b", .median_us = 1.0},
                             {.name = "declined", .status = BF16FP32_DECLINED, .median_us = 0.5},
                             {.name = "untimed", .median_us = -1},
                             {.name = "e", .median_us = 3.0}};
  bf16fp32__tune_entry e;
  EXPECT(bf16fp32__tune_pick(c, 5, BF16FP32_DEVICE, 1, 256, 4096, 16, &e) &&
             strcmp(e.winner, "b") == 0 && e.winner_us == 1.0 && strcmp(e.runner_up, "a") == 0 &&
             e.runner_up_us == 2.0,
         "b, then a: %s %g, %s %g", e.winner, e.winner_us, e.runner_up, e.runner_up_us);
  EXPECT(e.where == BF16FP32_DEVICE && e.pdl == 1 && e.n == 256 && e.k == 4096 && e.m == 16,
         "key: where %d pdl %d %lldx%lld m=%lld", (int)e.where, (int)e.pdl, (long long)e.n,
         (long long)e.k, (long long)e.m);
  EXPECT(bf16fp32__tune_pick(c + 1, 1, BF16FP32_HOST, 0, 8, 8, 1, &e) && !e.runner_up[0] &&
             e.runner_up_us == -1,
         "one alone: runner-up \"%s\" %g", e.runner_up, e.runner_up_us);
  EXPECT(!bf16fp32__tune_pick(c + 2, 2, BF16FP32_HOST, 0, 8, 8, 1, &e), "no valid time: none");
  /* the baseline within smallm's 2 %: second before a faster one; 50 % behind: not */
  bf16fp32__candidate b[] = {{.name = "smallm", .median_us = 1.0},
                             {.name = "x", .median_us = 1.005},
                             {.name = BF16FP32__TUNE_BASELINE, .median_us = 1.01}};
  EXPECT(bf16fp32__tune_pick(b, 3, BF16FP32_DEVICE, 0, 8, 8, 1, &e) &&
             strcmp(e.runner_up, BF16FP32__TUNE_BASELINE) == 0,
         "baseline within the margin: %s", e.runner_up);
  b[2].median_us = 1.5;
  EXPECT(bf16fp32__tune_pick(b, 3, BF16FP32_DEVICE, 0, 8, 8, 1, &e) &&
             strcmp(e.runner_up, "x") == 0,
         "baseline beyond the margin: %s", e.runner_up);
  b[2].median_us = 0.5;
  EXPECT(bf16fp32__tune_pick(b, 3, BF16FP32_DEVICE, 0, 8, 8, 1, &e) &&
             strcmp(e.winner, BF16FP32__TUNE_BASELINE) == 0 && strcmp(e.runner_up, "smallm") == 0,
         "baseline winning: %s, then %s", e.winner, e.runner_up);
}

/* A step's request at its bounds, checked before the device is looked for: on the device only,
 * 0 calls for one of its GEMMs and 2^20 for another, and the same bounds as a plain request's. */
static void test_request_bounds(bf16fp32_context *ctx) {
  const int64_t pairs[] = {32, 64, 48, 96}, ms[] = {1};
  const int edge_calls[] = {BF16FP32__STEP_MAX_CALLS, 0};
  bf16fp32__tune_request r;
  memset(&r, 0, sizeof r);
  r.where = BF16FP32_HOST;
  r.nk_pairs = pairs, r.pair_count = 2, r.ms = ms, r.m_count = 1, r.calls = edge_calls;
  EXPECT(bf16fp32__tune_run(ctx, &r, NULL) == BF16FP32_BAD_OPTION, "a step on the host");
  const int64_t zero_k[] = {32, 64, 48, 0}, zero_m[] = {1, 0};
  EXPECT(bf16fp32_tune(ctx, BF16FP32_HOST, zero_k, 2, ms, 1, NULL) == BF16FP32_BAD_SIZE, "k = 0");
  EXPECT(bf16fp32_tune(ctx, BF16FP32_HOST, pairs, 2, zero_m, 2, NULL) == BF16FP32_BAD_SIZE,
         "M = 0");
  if (bf16fp32__context_config(ctx)->device >= 0) return; /* with a device they would run */
  r.where = BF16FP32_DEVICE;
  EXPECT(bf16fp32__tune_run(ctx, &r, NULL) == BF16FP32_NO_DEVICE, "a step of 0 and 2^20 calls: %s",
         bf16fp32_last_error());
  EXPECT(strstr(bf16fp32_last_error(), "no CUDA device in this process"), "%s",
         bf16fp32_last_error());
  enum { MOST = 1 << 20 };
  int64_t *many = malloc(sizeof *many * (MOST + 1));
  if (!many) return;
  for (int i = 0; i <= MOST; i++) many[i] = 1 + i % 300;
  EXPECT(bf16fp32_tune(ctx, BF16FP32_DEVICE, pairs, 2, many, MOST, NULL) == BF16FP32_NO_DEVICE,
         "2^20 M values: %s", bf16fp32_last_error());
  EXPECT(bf16fp32_tune(ctx, BF16FP32_DEVICE, pairs, 2, many, MOST + 1, NULL) == BF16FP32_BAD_SIZE,
         "2^20 + 1 M values");
  free(many);
}

typedef struct progress_seen {
  int count;
  int64_t m[8];
} progress_seen;

static void on_progress(void *user, int64_t n, int64_t k, int64_t m, const bf16fp32__tune_entry *e,
                        const bf16fp32__candidate *cands, int count) {
  (void)n, (void)k, (void)e, (void)cands, (void)count;
  progress_seen *p = user;
  if (p->count < 8) p->m[p->count] = m;
  p->count++;
}

/* The request's M values are measured once per bucket, smallest first; the entries merged are
 * counted (0 after a refused request); the merge's warnings name the file of out_path. */
static void test_run_buckets(bf16fp32_context *ctx, const char *dir) {
  char out[600];
  snprintf(out, sizeof out, "%s/buckets.tsv", dir);
  sup_write_text(out, "host\t1\t2\n# format\t1\n"); /* a tune file with a malformed line 1 */
  const int64_t pairs[] = {32, 64}, ms[] = {30, 25, 1}; /* buckets 32, 32, 1 */
  progress_seen seen = {0};
  bf16fp32__tune_request r;
  memset(&r, 0, sizeof r);
  r.where = BF16FP32_HOST;
  r.nk_pairs = pairs, r.pair_count = 1, r.ms = ms, r.m_count = 3, r.out_path = out;
  r.progress = on_progress, r.user = &seen;
  int merged = -1;
  EXPECT(bf16fp32__tune_run(ctx, &r, &merged) == BF16FP32_OK && merged == 2, "merged %d: %s",
         merged, bf16fp32_last_error());
  EXPECT(seen.count == 2 && seen.m[0] == 1 && seen.m[1] == 32, "%d measures, first at M=%lld",
         seen.count, (long long)seen.m[0]);
  EXPECT(strstr(last_logged, out) && strstr(last_logged, "line 1"), "warning: %s", last_logged);
  r.m_count = 0;
  EXPECT(bf16fp32__tune_run(ctx, &r, &merged) == BF16FP32_BAD_SIZE && merged == 0, "refused: %d",
         merged);
}

int main(void) {
  test_check_ref();
  char dir[512], path[600], other[600];
  if (sup_temp_dir(dir, sizeof dir, "tune-run")) return 1;
  snprintf(path, sizeof path, "%s/tune.tsv", dir);
  snprintf(other, sizeof other, "%s/other.tsv", dir);
  /* This test owns its environment: the context's file is ours, nothing forced. */
  setenv("BF16FP32_TUNE_FILE", path, 1);
  unsetenv("BF16FP32_ALGO");
  unsetenv("BF16FP32_LOG");

  bf16fp32_options opt;
  bf16fp32_options_init(&opt);
  opt.log_level = 1;
  opt.log_fn = count_log;
  bf16fp32_context *ctx = NULL;
  bf16fp32_status st = bf16fp32_create(&ctx, &opt);
  if (st != BF16FP32_OK) {
    fprintf(stderr, "create: %s: %s\n", bf16fp32_status_name(st), bf16fp32_last_error());
    return 1;
  }
  EXPECT(logged == 1, "a named file that is missing is said (once): %d", logged);
  test_pick();
  test_request_bounds(ctx);
  test_run_buckets(ctx, dir);

  const int64_t pairs[] = {32, 64, 48, 96};
  const int64_t ms[] = {30, 1, 5, 3, 25}; /* buckets 1, 3, 5, 32 */

  /* Arguments. */
  EXPECT(bf16fp32_tune(NULL, BF16FP32_HOST, pairs, 2, ms, 5, NULL) == BF16FP32_NULL_POINTER, "ctx");
  EXPECT(bf16fp32_tune(ctx, BF16FP32_HOST, NULL, 2, ms, 5, NULL) == BF16FP32_NULL_POINTER, "pairs");
  EXPECT(bf16fp32_tune(ctx, BF16FP32_HOST, pairs, 0, ms, 5, NULL) == BF16FP32_BAD_SIZE, "pair_count");
  EXPECT(bf16fp32_tune(ctx, BF16FP32_HOST, pairs, 2, ms, 0, NULL) == BF16FP32_BAD_SIZE, "m_count");
  const int64_t zero[] = {0, 64};
  EXPECT(bf16fp32_tune(ctx, BF16FP32_HOST, zero, 1, ms, 5, NULL) == BF16FP32_BAD_SIZE, "n = 0");
  EXPECT(bf16fp32_tune(ctx, (bf16fp32_location)7, pairs, 2, ms, 5, NULL) == BF16FP32_BAD_OPTION, "where");
  if (access(path, F_OK) == 0) EXPECT(0, "nothing written by a refused call");

  /* The run. */
  st = bf16fp32_tune(ctx, BF16FP32_HOST, pairs, 2, ms, 5, NULL);
  EXPECT(st == BF16FP32_OK, "tune: %s: %s", bf16fp32_status_name(st), bf16fp32_last_error());
  bf16fp32__tune_file f = read_back(path);
  EXPECT(f.table.count == 8 && f.header.has_cpu && !f.header.has_gpu && f.skipped == 0, "8 entries: %d",
         f.table.count);
  const int64_t buckets[] = {1, 3, 5, 32};
  for (int p = 0; p < 2; p++)
    for (int b = 0; b < 4; b++) {
      const bf16fp32__tune_entry *e =
          bf16fp32__tune_table_lookup(&f.table, BF16FP32_HOST, 0, pairs[2 * p], pairs[2 * p + 1], buckets[b]);
      EXPECT(e && e->m == buckets[b] && e->winner_us > 0, "entry %d/%d", p, b);
      int w = e ? bf16fp32__registry_find(e->winner) : -1;
      EXPECT(w >= 0 && bf16fp32__registry[w].where == BF16FP32_HOST, "winner is a host backend");
      if (e && e->runner_up[0]) EXPECT(e->runner_up_us >= e->winner_us, "runner-up is slower");
    }
  bf16fp32__tune_file_clear(&f);

  /* The context uses the file from its next reset. */
  const char *name = NULL;
  char why[512];
  EXPECT(bf16fp32_select(ctx, BF16FP32_HOST, 20, 32, 64, &name, why, sizeof why) == BF16FP32_OK, "select");
  EXPECT(!strstr(why, "tuned"), "not yet: %s", why);
  EXPECT(bf16fp32_reset(ctx) == BF16FP32_OK, "reset");
  EXPECT(bf16fp32_select(ctx, BF16FP32_HOST, 20, 32, 64, &name, why, sizeof why) == BF16FP32_OK, "select");
  EXPECT(strstr(why, "tuned: file") && strstr(why, path) && strstr(why, "M bucket 32"), "tuned: %s", why);

  /* A second run into another file, then merged into ours by a third: all kept. */
  const int64_t more[] = {16, 32};
  const int64_t m1[] = {1};
  EXPECT(bf16fp32_tune(ctx, BF16FP32_HOST, more, 1, m1, 1, other) == BF16FP32_OK, "out_path");
  f = read_back(other);
  EXPECT(f.table.count == 1, "other file: %d", f.table.count);
  bf16fp32__tune_file_clear(&f);
  EXPECT(bf16fp32_tune(ctx, BF16FP32_HOST, more, 1, m1, 1, NULL) == BF16FP32_OK, "merge");
  f = read_back(path);
  EXPECT(f.table.count == 9, "merged: %d", f.table.count);
  bf16fp32__tune_file_clear(&f);

  /* A tuned name that is no usable backend: the rules decide, and the run goes on. */
  FILE *fp = fopen(path, "a");
  if (fp) {
    fprintf(fp, "host\t40\t40\t1\tnosuch\t1.000\t-\t-\n");
    fclose(fp);
  }
  EXPECT(bf16fp32_reset(ctx) == BF16FP32_OK, "reset");
  EXPECT(bf16fp32_select(ctx, BF16FP32_HOST, 1, 40, 40, &name, why, sizeof why) == BF16FP32_OK, "select");
  EXPECT(name && !strstr(why, "tuned"), "falls back: %s %s", name ? name : "-", why);

  /* A step's arguments are checked before the device (tests/gpu-tune-step.c runs one). */
  const int calls[] = {3, 2}, no_calls[] = {0, 0}, negative[] = {3, -1};
  const int64_t twice[] = {32, 64, 32, 64};
  EXPECT(bf16fp32_tune_step(ctx, pairs, NULL, 2, ms, 5, NULL) == BF16FP32_NULL_POINTER, "step: calls");
  EXPECT(bf16fp32_tune_step(NULL, pairs, calls, 2, ms, 5, NULL) == BF16FP32_NULL_POINTER, "step: ctx");
  EXPECT(bf16fp32_tune_step(ctx, pairs, no_calls, 2, ms, 5, NULL) == BF16FP32_BAD_SIZE, "step: no calls");
  EXPECT(bf16fp32_tune_step(ctx, pairs, negative, 2, ms, 5, NULL) == BF16FP32_BAD_SIZE, "step: calls < 0");
  EXPECT(bf16fp32_tune_step(ctx, twice, calls, 2, ms, 5, NULL) == BF16FP32_BAD_OPTION, "step: a shape twice");
  EXPECT(bf16fp32_tune_step(ctx, pairs, calls, 0, ms, 5, NULL) == BF16FP32_BAD_SIZE, "step: no GEMMs");
  /* The longest step: a repeated shape is named in time (the alarm fails a quadratic check),
   * and without one the request goes on to the device. */
  enum { LONG = 1 << 20 };
  int64_t *many = malloc(2 * sizeof *many * LONG);
  int *ones = malloc(sizeof *ones * LONG);
  if (many && ones) {
    for (int i = 0; i < LONG; i++) {
      many[2 * i] = 16 + 16 * (i % 4096), many[2 * i + 1] = 8 + 8 * (i / 4096);
      ones[i] = 1;
    }
    alarm(120);
    if (bf16fp32__context_config(ctx)->device < 0) /* with a device it would tune them all */
      EXPECT(bf16fp32_tune_step(ctx, many, ones, LONG, ms, 5, NULL) == BF16FP32_NO_DEVICE,
             "long step: no device");
    many[2 * (LONG - 1)] = many[2 * 7], many[2 * (LONG - 1) + 1] = many[2 * 7 + 1];
    many[2 * (LONG - 2)] = many[2 * 9], many[2 * (LONG - 2) + 1] = many[2 * 9 + 1];
    EXPECT(bf16fp32_tune_step(ctx, many, ones, LONG, ms, 5, NULL) == BF16FP32_BAD_OPTION &&
               strstr(bf16fp32_last_error(), "GEMMs 9 and 1048574"), "long step: a shape twice: %s",
           bf16fp32_last_error());
    alarm(0);
  }
  free(many);
  free(ones);
  /* Fillers: between a step's GEMMs only, 0 to 2^20 KB each, with a known trigger. */
  bf16fp32__tune_request r;
  memset(&r, 0, sizeof r);
  r.where = BF16FP32_DEVICE;
  r.nk_pairs = pairs, r.pair_count = 2, r.ms = ms, r.m_count = 5, r.calls = calls;
  r.filler_kb = -1;
  EXPECT(bf16fp32__tune_run(ctx, &r, NULL) == BF16FP32_BAD_SIZE, "step: filler of -1 KB");
  r.filler_kb = BF16FP32__STEP_MAX_FILLER_KB + 1;
  EXPECT(bf16fp32__tune_run(ctx, &r, NULL) == BF16FP32_BAD_SIZE, "step: filler over 1 GiB");
  r.filler_kb = 64, r.filler_trigger = BF16FP32_FILLER_NONE + 1;
  EXPECT(bf16fp32__tune_run(ctx, &r, NULL) == BF16FP32_BAD_OPTION, "step: unknown filler trigger");
  r.filler_trigger = BF16FP32_FILLER_END, r.calls = NULL;
  EXPECT(bf16fp32__tune_run(ctx, &r, NULL) == BF16FP32_BAD_OPTION, "fillers without a step");
  /* The same checks through the public call, before any device is looked for. */
  EXPECT(bf16fp32_tune_step_fillers(ctx, pairs, calls, 2, ms, 5, -1, BF16FP32_FILLER_END, NULL) ==
             BF16FP32_BAD_SIZE, "public: filler of -1 KB");
  EXPECT(bf16fp32_tune_step_fillers(ctx, pairs, calls, 2, ms, 5, BF16FP32__STEP_MAX_FILLER_KB + 1,
                                    BF16FP32_FILLER_NONE, NULL) == BF16FP32_BAD_SIZE, "public: filler over 1 GiB");
  EXPECT(bf16fp32_tune_step_fillers(ctx, pairs, calls, 2, ms, 5, 64, (bf16fp32_filler_trigger)-1, NULL) ==
             BF16FP32_BAD_OPTION, "public: trigger -1");
  EXPECT(bf16fp32_tune_step_fillers(ctx, pairs, calls, 2, ms, 5, 64, (bf16fp32_filler_trigger)3, NULL) ==
             BF16FP32_BAD_OPTION, "public: trigger 3");
  EXPECT(bf16fp32_tune_step_fillers(ctx, pairs, NULL, 2, ms, 5, 64, BF16FP32_FILLER_END, NULL) ==
             BF16FP32_NULL_POINTER, "public: calls");
  EXPECT(bf16fp32_tune_step_fillers(NULL, pairs, calls, 2, ms, 5, 64, BF16FP32_FILLER_END, NULL) ==
             BF16FP32_NULL_POINTER, "public: ctx");

  /* No device: device tuning is refused; no file: refused. */
  if (bf16fp32__context_config(ctx)->device < 0) {
    EXPECT(bf16fp32_tune(ctx, BF16FP32_DEVICE, pairs, 2, ms, 5, NULL) == BF16FP32_NO_DEVICE, "no device");
    EXPECT(bf16fp32_tune_step(ctx, pairs, calls, 2, ms, 5, NULL) == BF16FP32_NO_DEVICE, "step: no device");
    EXPECT(bf16fp32_tune_step_fillers(ctx, pairs, calls, 2, ms, 5, 64, BF16FP32_FILLER_NONE, NULL) ==
               BF16FP32_NO_DEVICE, "step with fillers: no device");
    /* the bounds pass the check: 0 and 2^20 KB, the first and last trigger */
    EXPECT(bf16fp32_tune_step_fillers(ctx, pairs, calls, 2, ms, 5, BF16FP32__STEP_MAX_FILLER_KB,
                                      BF16FP32_FILLER_END, NULL) == BF16FP32_NO_DEVICE,
           "step with a 1 GiB filler: no device");
    EXPECT(bf16fp32_tune_step_fillers(ctx, pairs, calls, 2, ms, 5, 0, BF16FP32_FILLER_NONE, NULL) ==
               BF16FP32_NO_DEVICE, "step with no filler: no device");
  }
  setenv("BF16FP32_TUNE_FILE", "", 1);
  EXPECT(bf16fp32_reset(ctx) == BF16FP32_OK, "reset");
  EXPECT(bf16fp32_tune(ctx, BF16FP32_HOST, pairs, 2, ms, 5, NULL) == BF16FP32_BAD_OPTION, "no file");
  bf16fp32_destroy(ctx);

  sup_remove_tree(dir);
  return testing_summary("test-tune-run");
}
