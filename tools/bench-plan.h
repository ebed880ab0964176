/* What a `bf16fp32 bench` table run times: the library's candidates (backends, then auto),
 * the vendor baseline, and the suite's distinct (N, K). */
#ifndef BF16FP32_TOOLS_BENCH_PLAN_H
#define BF16FP32_TOOLS_BENCH_PLAN_H

#include "bench-args.h"
#include "bench-baseline.h"
#include "bf16fp32.h"
#include "dispatch.h"
#include "measure.h"
#include "suite.h"

#define BENCH_MAX_CANDS (BF16FP32__MAX_BACKENDS + 2)
#define BENCH_ONEDNN_NAME "onednn-baseline"

typedef struct lib_cand {
  bf16fp32_context *ctx;
  int index; /* registry index; -1: auto */
} lib_cand;

/* What is timed in this run: names in table order, the library ones with their user data. */
typedef struct bench_plan {
  bf16fp32_location where;
  int count;                        /* library candidates (backends, then auto) */
  const char *name[BENCH_MAX_CANDS];
  lib_cand lib[BENCH_MAX_CANDS];
  int has_auto;
  bench_baseline *cublas;           /* GPU baseline, or NULL */
  int dnnl;                         /* CPU baseline available */
  char baseline_why[256];           /* why there is no baseline */
  const char *baseline_name;
} bench_plan;

/* A library candidate's calls (user: its lib_cand), for the measure. */
bf16fp32_status bench_lib_run(void *u, const bf16fp32__call *call);
bf16fp32_status bench_lib_prewarm(void *u, const bf16fp32__shape *s, void *stream);

/* Checks the --backends names against the registry (no context needed): 0, or 2 (reported). */
int bench_check_backend_names(const char *list);

/* The candidates of a run in mode where, and its baseline (created here: the caller destroys
 * p->cublas). Backends left out say why on stderr. */
void bench_build_plan(bench_plan *p, bf16fp32_context *ctx, const bench_opts *o,
                      bf16fp32_location where);

typedef struct bench_shape {
  char label[160]; /* the suite names sharing this (N, K) */
  int64_t n, k;
} bench_shape;

/* The distinct (N, K) of the entries that filter (--shapes; empty: all) selects, in suite
 * order. Returns the count, or -1 when a name matches nothing (reported). */
int bench_collect_shapes(const suite *s, const char *filter, bench_shape *out);

#endif
