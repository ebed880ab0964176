/* `bf16fp32 bench --decode-step MODEL`: one decode step's router and compressor GEMMs in one
 * CUDA graph, auto against direct cuBLAS calls (and the library's cublas backend). */
#ifndef BF16FP32_TOOLS_BENCH_DECODE_H
#define BF16FP32_TOOLS_BENCH_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include "suite.h"

typedef struct bench_decode_args {
  const char *model;      /* "dsv4-flash" or "dsv4-pro" */
  const suite *suite;     /* the loaded suite; entries "<prefix>.*" make the step */
  const int64_t *batch;   /* token counts M */
  int batch_count;
  int replays, warmup;
  int check_rows;
  int filler_kb;      /* > 0: a memory-bound kernel reading this many KB before every GEMM */
  int filler_trigger; /* a bf16fp32_filler_trigger: how it launches under PDL */
} bench_decode_args;

/* The filler trigger named by text ("end", "entry", "none": bf16fp32_filler_trigger), or -1;
 * its name. */
int bench_decode_filler_trigger(const char *text);
const char *bench_decode_filler_trigger_name(int trigger);
/* The filler options' rules, for bench and tune alike: fillers only in a decode step, a trigger
 * only with fillers. NULL when they hold (*trigger, -1 when not given, is then settled to END),
 * else what is wrong. */
const char *bench_decode_filler_rules(bool step, int filler_kb, int *trigger);

/* Entry-name prefix of a model ("flash." for dsv4-flash), or NULL for an unknown model. */
const char *bench_decode_prefix(const char *model);

/* Prints the table on stdout; returns the exit code (0, or 1 on a failure or wrong result). */
int bench_decode(const bench_decode_args *a);

#endif
