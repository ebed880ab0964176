/* GPU test cases (gpu-case.h). */
#include "gpu-case.h"

#include <stdio.h>
#include <stdlib.h>

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
