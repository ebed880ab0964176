/* One GPU test case: random operands for out[m, n] = x[m, k] . w[n, k]^T on the host and the
 * device (contiguous rows, 256-byte aligned buffers), the device output poisoned before a run
 * and checked against the oracle after it. */
#ifndef BF16FP32_GPU_CASE_H
#define BF16FP32_GPU_CASE_H

#include <stdint.h>

#include "bf16fp32.h"

typedef struct sup_gcase {
  int64_t m, n, k;
  uint16_t *hx, *hw;
  float *hout;
  uint16_t *dx, *dw;
  float *dout; /* m * n + 1 floats: dout + 1 is an output that is only 4-byte aligned */
} sup_gcase;

/* Allocates and fills (seed) both sides; non-zero on failure (sup_gcase_free still applies). */
int sup_gcase_alloc(sup_gcase *c, uint64_t seed);
void sup_gcase_free(sup_gcase *c);
/* Writes the poison into the device output at out (c->dout or c->dout + 1); non-zero on failure. */
int sup_gcase_poison(sup_gcase *c, float *out);
/* Downloads the output at out and checks it against the oracle (a failed CHECK says what). */
void sup_gcase_check(sup_gcase *c, const float *out, const char *what);

/* A tuning file at path (the context's tuning file) whose entries for c's shape name
 * `backend@V`, V the first variant the backend offers for it: after a reset of ctx, select must
 * name it, and one call captured on stream after a prewarm must run on that backend exactly
 * once, without failure, when replayed (c->dout poisoned before; the caller checks the output).
 * Returns -1 when the backend offers no variant (nothing ran), else 0 (a failed CHECK says what
 * did not hold). */
int sup_gcase_tuned_variant(bf16fp32_context *ctx, const char *backend, sup_gcase *c, void *stream,
                            const char *path);

#endif
