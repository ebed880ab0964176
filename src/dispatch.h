/* The dispatcher: picks the backend for a call, falls back on failure, quarantines per shape. */
#ifndef BF16FP32_DISPATCH_H
#define BF16FP32_DISPATCH_H

#include "internal.h"

/* Runs a validated call (m, n, k >= 1) on the best backend with fallback. */
bf16fp32_status bf16fp32__dispatch(bf16fp32_context *ctx, const bf16fp32__call *call);

/* The backend auto tries first for a shape (registry index in *first) and why. */
bf16fp32_status bf16fp32__explain(bf16fp32_context *ctx, const bf16fp32__shape *s, int *first,
                                  char *why, size_t why_len);
/* The first two backends auto would try for the shape (quarantined ones skipped), each with the
 * variant it would run ("" for its default); returns how many (0..2). */
int bf16fp32__auto_order(bf16fp32_context *ctx, const bf16fp32__shape *s, int first[2],
                         char variant[2][BF16FP32__VARIANT_LEN]);
/* Prewarms the first two backends auto would try for the shape on the stream (a backend whose
 * prewarm fails is quarantined for the shape, and the next one tried). A failure's status
 * where none could be made ready, UNSUPPORTED where none takes the shape. */
bf16fp32_status bf16fp32__prewarm_shape(bf16fp32_context *ctx, const bf16fp32__shape *s,
                                        void *stream);
/* Whether another backend may be tried after a failure with status st (not once the device is
 * lost or a capture broken). */
bool bf16fp32__falls_back(bf16fp32_status st);

/* Runs exactly one backend (registry index) on a validated call: no fallback, no quarantine,
 * counted in its counters. Used by the benchmark and the tuner to time one backend. */
bf16fp32_status bf16fp32__run_one(bf16fp32_context *ctx, int backend, const bf16fp32__call *call);
/* Prewarms exactly one backend for a shape (and variant, or NULL) on a stream; DECLINED when it
 * does not support it. */
bf16fp32_status bf16fp32__prewarm_one(bf16fp32_context *ctx, int backend,
                                      const bf16fp32__shape *s, const char *variant, void *stream);
/* The backend's variants worth timing for the shape (its `variants` op; 0 without one). */
int bf16fp32__variants_one(bf16fp32_context *ctx, int backend, const bf16fp32__shape *s,
                           char (*names)[BF16FP32__VARIANT_LEN], int max);
/* 1 when the backend (registry index) was probed usable in this context. */
int bf16fp32__backend_available(bf16fp32_context *ctx, int backend);
/* Every backend frees what it keeps for `stream`, a stream of the library's own about to be
 * destroyed (the tuner's), so that its per-stream slots serve other streams. */
void bf16fp32__forget_stream(bf16fp32_context *ctx, void *stream);
/* The context's configuration (device, threads, ...). */
const bf16fp32__config *bf16fp32__context_config(bf16fp32_context *ctx);

/* Shape key of a call with these arguments and pointers. */
bf16fp32__shape bf16fp32__make_shape(bf16fp32_location where, int64_t m, int64_t n, int64_t k,
                                     int64_t ldx, int64_t ldw, int64_t ldo, const void *x,
                                     const void *w, const void *out);

#endif
