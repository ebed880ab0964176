/* CUDA runtime queries for the entry points and the dispatcher (built with CUDA only). */
#include <stdio.h>

#include "cuda-check.h"
#include "device.h"

int bf16fp32__device_count(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

int bf16fp32__device_current(void) {
  int d = -1;
  if (cudaGetDevice(&d) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return d;
}

bf16fp32_status bf16fp32__device_describe(int ordinal, int *cc_major, int *cc_minor, int *sms,
                                          char *name, size_t name_len) {
  bf16fp32__device_info info;
  bf16fp32_status st = bf16fp32__device_query(ordinal, &info);
  if (st != BF16FP32_OK) return st;
  *cc_major = info.cc_major;
  *cc_minor = info.cc_minor;
  *sms = info.sm_count;
  snprintf(name, name_len, "%s", info.name);
  return BF16FP32_OK;
}

bf16fp32_status bf16fp32__device_enter(int device, int *prev) {
  bf16fp32_status st = BF16FP32_OK;
  *prev = -1;
  BF16FP32__CUDA_TRY(cudaGetDevice(prev));
  if (*prev != device) BF16FP32__CUDA_TRY(cudaSetDevice(device));
cleanup:
  return st;
}

void bf16fp32__device_leave(int prev) {
  int now = -1;
  if (prev >= 0 && cudaGetDevice(&now) == cudaSuccess && now != prev) (void)cudaSetDevice(prev);
}

bf16fp32_status bf16fp32__stream_check(void *stream, int device, bool *capturing) {
  bf16fp32_status st = BF16FP32_OK;
  enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  const cudaStream_t s = (cudaStream_t)stream;
  *capturing = false;
  BF16FP32__CUDA_TRY(cudaStreamIsCapturing(s, &cs));
  if (cs == cudaStreamCaptureStatusInvalidated)
    return bf16fp32__fail(BF16FP32_CAPTURE_BROKEN, "the stream's capture was already invalidated");
  *capturing = cs == cudaStreamCaptureStatusActive;
  /* The stream's device, where asking is allowed: not during its capture, which the question
   * would invalidate (the calls and prewarm before a capture have asked). NULL and the special
   * handles are the current device's. */
  if (!*capturing && s != NULL && s != cudaStreamLegacy && s != cudaStreamPerThread) {
    int owner = -1;
    BF16FP32__CUDA_TRY(cudaStreamGetDevice(s, &owner));
    if (owner != device)
      return bf16fp32__fail(BF16FP32_BAD_OPTION,
                            "the stream is one of CUDA device %d; the context's is %d", owner, device);
  }
cleanup:
  return st;
}

int bf16fp32__capture_relax(void) {
  enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  if (cudaThreadExchangeStreamCaptureMode(&mode) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1; /* nothing changed: nothing to restore */
  }
  return (int)mode;
}

void bf16fp32__capture_restore(int mode) {
  enum cudaStreamCaptureMode m = (enum cudaStreamCaptureMode)mode;
  if (mode >= 0 && cudaThreadExchangeStreamCaptureMode(&m) != cudaSuccess) (void)cudaGetLastError();
}

bf16fp32_status bf16fp32__pointer_kind(const void *p, int *kind, int *device) {
  bf16fp32_status st = BF16FP32_OK;
  struct cudaPointerAttributes a;
  *kind = 0;
  *device = -1;
  BF16FP32__CUDA_TRY(cudaPointerGetAttributes(&a, p));
  if (a.type == cudaMemoryTypeDevice) *kind = 1, *device = a.device;
  if (a.type == cudaMemoryTypeManaged) *kind = 2;
cleanup:
  return st;
}

bf16fp32_status bf16fp32__device_zero(float *out, int64_t m, int64_t n, int64_t ldo, void *stream) {
  bf16fp32_status st = BF16FP32_OK;
  BF16FP32__CUDA_TRY(cudaMemset2DAsync(out, (size_t)ldo * sizeof(float), 0, (size_t)n * sizeof(float),
                                       (size_t)m, (cudaStream_t)stream));
cleanup:
  return st;
}
