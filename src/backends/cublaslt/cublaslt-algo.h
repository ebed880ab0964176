/* A cuBLASLt algorithm as a variant text (variant.h): its nine configuration attributes
 * "id.tile.stages.splitk.reduction.swizzle.custom.inner.cluster", so that the tuner can time the
 * heuristic's other candidates and the tuning file can name the fastest. */
#ifndef BF16FP32_CUBLASLT_ALGO_H
#define BF16FP32_CUBLASLT_ALGO_H

#include <stdbool.h>

#include <cublasLt.h>

#include "internal.h"

/* The variant text of algo; false when an attribute cannot be read or the text does not fit. */
bool bf16fp32__lt_algo_to_variant(const cublasLtMatmulAlgo_t *algo, char out[BF16FP32__VARIANT_LEN]);
/* The algorithm a variant text names, for this library's types (bf16 x bf16 -> fp32, fp32
 * compute); false when the text is not nine fields or cuBLASLt refuses a value. Whether it runs a
 * given shape is cublasLtMatmulAlgoCheck's answer. */
bool bf16fp32__lt_algo_from_variant(cublasLtHandle_t lt, const char *variant, cublasLtMatmulAlgo_t *algo);

#endif
