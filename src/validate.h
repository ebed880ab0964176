/* Argument validation of the public entry points. */
#ifndef BF16FP32_VALIDATE_H
#define BF16FP32_VALIDATE_H

#include "internal.h"

/* OK for a valid call (also for m == 0 or n == 0, where pointers are not looked at, and for
 * k == 0, where x and w are not). device: the context's CUDA device (-1: none), against which
 * pointer kinds are checked: host memory for a host call, memory of that device (or managed)
 * for a device call. */
bf16fp32_status bf16fp32__validate(bf16fp32_location where, int64_t m, int64_t n, int64_t k,
                                   const uint16_t *x, int64_t ldx, const uint16_t *w, int64_t ldw,
                                   const float *out, int64_t ldo, int device);

/* The sizes alone, for entry points that take a shape without operands (prewarm, select):
 * BAD_SIZE where bf16fp32__validate would refuse them in a contiguous call (ld = k, out ld = n):
 * a negative size, or a matrix past 2^56 elements. */
bf16fp32_status bf16fp32__validate_contiguous(int64_t m, int64_t n, int64_t k);

#endif
