/* smallm's variants on the GPU, plainly and under PDL: every variant the backend offers for a
 * shape (DeepSeek-V4 shapes, odd K, M = 1 to 256), and three paired stream stagings twice each
 * (both footprints), run within the oracle bound with poisoned outputs and give the default's
 * bits (a variant is a staging, never another summation order); texts it cannot use run the
 * default; a tuning file naming smallm@variant gets it selected and run inside a captured graph.
 * GPU_SMALLM_VARIANTS_PART=paired runs the paired launches alone (for racecheck);
 * GPU_SMALLM_VARIANTS_TEXTS=a,b runs those texts there instead; GPU_SMALLM_VARIANTS_TRACE=1
 * prints each run's name before it starts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "dispatch.h"
#include "gpu-case.h"
#include "support.h"
#include "testing.h"

typedef struct vcase {
  sup_gcase g;
  double *ref, *absdot; /* the oracle, once per case */
  float *bits;          /* the default's output */
} vcase;

static int offered;

static bf16fp32__call case_call(vcase *c, const char *variant, cudaStream_t s) {
  bf16fp32__call call;
  memset(&call, 0, sizeof call);
  call.x = c->g.dx, call.w = c->g.dw, call.out = c->g.dout;
  call.shape = bf16fp32__make_shape(BF16FP32_DEVICE, c->g.m, c->g.n, c->g.k, c->g.k, c->g.k, c->g.n,
                                    call.x, call.w, call.out);
  call.stream = s;
  call.variant = variant;
  return call;
}

/* The output now on the device: within the bound, every element written; into c->g.hout. */
static int output_ok(vcase *c, const char *what) {
  const size_t count = (size_t)(c->g.m * c->g.n);
  if (sup_gpu_download(c->g.hout, c->g.dout, count * 4)) return 0;
  sup_check_result r = sup_compare(c->g.m, c->g.n, c->g.k, c->ref, c->absdot, c->g.hout, c->g.n);
  if (!sup_check_ok(&r))
    fprintf(stderr, "%s m=%lld n=%lld k=%lld: worst %.3g, %lld bad, %lld unwritten\n", what,
            (long long)c->g.m, (long long)c->g.n, (long long)c->g.k, r.worst_ratio,
            (long long)r.violations, (long long)r.unwritten);
  return sup_check_ok(&r);
}

/* One eager run of smallm (backend b) with variant v on poisoned output: checked, and the
 * default's bits unless this is the default's own run (c->bits filled then). */
static void run_variant(bf16fp32_context *ctx, int b, vcase *c, const char *v, cudaStream_t s,
                        int pdl) {
  char what[96];
  snprintf(what, sizeof what, "smallm@%s%s", v ? v : "-", pdl ? " under PDL" : "");
  bf16fp32__call call = case_call(c, v, s);
  sup_trace("run %s m=%lld n=%lld k=%lld", what, (long long)c->g.m, (long long)c->g.n,
            (long long)c->g.k);
  CHECK(sup_gcase_poison(&c->g, c->g.dout) == 0);
  CHECK_OK(bf16fp32__prewarm_one(ctx, b, &call.shape, v, s));
  bf16fp32_status st = bf16fp32__run_one(ctx, b, &call);
  EXPECT(st == BF16FP32_OK, "%s: %s: %s", what, bf16fp32_status_name(st), bf16fp32_last_error());
  CHECK(sup_gpu_stream_sync(s) == 0);
  EXPECT(output_ok(c, what), "%s: outside the bound", what);
  const size_t bytes = (size_t)(c->g.m * c->g.n) * 4;
  if (!v)
    memcpy(c->bits, c->g.hout, bytes);
  else
    EXPECT(memcmp(c->bits, c->g.hout, bytes) == 0, "%s m=%lld n=%lld k=%lld: not the default's bits",
           what, (long long)c->g.m, (long long)c->g.n, (long long)c->g.k);
}

/* Paired launches (twice each, so that both footprints run; plainly, or where the staging does
 * not apply, the default's). */
static void paired_variants(bf16fp32_context *ctx, int b, vcase *c, cudaStream_t s, int pdl) {
  static const char *const paired[] = {"1.5.2.1.0.0.1", "1.3.3.1.1.0.1", "1.3.2.1.0.0.1"};
  for (size_t i = 0; i < sizeof paired / sizeof paired[0]; i++)
    for (int twice = 0; twice < 2; twice++) run_variant(ctx, b, c, paired[i], s, pdl);
}

/* GPU_SMALLM_VARIANTS_TEXTS (with the paired part): these comma-separated texts twice each
 * instead of the paired ones, to take a sanitizer run apart one staging at a time. */
static int texts_variants(bf16fp32_context *ctx, int b, vcase *c, cudaStream_t s, int pdl) {
  const char *list = getenv("GPU_SMALLM_VARIANTS_TEXTS");
  if (list == NULL || list[0] == '\0') return 0;
  char text[BF16FP32__VARIANT_LEN];
  for (const char *p = list; *p;) {
    const size_t len = strcspn(p, ",");
    EXPECT(len > 0 && len < sizeof text, "GPU_SMALLM_VARIANTS_TEXTS: '%s'", list);
    if (len == 0 || len >= sizeof text) return 1;
    memcpy(text, p, len), text[len] = '\0';
    for (int twice = 0; twice < 2; twice++) run_variant(ctx, b, c, text, s, pdl);
    p += len + (p[len] == ',');
  }
  return 1;
}

static void every_variant(bf16fp32_context *ctx, int b, vcase *c, cudaStream_t s, int pdl) {
  char names[7][BF16FP32__VARIANT_LEN];
  bf16fp32__call probe = case_call(c, NULL, s);
  const int nv = bf16fp32__variants_one(ctx, b, &probe.shape, names, 7);
  EXPECT(nv >= 0 && nv <= 7, "variants: %d", nv);
  offered += nv;
  run_variant(ctx, b, c, NULL, s, pdl);
  for (int i = 0; i < nv; i++) run_variant(ctx, b, c, names[i], s, pdl);
  paired_variants(ctx, b, c, s, pdl);
  /* what smallm cannot use here runs its default */
  run_variant(ctx, b, c, "1.99.2.1.0.0", s, pdl);
  run_variant(ctx, b, c, "cuBLASLt", s, pdl);
  run_variant(ctx, b, c, c->g.m <= 64 ? "3.1.3.1.0" : "2.0.0.0.0.1", s, pdl);
}

static int case_alloc(vcase *c, int64_t m, int64_t n, int64_t k, uint64_t seed) {
  memset(c, 0, sizeof *c);
  c->g.m = m, c->g.n = n, c->g.k = k;
  if (sup_gcase_alloc(&c->g, seed)) return 1;
  c->ref = malloc((size_t)(m * n) * sizeof(double));
  c->absdot = malloc((size_t)(m * n) * sizeof(double));
  c->bits = malloc((size_t)(m * n) * sizeof(float));
  if (!c->ref || !c->absdot || !c->bits) return 1;
  return sup_oracle(m, n, k, c->g.hx, k, c->g.hw, k, c->ref, c->absdot, 16);
}

static void case_free(vcase *c) {
  sup_gcase_free(&c->g);
  free(c->ref), free(c->absdot), free(c->bits);
}

/* A tuning file whose entries for the shape name smallm@variant: select says so, and a prewarmed
 * capture runs it with the default's bits. */
static void tuned_through_dispatcher(vcase *c, cudaStream_t s, const char *dir, int pdl) {
  char path[600];
  snprintf(path, sizeof path, "%s/smallm-%d.tsv", dir, pdl);
  setenv("BF16FP32_TUNE_FILE", path, 1);
  bf16fp32_context *ctx = NULL;
  CHECK_OK(sup_create_pdl(&ctx, pdl));
  if (ctx && sup_gcase_tuned_variant(ctx, "smallm", &c->g, s, path) == 0) {
    CHECK(output_ok(c, "tuned smallm variant, captured"));
    CHECK(memcmp(c->bits, c->g.hout, (size_t)(c->g.m * c->g.n) * 4) == 0);
  }
  if (ctx) bf16fp32_destroy(ctx);
  setenv("BF16FP32_TUNE_FILE", "", 1);
}

int main(void) {
  if (!sup_gpu_available()) return testing_skip("gpu-smallm-variants", "no CUDA device");
  char dir[512];
  if (sup_temp_dir(dir, sizeof dir, "smallm-variants")) return 1;
  unsetenv("BF16FP32_ALGO");
  setenv("BF16FP32_TUNE_FILE", "", 1);
  bf16fp32_context *ctx = NULL;
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  bf16fp32_backend_info info;
  const int b = ctx ? sup_backend_index(ctx, "smallm") : -1;
  if (b < 0 || bf16fp32_backend_info_get(ctx, b, &info) != BF16FP32_OK || !info.available) {
    if (ctx) bf16fp32_destroy(ctx);
    sup_remove_tree(dir);
    return testing_skip("gpu-smallm-variants", "smallm is not available");
  }
  bf16fp32_destroy(ctx);
  cudaStream_t s = sup_gpu_stream_create();
  /* DeepSeek-V4 shapes across the stream, share and token-block stagings, and an odd K */
  static const int64_t shapes[][3] = {{1, 1024, 7168}, {4, 1024, 7168}, {8, 1024, 7168},
                                      {13, 2048, 7168},
                                      {24, 2048, 4096}, {40, 256, 4096}, {64, 512, 7168},
                                      {8, 384, 7168},   {100, 2048, 7168}, {1, 528, 1032},
                                      {37, 528, 1032}, {256, 256, 4096}};
  /* GPU_SMALLM_VARIANTS_PART=paired runs only the default and the paired launches, under PDL
   * (plainly they run unpaired), at a small shape where each paired text applies and both
   * instance sets run (M = 4 and 13), for compute-sanitizer (tools/device-run.sh sanitize).
   * On the H200 its memcheck takes seconds, its racecheck 3 s with the tool's deadlock
   * detection off (session 63; with it on the tool stalled at a launch that varied, sessions
   * 60-62, docs/smallm-notes.md) */
  static const int64_t paired_shapes[][3] = {{4, 528, 1032}, {13, 528, 1032}};
  enum {
    COUNT = sizeof shapes / sizeof shapes[0],
    PAIRED = sizeof paired_shapes / sizeof paired_shapes[0]
  };
  sup_trace_start("GPU_SMALLM_VARIANTS_TRACE");
  const char *part = getenv("GPU_SMALLM_VARIANTS_PART");
  const int paired_only = part != NULL && strcmp(part, "paired") == 0;
  if (part != NULL && part[0] != '\0' && !paired_only) {
    fprintf(stderr, "gpu-smallm-variants: GPU_SMALLM_VARIANTS_PART is '%s': paired or unset\n",
            part);
    CHECK(0);
  }
  const int count = paired_only ? PAIRED : COUNT;
  const int64_t(*use)[3] = paired_only ? paired_shapes : shapes;
  vcase cases[COUNT];
  for (int i = 0; i < count; i++)
    EXPECT(case_alloc(&cases[i], use[i][0], use[i][1], use[i][2], 700 + (uint64_t)i) == 0,
           "allocation of case %d", i);
  for (int pdl = paired_only; pdl < 2; pdl++) {
    CHECK_OK(sup_create_pdl(&ctx, pdl));
    if (!ctx) continue;
    for (int i = 0; i < count; i++) {
      if (paired_only) {
        run_variant(ctx, b, &cases[i], NULL, s, pdl); /* the default's bits first */
        if (!texts_variants(ctx, b, &cases[i], s, pdl)) paired_variants(ctx, b, &cases[i], s, pdl);
      } else {
        every_variant(ctx, b, &cases[i], s, pdl);
      }
    }
    bf16fp32_destroy(ctx);
    if (!paired_only) tuned_through_dispatcher(&cases[1], s, dir, pdl);
  }
  if (!paired_only) EXPECT(offered > 2 * COUNT, "smallm offered %d variants", offered);
  for (int i = 0; i < count; i++) case_free(&cases[i]);
  sup_gpu_stream_destroy(s);
  sup_remove_tree(dir);
  return testing_summary("gpu-smallm-variants");
}
