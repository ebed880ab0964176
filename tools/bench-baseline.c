/* The cuBLAS baseline, called directly: cublasGemmEx(OP_T, OP_N, N, M, K, w, x, out,
 * CUBLAS_COMPUTE_32F) with its own handle and a 32 MiB workspace (MEASURING.md). */
#include "bench-baseline.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef BF16FP32_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "cuda-check.h"

#define BASELINE_WORKSPACE_BYTES ((size_t)32 << 20)

struct bench_baseline {
  cublasHandle_t handle;
  void *workspace;
};

bench_baseline *bench_baseline_create(char *why, size_t len) {
  bench_baseline *b = (bench_baseline *)calloc(1, sizeof *b);
  if (!b) {
    snprintf(why, len, "out of memory");
    return NULL;
  }
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    snprintf(why, len, "no CUDA device (%s)", e != cudaSuccess ? cudaGetErrorString(e) : "none");
    (void)cudaGetLastError();
    free(b);
    return NULL;
  }
  cublasStatus_t cs = cublasCreate(&b->handle);
  if (cs != CUBLAS_STATUS_SUCCESS) {
    snprintf(why, len, "cublasCreate: %s", cublasGetStatusString(cs));
    free(b);
    return NULL;
  }
  e = cudaMalloc(&b->workspace, BASELINE_WORKSPACE_BYTES);
  if (e != cudaSuccess) {
    snprintf(why, len, "cudaMalloc of the 32 MiB workspace: %s", cudaGetErrorString(e));
    (void)cudaGetLastError();
    cublasDestroy(b->handle);
    free(b);
    return NULL;
  }
  return b;
}

void bench_baseline_destroy(bench_baseline *b) {
  if (!b) return;
  cublasDestroy(b->handle);
  cudaFree(b->workspace);
  free(b);
}

bf16fp32_status bench_baseline_run(void *user, const bf16fp32__call *call) {
  bf16fp32_status st = BF16FP32_OK;
  bench_baseline *b = (bench_baseline *)user;
  const bf16fp32__shape *s = &call->shape;
  const float alpha = 1.0f, beta = 0.0f;
  /* cublasSetStream resets the workspace to cuBLAS's own pool: set ours after it. */
  BF16FP32__CUBLAS_TRY(cublasSetStream(b->handle, (cudaStream_t)call->stream));
  BF16FP32__CUBLAS_TRY(cublasSetWorkspace(b->handle, b->workspace, BASELINE_WORKSPACE_BYTES));
  /* Column-major view: out^T[N,M] = w[N,K] (seen as K x N, transposed) . x^T (K x M). */
  BF16FP32__CUBLAS_TRY(cublasGemmEx(b->handle, CUBLAS_OP_T, CUBLAS_OP_N, (int)s->n, (int)s->m,
                                    (int)s->k, &alpha, call->w, CUDA_R_16BF, (int)s->ldw, call->x,
                                    CUDA_R_16BF, (int)s->ldx, &beta, call->out, CUDA_R_32F,
                                    (int)s->ldo, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
cleanup:
  return st;
}

bf16fp32_status bench_baseline_prewarm(void *user, const bf16fp32__shape *s, void *stream) {
  (void)user;
  (void)s;
  (void)stream;
  /* Nothing lazy beyond what the measure's eager checked run does before the capture. */
  return BF16FP32_OK;
}

#else /* no CUDA */

bench_baseline *bench_baseline_create(char *why, size_t len) {
  snprintf(why, len, "this build has no CUDA");
  return NULL;
}

void bench_baseline_destroy(bench_baseline *b) { (void)b; }

bf16fp32_status bench_baseline_run(void *user, const bf16fp32__call *call) {
  (void)user;
  (void)call;
  return bf16fp32__fail(BF16FP32_NO_DEVICE, "cuBLAS baseline: this build has no CUDA");
}

bf16fp32_status bench_baseline_prewarm(void *user, const bf16fp32__shape *s, void *stream) {
  (void)user;
  (void)s;
  (void)stream;
  return bf16fp32__fail(BF16FP32_NO_DEVICE, "cuBLAS baseline: this build has no CUDA");
}

#endif
