/* cuBLASLt plans (matmul descriptor, the three layouts, the algorithm) in a fixed-capacity
 * table keyed by the shape and the tuned variant, so that a call creates no descriptor. */
#ifndef BF16FP32_CUBLASLT_PLANS_H
#define BF16FP32_CUBLASLT_PLANS_H

#include <pthread.h>
#include <stdbool.h>

#include <cublasLt.h>

#include "internal.h"

/* Table entries; shapes beyond 3/4 of them get a plan built and freed per call (outside capture). */
/* 4096: the tuner builds a plan per candidate algorithm (up to 8 per shape and M bucket). */
#define BF16FP32__LT_PLANS_CAP 4096

typedef struct bf16fp32__lt_plan {
  bf16fp32__shape key;
  char variant[BF16FP32__VARIANT_LEN]; /* with key: the tuned algorithm asked for, "" for none */
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

/* Copies the plan of shape s and variant (cublaslt-algo.h; NULL or "" for the heuristic's
 * choice) into *plan. A missing plan is built (descriptors, the variant's algorithm where
 * cuBLASLt accepts it for s, else the heuristic's, with at most workspace_bytes of workspace, on
 * `device`) when may_build, else NOT_PREWARMED. *owned is true when the table had no room: the
 * caller frees the plan with bf16fp32__lt_plan_free. */
bf16fp32_status bf16fp32__lt_plans_get(bf16fp32__lt_plans *t, cublasLtHandle_t lt, int device,
                                       size_t workspace_bytes, const bf16fp32__shape *s,
                                       const char *variant, bool may_build, bf16fp32__lt_plan *plan,
                                       bool *owned);
/* The heuristic's other candidates for s (up to max, at most 16: its 2nd, 3rd, ... choices that
 * fit the workspace and s's alignment, as variant texts); the backend's `variants` op. */
int bf16fp32__lt_variants(cublasLtHandle_t lt, size_t workspace_bytes, const bf16fp32__shape *s,
                          char (*names)[BF16FP32__VARIANT_LEN], int max);
void bf16fp32__lt_plan_free(bf16fp32__lt_plan *plan);

#endif
