/* Per-stream resources of the cuBLAS-based backends (cublas, cublaslt, fp32) in a fixed-capacity,
 * mutex-protected map keyed by the cudaStream_t value: one place for creating them outside graph
 * capture, finding them during capture, and freeing them at reset. */
#ifndef BF16FP32_CUDA_STREAM_SLOTS_H
#define BF16FP32_CUDA_STREAM_SLOTS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <cublas_v2.h>

#include "cuda-check.h"

/* Streams one backend serves at once; the next one is declined (not quarantined). */
#define BF16FP32__STREAM_SLOTS_MAX 64
/* Scratch buffers replaced while a captured graph may still use them, kept until reset. */
#define BF16FP32__SCRATCH_RETIRED_MAX 48

/* What one stream owns. Everything but `stream` and `lock` may be touched only while the slot
 * is acquired (its lock held), which also keeps two threads on one stream from sharing the
 * cuBLAS handle or the scratch at the same time. */
typedef struct bf16fp32__stream_slot {
  void *stream;              /* the key: a cudaStream_t value (NULL: the legacy stream) */
  bool live;                 /* false once its stream was forgotten: free for another */
  pthread_mutex_t lock;
  int device;
  cublasHandle_t blas;       /* bound to `stream` with `workspace` set; NULL when not asked for */
  void *workspace;           /* cuBLAS / cuBLASLt workspace: fixed for the slot's life */
  size_t workspace_bytes;
  void *scratch;             /* the backend's own buffer (fp32: the upcast operands) */
  size_t scratch_bytes;
  bool scratch_captured;     /* a graph captured on this stream may reference `scratch` */
  void *retired[BF16FP32__SCRATCH_RETIRED_MAX];
  int retired_count;
} bf16fp32__stream_slot;

typedef struct bf16fp32__stream_slots {
  pthread_mutex_t lock;      /* guards `count` and the creation of slots */
  int device;
  size_t workspace_bytes;
  bool with_blas;            /* give each slot a cuBLAS handle */
  cublasMath_t blas_math;
  int count;                 /* slots [0, count) were made (live or freed); none moves */
  bf16fp32__stream_slot slot[BF16FP32__STREAM_SLOTS_MAX];
} bf16fp32__stream_slots;

/* Empty map for `device` (probe time: checks that the device is usable and creates nothing on
 * it). On failure writes why into why[why_len] and returns non-OK. */
bf16fp32_status bf16fp32__stream_slots_init(bf16fp32__stream_slots *s, int device,
                                            size_t workspace_bytes, bool with_blas,
                                            cublasMath_t blas_math, char *why, size_t why_len);
/* Waits for the device, then frees every slot's handle and buffers (reset). */
void bf16fp32__stream_slots_destroy(bf16fp32__stream_slots *s);

/* The slot of `stream`, locked: release it when done. A missing slot is created (handle,
 * workspace) when may_create, else the result is NOT_PREWARMED (graph capture). DECLINED for
 * cudaStreamPerThread (one key, a different stream in each thread), when the map is full, and
 * when there is no memory for a new slot (the stream's want, not the shape's). */
bf16fp32_status bf16fp32__stream_slots_acquire(bf16fp32__stream_slots *s, void *stream,
                                               bool may_create, bf16fp32__stream_slot **slot);
/* Frees the slot of `stream`, if any, for another stream: for a stream no other thread calls
 * with, whose captured graphs will not replay (the tuner's own, before it is destroyed). */
void bf16fp32__stream_slots_forget(bf16fp32__stream_slots *s, void *stream);

/* NULL is ignored, so that a cleanup label can always call it. */
void bf16fp32__stream_slot_release(bf16fp32__stream_slot *slot);

/* Makes the acquired slot's scratch hold at least `bytes`. During capture (capturing) it only
 * checks, and returns NOT_PREWARMED when the scratch is too small; otherwise it may allocate. */
bf16fp32_status bf16fp32__stream_slot_reserve(bf16fp32__stream_slot *slot, size_t bytes,
                                              bool capturing);

#endif
