/* The fp64 dot product shared by the oracle and the cpu-ref backend. */
#ifndef BF16FP32_ORACLE_H
#define BF16FP32_ORACLE_H

#include <stdint.h>

/* Sum of x[i]*w[i] over k bf16 values in fp64; *absdot (may be NULL) gets the sum of |x[i]*w[i]|. */
double bf16fp32__dot_f64(const uint16_t *x, const uint16_t *w, int64_t k, double *absdot);

#endif
