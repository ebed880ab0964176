/* The per-stream resource map of the cuBLAS-based backends: lookup, creation outside capture,
 * scratch growth and teardown (see cuda-stream-slots.h). */
#include <stdio.h>
#include <string.h>

#include "cuda-stream-slots.h"
#include "device.h"

bf16fp32_status bf16fp32__stream_slots_init(bf16fp32__stream_slots *s, int device,
                                            size_t workspace_bytes, bool with_blas,
                                            cublasMath_t blas_math, char *why, size_t why_len) {
  bf16fp32__device_info info;
  memset(s, 0, sizeof *s);
  if (device < 0) {
    snprintf(why, why_len, "no CUDA device");
    return bf16fp32__fail(BF16FP32_NO_DEVICE, "no CUDA device");
  }
  bf16fp32_status st = bf16fp32__device_query(device, &info);
  if (st != BF16FP32_OK) {
    snprintf(why, why_len, "CUDA device %d is not usable: %s", device, bf16fp32_last_error());
    return st;
  }
  if (pthread_mutex_init(&s->lock, NULL) != 0) {
    snprintf(why, why_len, "pthread_mutex_init failed");
    return bf16fp32__fail(BF16FP32_INTERNAL, "pthread_mutex_init failed");
  }
  s->device = device;
  s->workspace_bytes = workspace_bytes;
  s->with_blas = with_blas;
  s->blas_math = blas_math;
  return BF16FP32_OK;
}

/* Frees what a slot holds; the slot's device must be current. */
static void slot_free(bf16fp32__stream_slot *slot) {
  if (slot->blas) BF16FP32__CUBLAS_NOTE(cublasDestroy(slot->blas));
  if (slot->workspace) BF16FP32__CUDA_NOTE(cudaFree(slot->workspace));
  if (slot->scratch) BF16FP32__CUDA_NOTE(cudaFree(slot->scratch));
  for (int i = 0; i < slot->retired_count; i++) BF16FP32__CUDA_NOTE(cudaFree(slot->retired[i]));
  slot->blas = NULL;
  slot->workspace = slot->scratch = NULL;
  slot->workspace_bytes = slot->scratch_bytes = 0;
  slot->retired_count = 0;
}

void bf16fp32__stream_slots_destroy(bf16fp32__stream_slots *s) {
  int prev = -1;
  if (s->count > 0) {
    /* On failure the frees below still run (and report) on whatever device is current. */
    (void)bf16fp32__device_enter(s->device, &prev);
    /* Work queued on the slots' streams may still read the buffers; the streams themselves
     * may be gone by now, so wait for the whole device. */
    BF16FP32__CUDA_NOTE(cudaDeviceSynchronize());
    for (int i = 0; i < s->count; i++) {
      if (!s->slot[i].live) continue; /* freed when its stream was forgotten */
      slot_free(&s->slot[i]);
      pthread_mutex_destroy(&s->slot[i].lock);
    }
    bf16fp32__device_leave(prev);
  }
  s->count = 0;
  pthread_mutex_destroy(&s->lock);
}

/* Creates the resources of a new slot for `stream` (map lock held, never during capture on
 * `stream`; another thread's capture may be under way). */
static bf16fp32_status slot_create(const bf16fp32__stream_slots *s, bf16fp32__stream_slot *slot,
                                   void *stream) {
  bf16fp32_status st = BF16FP32_OK;
  int prev = -1;
  const int mode = bf16fp32__capture_relax();
  memset(slot, 0, sizeof *slot);
  slot->stream = stream;
  slot->device = s->device;
  BF16FP32__TRY(bf16fp32__device_enter(s->device, &prev));
  BF16FP32__CUDA_TRY(cudaMalloc(&slot->workspace, s->workspace_bytes));
  slot->workspace_bytes = s->workspace_bytes;
  if (s->with_blas) {
    /* Short of memory, cublasCreate mostly says NOT_INITIALIZED (the device itself was checked at
     * probe): the stream's want, as a workspace's failed allocation is. */
    const cublasStatus_t made = cublasCreate(&slot->blas);
    if (made == CUBLAS_STATUS_NOT_INITIALIZED || made == CUBLAS_STATUS_ALLOC_FAILED)
      BF16FP32__TRY(bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "cublasCreate: %s",
                                   cublasGetStatusName(made)));
    BF16FP32__CUBLAS_TRY(made);
    /* The handle serves this stream only, for its whole life: cublasSetStream resets the
     * workspace to cuBLAS's own pool, so it comes first and is never called again. */
    BF16FP32__CUBLAS_TRY(cublasSetStream(slot->blas, (cudaStream_t)stream));
    BF16FP32__CUBLAS_TRY(cublasSetWorkspace(slot->blas, slot->workspace, slot->workspace_bytes));
    BF16FP32__CUBLAS_TRY(cublasSetMathMode(slot->blas, s->blas_math));
  }
  if (pthread_mutex_init(&slot->lock, NULL) != 0)
    BF16FP32__TRY(bf16fp32__fail(BF16FP32_INTERNAL, "pthread_mutex_init failed"));
  slot->live = true;
cleanup:
  if (st != BF16FP32_OK) slot_free(slot); /* frees only what was made */
  bf16fp32__device_leave(prev);
  bf16fp32__capture_restore(mode);
  return st;
}

bf16fp32_status bf16fp32__stream_slots_acquire(bf16fp32__stream_slots *s, void *stream,
                                               bool may_create, bf16fp32__stream_slot **slot) {
  bf16fp32_status st = BF16FP32_OK;
  bf16fp32__stream_slot *found = NULL;
  *slot = NULL;
  /* The per-thread default stream is a different stream in each thread behind one value: a
   * slot shared by them would let two streams use one workspace at once. */
  if (stream == (void *)cudaStreamPerThread)
    return bf16fp32__fail(BF16FP32_DECLINED, "cudaStreamPerThread is not supported: pass an explicit stream");
  pthread_mutex_lock(&s->lock);
  for (int i = 0; i < s->count && !found; i++)
    if (s->slot[i].live && s->slot[i].stream == stream) found = &s->slot[i];
  if (!found && may_create) {
    int free_at = s->count; /* a forgotten stream's slot first, else a new one */
    for (int i = 0; i < s->count && free_at == s->count; i++)
      if (!s->slot[i].live) free_at = i;
    if (free_at == BF16FP32__STREAM_SLOTS_MAX)
      st = bf16fp32__fail(BF16FP32_DECLINED, "already serving %d streams", BF16FP32__STREAM_SLOTS_MAX);
    else if ((st = slot_create(s, &s->slot[free_at], stream)) == BF16FP32_OK) {
      found = &s->slot[free_at];
      if (free_at == s->count) s->count++;
    } else if (st == BF16FP32_OUT_OF_MEMORY) {
      /* What is missing is this stream's, not the shape's: a failure would quarantine the shape
       * on every stream, prewarmed ones too. Declined, the call falls back and the stream's
       * next call tries again. */
      char detail[400];
      snprintf(detail, sizeof detail, "%s", bf16fp32_last_error());
      st = bf16fp32__fail(BF16FP32_DECLINED, "no memory for this stream's handle and workspace "
                          "(%s): declined, tried again at its next call", detail);
    }
  }
  pthread_mutex_unlock(&s->lock);
  if (found) {
    pthread_mutex_lock(&found->lock);
    *slot = found;
  } else if (st == BF16FP32_OK) {
    st = bf16fp32__fail(BF16FP32_NOT_PREWARMED,
                        "no cuBLAS handle or workspace for this stream during graph capture: "
                        "prewarm on the stream first");
  }
  return st;
}

void bf16fp32__stream_slots_forget(bf16fp32__stream_slots *s, void *stream) {
  pthread_mutex_lock(&s->lock);
  for (int i = 0; i < s->count; i++) {
    bf16fp32__stream_slot *slot = &s->slot[i];
    if (!slot->live || slot->stream != stream) continue;
    int prev = -1;
    pthread_mutex_lock(&slot->lock); /* a call of this stream still in the slot ends first */
    (void)bf16fp32__device_enter(s->device, &prev);
    BF16FP32__CUDA_NOTE(cudaStreamSynchronize((cudaStream_t)stream)); /* its work may read them */
    slot_free(slot);
    bf16fp32__device_leave(prev);
    slot->live = false;
    pthread_mutex_unlock(&slot->lock);
    pthread_mutex_destroy(&slot->lock);
    break;
  }
  pthread_mutex_unlock(&s->lock);
}

void bf16fp32__stream_slot_release(bf16fp32__stream_slot *slot) {
  if (slot) pthread_mutex_unlock(&slot->lock);
}

bf16fp32_status bf16fp32__stream_slot_reserve(bf16fp32__stream_slot *slot, size_t bytes,
                                              bool capturing) {
  bf16fp32_status st = BF16FP32_OK;
  int prev = -1;
  void *old = slot->scratch;
  bool keep_old = slot->scratch_captured;
  if (slot->scratch_bytes >= bytes) {
    if (capturing) slot->scratch_captured = true;
    return BF16FP32_OK;
  }
  if (capturing)
    return bf16fp32__fail(BF16FP32_NOT_PREWARMED,
                          "scratch of %zu bytes needed during graph capture, %zu prewarmed on this stream",
                          bytes, slot->scratch_bytes);
  if (slot->scratch_captured && slot->retired_count == BF16FP32__SCRATCH_RETIRED_MAX)
    return bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "scratch replaced too often; reset the context");
  const int mode = bf16fp32__capture_relax(); /* as in slot_create */
  /* Grow by half at least, so that a sweep of sizes replaces the buffer a few times only. */
  size_t want = bytes;
  if (slot->scratch_bytes > 0 && slot->scratch_bytes + slot->scratch_bytes / 2 > want)
    want = slot->scratch_bytes + slot->scratch_bytes / 2;
  BF16FP32__TRY(bf16fp32__device_enter(slot->device, &prev));
  if (old && !keep_old) /* only this stream's queued work can still use it */
    BF16FP32__CUDA_TRY(cudaStreamSynchronize((cudaStream_t)slot->stream));
  slot->scratch = NULL;
  slot->scratch_bytes = 0;
  slot->scratch_captured = false;
  if (old && keep_old) /* a graph captured earlier may read it on replay: keep it until reset */
    slot->retired[slot->retired_count++] = old;
  else if (old)
    BF16FP32__CUDA_TRY(cudaFree(old));
  BF16FP32__CUDA_TRY(cudaMalloc(&slot->scratch, want));
  slot->scratch_bytes = want;
cleanup:
  bf16fp32__device_leave(prev);
  bf16fp32__capture_restore(mode);
  return st;
}
