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
  const int *calls;                       /* per pair, calls per step: tuned in the step
                                             (cuda-tune-step.c); NULL: each shape alone */
  const int64_t *ms;                      /* any M values: each is timed at its bucket's M */
  int m_count;
  const char *out_path;                   /* NULL: the context's tuning file */
  const bf16fp32__measure_opts *measure;  /* NULL: the protocol's defaults */
  int filler_kb, filler_trigger;          /* a step's fillers (step.h; 0 KB: none) */
  bf16fp32__tune_progress_fn progress;    /* may be NULL */
  /* A step's bucket m after its GEMMs (may be NULL): the step's time with the new choices and
   * as auto runs it now (us, medians over the runs timed; < 0: no time), in how many of those
   * runs the new ones won, whether they were kept (they must win every run), and how many
   * entries were rewritten to auto's choices otherwise. */
  void (*step_confirm)(void *user, int64_t m, double new_us, double old_us, int won, int rounds,
                       bool kept, int reverted);
  void *user;
} bf16fp32__tune_request;

/* Checks the request, measures, merges into the file (what was measured is merged even when
 * the run stops on an error, which is then returned). *merged (may be NULL): the entries
 * written to the file. */
bf16fp32_status bf16fp32__tune_run(bf16fp32_context *ctx, const bf16fp32__tune_request *req,
                                   int *merged);

/* At most this many variants of a backend are timed per shape beside its default, and at most
 * BF16FP32__TUNE_VARIANT_ROOM of all backends together (two offer them: cuBLASLt and smallm). */
#define BF16FP32__TUNE_VARIANTS 7
#define BF16FP32__TUNE_VARIANT_ROOM (2 * BF16FP32__TUNE_VARIANTS)

/* "backend@variant" into buf (BF16FP32__TUNE_NAME_LEN); false when it does not fit. */
bool bf16fp32__tune_variant_name(char *buf, const char *backend, const char *variant);
/* The variants a backend offers for the shape worth timing (its first BF16FP32__TUNE_VARIANTS),
 * as "backend@variant" names, those that fit; at most max. Returns how many. */
int bf16fp32__tune_variant_names(bf16fp32_context *ctx, int backend, const bf16fp32__shape *s,
                                 char (*names)[BF16FP32__TUNE_NAME_LEN], int max);

/* Winner and runner-up of measured candidates into *e (false when none has a valid time): the
 * two smallest times, except that the baseline is the runner-up whenever the winner's lead over
 * it is within the winner's margin, so that the dispatcher puts it first (tune-table.h). */
bool bf16fp32__tune_pick(const bf16fp32__candidate *c, int count, int where, int pdl, int64_t n,
                         int64_t k, int64_t m, bf16fp32__tune_entry *e);

/* A file with a step's buckets for a weight shape replaces the context's entries of that shape
 * at every M (tune-load.c), and a call above its largest bucket would take that bucket's entry:
 * so from's entries at where, pdl and M above `largest`, of the request's shapes that have an
 * entry measured in `to`, are added to `to` marked line -1 (the merge keeps the file's own
 * entry of such a key). */
bf16fp32_status bf16fp32__tune_carry_larger(const bf16fp32__tune_table *from,
                                            const bf16fp32__tune_request *r, int64_t largest,
                                            int pdl, bf16fp32__tune_table *to);

/* The step's measure (cuda-tune-step.c; NO_DEVICE without CUDA): at each bucket, each GEMM's
 * candidates are timed inside the whole step, the other GEMMs run as auto chooses; a
 * candidate's time per call is the step's time with it, less the step's time without that
 * GEMM, over the GEMM's calls. After each bucket the whole step with the new choices is timed
 * against the step as auto runs it now, and auto's choices are written unless the new ones are
 * faster. The context's entries above the largest bucket are copied. Entries go into found;
 * the device is current. */
bf16fp32_status bf16fp32__tune_measure_step(bf16fp32_context *ctx, const bf16fp32__tune_request *r,
                                            const int64_t *buckets, int nb,
                                            bf16fp32__tune_table *found);

/* cuda-tune-stream.c (a NO_DEVICE stub without CUDA): the one stream a GPU tune run measures
 * on, so that the backends' per-stream state is made once, not once per measure; destroy frees
 * that state too (the backends serve a bounded number of streams). */
bf16fp32_status bf16fp32__tune_stream_create(void **stream);
void bf16fp32__tune_stream_destroy(bf16fp32_context *ctx, void *stream);

#endif
