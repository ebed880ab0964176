/* Backend variants, with fake host backends linked in place of the real registry: the variant
 * text, tuned names "backend@variant", the tuner timing a backend's variants beside its default,
 * and the dispatcher handing the tuned variant to run and prewarm (and to no other backend). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dispatch.h"
#include "oracle.h"
#include "support.h"
#include "testing.h"
#include "tune-file.h"
#include "variant.h"

/* What the varied backend last saw, for the checks: variants, and the last prewarm's shape. */
static char last_run[BF16FP32__VARIANT_LEN], last_prewarm[BF16FP32__VARIANT_LEN];
static atomic_int varied_runs;
static char prewarmed[256]; /* every prewarm's variant, each followed by ';' */
static int64_t prewarm_n, prewarm_k;

static bf16fp32_status fake_probe(const bf16fp32__config *cfg, void **state, char *why, size_t len) {
  (void)cfg, (void)why, (void)len;
  *state = NULL;
  return BF16FP32_OK;
}
static bool fake_supports(const void *state, const bf16fp32__shape *s) {
  (void)state;
  return s->where == BF16FP32_HOST;
}
static void fake_reset(void *state) { (void)state; }

static void compute(const bf16fp32__call *c) {
  const bf16fp32__shape *s = &c->shape;
  for (int64_t i = 0; i < s->m; i++)
    for (int64_t j = 0; j < s->n; j++)
      c->out[i * s->ldo + j] = (float)bf16fp32__dot_f64(c->x + i * s->ldx, c->w + j * s->ldw, s->k, NULL);
}

static void pause_us(long us) {
  struct timespec t = {0, us * 1000};
  nanosleep(&t, NULL);
}

/* slow: always 4 ms a call. The gaps between the backends' costs are sleeps of milliseconds, so
 * that the tuner's order holds on a loaded two-core machine, where the computing part of a call
 * can stretch by far more than its own time (a 150 us gap once ranked the fastest variant
 * second there). */
static bf16fp32_status slow_prewarm(void *state, const bf16fp32__shape *s, const char *variant, void *stream) {
  (void)state, (void)s, (void)variant, (void)stream;
  return BF16FP32_OK;
}
static bf16fp32_status slow_run(void *state, const bf16fp32__call *c) {
  (void)state;
  pause_us(4000);
  compute(c);
  return BF16FP32_OK;
}

/* varied: its default takes 2 ms a call, variant "1.2" no extra time, "3.4" 1 ms; any other
 * text runs the default, as a backend does with a variant it cannot use. */
static bf16fp32_status varied_prewarm(void *state, const bf16fp32__shape *s, const char *variant, void *stream) {
  (void)state, (void)stream;
  snprintf(last_prewarm, sizeof last_prewarm, "%s", variant ? variant : "(none)");
  const size_t used = strlen(prewarmed);
  snprintf(prewarmed + used, sizeof prewarmed - used, "%s;", last_prewarm);
  prewarm_n = s->n, prewarm_k = s->k;
  return BF16FP32_OK;
}
static bf16fp32_status varied_run(void *state, const bf16fp32__call *c) {
  (void)state;
  atomic_fetch_add(&varied_runs, 1);
  snprintf(last_run, sizeof last_run, "%s", c->variant ? c->variant : "(none)");
  const bool fast = c->variant && strcmp(c->variant, "1.2") == 0;
  const bool middle = c->variant && strcmp(c->variant, "3.4") == 0;
  pause_us(fast ? 0 : middle ? 1000 : 2000);
  compute(c);
  return BF16FP32_OK;
}
static int varied_variants(void *state, const bf16fp32__shape *s, char (*names)[BF16FP32__VARIANT_LEN], int max) {
  (void)state, (void)s;
  const char *mine[] = {"3.4", "1.2"};
  int count = 0;
  for (int i = 0; i < 2 && count < max; i++) snprintf(names[count++], BF16FP32__VARIANT_LEN, "%s", mine[i]);
  return count;
}

static const bf16fp32__backend slow_ops = {"slow", BF16FP32_HOST, fake_probe, fake_supports,
                                           slow_prewarm, slow_run, fake_reset, NULL, NULL};
static const bf16fp32__backend varied_ops = {"varied", BF16FP32_HOST, fake_probe, fake_supports,
                                             varied_prewarm, varied_run, fake_reset, varied_variants,
                                             NULL};

/* Replaces src/registry.c at link time. */
const bf16fp32__registry_entry bf16fp32__registry[] = {
    {"slow", BF16FP32_HOST, &slow_ops, NULL, false, true, false},
    {"varied", BF16FP32_HOST, &varied_ops, NULL, false, true, false},
};
const int bf16fp32__registry_count = 2;
enum { SLOW, VARIED };

static void test_variant_text(void) {
  int64_t f[BF16FP32__VARIANT_FIELDS];
  char out[BF16FP32__VARIANT_LEN];
  EXPECT(bf16fp32__variant_parse("0", f) == 1 && f[0] == 0, "one field");
  EXPECT(bf16fp32__variant_parse("66.18.35.4.2.0.3.0.0", f) == 9 && f[0] == 66 && f[8] == 0, "nine");
  EXPECT(bf16fp32__variant_parse("2147483647", f) == 1 && f[0] == 2147483647, "2^31-1");
  EXPECT(bf16fp32__variant_parse("1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16", f) == 16, "16 fields");
  const char *bad[] = {"", ".", "1.", ".1", "1..2", "a", "1.2a", "-1", "+1", "1 2", "1,2", "2147483648",
                       "1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16.17",
                       "1000000.1000000.1000000.1000000.1000000.1000000.1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    EXPECT(bf16fp32__variant_parse(bad[i], f) == -1, "refused: \"%s\"", bad[i]);
  EXPECT(bf16fp32__variant_parse(NULL, f) == -1, "NULL refused");
  const int64_t v[] = {66, 18, 35, 4, 2, 0, 3, 0, 0};
  EXPECT(bf16fp32__variant_format(v, 9, out) == 0 && strcmp(out, "66.18.35.4.2.0.3.0.0") == 0, "format");
  EXPECT(bf16fp32__variant_parse(out, f) == 9 && f[2] == 35, "round trip");
  const int64_t negative[] = {1, -1}, big[] = {(int64_t)1 << 31};
  EXPECT(bf16fp32__variant_format(negative, 2, out) == -1, "negative refused");
  EXPECT(bf16fp32__variant_format(big, 1, out) == -1, "2^31 refused");
  EXPECT(bf16fp32__variant_format(v, 0, out) == -1, "no fields refused");
  const int64_t wide[] = {1000000000, 1000000000, 1000000000, 1000000000, 1000000000};
  EXPECT(bf16fp32__variant_format(wide, 5, out) == -1, "too long for the text refused");
  /* the ends: a text of 47 characters is read and written back; one of 48 neither read nor cut */
  const char *longest = "1000000.1000000.1000000.1000000.1000000.1000000";
  EXPECT(bf16fp32__variant_parse(longest, f) == 6, "47 characters read");
  EXPECT(bf16fp32__variant_format(f, 6, out) == 0 && strcmp(out, longest) == 0, "47 written");
  EXPECT(bf16fp32__variant_parse("1000000.1000000.1000000.1000000.1000000.10000000", f) == -1,
         "48 characters refused");
  f[5] = 10000000;
  EXPECT(bf16fp32__variant_format(f, 6, out) == -1, "48 characters not written");
  /* format's other ends: 16 fields and 2^31-1 are written; 17 fields are not */
  int64_t ones[BF16FP32__VARIANT_FIELDS + 1];
  for (int i = 0; i < BF16FP32__VARIANT_FIELDS + 1; i++) ones[i] = 1;
  EXPECT(bf16fp32__variant_format(ones, BF16FP32__VARIANT_FIELDS, out) == 0 && strlen(out) == 31,
         "16 fields written");
  EXPECT(bf16fp32__variant_format(ones, BF16FP32__VARIANT_FIELDS + 1, out) == -1, "17 refused");
  const int64_t largest[] = {2147483647};
  EXPECT(bf16fp32__variant_format(largest, 1, out) == 0 && strcmp(out, "2147483647") == 0,
         "2^31-1 written");

  const char *variant = "unset";
  EXPECT(bf16fp32__registry_find_tuned("varied@1.2", &variant) == VARIED && strcmp(variant, "1.2") == 0,
         "backend@variant");
  EXPECT(bf16fp32__registry_find_tuned("varied", &variant) == VARIED && variant == NULL, "plain name");
  EXPECT(bf16fp32__registry_find_tuned("var@1", &variant) == -1, "a prefix is no backend");
  EXPECT(bf16fp32__registry_find("varied@1.2") == -1, "exact look-up knows no variants");
}

/* Tuning-file lines naming variants: read when well formed, dropped (and said) when not. */
static void test_file_names(const char *dir) {
  char path[600];
  snprintf(path, sizeof path, "%s/names.tsv", dir);
  FILE *fp = fopen(path, "w");
  if (!fp) {
    EXPECT(0, "cannot write %s", path);
    return;
  }
  fprintf(fp, "# format\t1\n");
  fprintf(fp, "host\t8\t8\t1\tvaried@1.2\t1.000\tvaried\t2.000\n");
  fprintf(fp, "host\t8\t8\t2\tvaried@66.18.35.4.2.0.3.0.0\t1.000\tvaried@3.4\t2.000\n");
  fprintf(fp, "host\t8\t8\t3\tvaried@\t1.000\t-\t-\n");
  fprintf(fp, "host\t8\t8\t4\tvaried@1..2\t1.000\t-\t-\n");
  fprintf(fp, "host\t8\t8\t5\t@1.2\t1.000\t-\t-\n");
  fprintf(fp, "host\t8\t8\t6\tvaried@1.2@3\t1.000\t-\t-\n");
  fprintf(fp, "host\t8\t8\t7\tvaried@x\t1.000\t-\t-\n");
  fprintf(fp, "host\t8\t8\t8\tvaried@1.2\t1.000\tvaried@1.2\t2.000\n");
  fprintf(fp, "host\t8\t8\t9\tvaried@1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16.17\t1.000\t-\t-\n");
  fclose(fp);
  bf16fp32__tune_file f;
  int err = 0;
  EXPECT(bf16fp32__tune_file_read(path, &f, &err, NULL, NULL) == BF16FP32_OK, "read");
  EXPECT(f.table.count == 2 && f.skipped == 7, "2 lines kept, 7 dropped: %d, %d", f.table.count, f.skipped);
  bf16fp32__tune_file_clear(&f);
}

/* The tuner times varied's variants as "varied@..." beside its default and slow; the fastest,
 * varied@1.2, wins, varied@3.4 is second. */
static void test_tune_and_dispatch(const char *dir) {
  char path[600];
  snprintf(path, sizeof path, "%s/tune.tsv", dir);
  setenv("BF16FP32_TUNE_FILE", path, 1);
  bf16fp32_context *ctx = NULL;
  EXPECT(bf16fp32_create(&ctx, NULL) == BF16FP32_OK, "create");
  if (!ctx) return;
  const int64_t pairs[] = {16, 24};
  const int64_t ms[] = {3};
  prewarmed[0] = '\0';
  bf16fp32_status st = bf16fp32_tune(ctx, BF16FP32_HOST, pairs, 1, ms, 1, NULL);
  EXPECT(st == BF16FP32_OK, "tune: %s: %s", bf16fp32_status_name(st), bf16fp32_last_error());
  /* each variant timed is prewarmed as itself, at the shape asked for */
  EXPECT(strstr(prewarmed, "(none);") && strstr(prewarmed, "3.4;") && strstr(prewarmed, "1.2;") &&
             prewarm_n == 16 && prewarm_k == 24,
         "prewarmed %s at %lldx%lld", prewarmed, (long long)prewarm_n, (long long)prewarm_k);
  bf16fp32__tune_file f;
  int err = 0;
  EXPECT(bf16fp32__tune_file_read(path, &f, &err, NULL, NULL) == BF16FP32_OK, "read back");
  const bf16fp32__tune_entry *e = bf16fp32__tune_table_lookup(&f.table, BF16FP32_HOST, 0, 16, 24, 3);
  EXPECT(e && strcmp(e->winner, "varied@1.2") == 0 && strcmp(e->runner_up, "varied@3.4") == 0,
         "winner %s, runner-up %s", e ? e->winner : "-", e ? e->runner_up : "-");
  bf16fp32__tune_file_clear(&f);

  /* The context reads the file at reset: varied runs with "1.2", prewarm gets it too. */
  EXPECT(bf16fp32_reset(ctx) == BF16FP32_OK, "reset");
  const char *name = NULL;
  char why[512];
  EXPECT(bf16fp32_select(ctx, BF16FP32_HOST, 3, 16, 24, &name, why, sizeof why) == BF16FP32_OK, "select");
  EXPECT(name && strcmp(name, "varied") == 0 && strstr(why, "varied@1.2"), "select: %s: %s", name ? name : "-", why);
  const int64_t m3[] = {3};
  EXPECT(bf16fp32_prewarm(ctx, BF16FP32_HOST, 16, 24, m3, 1, NULL) == BF16FP32_OK, "prewarm");
  EXPECT(strcmp(last_prewarm, "1.2") == 0, "prewarm's variant: %s", last_prewarm);
  uint16_t x[3 * 24], w[16 * 24];
  float out[3 * 16];
  sup_fill_bf16(x, 3 * 24, 1);
  sup_fill_bf16(w, 16 * 24, 2);
  sup_poison_f32(out, 3 * 16);
  EXPECT(bf16fp32_linear(ctx, BF16FP32_HOST, 3, 16, 24, x, 24, w, 24, out, 16, NULL) == BF16FP32_OK, "linear");
  EXPECT(strcmp(last_run, "1.2") == 0, "run's variant: %s", last_run);
  sup_check_result r = sup_check(3, 16, 24, x, 24, w, 24, out, 16);
  EXPECT(sup_check_ok(&r), "result");
  bf16fp32_destroy(ctx);
}

/* Hand-written entries: a plain winner keeps the runner-up's variant off its own backend; a
 * variant goes only to the backend it names. */
static void test_variant_routing(const char *dir) {
  char path[600];
  snprintf(path, sizeof path, "%s/routing.tsv", dir);
  bf16fp32_context *ctx = NULL;
  setenv("BF16FP32_TUNE_FILE", path, 1);
  EXPECT(bf16fp32_create(&ctx, NULL) == BF16FP32_OK, "create");
  if (!ctx) return;
  /* The tuner writes the header for this machine; the entries are then replaced by hand. */
  const int64_t pairs[] = {8, 8, 12, 8, 20, 8, 28, 8};
  const int64_t ms[] = {1, 24};
  EXPECT(bf16fp32_tune(ctx, BF16FP32_HOST, pairs, 4, ms, 2, NULL) == BF16FP32_OK, "tune");
  bf16fp32__tune_file f;
  int err = 0;
  EXPECT(bf16fp32__tune_file_read(path, &f, &err, NULL, NULL) == BF16FP32_OK, "read back");
  for (int i = 0; i < f.table.count; i++) {
    bf16fp32__tune_entry *e = &f.table.entries[i];
    const char *winner = e->n == 8 ? "varied" : e->n == 12 ? "slow" : "varied@1.2";
    const char *runner_up = e->n == 20 ? "slow" : "varied@3.4";
    snprintf(e->winner, sizeof e->winner, "%s", winner);
    snprintf(e->runner_up, sizeof e->runner_up, "%s", runner_up);
    e->winner_us = 1.0, e->runner_up_us = 2.0;
  }
  char *text = NULL;
  size_t len = 0;
  EXPECT(bf16fp32__tune_file_format(&f.header, f.table.entries, f.table.count, &text, &len) == BF16FP32_OK &&
             bf16fp32__tune_file_write_atomic(path, text, len) == BF16FP32_OK,
         "write");
  free(text);
  bf16fp32__tune_file_clear(&f);
  EXPECT(bf16fp32_reset(ctx) == BF16FP32_OK, "reset");
  uint16_t x[8], w[12 * 8];
  float out[12];
  sup_fill_bf16(x, 8, 3);
  sup_fill_bf16(w, 12 * 8, 4);
  EXPECT(bf16fp32_linear(ctx, BF16FP32_HOST, 1, 8, 8, x, 8, w, 8, out, 8, NULL) == BF16FP32_OK, "8 x 8");
  EXPECT(strcmp(last_run, "(none)") == 0, "varied as tuned plainly: %s", last_run);
  /* slow first: varied never runs, though it holds the variant. */
  int before = atomic_load(&varied_runs);
  EXPECT(bf16fp32_linear(ctx, BF16FP32_HOST, 1, 12, 8, x, 8, w, 8, out, 12, NULL) == BF16FP32_OK, "12 x 8");
  EXPECT(atomic_load(&varied_runs) == before, "slow ran it");
  EXPECT(bf16fp32_force_backend(ctx, "varied") == BF16FP32_OK, "force");
  EXPECT(bf16fp32_linear(ctx, BF16FP32_HOST, 1, 12, 8, x, 8, w, 8, out, 12, NULL) == BF16FP32_OK, "forced");
  EXPECT(strcmp(last_run, "3.4") == 0, "forced varied runs the plan's variant: %s", last_run);
  /* auto's order (what the step tuner names and times as auto) gives it the variant it runs */
  int first[2] = {-1, -1};
  char variant[2][BF16FP32__VARIANT_LEN] = {"", ""};
  const bf16fp32__shape s12 = bf16fp32__make_shape(BF16FP32_HOST, 1, 12, 8, 8, 8, 12, x, w, out);
  EXPECT(bf16fp32__auto_order(ctx, &s12, first, variant) == 2 && first[0] >= 0 &&
             strcmp(bf16fp32__registry[first[0]].name, "varied") == 0 &&
             strcmp(variant[0], "3.4") == 0,
         "forced varied in auto's order: variant '%s'", variant[0]);
  EXPECT(first[1] == SLOW && variant[1][0] == '\0', "slow second in auto's order, plainly: '%s'", variant[1]);
  EXPECT(bf16fp32_force_backend(ctx, "auto") == BF16FP32_OK, "auto again");

  /* A variant holds at its bucket's own M (24) only; at M = 20 a plain runner-up goes first
   * (n = 20), and without one the backend runs its default (n = 28). */
  uint16_t x24[24 * 8], w28[28 * 8];
  float out24[24 * 28];
  sup_fill_bf16(x24, 24 * 8, 5);
  sup_fill_bf16(w28, 28 * 8, 6);
  EXPECT(bf16fp32_linear(ctx, BF16FP32_HOST, 24, 20, 8, x24, 8, w28, 8, out24, 20, NULL) == BF16FP32_OK, "M=24");
  EXPECT(strcmp(last_run, "1.2") == 0, "the bucket's own M runs the variant: %s", last_run);
  before = atomic_load(&varied_runs);
  EXPECT(bf16fp32_linear(ctx, BF16FP32_HOST, 20, 20, 8, x24, 8, w28, 8, out24, 20, NULL) == BF16FP32_OK, "M=20");
  EXPECT(atomic_load(&varied_runs) == before, "M=20: the plain runner-up (slow) ran it");
  const char *name = NULL;
  char why[600];
  EXPECT(bf16fp32_select(ctx, BF16FP32_HOST, 20, 20, 8, &name, why, sizeof why) == BF16FP32_OK, "select");
  EXPECT(name && strcmp(name, "slow") == 0 && strstr(why, "timed at M=24 only"), "select: %s: %s",
         name ? name : "-", why);
  EXPECT(bf16fp32_linear(ctx, BF16FP32_HOST, 20, 28, 8, x24, 8, w28, 8, out24, 28, NULL) == BF16FP32_OK, "n=28");
  EXPECT(strcmp(last_run, "(none)") == 0, "M=20, both variants: the default runs: %s", last_run);
  sup_check_result r = sup_check(20, 28, 8, x24, 8, w28, 8, out24, 28);
  EXPECT(sup_check_ok(&r), "result");
  bf16fp32_destroy(ctx);
}

int main(void) {
  char dir[512];
  if (sup_temp_dir(dir, sizeof dir, "variants")) return 1;
  unsetenv("BF16FP32_ALGO");
  unsetenv("BF16FP32_LOG");
  test_variant_text();
  test_file_names(dir);
  test_tune_and_dispatch(dir);
  test_variant_routing(dir);
  sup_remove_tree(dir);
  return testing_summary("test-variants");
}
