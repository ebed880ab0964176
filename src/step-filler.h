/* The step's fillers (step.h): how one launches, and the launcher the CUDA file defines. */
#ifndef BF16FP32_STEP_FILLER_H
#define BF16FP32_STEP_FILLER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Under PDL a filler waits for its predecessor at entry and lets the next kernel launch once
 * its reads are done (END, as an engine's PDL-aware kernels mostly do) or right after its wait
 * (ENTRY, as ours do); PLAIN: launched without the attribute, whatever the context's option. */
typedef enum bf16fp32__filler_trigger {
  BF16FP32__FILLER_END,
  BF16FP32__FILLER_ENTRY,
  BF16FP32__FILLER_PLAIN
} bf16fp32__filler_trigger;

#define BF16FP32__FILLER_THREADS 256
#define BF16FP32__FILLER_BLOCKS_PER_SM 4

/* Launches the filler over bytes (a multiple of 16) at src on stream; returns a cudaError_t. */
int bf16fp32__filler_launch(const void *src, size_t bytes, unsigned *sink, int blocks, int trigger,
                            int pdl, void *stream);

#ifdef __cplusplus
}
#endif

#endif
