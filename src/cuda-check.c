/* CUDA and cuBLAS error mapping, and the device properties the backends choose by. */
#include <stdio.h>
#include <string.h>

#include <cublas_api.h>

#include "cuda-check.h"

/* The errors after which, the runtime's header says, the process must be relaunched. */
static int is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorLaunchTimeout:
    case cudaErrorContextIsDestroyed:
    case cudaErrorDevicesUnavailable:
    case cudaErrorContained:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorMpsClientTerminated:
    case cudaErrorExternalDevice:
      return 1;
    default:
      return 0;
  }
}

static int is_capture_error(cudaError_t e) {
  return e == cudaErrorStreamCaptureInvalidated || e == cudaErrorStreamCaptureUnsupported ||
         e == cudaErrorStreamCaptureUnjoined || e == cudaErrorStreamCaptureIsolation ||
         e == cudaErrorStreamCaptureImplicit || e == cudaErrorStreamCaptureUnmatched ||
         e == cudaErrorStreamCaptureMerge || e == cudaErrorStreamCaptureWrongThread;
}

bf16fp32_status bf16fp32__cuda_status(cudaError_t e, const char *call, const char *file, int line) {
  bf16fp32_status s = BF16FP32_CUDA_ERROR;
  if (is_sticky(e))
    s = BF16FP32_CUDA_FATAL;
  else if (is_capture_error(e))
    s = BF16FP32_CAPTURE_BROKEN;
  else if (e == cudaErrorMemoryAllocation)
    s = BF16FP32_OUT_OF_MEMORY;
  else if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
    s = BF16FP32_NO_DEVICE;
  if (s != BF16FP32_CUDA_FATAL) (void)cudaGetLastError(); /* drop a non-sticky error */
  return bf16fp32__fail(s, "%s failed at %s:%d: %s (%s)", call, file, line, cudaGetErrorName(e),
                        cudaGetErrorString(e));
}

bf16fp32_status bf16fp32__cublas_status(int e, const char *call, const char *file, int line) {
  bf16fp32_status s = BF16FP32_CUBLAS_ERROR;
  /* cuBLAS reports a dead context or a broken capture as a failed execution: say which, so that
   * the dispatcher stops instead of quarantining every backend in turn */
  if (e == CUBLAS_STATUS_EXECUTION_FAILED || e == CUBLAS_STATUS_INTERNAL_ERROR) {
    cudaError_t ce = cudaPeekAtLastError();
    if (is_sticky(ce) || is_capture_error(ce)) return bf16fp32__cuda_status(ce, call, file, line);
  }
  if (e == CUBLAS_STATUS_ALLOC_FAILED) s = BF16FP32_OUT_OF_MEMORY;
  if (e == CUBLAS_STATUS_NOT_INITIALIZED) s = BF16FP32_NO_DEVICE;
  return bf16fp32__fail(s, "%s failed at %s:%d: %s (%d)", call, file, line,
                        cublasGetStatusName((cublasStatus_t)e), e);
}

bf16fp32_status bf16fp32__device_query(int ordinal, bf16fp32__device_info *info) {
  bf16fp32_status st = BF16FP32_OK;
  struct cudaDeviceProp p;
  int smem = 0;
  memset(info, 0, sizeof *info);
  BF16FP32__CUDA_TRY(cudaGetDeviceProperties(&p, ordinal));
  BF16FP32__CUDA_TRY(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal));
  info->ordinal = ordinal;
  info->cc_major = p.major;
  info->cc_minor = p.minor;
  info->sm_count = p.multiProcessorCount;
  info->l2_bytes = p.l2CacheSize;
  info->smem_optin_per_block = (size_t)smem;
  snprintf(info->name, sizeof info->name, "%s", p.name);
cleanup:
  return st;
}
