/* A workload step on the device: several GEMMs, each issued a number of times per step in layer
 * order (layer l issues every GEMM with more than l calls), every call with its own weight,
 * input and output, as the layers of a model have; optionally a filler kernel before every call,
 * as an engine runs attention, norms and experts between them. The decode-step benchmark and the
 * step tuner (cuda-tune-step.c) capture it in CUDA graphs; cuda-step.c holds the operands, the
 * oracle and the checks. Device only: without CUDA only the types and the bounds exist. */
#ifndef BF16FP32_STEP_H
#define BF16FP32_STEP_H

#include <stdbool.h>
#include <stdint.h>

#include "measure.h"
#include "step-filler.h"

/* A step has at most this many calls in all (the tuner refuses more before it allocates). */
#define BF16FP32__STEP_MAX_CALLS (1 << 20)
/* A filler reads at most this many KB (1 GiB). */
#define BF16FP32__STEP_MAX_FILLER_KB (1 << 20)

/* OK where kb is 0 to BF16FP32__STEP_MAX_FILLER_KB and trigger a bf16fp32_filler_trigger, else
 * BAD_SIZE / BAD_OPTION with `who` in the message (step-filler-check.c, in every build). */
bf16fp32_status bf16fp32__step_check_fillers(const char *who, int kb, int trigger);

/* One GEMM of the step: its weight shape and how many calls a step makes. */
typedef struct bf16fp32__step_gemm {
  int64_t n, k;
  int calls;
} bf16fp32__step_gemm;

/* One call of the step, in issue order. */
typedef struct bf16fp32__step_call {
  int gemm;
  uint16_t *w, *x; /* device: n x k and max_m x k, contiguous */
  float *out;      /* device: max_m x n */
  bool first, last; /* first / last call of its GEMM: these are checked */
} bf16fp32__step_call;

typedef struct bf16fp32__step {
  int gemm_count;
  bf16fp32__step_gemm *gemm;
  int call_count;
  bf16fp32__step_call *call;
  int64_t max_m, m;      /* operands hold max_m rows; calls use m (bf16fp32__step_set_m) */
  size_t weight_bytes;   /* one step's weights */
  char *base;            /* the one device allocation */
  uint16_t **wh, **xh;   /* host copies per GEMM */
  bf16fp32__check_ref *ref; /* per GEMM, for m */
  float *outh;           /* host buffer for one output */
  /* Fillers (bf16fp32__step_set_fillers): one slice of filler_bytes per call, or none. */
  char *filler;
  unsigned *filler_sink; /* one word per filler block */
  size_t filler_bytes;
  int filler_blocks, filler_trigger;
} bf16fp32__step;

#ifdef BF16FP32_HAVE_CUDA
/* Allocates the operands of every call for up to max_m rows and fills them with random values
 * (seeded; one host copy per GEMM, copied to all of its calls). On failure everything is freed
 * and *s is zeroed. */
bf16fp32_status bf16fp32__step_create(bf16fp32__step *s, const bf16fp32__step_gemm *gemm,
                                      int gemm_count, int64_t max_m, uint64_t seed);
void bf16fp32__step_free(bf16fp32__step *s);
/* A filler before every call from now on: each reads its own kb KB (cold, as the weights are)
 * and launches as trigger says (step-filler.h); kb 0 removes them. Allocates call_count slices. */
bf16fp32_status bf16fp32__step_set_fillers(bf16fp32__step *s, int kb, int trigger);
/* Launches the filler of call i on stream where the step has fillers (pdl: the context's
 * option); OK at once where it has none. */
bf16fp32_status bf16fp32__step_filler(const bf16fp32__step *s, int i, bool pdl, void *stream);
/* Sets the token count of the calls (1 <= m <= max_m) and computes each GEMM's oracle on
 * check_rows sampled rows (0: all). */
bf16fp32_status bf16fp32__step_set_m(bf16fp32__step *s, int64_t m, int check_rows);
/* The index of GEMM g's first call in the step, or -1 when it has none. */
int bf16fp32__step_first_call(const bf16fp32__step *s, int g);
/* Call i as the dispatcher takes it: contiguous operands, on stream. */
bf16fp32__call bf16fp32__step_call_at(const bf16fp32__step *s, int i, void *stream,
                                      bool capturing);
/* The graph nodes a captured step holds at the least: one per filler launch and one per GEMM
 * call (gemms false: the fillers alone; GEMM skip's calls left out, -1: none). */
int bf16fp32__step_min_nodes(const bf16fp32__step *s, bool gemms, int skip);
/* Writes the poison into every output (m rows), ordered on stream. */
bf16fp32_status bf16fp32__step_poison(const bf16fp32__step *s, void *stream);
/* After stream's work: the first and last call of every GEMM except `skip` (-1: none) against
 * the oracle. Not OK (INTERNAL for a wrong or unwritten result) with the finding in msg. */
bf16fp32_status bf16fp32__step_check(const bf16fp32__step *s, int skip, void *stream, char *msg,
                                     size_t len);
/* The floor F of the whole step at m, in microseconds (sum over the calls). */
double bf16fp32__step_floor_us(const bf16fp32__step *s);
#endif

#endif
