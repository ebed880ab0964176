/* The few CUDA runtime queries the entry points and the dispatcher need; a build without CUDA
 * gets versions that report no device (device-none.c). */
#ifndef BF16FP32_DEVICE_H
#define BF16FP32_DEVICE_H

#include "internal.h"

/* Number of usable CUDA devices (0 without CUDA or a driver) and the current one. */
int bf16fp32__device_count(void);
int bf16fp32__device_current(void);
/* cc major/minor, SM count and name of a device; non-OK without one. */
bf16fp32_status bf16fp32__device_describe(int ordinal, int *cc_major, int *cc_minor, int *sms,
                                          char *name, size_t name_len);

/* Makes `device` current for this thread; *prev gets the one to restore with device_leave. */
bf16fp32_status bf16fp32__device_enter(int device, int *prev);
void bf16fp32__device_leave(int prev);

/* Whether stream is capturing a graph (active capture: true); outside a capture, BAD_OPTION when
 * it is a stream of another device than `device` (launches there would fail in every backend). */
bf16fp32_status bf16fp32__stream_check(void *stream, int device, bool *capturing);

/* Sets this thread's capture mode to relaxed and returns the one to restore: the lazy creations
 * (allocations, handles) of a call on a stream that is not capturing must neither fail nor
 * invalidate another thread's capture in global mode (PyTorch's default). */
int bf16fp32__capture_relax(void);
void bf16fp32__capture_restore(int mode);

/* Where p points: 0 host (plain or pinned), 1 device, 2 managed (usable by both); *device the
 * ordinal of device memory (-1 otherwise). */
bf16fp32_status bf16fp32__pointer_kind(const void *p, int *kind, int *device);

/* out[m, n] with leading dimension ldo set to zero on the stream (capture-safe memset node). */
bf16fp32_status bf16fp32__device_zero(float *out, int64_t m, int64_t n, int64_t ldo, void *stream);

#endif
