/* A backend variant's text: one configuration of a backend, as 1 to BF16FP32__VARIANT_FIELDS
 * non-negative decimal integers (each below 2^31) joined by '.', at most BF16FP32__VARIANT_LEN - 1
 * characters (e.g. a cuBLASLt algorithm: cublaslt-algo.h). The tuning file names a tuned variant
 * "backend@variant"; what the integers mean is the backend's business. */
#ifndef BF16FP32_VARIANT_H
#define BF16FP32_VARIANT_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

#define BF16FP32__VARIANT_FIELDS 16

/* The fields of text into fields[]; returns their count, or -1 when text is not of that form. */
int bf16fp32__variant_parse(const char *text, int64_t fields[BF16FP32__VARIANT_FIELDS]);
/* Writes count fields (each 0 .. 2^31-1) as a variant text into out; -1 when they are out of
 * range or the text would not fit, 0 otherwise. */
int bf16fp32__variant_format(const int64_t *fields, int count, char out[BF16FP32__VARIANT_LEN]);

#endif
