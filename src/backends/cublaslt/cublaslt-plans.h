/* cuBLASLt plans (matmul descriptor, the three layouts, the heuristic's algorithm) in a
 * fixed-capacity table keyed by the shape, so that a call creates no descriptor. */
#ifndef BF16FP32_CUBLASLT_PLANS_H
#define BF16FP32_CUBLASLT_PLANS_H

#include <pthread.h>
#include <stdbool.h>

#include <cublasLt.h>

#include "internal.h"

/* Table entries; shapes beyond 3/4 of them get a plan built and freed per call (outside capture). */
#define BF16FP32__LT_PLANS_CAP 1024

typedef struct bf16fp32__lt_plan {
  bf16fp32__shape key;
  bool used;                   /* table entry in use */
  bool runnable;               /* false: the heuristic found no algorithm: decline the shape */
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t a;    /* w: k x n, ld ldw, transposed by op */
  cublasLtMatrixLayout_t b;    /* x: k x m, ld ldx */
  cublasLtMatrixLayout_t c;    /* out: n x m, ld ldo (C and D) */
  cublasLtMatmulAlgo_t algo;
} bf16fp32__lt_plan;

typedef struct bf16fp32__lt_plans {
  pthread_mutex_t lock;
  int count;
  bf16fp32__lt_plan entry[BF16FP32__LT_PLANS_CAP]; /* open addressing, linear probing */
} bf16fp32__lt_plans;

bf16fp32_status bf16fp32__lt_plans_init(bf16fp32__lt_plans *t);
void bf16fp32__lt_plans_destroy(bf16fp32__lt_plans *t);

/* Copies the plan of shape s into *plan. A missing plan is built (descriptors and heuristic,
 * with at most workspace_bytes of workspace, on `device`) when may_build, else NOT_PREWARMED. *owned is
 * true when the table had no room: the caller frees the plan with bf16fp32__lt_plan_free. */
bf16fp32_status bf16fp32__lt_plans_get(bf16fp32__lt_plans *t, cublasLtHandle_t lt, int device,
                                       size_t workspace_bytes, const bf16fp32__shape *s,
                                       bool may_build, bf16fp32__lt_plan *plan, bool *owned);
void bf16fp32__lt_plan_free(bf16fp32__lt_plan *plan);

#endif
