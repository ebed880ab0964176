/* The cuBLASLt plan table: building a plan for a shape (descriptors, alignment-aware heuristic)
 * and finding it again by the shape's bytes. */
#include <stdint.h>
#include <string.h>

#include "cublaslt-plans.h"
#include "cuda-stream-slots.h" /* BF16FP32__CUBLAS_NOTE */
#include "device.h"

bf16fp32_status bf16fp32__lt_plans_init(bf16fp32__lt_plans *t) {
  memset(t, 0, sizeof *t);
  if (pthread_mutex_init(&t->lock, NULL) != 0)
    return bf16fp32__fail(BF16FP32_INTERNAL, "pthread_mutex_init failed");
  return BF16FP32_OK;
}

void bf16fp32__lt_plan_free(bf16fp32__lt_plan *p) {
  if (p->c) BF16FP32__CUBLAS_NOTE(cublasLtMatrixLayoutDestroy(p->c));
  if (p->b) BF16FP32__CUBLAS_NOTE(cublasLtMatrixLayoutDestroy(p->b));
  if (p->a) BF16FP32__CUBLAS_NOTE(cublasLtMatrixLayoutDestroy(p->a));
  if (p->op) BF16FP32__CUBLAS_NOTE(cublasLtMatmulDescDestroy(p->op));
  memset(p, 0, sizeof *p);
}

void bf16fp32__lt_plans_destroy(bf16fp32__lt_plans *t) {
  for (int i = 0; i < BF16FP32__LT_PLANS_CAP; i++)
    if (t->entry[i].used) bf16fp32__lt_plan_free(&t->entry[i]);
  t->count = 0;
  pthread_mutex_destroy(&t->lock);
}

/* FNV-1a over the key's bytes (the shape has no padding). */
static uint32_t shape_hash(const bf16fp32__shape *s) {
  const unsigned char *b = (const unsigned char *)s;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < sizeof *s; i++) h = (h ^ b[i]) * 1099511628211ull;
  return (uint32_t)(h ^ (h >> 32));
}

/* Descriptors for out^T = w^T . x^T in column-major terms, and the heuristic's first choice
 * among algorithms that fit the workspace and the pointers' alignment. */
static bf16fp32_status plan_build(cublasLtHandle_t lt, size_t workspace_bytes,
                                  const bf16fp32__shape *s, bf16fp32__lt_plan *p) {
  bf16fp32_status st = BF16FP32_OK;
  cublasLtMatmulPreference_t pref = NULL;
  cublasLtMatmulHeuristicResult_t result;
  int found = 0;
  const int32_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
  const uint64_t ws = workspace_bytes;
  /* The heuristic assumes 256-byte aligned pointers unless told otherwise; s->align divides all
   * three pointers, and out is at least float-aligned (checked by the entry point). */
  const uint32_t align_in = (uint32_t)s->align;
  const uint32_t align_out = s->align < 4 ? 4u : (uint32_t)s->align;
  memset(p, 0, sizeof *p);
  memset(&result, 0, sizeof result);
  p->key = *s;
  BF16FP32__CUBLAS_TRY(cublasLtMatmulDescCreate(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  BF16FP32__CUBLAS_TRY(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a,
                                                      sizeof trans_a));
  BF16FP32__CUBLAS_TRY(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b,
                                                      sizeof trans_b));
  BF16FP32__CUBLAS_TRY(cublasLtMatrixLayoutCreate(&p->a, CUDA_R_16BF, (uint64_t)s->k, (uint64_t)s->n, s->ldw));
  BF16FP32__CUBLAS_TRY(cublasLtMatrixLayoutCreate(&p->b, CUDA_R_16BF, (uint64_t)s->k, (uint64_t)s->m, s->ldx));
  BF16FP32__CUBLAS_TRY(cublasLtMatrixLayoutCreate(&p->c, CUDA_R_32F, (uint64_t)s->n, (uint64_t)s->m, s->ldo));
  BF16FP32__CUBLAS_TRY(cublasLtMatmulPreferenceCreate(&pref));
  BF16FP32__CUBLAS_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                            &ws, sizeof ws));
  BF16FP32__CUBLAS_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                                            &align_in, sizeof align_in));
  BF16FP32__CUBLAS_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                                            &align_in, sizeof align_in));
  BF16FP32__CUBLAS_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                                                            &align_out, sizeof align_out));
  BF16FP32__CUBLAS_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                                                            &align_out, sizeof align_out));
  cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt, p->op, p->a, p->b, p->c, p->c, pref, 1,
                                                     &result, &found);
  /* NOT_SUPPORTED (or no result) means no algorithm for this shape: a plan that declines, not
   * a failure to quarantine. */
  if (hs != CUBLAS_STATUS_SUCCESS && hs != CUBLAS_STATUS_NOT_SUPPORTED) {
    st = bf16fp32__cublas_status(hs, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__);
    goto cleanup;
  }
  p->runnable = hs == CUBLAS_STATUS_SUCCESS && found > 0 && result.state == CUBLAS_STATUS_SUCCESS &&
                result.workspaceSize <= workspace_bytes;
  if (p->runnable) p->algo = result.algo;
cleanup:
  if (pref) BF16FP32__CUBLAS_NOTE(cublasLtMatmulPreferenceDestroy(pref));
  if (st != BF16FP32_OK) bf16fp32__lt_plan_free(p);
  return st;
}

bf16fp32_status bf16fp32__lt_plans_get(bf16fp32__lt_plans *t, cublasLtHandle_t lt, int device,
                                       size_t workspace_bytes, const bf16fp32__shape *s,
                                       bool may_build, bf16fp32__lt_plan *plan, bool *owned) {
  bf16fp32_status st = BF16FP32_OK;
  int prev = -1;
  uint32_t i = shape_hash(s) % BF16FP32__LT_PLANS_CAP;
  *owned = false;
  pthread_mutex_lock(&t->lock);
  /* Never full (count stays below 3/4), so the probe ends at an unused entry. */
  while (t->entry[i].used && memcmp(&t->entry[i].key, s, sizeof *s) != 0)
    i = (i + 1) % BF16FP32__LT_PLANS_CAP;
  if (t->entry[i].used) {
    *plan = t->entry[i];
  } else if (!may_build) {
    st = bf16fp32__fail(BF16FP32_NOT_PREWARMED,
                        "no cuBLASLt plan for m=%lld n=%lld k=%lld during graph capture: prewarm it",
                        (long long)s->m, (long long)s->n, (long long)s->k);
  } else if ((st = bf16fp32__device_enter(device, &prev)) == BF16FP32_OK &&
             (st = plan_build(lt, workspace_bytes, s, plan)) == BF16FP32_OK) {
    /* Built under the lock: it happens once per shape, and keeps two builders of one shape
     * from both inserting. */
    if (t->count < BF16FP32__LT_PLANS_CAP / 4 * 3) {
      plan->used = true;
      t->entry[i] = *plan;
      t->count++;
    } else {
      *owned = true;
    }
  }
  bf16fp32__device_leave(prev);
  pthread_mutex_unlock(&t->lock);
  return st;
}
