/* The GPU's identity for a tuning file's header: name, SMs, compute capability (cuda-check's
 * device query) and the CUDA runtime, driver and cuBLAS versions this process runs with. */
#include <stdio.h>
#include <string.h>

#include <cublas_api.h>
#include <library_types.h>

#include "cuda-check.h"
#include "identity.h"

/* 13000 -> "13.0"; 12080 -> "12.8" (CUDA encodes 1000 * major + 10 * minor). */
static void cuda_version_text(int v, char *buf, size_t len) {
  snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

bf16fp32_status bf16fp32__gpu_identity_query(int device, bf16fp32__gpu_identity *id) {
  bf16fp32_status st = BF16FP32_OK;
  bf16fp32__device_info info;
  int runtime = 0, driver = 0, major = 0, minor = 0, patch = 0;
  memset(id, 0, sizeof *id);
  if (device < 0) return bf16fp32__fail(BF16FP32_NO_DEVICE, "no CUDA device in this context");
  BF16FP32__TRY(bf16fp32__device_query(device, &info));
  BF16FP32__CUDA_TRY(cudaRuntimeGetVersion(&runtime));
  BF16FP32__CUDA_TRY(cudaDriverGetVersion(&driver));
  /* cublasGetProperty needs no handle, so identifying the GPU creates nothing. */
  BF16FP32__CUBLAS_TRY(cublasGetProperty(MAJOR_VERSION, &major));
  BF16FP32__CUBLAS_TRY(cublasGetProperty(MINOR_VERSION, &minor));
  BF16FP32__CUBLAS_TRY(cublasGetProperty(PATCH_LEVEL, &patch));
  bf16fp32__identity_clean(id->name, sizeof id->name, info.name);
  id->sm_count = info.sm_count;
  id->cc_major = info.cc_major;
  id->cc_minor = info.cc_minor;
  cuda_version_text(runtime, id->cuda_runtime, sizeof id->cuda_runtime);
  cuda_version_text(driver, id->cuda_driver, sizeof id->cuda_driver);
  snprintf(id->cublas, sizeof id->cublas, "%d.%d.%d", major, minor, patch);
cleanup:
  return st;
}
