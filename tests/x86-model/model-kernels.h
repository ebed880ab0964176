/* What the tests see of the instruction model (x86-model.h): cpu-simd's AVX-512 BF16 and AMX
 * kernels built on it (the backend's sources and signatures, for any x86-64 machine), and the
 * faults its instructions counted. */
#ifndef BF16FP32_MODEL_KERNELS_H
#define BF16FP32_MODEL_KERNELS_H

#include "backends/cpu-simd/cpu-simd.h"

int bf16fp32__model_block_avx512bf16(const bf16fp32__simd_args *a, int64_t m0, int64_t m1,
                                     int64_t n0, int64_t n1, uint16_t *scratch);
/* A call that returns with the tiles still configured counts as a fault: the kernel releases
 * them, so that the thread's next context switch does not save 8 KB of tile data. */
int bf16fp32__model_block_amx(const bf16fp32__simd_args *a, int64_t m0, int64_t m1, int64_t n0,
                              int64_t n1, uint16_t *scratch);

/* Instructions the hardware would have refused (#GP, #UD), counted over all threads since the
 * process started, and the first one's description ("" when none). */
long x86_model_faults(void);
const char *x86_model_first_fault(void);

#endif
