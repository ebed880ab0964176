/* Tuning on the GPU, plainly and under PDL: the entries go under device and device-pdl, the
 * backends that launch plainly are timed in turns with smallm under PDL (each gets a time of
 * its own, positive and finite), smallm's variants are timed in both and cuBLASLt's only
 * plainly, a context picks by the entries of the launch it makes, and a tune leaves no
 * per-stream state behind. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "dispatch.h"
#include "gpu-case.h"
#include "tune-file.h"
#include "tune.h"
#include "support.h"
#include "testing.h"

static const int64_t pair[] = {256, 4096}; /* flash.router: smallm runs it at every M here */
static const int64_t ms[] = {1, 64};

typedef struct seen {
  int shapes;        /* progress calls with an entry */
  int timed[8];      /* per registry index: times reported */
  double us[8][2];   /* per registry index and M: the reported time */
  int smallm_variants, lt_variants; /* smallm@... and cublaslt@... candidates timed */
} seen;

static void on_progress(void *user, int64_t n, int64_t k, int64_t m, const bf16fp32__tune_entry *e,
                        const bf16fp32__candidate *c, int count) {
  (void)n, (void)k;
  seen *s = user;
  s->shapes += e != NULL;
  for (int i = 0; i < count; i++) {
    const int timed = c[i].status == BF16FP32_OK && c[i].median_us > 0;
    s->smallm_variants += timed && strncmp(c[i].name, "smallm@", 7) == 0;
    s->lt_variants += timed && strncmp(c[i].name, "cublaslt@", 9) == 0;
    int b = bf16fp32__registry_find(c[i].name);
    if (b < 0 || b >= 8 || c[i].status != BF16FP32_OK) continue;
    EXPECT(isfinite(c[i].median_us) && c[i].median_us > 0, "%s m=%lld: %.3f us", c[i].name,
           (long long)m, c[i].median_us);
    /* a range where the time is the candidate's own (not one unpaired from a PDL partner's) */
    EXPECT(c[i].min_us <= 0 || (c[i].min_us <= c[i].median_us && c[i].median_us <= c[i].max_us),
           "%s m=%lld: median %.3f us outside its rounds' %.3f-%.3f", c[i].name, (long long)m,
           c[i].median_us, c[i].min_us, c[i].max_us);
    s->timed[b]++;
    s->us[b][m == 1 ? 0 : 1] = c[i].median_us;
  }
}

/* A device tune of the pair at the first m_count of ms into path, `replays` rounds each. */
static bf16fp32_status tune_pair(bf16fp32_context *ctx, const char *path, int m_count, int replays,
                                 seen *progress, int *merged) {
  bf16fp32__measure_opts mo;
  bf16fp32__measure_defaults(&mo);
  mo.replays = replays;
  bf16fp32__tune_request r;
  memset(&r, 0, sizeof r);
  r.where = BF16FP32_DEVICE;
  r.nk_pairs = pair, r.pair_count = 1, r.ms = ms, r.m_count = m_count;
  r.out_path = path;
  r.measure = &mo;
  r.progress = progress ? on_progress : NULL;
  r.user = progress;
  return bf16fp32__tune_run(ctx, &r, merged);
}

/* One tune run of the pair at both M into path, with the context's PDL option as given. */
static seen tune_once(const char *path, int pdl) {
  seen s;
  memset(&s, 0, sizeof s);
  bf16fp32_context *ctx = NULL;
  if (sup_create_pdl(&ctx, pdl) != BF16FP32_OK) {
    EXPECT(0, "create: %s", bf16fp32_last_error());
    return s;
  }
  int merged = 0;
  EXPECT(tune_pair(ctx, path, 2, 5, &s, &merged) == BF16FP32_OK && merged == 2,
         "tune pdl=%d: %s (%d)", pdl, bf16fp32_last_error(), merged);
  bf16fp32_destroy(ctx);
  return s;
}

/* A context with the file and the given PDL option picks by the file's entries of its launch. */
static void expect_choice(const char *path, int pdl, int64_t m) {
  setenv("BF16FP32_TUNE_FILE", path, 1);
  bf16fp32_context *ctx = NULL;
  CHECK_OK(sup_create_pdl(&ctx, pdl));
  const char *name = NULL;
  char why[600];
  CHECK_OK(bf16fp32_select(ctx, BF16FP32_DEVICE, m, pair[0], pair[1], &name, why, sizeof why));
  const bool from_file = strstr(why, "tuned: file") != NULL, under_pdl = strstr(why, "under PDL") != NULL;
  EXPECT(from_file && under_pdl == (pdl != 0), "pdl=%d m=%lld: %s (%s)", pdl, (long long)m, why,
         name ? name : "-");
  bf16fp32_destroy(ctx);
  unsetenv("BF16FP32_TUNE_FILE");
}

/* The tuner's own stream gives back what the backends kept for it: after a tune, 64 new streams
 * (as many as a backend serves at once) each still get cuBLAS. */
static void streams_after_tune(const char *path) {
  bf16fp32_context *ctx = NULL;
  CHECK_OK(sup_create_pdl(&ctx, 0));
  if (!ctx) return;
  int merged = 0;
  CHECK_OK(tune_pair(ctx, path, 1, 3, NULL, &merged));
  CHECK_OK(bf16fp32_force_backend(ctx, "cublas"));
  sup_gcase c = {.m = 2, .n = 64, .k = 128};
  CHECK(sup_gcase_alloc(&c, 5) == 0);
  const int b = bf16fp32__registry_find("cublas");
  bf16fp32_backend_info before, after;
  CHECK_OK(bf16fp32_backend_info_get(ctx, b, &before));
  enum { STREAMS = 64 };
  cudaStream_t s[STREAMS];
  int made = 0;
  for (int i = 0; i < STREAMS && (s[i] = sup_gpu_stream_create()) != NULL; i++, made++)
    CHECK_OK(bf16fp32_linear(ctx, BF16FP32_DEVICE, c.m, c.n, c.k, c.dx, c.k, c.dw, c.k, c.dout,
                             c.n, s[i]));
  for (int i = 0; i < made; i++) {
    CHECK(sup_gpu_stream_sync(s[i]) == 0);
    sup_gpu_stream_destroy(s[i]);
  }
  CHECK_OK(bf16fp32_backend_info_get(ctx, b, &after));
  EXPECT(made == STREAMS && after.calls - before.calls == STREAMS &&
             after.failures == before.failures,
         "after a tune, %d new streams: cublas ran %llu calls", made,
         (unsigned long long)(after.calls - before.calls));
  sup_gcase_free(&c);
  bf16fp32_destroy(ctx);
}

int main(void) {
  if (!sup_gpu_available()) return testing_skip("gpu-tune", "no CUDA device");
  unsetenv("BF16FP32_ALGO");
  unsetenv("BF16FP32_PDL");
  char dir[512], path[600];
  if (sup_temp_dir(dir, sizeof dir, "gpu-tune")) return 1;
  snprintf(path, sizeof path, "%s/tune.tsv", dir);

  const int smallm = bf16fp32__registry_find("smallm"), cublas = bf16fp32__registry_find("cublas");
  seen plain = tune_once(path, 0);
  seen pdl = tune_once(path, 1);
  EXPECT(plain.shapes == 2 && pdl.shapes == 2, "entries: %d plain, %d under PDL", plain.shapes, pdl.shapes);
  /* In turns with smallm, cuBLAS still gets a time of its own at both M. */
  EXPECT(plain.timed[smallm] == 2 && plain.timed[cublas] == 2 && pdl.timed[smallm] == 2 &&
             pdl.timed[cublas] == 2,
         "timed: smallm %d / %d, cublas %d / %d", plain.timed[smallm], pdl.timed[smallm],
         plain.timed[cublas], pdl.timed[cublas]);
  /* Variants: smallm's in both runs; cuBLASLt's, which launches plainly, not under PDL. */
  EXPECT(plain.smallm_variants > 0 && pdl.smallm_variants > 0 && pdl.lt_variants == 0,
         "variants timed: smallm %d / %d, cublaslt %d / %d (plain / PDL)", plain.smallm_variants,
         pdl.smallm_variants, plain.lt_variants, pdl.lt_variants);
  printf("us per call, M = 1 / 64: smallm %.2f / %.2f plain, %.2f / %.2f under PDL; cublas %.2f / "
         "%.2f alone, %.2f / %.2f in turns with smallm under PDL\n",
         plain.us[smallm][0], plain.us[smallm][1], pdl.us[smallm][0], pdl.us[smallm][1],
         plain.us[cublas][0], plain.us[cublas][1], pdl.us[cublas][0], pdl.us[cublas][1]);

  bf16fp32__tune_file f;
  int err = 0;
  CHECK_OK(bf16fp32__tune_file_read(path, &f, &err, NULL, NULL));
  int plain_entries = 0, pdl_entries = 0;
  for (int i = 0; i < f.table.count; i++) {
    const bf16fp32__tune_entry *e = &f.table.entries[i];
    EXPECT(e->where == BF16FP32_DEVICE && e->n == pair[0] && e->k == pair[1], "entry %d", i);
    EXPECT(e->runner_up_us < 0 || e->winner_us <= e->runner_up_us, "entry %d: winner first", i);
    if (e->pdl)
      pdl_entries++;
    else
      plain_entries++;
  }
  EXPECT(plain_entries == 2 && pdl_entries == 2, "%d plain and %d device-pdl entries", plain_entries,
         pdl_entries);
  bf16fp32__tune_file_clear(&f);

  /* Each context reads the entries of its own launch. */
  for (int i = 0; i < 2; i++) {
    expect_choice(path, 1, ms[i]);
    expect_choice(path, 0, ms[i]);
  }
  streams_after_tune(path);
  sup_remove_tree(dir);
  return testing_summary("gpu-tune");
}
