/* The GPU baseline of the benchmark: a direct cublasGemmEx call exactly as MEASURING.md
 * (own handle, 32 MiB workspace, default algorithm), not through the library. */
#ifndef BF16FP32_TOOLS_BENCH_BASELINE_H
#define BF16FP32_TOOLS_BENCH_BASELINE_H

#include <stddef.h>

#include "internal.h"

#define BENCH_BASELINE_NAME "cublas-baseline"

typedef struct bench_baseline bench_baseline;

/* Creates the handle and the workspace on the current device. Returns NULL with the reason
 * in why (also in a build without CUDA). */
bench_baseline *bench_baseline_create(char *why, size_t len);
void bench_baseline_destroy(bench_baseline *b);

/* bf16fp32__candidate callbacks (user = the bench_baseline): run sets the stream and the
 * workspace (host-side only, capture-safe) and calls cublasGemmEx; prewarm does nothing (the
 * measure's eager checked run before the capture loads what cuBLAS loads lazily). */
bf16fp32_status bench_baseline_run(void *b, const bf16fp32__call *call);
bf16fp32_status bench_baseline_prewarm(void *b, const bf16fp32__shape *s, void *stream);

#endif
