/* cublas: one cublasGemmEx call (bf16 inputs, fp32 output, fp32 compute), with a cuBLAS handle
 * and an explicit workspace per stream so that graph capture never allocates. */
#include <stdint.h>
#include <stdlib.h>

#include "cuda-stream-slots.h"

typedef struct cublas_state {
  bf16fp32__stream_slots slots; /* {handle, workspace} per stream */
} cublas_state;

static bf16fp32_status cublas_probe(const bf16fp32__config *cfg, void **state, char *why, size_t len) {
  bf16fp32_status st;
  cublas_state *s = calloc(1, sizeof *s);
  *state = NULL;
  if (!s) return bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "cublas state");
  /* Default math: no TF32 is involved with bf16 inputs and an fp32 compute type. */
  st = bf16fp32__stream_slots_init(&s->slots, cfg->device, cfg->workspace_bytes, true,
                                   CUBLAS_DEFAULT_MATH, why, len);
  if (st != BF16FP32_OK) {
    free(s);
    return st;
  }
  *state = s;
  return BF16FP32_OK;
}

static bool cublas_supports(const void *state, const bf16fp32__shape *s) {
  (void)state;
  /* cublasGemmEx takes int sizes and leading dimensions. */
  return s->where == BF16FP32_DEVICE && s->m <= INT32_MAX && s->n <= INT32_MAX &&
         s->k <= INT32_MAX && s->ldx <= INT32_MAX && s->ldw <= INT32_MAX && s->ldo <= INT32_MAX;
}

static bf16fp32_status cublas_prewarm(void *state, const bf16fp32__shape *shape, const char *variant,
                                      void *stream) {
  (void)variant; /* no variants */
  cublas_state *s = state;
  bf16fp32__stream_slot *slot = NULL;
  (void)shape; /* cuBLAS picks its kernel per call; only the stream's resources are lazy */
  bf16fp32_status st = bf16fp32__stream_slots_acquire(&s->slots, stream, true, &slot);
  bf16fp32__stream_slot_release(slot);
  return st;
}

static bf16fp32_status cublas_run(void *state, const bf16fp32__call *c) {
  bf16fp32_status st = BF16FP32_OK;
  cublas_state *s = state;
  const bf16fp32__shape *sh = &c->shape;
  bf16fp32__stream_slot *slot = NULL;
  const float one = 1.0f, zero = 0.0f;
  BF16FP32__TRY(bf16fp32__stream_slots_acquire(&s->slots, c->stream, !c->capturing, &slot));
  /* Column-major view: out^T (n x m, ld ldo) = w (k x n, ld ldw)^T . x^T (k x m, ld ldx). */
  BF16FP32__CUBLAS_TRY(cublasGemmEx(slot->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)sh->n, (int)sh->m,
                                    (int)sh->k, &one, c->w, CUDA_R_16BF, (int)sh->ldw, c->x,
                                    CUDA_R_16BF, (int)sh->ldx, &zero, c->out, CUDA_R_32F,
                                    (int)sh->ldo, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
cleanup:
  bf16fp32__stream_slot_release(slot);
  return st;
}

static void cublas_forget_stream(void *state, void *stream) {
  cublas_state *s = state;
  bf16fp32__stream_slots_forget(&s->slots, stream);
}

static void cublas_reset(void *state) {
  cublas_state *s = state;
  if (!s) return;
  bf16fp32__stream_slots_destroy(&s->slots);
  free(s);
}

const bf16fp32__backend bf16fp32__backend_cublas = {
    .name = "cublas",
    .where = BF16FP32_DEVICE,
    .probe = cublas_probe,
    .supports = cublas_supports,
    .prewarm = cublas_prewarm,
    .run = cublas_run,
    .reset = cublas_reset,
    .forget_stream = cublas_forget_stream,
};
