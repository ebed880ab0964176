/* GPU test cases (gpu-case.h). */
#include "gpu-case.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "support.h"
#include "testing.h"

int sup_gcase_alloc(sup_gcase *c, uint64_t seed) {
  size_t nx = (size_t)(c->m * c->k), nw = (size_t)(c->n * c->k), no = (size_t)(c->m * c->n);
  c->hx = malloc(nx * 2), c->hw = malloc(nw * 2), c->hout = malloc(no * 4);
  c->dx = sup_gpu_alloc(nx * 2), c->dw = sup_gpu_alloc(nw * 2), c->dout = sup_gpu_alloc((no + 1) * 4);
  if (!c->hx || !c->hw || !c->hout || !c->dx || !c->dw || !c->dout) return 1;
  sup_fill_bf16(c->hx, nx, seed);
  sup_fill_bf16(c->hw, nw, seed + 1);
  return sup_gpu_upload(c->dx, c->hx, nx * 2) || sup_gpu_upload(c->dw, c->hw, nw * 2);
}

void sup_gcase_free(sup_gcase *c) {
  free(c->hx), free(c->hw), free(c->hout);
  sup_gpu_free(c->dx), sup_gpu_free(c->dw), sup_gpu_free(c->dout);
}

int sup_gcase_poison(sup_gcase *c, float *out) {
  size_t no = (size_t)(c->m * c->n);
  sup_poison_f32(c->hout, no);
  return sup_gpu_upload(out, c->hout, no * 4);
}

void sup_gcase_check(sup_gcase *c, const float *out, const char *what) {
  int ok = !sup_gpu_download(c->hout, out, (size_t)(c->m * c->n) * 4);
  CHECK(ok);
  if (!ok) return;
  sup_check_result r = sup_check(c->m, c->n, c->k, c->hx, c->k, c->hw, c->k, c->hout, c->n);
  if (!sup_check_ok(&r))
    fprintf(stderr, "%s m=%lld n=%lld k=%lld: worst ratio %.3g at (%lld,%lld), %lld violations, "
            "%lld unwritten\n", what, (long long)c->m, (long long)c->n, (long long)c->k,
            r.worst_ratio, (long long)r.worst_i, (long long)r.worst_j, (long long)r.violations,
            (long long)r.unwritten);
  CHECK(sup_check_ok(&r));
}

int sup_gcase_tuned_variant(bf16fp32_context *ctx, const char *backend, sup_gcase *c, void *stream,
                            const char *path) {
  const int b = sup_backend_index(ctx, backend);
  char names[1][BF16FP32__VARIANT_LEN];
  const bf16fp32__shape shape =
      bf16fp32__make_shape(BF16FP32_DEVICE, c->m, c->n, c->k, c->k, c->k, c->n, c->dx, c->dw, c->dout);
  if (b < 0 || bf16fp32__variants_one(ctx, b, &shape, names, 1) < 1) {
    EXPECT(0, "no %s variant for m=%lld n=%lld k=%lld", backend, (long long)c->m, (long long)c->n,
           (long long)c->k);
    return -1;
  }
  /* A file for this GPU whose entries for the shape name the variant. */
  char winner[BF16FP32__TUNE_NAME_LEN];
  snprintf(winner, sizeof winner, "%s@%s", backend, names[0]);
  CHECK(sup_tune_file_naming(ctx, path, c->n, c->k, c->m, winner) == 0);
  CHECK_OK(bf16fp32_reset(ctx));

  const char *name = NULL;
  char why[600];
  CHECK_OK(bf16fp32_select(ctx, BF16FP32_DEVICE, c->m, c->n, c->k, &name, why, sizeof why));
  EXPECT(name && strcmp(name, backend) == 0 && strstr(why, names[0]), "select: %s: %s", name ? name : "-",
         why);
  const int64_t ms_one[] = {c->m};
  CHECK_OK(bf16fp32_prewarm(ctx, BF16FP32_DEVICE, c->n, c->k, ms_one, 1, stream));
  bf16fp32_backend_info before, after;
  CHECK_OK(bf16fp32_backend_info_get(ctx, b, &before));
  CHECK(sup_gcase_poison(c, c->dout) == 0);
  CHECK(sup_gpu_begin_capture(stream) == 0);
  bf16fp32_status st =
      bf16fp32_linear(ctx, BF16FP32_DEVICE, c->m, c->n, c->k, c->dx, c->k, c->dw, c->k, c->dout, c->n, stream);
  EXPECT(st == BF16FP32_OK, "captured tuned call: %s: %s", bf16fp32_status_name(st), bf16fp32_last_error());
  CHECK(sup_gpu_end_capture_and_replay(stream, 1) == 0);
  CHECK_OK(bf16fp32_backend_info_get(ctx, b, &after));
  EXPECT(after.calls == before.calls + 1 && after.failures == before.failures, "%s ran it: %llu -> %llu",
         backend, (unsigned long long)before.calls, (unsigned long long)after.calls);
  return 0;
}
