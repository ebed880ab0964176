/* A kernel that writes x while the next kernel, launched with programmatic dependent launch,
 * runs its prologue: for tests of what a kernel may read before griddepcontrol.wait. */
#ifndef BF16FP32_PDL_PRODUCER_H
#define BF16FP32_PDL_PRODUCER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Launches on stream (a cudaStream_t) one small kernel that first lets a dependent launch start,
 * then waits spin_us microseconds and copies n 16-bit values src -> dst (device pointers). 0 on
 * success. */
int sup_gpu_slow_copy_u16(void *dst, const void *src, size_t n, unsigned spin_us, void *stream);

#ifdef __cplusplus
}
#endif

#endif
