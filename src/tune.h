/* The tune run: every available backend timed on each (N, K) and M bucket, the winner and
 * runner-up merged into the tuning file. The public bf16fp32_tune and `bf16fp32 tune` use it. */
#ifndef BF16FP32_TUNE_H
#define BF16FP32_TUNE_H

#include "measure.h"
#include "tune-table.h"

/* Called after each measured (N, K, bucket): e is the entry recorded (NULL when no backend
 * produced a valid time), cands every backend's result. */
typedef void (*bf16fp32__tune_progress_fn)(void *user, int64_t n, int64_t k, int64_t m,
                                           const bf16fp32__tune_entry *e,
                                           const bf16fp32__candidate *cands, int count);

typedef struct bf16fp32__tune_request {
  bf16fp32_location where;
  const int64_t *nk_pairs;                /* n0, k0, n1, k1, ... */
  int pair_count;
  const int64_t *ms;                      /* any M values: each is timed at its bucket's M */
  int m_count;
  const char *out_path;                   /* NULL: the context's tuning file */
  const bf16fp32__measure_opts *measure;  /* NULL: the protocol's defaults */
  bf16fp32__tune_progress_fn progress;    /* may be NULL */
  void *user;
} bf16fp32__tune_request;

/* Checks the request, measures, merges into the file (what was measured is merged even when
 * the run stops on an error, which is then returned). *merged (may be NULL): the entries
 * written to the file. */
bf16fp32_status bf16fp32__tune_run(bf16fp32_context *ctx, const bf16fp32__tune_request *req,
                                   int *merged);

/* cuda-tune-stream.c (a NO_DEVICE stub without CUDA): the one stream a GPU tune run measures
 * on, so that the backends' per-stream state is made once, not once per measure. */
bf16fp32_status bf16fp32__tune_stream_create(void **stream);
void bf16fp32__tune_stream_destroy(void *stream);

#endif
