/* fp32: the upcast path engines fall back to. x and w are widened to fp32 in a per-stream
 * scratch, then one fp32 GEMM with pedantic fp32 compute (no TF32, no bf16x9 emulation). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda-stream-slots.h"
#include "fp32-upcast.h"

typedef struct fp32_state {
  bf16fp32__stream_slots slots; /* {handle, workspace, upcast scratch} per stream */
} fp32_state;

/* Scratch layout: x as m x k floats, then w as n x k floats from a 256-byte boundary.
 * False when the sizes do not fit in size_t. */
static bool scratch_layout(const bf16fp32__shape *s, size_t *w_offset, size_t *bytes) {
  uint64_t xb, wb, off, total;
  if (__builtin_mul_overflow((uint64_t)s->m, (uint64_t)s->k, &xb) ||
      __builtin_mul_overflow(xb, (uint64_t)sizeof(float), &xb) ||
      __builtin_mul_overflow((uint64_t)s->n, (uint64_t)s->k, &wb) ||
      __builtin_mul_overflow(wb, (uint64_t)sizeof(float), &wb) ||
      __builtin_add_overflow(xb, (uint64_t)255, &off) ||
      __builtin_add_overflow(off & ~(uint64_t)255, wb, &total) || total > SIZE_MAX)
    return false;
  *w_offset = (size_t)(off & ~(uint64_t)255);
  *bytes = (size_t)total;
  return true;
}

static bf16fp32_status fp32_probe(const bf16fp32__config *cfg, void **state, char *why, size_t len) {
  bf16fp32_status st = BF16FP32_OK;
  bool slots_ready = false;
  fp32_state *s = calloc(1, sizeof *s);
  *state = NULL;
  if (!s) return bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "fp32 state");
  BF16FP32__TRY(bf16fp32__stream_slots_init(&s->slots, cfg->device, cfg->workspace_bytes, true,
                                            CUBLAS_PEDANTIC_MATH, why, len));
  slots_ready = true;
  /* The kernel is built for one architecture family: check it loads on this device (the
   * context made cfg->device current around probe). */
  BF16FP32__CUDA_TRY(bf16fp32__fp32_upcast_check());
  *state = s;
cleanup:
  if (st != BF16FP32_OK) {
    if (!why[0]) snprintf(why, len, "the upcast kernel cannot run here: %s", bf16fp32_last_error());
    if (slots_ready) bf16fp32__stream_slots_destroy(&s->slots);
    free(s);
  }
  return st;
}

static bool fp32_supports(const void *state, const bf16fp32__shape *s) {
  size_t off, bytes;
  (void)state;
  /* cublasGemmEx takes int sizes; the fp32 copies have ld = k. */
  return s->where == BF16FP32_DEVICE && s->m <= INT32_MAX && s->n <= INT32_MAX &&
         s->k <= INT32_MAX && s->ldo <= INT32_MAX && scratch_layout(s, &off, &bytes);
}

static bf16fp32_status fp32_prewarm(void *state, const bf16fp32__shape *shape, const char *variant,
                                    void *stream) {
  (void)variant; /* no variants */
  bf16fp32_status st = BF16FP32_OK;
  fp32_state *s = state;
  bf16fp32__stream_slot *slot = NULL;
  size_t off, bytes;
  if (!scratch_layout(shape, &off, &bytes))
    return bf16fp32__fail(BF16FP32_DECLINED, "fp32 scratch size overflows");
  BF16FP32__TRY(bf16fp32__stream_slots_acquire(&s->slots, stream, true, &slot));
  BF16FP32__TRY(bf16fp32__stream_slot_reserve(slot, bytes, false));
cleanup:
  bf16fp32__stream_slot_release(slot);
  return st;
}

static bf16fp32_status fp32_run(void *state, const bf16fp32__call *c) {
  bf16fp32_status st = BF16FP32_OK;
  fp32_state *s = state;
  const bf16fp32__shape *sh = &c->shape;
  bf16fp32__stream_slot *slot = NULL;
  size_t w_offset, bytes;
  float *xf, *wf;
  const float one = 1.0f, zero = 0.0f;
  if (!scratch_layout(sh, &w_offset, &bytes))
    return bf16fp32__fail(BF16FP32_DECLINED, "fp32 scratch size overflows");
  BF16FP32__TRY(bf16fp32__stream_slots_acquire(&s->slots, c->stream, !c->capturing, &slot));
  BF16FP32__TRY(bf16fp32__stream_slot_reserve(slot, bytes, c->capturing));
  xf = (float *)slot->scratch;
  wf = (float *)((char *)slot->scratch + w_offset);
  BF16FP32__CUDA_TRY(bf16fp32__fp32_upcast(c->x, sh->ldx, sh->m, c->w, sh->ldw, sh->n, sh->k, xf, wf,
                                           (cudaStream_t)c->stream));
  /* Column-major view: out^T (n x m) = wf (k x n)^T . xf (k x m), both with ld = k. */
  BF16FP32__CUBLAS_TRY(cublasGemmEx(slot->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)sh->n, (int)sh->m,
                                    (int)sh->k, &one, wf, CUDA_R_32F, (int)sh->k, xf, CUDA_R_32F,
                                    (int)sh->k, &zero, c->out, CUDA_R_32F, (int)sh->ldo,
                                    CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT));
cleanup:
  bf16fp32__stream_slot_release(slot);
  return st;
}

static void fp32_forget_stream(void *state, void *stream) {
  fp32_state *s = state;
  bf16fp32__stream_slots_forget(&s->slots, stream);
}

static void fp32_reset(void *state) {
  fp32_state *s = state;
  if (!s) return;
  bf16fp32__stream_slots_destroy(&s->slots);
  free(s);
}

const bf16fp32__backend bf16fp32__backend_fp32 = {
    .name = "fp32",
    .where = BF16FP32_DEVICE,
    .probe = fp32_probe,
    .supports = fp32_supports,
    .prewarm = fp32_prewarm,
    .run = fp32_run,
    .reset = fp32_reset,
    .forget_stream = fp32_forget_stream,
};
