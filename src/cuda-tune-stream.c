/* The stream a GPU tune run measures on (see tune.h): one per run, non-blocking. */
#include "cuda-check.h"
#include "dispatch.h"
#include "tune.h"

bf16fp32_status bf16fp32__tune_stream_create(void **stream) {
  bf16fp32_status st = BF16FP32_OK;
  cudaStream_t s = NULL;
  *stream = NULL;
  BF16FP32__CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  *stream = s;
cleanup:
  return st;
}

void bf16fp32__tune_stream_destroy(bf16fp32_context *ctx, void *stream) {
  if (!stream) return;
  (void)cudaStreamSynchronize((cudaStream_t)stream);
  bf16fp32__forget_stream(ctx, stream);
  (void)cudaStreamDestroy((cudaStream_t)stream);
}
