/* The step's fillers (step.h): how one launches, and the launcher the CUDA file defines. */
#ifndef BF16FP32_STEP_FILLER_H
#define BF16FP32_STEP_FILLER_H

#include <stddef.h>

#include "bf16fp32.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BF16FP32__FILLER_THREADS 256
#define BF16FP32__FILLER_BLOCKS_PER_SM 4

/* Launches the filler over bytes (a multiple of 16) at src on stream as trigger (a
 * bf16fp32_filler_trigger, bf16fp32.h) says; returns a cudaError_t. */
int bf16fp32__filler_launch(const void *src, size_t bytes, unsigned *sink, int blocks, int trigger,
                            int pdl, void *stream);

#ifdef __cplusplus
}
#endif

#endif
