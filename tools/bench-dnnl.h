/* The CPU baseline of the benchmark: oneDNN's bf16 matmul with fp32 output, timed on the host.
 * Without oneDNN at build time both functions report why and do nothing. */
#ifndef BF16FP32_TOOLS_BENCH_DNNL_H
#define BF16FP32_TOOLS_BENCH_DNNL_H

#include <stddef.h>
#include <stdint.h>

/* 1 when oneDNN was found at build time and has a bf16 matmul for this CPU; 0 with the reason. */
int bench_dnnl_available(char *why, size_t len);

/* bench_dnnl_time's answer when oneDNN's output is wrong (why says where). */
#define BENCH_DNNL_WRONG (-2)

/* Times out[m,n] (f32) = x[m,k] (bf16) . w[n,k]^T (bf16) with oneDNN's matmul: weights are
 * w[N,K] row-major seen as [K,N] through strides, like the library's calls. The primitive is
 * created once for the shape with `threads` threads; its first call, out poisoned, is checked
 * against the fp64 oracle on check_rows sampled rows (0: all), as the bench checks every
 * candidate, and *worst_ratio gets the worst |error| / bound; then a few warm-up calls and
 * `reps` timed calls on random data; *median_us gets the median. Returns 0 (why then names the
 * implementation oneDNN picked, e.g. "brg:avx512_core_bf16"), BENCH_DNNL_WRONG for a wrong
 * result or -1 for a failure, with the reason in why. */
int bench_dnnl_time(int64_t m, int64_t n, int64_t k, int threads, int reps, int check_rows,
                    double *median_us, double *worst_ratio, char *why, size_t len);

#endif
