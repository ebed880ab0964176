/* Maps CUDA runtime and cuBLAS errors to a status with the detail in the thread's last
 * error, and jumps to the function's cleanup label. Only for files built with CUDA. */
#ifndef BF16FP32_CUDA_CHECK_H
#define BF16FP32_CUDA_CHECK_H

#include <cuda_runtime_api.h>

#include "internal.h"

/* CUDA_FATAL for sticky errors (the context is lost), CAPTURE_BROKEN for capture errors,
 * OUT_OF_MEMORY, else CUDA_ERROR. Clears a non-sticky error so that it does not leak into
 * the caller's next cudaGetLastError. */
bf16fp32_status bf16fp32__cuda_status(cudaError_t e, const char *call, const char *file, int line);

#define BF16FP32__CUDA_TRY(expr)                                                   \
  do {                                                                             \
    cudaError_t bf16fp32__e = (expr);                                              \
    if (bf16fp32__e != cudaSuccess) {                                              \
      st = bf16fp32__cuda_status(bf16fp32__e, #expr, __FILE__, __LINE__);          \
      goto cleanup;                                                                \
    }                                                                              \
  } while (0)

/* For cuBLAS and cuBLASLt (both return int-valued status enums). */
bf16fp32_status bf16fp32__cublas_status(int e, const char *call, const char *file, int line);

#define BF16FP32__CUBLAS_TRY(expr)                                                 \
  do {                                                                             \
    int bf16fp32__e = (int)(expr);                                                 \
    if (bf16fp32__e != 0) {                                                        \
      st = bf16fp32__cublas_status(bf16fp32__e, #expr, __FILE__, __LINE__);        \
      goto cleanup;                                                                \
    }                                                                              \
  } while (0)

/* Teardown forms of the TRY macros: record the failure in the last error and go on, so that a
 * reset frees everything it can. */
#define BF16FP32__CUDA_NOTE(expr)                                                  \
  do {                                                                             \
    cudaError_t bf16fp32__e = (expr);                                              \
    if (bf16fp32__e != cudaSuccess)                                                \
      (void)bf16fp32__cuda_status(bf16fp32__e, #expr, __FILE__, __LINE__);         \
  } while (0)
#define BF16FP32__CUBLAS_NOTE(expr)                                                \
  do {                                                                             \
    int bf16fp32__e = (int)(expr);                                                 \
    if (bf16fp32__e != 0) (void)bf16fp32__cublas_status(bf16fp32__e, #expr, __FILE__, __LINE__); \
  } while (0)

/* Device properties the backends choose by, read once at probe. */
typedef struct bf16fp32__device_info {
  int ordinal;
  int cc_major, cc_minor;
  int sm_count;
  int l2_bytes;
  size_t smem_optin_per_block;
  char name[256];
} bf16fp32__device_info;

bf16fp32_status bf16fp32__device_query(int ordinal, bf16fp32__device_info *info);

#endif
