// The cuBLAS baseline of the GPU probes in bench/, as MEASURING.md calls it: one handle on the
// probe's stream with a 32 MB workspace, and out[M,N] = x . w^T by cublasGemmEx (bf16 operands,
// fp32 output and compute, the default algorithm).
#ifndef BF16FP32_BENCH_CUBLAS_CUH
#define BF16FP32_BENCH_CUBLAS_CUH

#include <cublas_v2.h>

#include "bench-cuda.cuh"

// A handle whose calls go to stream s; the program stops if cuBLAS cannot start.
inline cublasHandle_t bench_cublas_on(cudaStream_t s) {
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    printf("cublasCreate failed\n");
    exit(2);
  }
  void *ws;
  CK(cudaMalloc(&ws, 32 << 20));
  cublasSetStream(h, s);
  cublasSetWorkspace(h, ws, 32 << 20);
  return h;
}

// out (M x N, leading dimension n) = x (M x K) . w (N x K)^T, both row-major bf16; cuBLAS's
// status (the probes that time it inside a graph capture do not stop on it).
inline cublasStatus_t bench_cublas_gemm(cublasHandle_t h, int n, int m, int k, const void *w,
                                        const void *x, float *out) {
  const float one = 1.0f, zero = 0.0f;
  return cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, w, CUDA_R_16BF, k, x,
                      CUDA_R_16BF, k, &zero, out, CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                      CUBLAS_GEMM_DEFAULT);
}

#endif
