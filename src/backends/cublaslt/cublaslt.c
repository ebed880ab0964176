/* cublaslt: cublasLtMatmul with a plan per shape built at prewarm (descriptors and the
 * heuristic's algorithm, or a tuned one: cublaslt-algo.h) and a workspace per stream, so that a
 * call creates nothing. */
#include <stdio.h>
#include <stdlib.h>

#include "cublaslt-plans.h"
#include "cuda-stream-slots.h"
#include "device.h"

typedef struct cublaslt_state {
  int device;
  size_t workspace_bytes;
  cublasLtHandle_t lt;          /* holds no stream or workspace: shared by all streams */
  bf16fp32__stream_slots slots; /* workspace per stream (no cuBLAS handle) */
  bf16fp32__lt_plans plans;
} cublaslt_state;

static bf16fp32_status cublaslt_probe(const bf16fp32__config *cfg, void **state, char *why,
                                      size_t len) {
  bf16fp32_status st = BF16FP32_OK;
  bool slots_ready = false, plans_ready = false;
  cublaslt_state *s = calloc(1, sizeof *s);
  *state = NULL;
  if (!s) return bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "cublaslt state");
  s->device = cfg->device;
  s->workspace_bytes = cfg->workspace_bytes;
  BF16FP32__TRY(bf16fp32__stream_slots_init(&s->slots, cfg->device, cfg->workspace_bytes, false,
                                            CUBLAS_DEFAULT_MATH, why, len));
  slots_ready = true;
  BF16FP32__TRY(bf16fp32__lt_plans_init(&s->plans));
  plans_ready = true;
  /* The context made cfg->device current around probe. */
  BF16FP32__CUBLAS_TRY(cublasLtCreate(&s->lt));
  *state = s;
cleanup:
  if (st != BF16FP32_OK) {
    if (!why[0]) snprintf(why, len, "%s", bf16fp32_last_error());
    if (plans_ready) bf16fp32__lt_plans_destroy(&s->plans);
    if (slots_ready) bf16fp32__stream_slots_destroy(&s->slots);
    free(s);
  }
  return st;
}

static bool cublaslt_supports(const void *state, const bf16fp32__shape *s) {
  (void)state;
  /* Layouts take 64-bit sizes; a shape the heuristic cannot serve is declined at run. */
  return s->where == BF16FP32_DEVICE;
}

static bf16fp32_status cublaslt_prewarm(void *state, const bf16fp32__shape *shape, const char *variant,
                                        void *stream) {
  bf16fp32_status st = BF16FP32_OK;
  cublaslt_state *s = state;
  bf16fp32__stream_slot *slot = NULL;
  bf16fp32__lt_plan plan;
  bool owned = false, runnable;
  /* The plan first, the stream's workspace second: the same order as run (no lock nesting). */
  BF16FP32__TRY(bf16fp32__lt_plans_get(&s->plans, s->lt, s->device, s->workspace_bytes, shape,
                                       variant, true, &plan, &owned));
  runnable = plan.runnable;
  if (owned) { /* table full: a plain call builds its own, a captured one finds none */
    bf16fp32__lt_plan_free(&plan);
    BF16FP32__TRY(bf16fp32__fail(BF16FP32_DECLINED, "cuBLASLt's plan table is full (%d plans): "
                                 "reset the context", BF16FP32__LT_PLANS_CAP / 4 * 3));
  }
  if (!runnable)
    BF16FP32__TRY(bf16fp32__fail(BF16FP32_DECLINED, "cuBLASLt has no algorithm for m=%lld n=%lld k=%lld",
                                 (long long)shape->m, (long long)shape->n, (long long)shape->k));
  BF16FP32__TRY(bf16fp32__stream_slots_acquire(&s->slots, stream, true, &slot));
cleanup:
  bf16fp32__stream_slot_release(slot);
  return st;
}

static bf16fp32_status cublaslt_run(void *state, const bf16fp32__call *c) {
  bf16fp32_status st = BF16FP32_OK;
  cublaslt_state *s = state;
  const bf16fp32__shape *sh = &c->shape;
  bf16fp32__stream_slot *slot = NULL;
  bf16fp32__lt_plan plan;
  bool owned = false;
  const float one = 1.0f, zero = 0.0f;
  BF16FP32__TRY(bf16fp32__lt_plans_get(&s->plans, s->lt, s->device, s->workspace_bytes, sh,
                                       c->variant, !c->capturing, &plan, &owned));
  if (!plan.runnable)
    BF16FP32__TRY(bf16fp32__fail(BF16FP32_DECLINED, "cuBLASLt has no algorithm for this shape"));
  BF16FP32__TRY(bf16fp32__stream_slots_acquire(&s->slots, c->stream, !c->capturing, &slot));
  /* out^T = w^T . x^T in column-major terms; beta = 0 so out is written, never read: C = D. */
  BF16FP32__CUBLAS_TRY(cublasLtMatmul(s->lt, plan.op, &one, c->w, plan.a, c->x, plan.b, &zero,
                                      c->out, plan.c, c->out, plan.c, &plan.algo, slot->workspace,
                                      slot->workspace_bytes, (cudaStream_t)c->stream));
cleanup:
  bf16fp32__stream_slot_release(slot);
  /* Descriptors are only read while the call is enqueued, so a per-call plan can go now. */
  if (owned) bf16fp32__lt_plan_free(&plan);
  return st;
}

static int cublaslt_variants(void *state, const bf16fp32__shape *shape,
                             char (*names)[BF16FP32__VARIANT_LEN], int max) {
  cublaslt_state *s = state;
  int prev = -1, count = 0;
  if (bf16fp32__device_enter(s->device, &prev) != BF16FP32_OK) return 0;
  count = bf16fp32__lt_variants(s->lt, s->workspace_bytes, shape, names, max);
  bf16fp32__device_leave(prev);
  return count;
}

static void cublaslt_forget_stream(void *state, void *stream) {
  cublaslt_state *s = state;
  bf16fp32__stream_slots_forget(&s->slots, stream);
}

static void cublaslt_reset(void *state) {
  cublaslt_state *s = state;
  if (!s) return;
  bf16fp32__stream_slots_destroy(&s->slots); /* waits for the device first */
  bf16fp32__lt_plans_destroy(&s->plans);
  if (s->lt) BF16FP32__CUBLAS_NOTE(cublasLtDestroy(s->lt));
  free(s);
}

const bf16fp32__backend bf16fp32__backend_cublaslt = {
    .name = "cublaslt",
    .where = BF16FP32_DEVICE,
    .probe = cublaslt_probe,
    .supports = cublaslt_supports,
    .prewarm = cublaslt_prewarm,
    .run = cublaslt_run,
    .reset = cublaslt_reset,
    .forget_stream = cublaslt_forget_stream,
    .variants = cublaslt_variants,
};
