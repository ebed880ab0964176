/* cpu-simd's AVX-512 BF16 kernel, its source as it is, on the instruction model. */
#include "x86-model.h"

#define bf16fp32__simd_block_avx512bf16 bf16fp32__model_block_avx512bf16
#include "backends/cpu-simd/kernel-avx512bf16.c"
