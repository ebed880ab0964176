/* Tuning inside a step on the GPU (bf16fp32_tune_step, the request's `calls`): a two-GEMM step
 * with odd shapes, plainly and under PDL. Every GEMM and bucket gets an entry of its launch, each
 * candidate a positive per-call time or a reason, cuBLASLt's variants are timed beside the
 * defaults, each bucket's new choices are kept or replaced by auto's after the whole step is
 * timed both ways, the built-in entries above the largest bucket are carried, and a context with
 * the file picks by it; the same under PDL with a filler kernel before every GEMM, and once through
 * the public bf16fp32_tune_step_fillers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dispatch.h"
#include "tune-file.h"
#include "tune.h"
#include "support.h"
#include "testing.h"

/* A router-like GEMM with more calls than a compressor-like one; K not a multiple of 64. */
static const int64_t pairs[] = {256, 4096, 520, 1032};
static const int calls[] = {5, 3};
static const int64_t ms[] = {3, 1, 20}; /* buckets 1, 3, 24 */

typedef struct seen {
  int shapes, with_entry;
  int timed, variants, untimed;
  int confirmed, kept;
} seen;

/* After each bucket: both steps timed; new choices that are not kept give way to auto's for
 * both GEMMs (each of auto's first choices is a candidate here, so each has a time). */
static void on_confirm(void *user, int64_t m, double new_us, double old_us, int won, int rounds,
                       bool kept, int reverted) {
  seen *s = user;
  s->confirmed++;
  s->kept += kept;
  EXPECT(new_us > 0 && old_us > 0, "m=%lld: steps of %.1f and %.1f us", (long long)m, new_us, old_us);
  /* Kept only after winning three runs; a lost run ends the check. */
  EXPECT(rounds >= 1 && rounds <= 3 && (kept ? won == 3 && rounds == 3 : won == rounds - 1),
         "m=%lld: won %d of %d runs, kept %d", (long long)m, won, rounds, kept);
  EXPECT(kept ? reverted == 0 : reverted == 2, "m=%lld: kept %d, %d rewritten", (long long)m, kept, reverted);
  printf("  m=%lld: step %.1f us with the new choices, %.1f as auto runs now, faster in %d of %d runs: %s\n",
         (long long)m, new_us, old_us, won, rounds, kept ? "kept" : "auto's written");
}

static void on_progress(void *user, int64_t n, int64_t k, int64_t m, const bf16fp32__tune_entry *e,
                        const bf16fp32__candidate *c, int count) {
  seen *s = user;
  s->shapes++;
  s->with_entry += e != NULL;
  for (int i = 0; i < count; i++) {
    if (c[i].status == BF16FP32_OK) {
      EXPECT(isfinite(c[i].median_us) && c[i].median_us > 0, "%lldx%lld m=%lld %s: %.3f us",
             (long long)n, (long long)k, (long long)m, c[i].name, c[i].median_us);
      s->timed++;
      s->variants += strchr(c[i].name, '@') != NULL;
    } else {
      /* Declined or failed: never wrong, and always with a reason. */
      EXPECT(c[i].status != BF16FP32_INTERNAL, "%lldx%lld m=%lld %s is wrong: %s", (long long)n,
             (long long)k, (long long)m, c[i].name, c[i].detail);
      s->untimed++;
    }
  }
  if (e) printf("  %lldx%lld m=%lld: %s %.2f us per call, runner-up %s %.2f\n", (long long)n,
                (long long)k, (long long)m, e->winner, e->winner_us, e->runner_up[0] ? e->runner_up : "-",
                e->runner_up_us);
}

static seen tune_once(const char *path, int pdl, int filler_kb) {
  seen s;
  memset(&s, 0, sizeof s);
  bf16fp32_context *ctx = NULL;
  if (sup_create_pdl(&ctx, pdl) != BF16FP32_OK) {
    EXPECT(0, "create: %s", bf16fp32_last_error());
    return s;
  }
  bf16fp32__measure_opts mo;
  bf16fp32__measure_defaults(&mo);
  bf16fp32__tune_request r;
  memset(&r, 0, sizeof r);
  r.where = BF16FP32_DEVICE;
  r.nk_pairs = pairs, r.calls = calls, r.pair_count = 2, r.ms = ms, r.m_count = 3;
  r.out_path = path;
  r.measure = &mo;
  r.filler_kb = filler_kb; /* a filler kernel before every GEMM, triggering after its reads */
  r.progress = on_progress;
  r.step_confirm = on_confirm;
  r.user = &s;
  int merged = 0;
  printf("step tune, pdl=%d, fillers of %d KB:\n", pdl, filler_kb);
  /* 6 measured, and the context's entries of 256x4096 above bucket 24 (the built-in table's,
   * where it applies to this GPU) carried. */
  EXPECT(bf16fp32__tune_run(ctx, &r, &merged) == BF16FP32_OK && merged >= 6, "tune pdl=%d: %s (%d)", pdl,
         bf16fp32_last_error(), merged);
  bf16fp32_destroy(ctx);
  return s;
}

int main(void) {
  if (!sup_gpu_available()) return testing_skip("gpu-tune-step", "no CUDA device");
  unsetenv("BF16FP32_ALGO");
  unsetenv("BF16FP32_PDL");
  setenv("BF16FP32_TUNE_FILE", "", 1); /* the others run as the built-in table says */
  char dir[512], path[600];
  if (sup_temp_dir(dir, sizeof dir, "gpu-tune-step")) return 1;
  snprintf(path, sizeof path, "%s/tune.tsv", dir);

  /* Whether the built-in table applies here: then its entries above bucket 24 are carried. */
  bf16fp32_context *probe = NULL;
  CHECK_OK(bf16fp32_create(&probe, NULL));
  const char *first = NULL;
  char why_builtin[600];
  CHECK_OK(bf16fp32_select(probe, BF16FP32_DEVICE, 4096, pairs[0], pairs[1], &first, why_builtin,
                           sizeof why_builtin));
  const bool builtin_here = strstr(why_builtin, "built-in table") != NULL;
  bf16fp32_destroy(probe);

  seen plain = tune_once(path, 0, 0);
  seen pdl = tune_once(path, 1, 0);
  /* With fillers between the GEMMs, under PDL: the same entries and checks, into its own file. */
  char path_fill[700];
  snprintf(path_fill, sizeof path_fill, "%s/fill.tsv", dir);
  seen fill = tune_once(path_fill, 1, 300);
  EXPECT(fill.shapes == 6 && fill.with_entry == 6 && fill.confirmed == 3 && fill.timed >= 12,
         "with fillers: %d/%d entries, %d buckets confirmed, %d timed", fill.with_entry, fill.shapes,
         fill.confirmed, fill.timed);
  char fill_lock[800];
  snprintf(fill_lock, sizeof fill_lock, "%s.lock", path_fill);
  unlink(path_fill);
  unlink(fill_lock);
  EXPECT(plain.shapes == 6 && plain.with_entry == 6 && pdl.shapes == 6 && pdl.with_entry == 6,
         "entries: %d/%d plain, %d/%d under PDL", plain.with_entry, plain.shapes, pdl.with_entry,
         pdl.shapes);
  EXPECT(plain.confirmed == 3 && pdl.confirmed == 3, "buckets confirmed: %d plain, %d under PDL",
         plain.confirmed, pdl.confirmed);
  EXPECT(plain.timed >= 12 && pdl.timed >= 12, "timed: %d plain, %d under PDL", plain.timed, pdl.timed);
  EXPECT(plain.variants > 0 && pdl.variants > 0, "variants timed: %d plain, %d under PDL", plain.variants,
         pdl.variants);

  bf16fp32__tune_file f;
  int err = 0;
  CHECK_OK(bf16fp32__tune_file_read(path, &f, &err, NULL, NULL));
  int measured = 0, carried = 0;
  for (int i = 0; i < f.table.count; i++) {
    const bf16fp32__tune_entry *e = &f.table.entries[i];
    if (e->m <= 24) {
      measured++;
      continue;
    }
    /* Above the step's largest bucket: the built-in entry, unchanged. */
    const bf16fp32__tune_builtin *b = &bf16fp32__tune_builtin_table;
    bool same = false;
    for (int j = 0; j < b->count && !same; j++) {
      const bf16fp32__tune_entry *x = &b->entries[j];
      same = x->where == e->where && x->pdl == e->pdl && x->n == e->n && x->k == e->k && x->m == e->m &&
             strcmp(x->winner, e->winner) == 0 && strcmp(x->runner_up, e->runner_up) == 0;
    }
    EXPECT(same && e->n == pairs[0], "carried entry %lldx%lld m=%lld pdl=%d %s is the built-in one",
           (long long)e->n, (long long)e->k, (long long)e->m, (int)e->pdl, e->winner);
    carried++;
  }
  EXPECT(measured == 12 && (builtin_here ? carried > 0 : carried == 0) && f.skipped == 0,
         "12 measured entries: %d, %d carried (built-in table here: %d; %d skipped)", measured, carried,
         builtin_here, f.skipped);
  const int64_t buckets[] = {1, 3, 24};
  for (int p = 0; p < 2; p++)
    for (int b = 0; b < 3; b++)
      for (int under = 0; under < 2; under++) {
        const bf16fp32__tune_entry *e = bf16fp32__tune_table_lookup(
            &f.table, BF16FP32_DEVICE, under, pairs[2 * p], pairs[2 * p + 1], buckets[b]);
        EXPECT(e && e->m == buckets[b] && e->winner_us > 0, "entry %d/%d pdl=%d", p, b, under);
        const char *variant = NULL;
        int w = e ? bf16fp32__registry_find_tuned(e->winner, &variant) : -1;
        EXPECT(w >= 0 && bf16fp32__registry[w].where == BF16FP32_DEVICE, "winner %s is a device backend",
               e ? e->winner : "-");
      }
  bf16fp32__tune_file_clear(&f);

  /* A context with the file picks by it, at the bucket's own M and inside a bucket. */
  setenv("BF16FP32_TUNE_FILE", path, 1);
  for (int under = 0; under < 2; under++) {
    bf16fp32_context *ctx = NULL;
    CHECK_OK(sup_create_pdl(&ctx, under));
    const int64_t at[] = {3, 17};
    for (int i = 0; i < 2; i++) {
      const char *name = NULL;
      char why[600];
      CHECK_OK(bf16fp32_select(ctx, BF16FP32_DEVICE, at[i], pairs[2], pairs[3], &name, why, sizeof why));
      EXPECT(strstr(why, "tuned: file") && strstr(why, path), "pdl=%d m=%lld: %s", under, (long long)at[i], why);
    }
    bf16fp32_destroy(ctx);
  }

  /* Refused: a shape twice, no calls, a step on the host. */
  bf16fp32_context *ctx = NULL;
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  const int64_t twice[] = {256, 4096, 256, 4096};
  const int none[] = {0, 0};
  EXPECT(bf16fp32_tune_step(ctx, twice, calls, 2, ms, 3, path) == BF16FP32_BAD_OPTION, "a shape twice");
  EXPECT(bf16fp32_tune_step(ctx, pairs, none, 2, ms, 3, path) == BF16FP32_BAD_SIZE, "no calls");
  bf16fp32__tune_request r;
  memset(&r, 0, sizeof r);
  r.where = BF16FP32_HOST;
  r.nk_pairs = pairs, r.calls = calls, r.pair_count = 2, r.ms = ms, r.m_count = 3, r.out_path = path;
  EXPECT(bf16fp32__tune_run(ctx, &r, NULL) == BF16FP32_BAD_OPTION, "a step on the host");
  /* A GEMM without calls is not in the step: the file gets no entry of its shape. */
  char path_one[700];
  snprintf(path_one, sizeof path_one, "%s/one.tsv", dir);
  const int only_first[] = {2, 0};
  const int64_t m_one[] = {1};
  CHECK_OK(bf16fp32_tune_step(ctx, pairs, only_first, 2, m_one, 1, path_one));
  CHECK_OK(bf16fp32__tune_file_read(path_one, &f, &err, NULL, NULL));
  int first_entries = 0, second_entries = 0;
  for (int i = 0; i < f.table.count; i++) {
    first_entries += f.table.entries[i].n == pairs[0] && f.table.entries[i].k == pairs[1];
    second_entries += f.table.entries[i].n == pairs[2] && f.table.entries[i].k == pairs[3];
  }
  EXPECT(first_entries >= 1 && second_entries == 0, "entries of a step with a GEMM without calls: %d, %d",
         first_entries, second_entries);
  bf16fp32__tune_file_clear(&f);
  bf16fp32_destroy(ctx);

  /* The public call with fillers, in a PDL context, fillers triggering at entry: entries of the
   * first shape only, as above. */
  char path_pub[700];
  snprintf(path_pub, sizeof path_pub, "%s/public-fill.tsv", dir);
  CHECK_OK(sup_create_pdl(&ctx, 1));
  CHECK_OK(bf16fp32_tune_step_fillers(ctx, pairs, only_first, 2, m_one, 1, 200, BF16FP32_FILLER_ENTRY,
                                      path_pub));
  EXPECT(bf16fp32_tune_step_fillers(ctx, pairs, only_first, 2, m_one, 1, 200, (bf16fp32_filler_trigger)3,
                                    path_pub) == BF16FP32_BAD_OPTION, "unknown trigger");
  CHECK_OK(bf16fp32__tune_file_read(path_pub, &f, &err, NULL, NULL));
  first_entries = second_entries = 0;
  int first_pdl = 0;
  for (int i = 0; i < f.table.count; i++) {
    const bf16fp32__tune_entry *e = &f.table.entries[i];
    first_entries += e->n == pairs[0] && e->k == pairs[1];
    first_pdl += e->n == pairs[0] && e->k == pairs[1] && e->m == 1 && e->pdl;
    second_entries += e->n == pairs[2] && e->k == pairs[3];
  }
  EXPECT(first_pdl == 1 && second_entries == 0, "public call with fillers: %d entries (%d at M = 1 under PDL), %d",
         first_entries, first_pdl, second_entries);
  bf16fp32__tune_file_clear(&f);
  bf16fp32_destroy(ctx);

  sup_remove_tree(dir);
  return testing_summary("gpu-tune-step");
}
