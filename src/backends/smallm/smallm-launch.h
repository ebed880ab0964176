/* The C-callable side of the smallm kernels (smallm-kernel.cu, which dispatches to the decode,
 * stream, share, fold, wide and wgmma kernels): module load and one launch.
 * Both return a cudaError_t as int (0 = cudaSuccess), mapped to a status by the host glue. */
#ifndef BF16FP32_SMALLM_LAUNCH_H
#define BF16FP32_SMALLM_LAUNCH_H

#include <stdint.h>

#include "smallm-config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Loads the module and raises every kernel instance's dynamic shared-memory limit to
 * smem_limit, so that no launch (graph capture included) does either later. */
int bf16fp32__smallm_load(size_t smem_limit);

/* out[m, n] = x[m, k] . w[n, k]^T with configuration c (from bf16fp32__smallm_choose).
 * use_pdl: launch with programmatic stream serialization (the weight loads start before the
 * previous kernel on the stream has finished; x is read only after it). */
int bf16fp32__smallm_launch(const bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k,
                            const uint16_t *x, int64_t ldx, const uint16_t *w, int64_t ldw,
                            float *out, int64_t ldo, void *stream, int use_pdl);

/* The decode kernel's module load and launch (smallm-decode.cu); bf16fp32__smallm_load and
 * bf16fp32__smallm_launch call them (c->decode). */
int bf16fp32__smallm_decode_load(size_t smem_limit);
int bf16fp32__smallm_decode_launch(const bf16fp32__smallm_config *c, int64_t m, int64_t k,
                                   const uint16_t *x, int64_t ldx, const uint16_t *w, int64_t ldw,
                                   float *out, int64_t ldo, void *stream, int use_pdl);

/* The wide kernel's (smallm-wide.cu; c->wide). */
int bf16fp32__smallm_wide_load(size_t smem_limit);
int bf16fp32__smallm_wide_launch(const bf16fp32__smallm_config *c, int64_t m, int64_t n,
                                 int64_t k, const uint16_t *x, int64_t ldx, const uint16_t *w,
                                 int64_t ldw, float *out, int64_t ldo, void *stream, int use_pdl);

/* The stream kernel's (smallm-stream.cu; c->stream). */
int bf16fp32__smallm_stream_load(size_t smem_limit);
int bf16fp32__smallm_stream_launch(const bf16fp32__smallm_config *c, int64_t m, int64_t n,
                                   int64_t k, const uint16_t *x, int64_t ldx, const uint16_t *w,
                                   int64_t ldw, float *out, int64_t ldo, void *stream, int use_pdl);

/* The pair that fits this device's SMs (bf16fp32__smallm_pair) for the paired instances, into
 * *p (p->threads = 0 where none fits). Returns a cudaError_t as the others. */
int bf16fp32__smallm_stream_pair_fit(int device, size_t smem_limit, bf16fp32__smallm_pair *p);

/* The share kernel's (smallm-share.cu; c->share). */
int bf16fp32__smallm_share_load(size_t smem_limit);
int bf16fp32__smallm_share_launch(const bf16fp32__smallm_config *c, int64_t m, int64_t k,
                                  const uint16_t *x, int64_t ldx, const uint16_t *w, int64_t ldw,
                                  float *out, int64_t ldo, void *stream, int use_pdl);

/* The fold kernel's (smallm-fold.cu; c->fold). */
int bf16fp32__smallm_fold_load(size_t smem_limit);
int bf16fp32__smallm_fold_launch(const bf16fp32__smallm_config *c, int64_t m, int64_t k,
                                 const uint16_t *x, int64_t ldx, const uint16_t *w, int64_t ldw,
                                 float *out, int64_t ldo, void *stream, int use_pdl);

/* The wgmma kernel's (smallm-wgmma-sm90a.cu; c->wgmma). */
int bf16fp32__smallm_wgmma_load(size_t smem_limit);
int bf16fp32__smallm_wgmma_launch(const bf16fp32__smallm_config *c, int64_t m, int64_t n,
                                  int64_t k, const uint16_t *x, int64_t ldx, const uint16_t *w,
                                  int64_t ldw, float *out, int64_t ldo, void *stream, int use_pdl);

#ifdef __cplusplus
}
#endif
#endif
