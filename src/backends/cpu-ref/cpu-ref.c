/* cpu-ref: fp64 accumulation for any shape and stride: the oracle as a backend, and the final
 * host fallback. Single-threaded on purpose: it is the reference, not the fast path. */
#include "fp-mode.h"
#include "internal.h"
#include "oracle.h"

static bf16fp32_status ref_probe(const bf16fp32__config *cfg, void **state, char *why, size_t len) {
  (void)cfg;
  (void)why;
  (void)len;
  *state = NULL; /* nothing to hold */
  return BF16FP32_OK;
}

static bool ref_supports(const void *state, const bf16fp32__shape *s) {
  (void)state;
  return s->where == BF16FP32_HOST;
}

static bf16fp32_status ref_prewarm(void *state, const bf16fp32__shape *s, const char *variant,
                                   void *stream) {
  (void)variant; /* no variants */
  (void)state;
  (void)s;
  (void)stream;
  return BF16FP32_OK;
}

static bf16fp32_status ref_run(void *state, const bf16fp32__call *c) {
  (void)state;
  const bf16fp32__shape *s = &c->shape;
  const bf16fp32__fp_mode mode = bf16fp32__fp_mode_ieee(); /* subnormals kept (fp-mode.h) */
  for (int64_t i = 0; i < s->m; i++)
    for (int64_t j = 0; j < s->n; j++)
      c->out[i * s->ldo + j] = (float)bf16fp32__dot_f64(c->x + i * s->ldx, c->w + j * s->ldw, s->k, NULL);
  bf16fp32__fp_mode_restore(mode);
  return BF16FP32_OK;
}

static void ref_reset(void *state) { (void)state; }

const bf16fp32__backend bf16fp32__backend_cpu_ref = {
    .name = "cpu-ref",
    .where = BF16FP32_HOST,
    .probe = ref_probe,
    .supports = ref_supports,
    .prewarm = ref_prewarm,
    .run = ref_run,
    .reset = ref_reset,
};
