/* cuBLASLt variants (tuned algorithms) on the GPU: every variant the backend offers for a shape
 * runs and meets the oracle bound with poisoned outputs; variants it cannot use (malformed, an
 * unknown algorithm, pointers below the tuner's 16-byte alignment) run the heuristic's choice
 * and are right too; a prewarmed variant runs inside graph capture, one that was not prewarmed
 * returns NOT_PREWARMED with the capture intact; and a tuning file naming a variant gets it run
 * by the dispatcher, prewarmed and captured. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "dispatch.h"
#include "validate.h"
#include "gpu-case.h"
#include "support.h"
#include "testing.h"

typedef sup_gcase gcase;

static float *out_at(gcase *c, int shifted) { return c->dout + (shifted ? 1 : 0); }
static int case_alloc(gcase *c, uint64_t seed) { return sup_gcase_alloc(c, seed); }
static int case_poison(gcase *c, int shifted) { return sup_gcase_poison(c, out_at(c, shifted)); }
static void case_check(gcase *c, int shifted, const char *what) { sup_gcase_check(c, out_at(c, shifted), what); }

static bf16fp32__call case_call(gcase *c, int shifted, const char *variant, cudaStream_t s, bool capturing) {
  bf16fp32__call call;
  memset(&call, 0, sizeof call);
  call.x = c->dx, call.w = c->dw, call.out = out_at(c, shifted);
  call.shape = bf16fp32__make_shape(BF16FP32_DEVICE, c->m, c->n, c->k, c->k, c->k, c->n, call.x, call.w, call.out);
  call.stream = s;
  call.capturing = capturing;
  call.variant = variant;
  return call;
}

/* One eager run of backend b with a variant on poisoned output, checked. */
static void run_variant(bf16fp32_context *ctx, int b, gcase *c, int shifted, const char *variant, cudaStream_t s) {
  bf16fp32__call call = case_call(c, shifted, variant, s, false);
  CHECK(case_poison(c, shifted) == 0);
  bf16fp32_status st = bf16fp32__prewarm_one(ctx, b, &call.shape, variant, s);
  EXPECT(st == BF16FP32_OK, "prewarm %s: %s", variant ? variant : "-", bf16fp32_status_name(st));
  st = bf16fp32__run_one(ctx, b, &call);
  EXPECT(st == BF16FP32_OK, "run %s: %s: %s", variant ? variant : "-", bf16fp32_status_name(st), bf16fp32_last_error());
  CHECK(sup_gpu_stream_sync(s) == 0);
  char what[96];
  snprintf(what, sizeof what, "cublaslt@%s%s", variant ? variant : "-", shifted ? " (out 4-byte aligned)" : "");
  case_check(c, shifted, what);
}

static int offered_total;

static void every_variant(bf16fp32_context *ctx, int b, gcase *c, cudaStream_t s) {
  char names[7][BF16FP32__VARIANT_LEN];
  bf16fp32__call probe = case_call(c, 0, NULL, s, false);
  int nv = bf16fp32__variants_one(ctx, b, &probe.shape, names, 7);
  EXPECT(nv >= 0 && nv <= 7, "variants: %d", nv);
  offered_total += nv;
  for (int i = 0; i < nv; i++) {
    for (int j = 0; j < i; j++) EXPECT(strcmp(names[i], names[j]) != 0, "distinct: %s", names[i]);
    run_variant(ctx, b, c, 0, names[i], s);
  }
  /* What the backend cannot use runs its default. */
  run_variant(ctx, b, c, 0, "1.2", s);
  run_variant(ctx, b, c, 0, "99999.0.0.0.0.0.0.0.0", s);
  if (nv > 0) run_variant(ctx, b, c, 1, names[0], s);
}

/* A prewarmed variant inside capture; an unprewarmed one refused without breaking it. */
static void captured_variant(bf16fp32_context *ctx, int b, gcase *c, cudaStream_t s) {
  char names[2][BF16FP32__VARIANT_LEN];
  bf16fp32__call call = case_call(c, 0, NULL, s, false);
  if (bf16fp32__variants_one(ctx, b, &call.shape, names, 2) < 1) return;
  call.variant = names[0];
  CHECK_OK(bf16fp32__prewarm_one(ctx, b, &call.shape, names[0], s));
  CHECK(case_poison(c, 0) == 0);
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
  call.capturing = true;
  bf16fp32_status st = bf16fp32__run_one(ctx, b, &call);
  EXPECT(st == BF16FP32_OK, "captured prewarmed variant: %s", bf16fp32_status_name(st));
  call.variant = "7.7.7.7.7.7.7.7.7"; /* never prewarmed */
  st = bf16fp32__run_one(ctx, b, &call);
  EXPECT(st == BF16FP32_NOT_PREWARMED, "unprewarmed variant in capture: %s", bf16fp32_status_name(st));
  CHECK(sup_gpu_capturing(s));
  CHECK(sup_gpu_end_capture_and_replay(s, 1) == 0 && cudaGetLastError() == cudaSuccess);
  case_check(c, 0, "captured variant");
}

/* A tuning file naming cublaslt@variant for the shape: select says so, prewarm and capture run it. */
static void tuned_through_dispatcher(gcase *c, cudaStream_t s, const char *dir) {
  char path[600];
  snprintf(path, sizeof path, "%s/lt.tsv", dir);
  setenv("BF16FP32_TUNE_FILE", path, 1);
  bf16fp32_context *ctx = NULL;
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  if (!ctx) return;
  if (sup_gcase_tuned_variant(ctx, "cublaslt", c, s, path) == 0) {
    CHECK(cudaGetLastError() == cudaSuccess);
    case_check(c, 0, "tuned variant through the dispatcher, captured");
    /* Elsewhere in the bucket (M = 65..128) the variant does not hold: the runner-up goes first. */
    const char *name = NULL;
    char why[600];
    CHECK_OK(bf16fp32_select(ctx, BF16FP32_DEVICE, c->m - 28, c->n, c->k, &name, why, sizeof why));
    EXPECT(name && strcmp(name, "cublas") == 0 && strstr(why, "only"), "select at M=%lld: %s: %s",
           (long long)(c->m - 28), name ? name : "-", why);
  }
  bf16fp32_destroy(ctx);
}

int main(void) {
  if (!sup_gpu_available()) return testing_skip("gpu-cublaslt-variants", "no CUDA device");
  char dir[512];
  if (sup_temp_dir(dir, sizeof dir, "lt-variants")) return 1;
  unsetenv("BF16FP32_ALGO");
  setenv("BF16FP32_TUNE_FILE", "", 1);
  bf16fp32_context *ctx = NULL;
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  const int b = ctx ? sup_backend_index(ctx, "cublaslt") : -1;
  if (b < 0) {
    if (ctx) bf16fp32_destroy(ctx);
    sup_remove_tree(dir);
    return testing_skip("gpu-cublaslt-variants", "cuBLASLt is not available");
  }
  cudaStream_t s = sup_gpu_stream_create();
  /* Odd M, M = 1, K not a multiple of 64, and a DeepSeek-V4 router shape at M = 128 (a tune
   * bucket's own M, where a tuned variant runs). */
  gcase cases[] = {{.m = 37, .n = 384, .k = 712}, {.m = 1, .n = 256, .k = 1000},
                   {.m = 128, .n = 512, .k = 1024}, {.m = 128, .n = 384, .k = 7168}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    if (case_alloc(&cases[i], 100 + i)) {
      EXPECT(0, "allocation");
      continue;
    }
    every_variant(ctx, b, &cases[i], s);
  }
  EXPECT(offered_total > 0, "cuBLASLt offered no variant at any shape");
  captured_variant(ctx, b, &cases[2], s);
  bf16fp32_destroy(ctx);
  tuned_through_dispatcher(&cases[3], s, dir);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) sup_gcase_free(&cases[i]);
  sup_gpu_stream_destroy(s);
  sup_remove_tree(dir);
  return testing_summary("gpu-cublaslt-variants");
}
