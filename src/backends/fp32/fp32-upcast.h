/* The fp32 backend's conversion kernel: bf16 rows of x and w widened to contiguous fp32 rows. */
#ifndef BF16FP32_FP32_UPCAST_H
#define BF16FP32_FP32_UPCAST_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* xf[i*k + j] = x[i*ldx + j] for i < m, wf[i*k + j] = w[i*ldw + j] for i < n, j < k, exactly
 * (bf16 is the top half of an fp32). One launch on stream; returns the launch status. */
cudaError_t bf16fp32__fp32_upcast(const uint16_t *x, int64_t ldx, int64_t m, const uint16_t *w,
                                  int64_t ldw, int64_t n, int64_t k, float *xf, float *wf,
                                  cudaStream_t stream);

/* cudaSuccess when the kernel can run on the current device (its code was built for it). */
cudaError_t bf16fp32__fp32_upcast_check(void);

#ifdef __cplusplus
}
#endif
#endif
