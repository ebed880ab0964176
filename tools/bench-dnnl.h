/* The CPU baseline of the benchmark: oneDNN's bf16 matmul with fp32 output, timed on the host.
 * Without oneDNN at build time every function reports why and does nothing. */
#ifndef BF16FP32_TOOLS_BENCH_DNNL_H
#define BF16FP32_TOOLS_BENCH_DNNL_H

#include <stddef.h>
#include <stdint.h>

/* 1 when oneDNN was found at build time and has a bf16 matmul for this CPU; 0 with the reason. */
int bench_dnnl_available(char *why, size_t len);

/* One cell's operands and their fp64 oracle, made once and timed as often as asked (the bench
 * times the baseline before and after the candidates: the oracle costs more than a timing). */
typedef struct bench_dnnl_cell bench_dnnl_cell;

/* Makes out[m,n] (f32) = x[m,k] (bf16) . w[n,k]^T (bf16) ready to time: random x and w in the
 * type this CPU's matmul takes, copied over the library's host rotation (measure.h), and the
 * fp64 oracle of check_rows sampled rows (0: all). Returns 0 with *cell set, or -1 with *cell
 * NULL and the reason in why. */
int bench_dnnl_cell_create(bench_dnnl_cell **cell, int64_t m, int64_t n, int64_t k,
                           int check_rows, char *why, size_t len);

/* NULL is allowed. */
void bench_dnnl_cell_free(bench_dnnl_cell *cell);

/* The cell's operand copies and oracle as a library host measure takes them (measure.h), so that
 * the candidates are timed over the same rotation: 0 where the matmul reads bf16; -1 where it
 * reads f32 (the weight copies are then not the library's type) or without oneDNN. */
struct bf16fp32__host_operands;
int bench_dnnl_cell_operands(const bench_dnnl_cell *cell, struct bf16fp32__host_operands *ops);

/* bench_dnnl_time's answer when oneDNN's output is wrong (why says where). */
#define BENCH_DNNL_WRONG (-2)

/* Times the cell with oneDNN's matmul: weights are w[N,K] row-major seen as [K,N] through
 * strides, like the library's calls. The primitive is created for the shape with `threads`
 * threads; its first call, out poisoned, is checked against the cell's oracle, as the bench
 * checks every candidate, and *worst_ratio gets the worst |error| / bound; then a few warm-up
 * calls and `reps` timed calls walking the copies; *median_us gets the median. Returns 0 (why
 * then names the implementation oneDNN picked, e.g. "brg:avx512_core_bf16"), BENCH_DNNL_WRONG
 * for a wrong result or -1 for a failure, with the reason in why. */
int bench_dnnl_time(bench_dnnl_cell *cell, int threads, int reps, double *median_us,
                    double *worst_ratio, char *why, size_t len);

#endif
