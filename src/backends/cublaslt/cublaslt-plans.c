/* The cuBLASLt plan table: building a plan for a shape and variant (descriptors, the variant's
 * algorithm or the alignment-aware heuristic's) and finding it again by those bytes; the
 * heuristic's other candidates for the tuner. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cublaslt-algo.h"
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

/* FNV-1a over the key's bytes: the shape (no padding) and the variant text. */
static uint32_t key_hash(const bf16fp32__shape *s, const char *variant) {
  const unsigned char *b = (const unsigned char *)s;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < sizeof *s; i++) h = (h ^ b[i]) * 1099511628211ull;
  for (const char *c = variant; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
  return (uint32_t)(h ^ (h >> 32));
}

static bool same_key(const bf16fp32__lt_plan *p, const bf16fp32__shape *s, const char *variant) {
  return memcmp(&p->key, s, sizeof *s) == 0 && strcmp(p->variant, variant) == 0;
}

/* Descriptors for out^T = w^T . x^T in column-major terms. */
static bf16fp32_status plan_descriptors(const bf16fp32__shape *s, bf16fp32__lt_plan *p) {
  bf16fp32_status st = BF16FP32_OK;
  const int32_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
  BF16FP32__CUBLAS_TRY(cublasLtMatmulDescCreate(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  BF16FP32__CUBLAS_TRY(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a,
                                                      sizeof trans_a));
  BF16FP32__CUBLAS_TRY(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b,
                                                      sizeof trans_b));
  BF16FP32__CUBLAS_TRY(cublasLtMatrixLayoutCreate(&p->a, CUDA_R_16BF, (uint64_t)s->k, (uint64_t)s->n, s->ldw));
  BF16FP32__CUBLAS_TRY(cublasLtMatrixLayoutCreate(&p->b, CUDA_R_16BF, (uint64_t)s->k, (uint64_t)s->m, s->ldx));
  BF16FP32__CUBLAS_TRY(cublasLtMatrixLayoutCreate(&p->c, CUDA_R_32F, (uint64_t)s->n, (uint64_t)s->m, s->ldo));
cleanup:
  return st;
}

/* The heuristic's first `count` algorithms for p's descriptors among those that fit the
 * workspace and the pointers' alignment; *found = 0 when it has none (NOT_SUPPORTED). */
static bf16fp32_status heuristic(cublasLtHandle_t lt, size_t workspace_bytes, const bf16fp32__shape *s,
                                 const bf16fp32__lt_plan *p, int count,
                                 cublasLtMatmulHeuristicResult_t *result, int *found) {
  bf16fp32_status st = BF16FP32_OK;
  cublasLtMatmulPreference_t pref = NULL;
  const uint64_t ws = workspace_bytes;
  /* The heuristic assumes 256-byte aligned pointers unless told otherwise; s->align divides all
   * three pointers, and out is at least float-aligned (checked by the entry point). */
  const uint32_t align_in = (uint32_t)s->align;
  const uint32_t align_out = s->align < 4 ? 4u : (uint32_t)s->align;
  *found = 0;
  memset(result, 0, (size_t)count * sizeof *result);
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
  cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt, p->op, p->a, p->b, p->c, p->c, pref, count,
                                                     result, found);
  /* NOT_SUPPORTED (or no result) means no algorithm for this shape: a plan that declines, not
   * a failure to quarantine. */
  if (hs == CUBLAS_STATUS_NOT_SUPPORTED) *found = 0;
  else if (hs != CUBLAS_STATUS_SUCCESS)
    st = bf16fp32__cublas_status(hs, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__);
cleanup:
  if (pref) BF16FP32__CUBLAS_NOTE(cublasLtMatmulPreferenceDestroy(pref));
  return st;
}

/* Whether the heuristic's result i can run here. */
static bool usable_result(const cublasLtMatmulHeuristicResult_t *r, size_t workspace_bytes) {
  return r->state == CUBLAS_STATUS_SUCCESS && r->workspaceSize <= workspace_bytes;
}

/* A tuned variant runs where cuBLASLt accepts it for this shape: the tuner's operands were
 * 16-byte aligned (bf16fp32__make_shape caps align at 16), so other alignments keep the heuristic. */
static bool tuned_algo(cublasLtHandle_t lt, size_t workspace_bytes, const bf16fp32__shape *s,
                       const char *variant, bf16fp32__lt_plan *p) {
  cublasLtMatmulHeuristicResult_t check;
  memset(&check, 0, sizeof check);
  return variant[0] && s->align == 16 && bf16fp32__lt_algo_from_variant(lt, variant, &p->algo) &&
         cublasLtMatmulAlgoCheck(lt, p->op, p->a, p->b, p->c, p->c, &p->algo, &check) ==
             CUBLAS_STATUS_SUCCESS &&
         check.workspaceSize <= workspace_bytes;
}

/* The plan of (s, variant): descriptors, then the variant's algorithm where cuBLASLt accepts it,
 * else the heuristic's first choice. */
static bf16fp32_status plan_build(cublasLtHandle_t lt, size_t workspace_bytes, const bf16fp32__shape *s,
                                  const char *variant, bf16fp32__lt_plan *p) {
  bf16fp32_status st = BF16FP32_OK;
  cublasLtMatmulHeuristicResult_t result;
  int found = 0;
  memset(p, 0, sizeof *p);
  p->key = *s;
  snprintf(p->variant, sizeof p->variant, "%s", variant);
  BF16FP32__TRY(plan_descriptors(s, p));
  if (tuned_algo(lt, workspace_bytes, s, variant, p)) {
    p->runnable = true;
  } else {
    BF16FP32__TRY(heuristic(lt, workspace_bytes, s, p, 1, &result, &found));
    p->runnable = found > 0 && usable_result(&result, workspace_bytes);
    if (p->runnable) p->algo = result.algo;
  }
cleanup:
  if (st != BF16FP32_OK) bf16fp32__lt_plan_free(p);
  return st;
}

int bf16fp32__lt_variants(cublasLtHandle_t lt, size_t workspace_bytes, const bf16fp32__shape *s,
                          char (*names)[BF16FP32__VARIANT_LEN], int max) {
  enum { MOST = 16 };
  cublasLtMatmulHeuristicResult_t result[MOST + 1];
  bf16fp32__lt_plan p;
  int found = 0, count = 0;
  char first[BF16FP32__VARIANT_LEN] = "";
  memset(&p, 0, sizeof p);
  if (max > MOST) max = MOST;
  if (max < 1 || plan_descriptors(s, &p) != BF16FP32_OK ||
      heuristic(lt, workspace_bytes, s, &p, max + 1, result, &found) != BF16FP32_OK)
    found = 0;
  /* The first is the backend's default: it is timed under its plain name. */
  if (found > 0 && usable_result(&result[0], workspace_bytes))
    bf16fp32__lt_algo_to_variant(&result[0].algo, first);
  for (int i = 1; i < found && count < max; i++) {
    char text[BF16FP32__VARIANT_LEN];
    if (!usable_result(&result[i], workspace_bytes) || !bf16fp32__lt_algo_to_variant(&result[i].algo, text) ||
        strcmp(text, first) == 0)
      continue;
    bool seen = false;
    for (int j = 0; j < count && !seen; j++) seen = strcmp(names[j], text) == 0;
    if (!seen) memcpy(names[count++], text, sizeof text);
  }
  bf16fp32__lt_plan_free(&p);
  return count;
}

bf16fp32_status bf16fp32__lt_plans_get(bf16fp32__lt_plans *t, cublasLtHandle_t lt, int device,
                                       size_t workspace_bytes, const bf16fp32__shape *s,
                                       const char *variant, bool may_build, bf16fp32__lt_plan *plan,
                                       bool *owned) {
  bf16fp32_status st = BF16FP32_OK;
  int prev = -1;
  /* A variant too long to be a key cannot be a valid one: the heuristic's plan serves it. */
  if (!variant || strlen(variant) >= BF16FP32__VARIANT_LEN) variant = "";
  uint32_t i = key_hash(s, variant) % BF16FP32__LT_PLANS_CAP;
  *owned = false;
  pthread_mutex_lock(&t->lock);
  /* Never full (count stays below 3/4), so the probe ends at an unused entry. */
  while (t->entry[i].used && !same_key(&t->entry[i], s, variant)) i = (i + 1) % BF16FP32__LT_PLANS_CAP;
  if (t->entry[i].used) {
    *plan = t->entry[i];
  } else if (!may_build) {
    st = bf16fp32__fail(BF16FP32_NOT_PREWARMED,
                        "no cuBLASLt plan for m=%lld n=%lld k=%lld during graph capture: prewarm it",
                        (long long)s->m, (long long)s->n, (long long)s->k);
  } else if ((st = bf16fp32__device_enter(device, &prev)) == BF16FP32_OK &&
             (st = plan_build(lt, workspace_bytes, s, variant, plan)) == BF16FP32_OK) {
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
