/* The floor F of MEASURING.md, in one place for the library's benchmark (measure.c) and the GPU
 * probes in bench/: the bytes at 4.3 TB/s or the flops at 790 TFLOP/s, whichever takes longer,
 * plus one empty kernel node of a replayed graph (0.56 us). Microseconds. */
#ifndef BF16FP32_MEASURE_FLOOR_H
#define BF16FP32_MEASURE_FLOOR_H

#include <stdint.h>

static inline double bf16fp32__floor_us(int64_t m, int64_t n, int64_t k) {
  double bytes = 2.0 * ((double)m * (double)k + (double)n * (double)k) + 4.0 * (double)m * (double)n;
  double flops = 2.0 * (double)m * (double)n * (double)k;
  double mem_us = bytes / 4.3e6;   /* 4.3 TB/s = 4.3e6 bytes per microsecond */
  double math_us = flops / 790e6;  /* 790 TFLOP/s */
  return (mem_us > math_us ? mem_us : math_us) + 0.56;
}

/* smallm's target on the H200 (issue 4), for the bench and the GPU probes: 1.3 F at M <= 16,
 * 1.5 F at M <= 64, and at any M the speed-up over cuBLAS's time in the same run (1.5x at
 * N <= 512, 1.2x above), whichever is smaller. The bench writes it to its CSV (target_us), where
 * tools/targets-table.py reads it. */
static inline double bf16fp32__target_us(int64_t m, int64_t n, int64_t k, double cublas_us) {
  double target = cublas_us / (n <= 512 ? 1.5 : 1.2);
  double f = bf16fp32__floor_us(m, n, k);
  if (m <= 16 && 1.3 * f < target) target = 1.3 * f;
  else if (m > 16 && m <= 64 && 1.5 * f < target) target = 1.5 * f;
  return target;
}

#endif
