/* The device queries of device.h for a build without CUDA: there is no device. */
#ifndef BF16FP32_HAVE_CUDA
#include "device.h"

int bf16fp32__device_count(void) { return 0; }
int bf16fp32__device_current(void) { return -1; }

static bf16fp32_status no_cuda(void) {
  return bf16fp32__fail(BF16FP32_NO_DEVICE, "this library was built without CUDA");
}

bf16fp32_status bf16fp32__device_describe(int ordinal, int *cc_major, int *cc_minor, int *sms,
                                          char *name, size_t name_len) {
  (void)ordinal, (void)cc_major, (void)cc_minor, (void)sms, (void)name, (void)name_len;
  return no_cuda();
}
bf16fp32_status bf16fp32__device_enter(int device, int *prev) {
  (void)device;
  *prev = -1;
  return no_cuda();
}
void bf16fp32__device_leave(int prev) { (void)prev; }
bf16fp32_status bf16fp32__stream_check(void *stream, int device, bool *capturing) {
  (void)stream, (void)device;
  *capturing = false;
  return no_cuda();
}
int bf16fp32__capture_relax(void) { return -1; }
void bf16fp32__capture_restore(int mode) { (void)mode; }
bf16fp32_status bf16fp32__pointer_kind(const void *p, int *kind, int *device) {
  (void)p;
  *kind = 0;
  *device = -1;
  return BF16FP32_OK; /* without CUDA every pointer is host memory */
}
bf16fp32_status bf16fp32__device_zero(float *out, int64_t m, int64_t n, int64_t ldo, void *stream) {
  (void)out, (void)m, (void)n, (void)ldo, (void)stream;
  return no_cuda();
}
#else
typedef int bf16fp32__device_none_unused; /* ISO C forbids an empty translation unit */
#endif
