/* The shape-keyed plan cache: per shape, the backend order the dispatcher tries and the
 * backends quarantined for that shape. Fixed capacity, no allocation after create, so that
 * calls made during CUDA graph capture never allocate. */
#ifndef BF16FP32_PLAN_CACHE_H
#define BF16FP32_PLAN_CACHE_H

#include <pthread.h>
#include <stdint.h>

#include "internal.h"

#define BF16FP32__PLAN_SLOTS 4096

typedef struct bf16fp32__plan {
  bf16fp32__shape key;
  uint32_t generation;            /* valid only when equal to the cache's */
  uint32_t quarantined;           /* bit b: backend b failed on this shape */
  uint8_t order[BF16FP32__MAX_BACKENDS];
  uint8_t order_len;
  int8_t reason;                  /* how order[0] was chosen (plan-cache.c: reason names) */
  uint8_t failed_status[BF16FP32__MAX_BACKENDS]; /* status that quarantined backend b */
  int8_t variant_of;              /* the backend that runs `variant`, or -1 */
  char variant[BF16FP32__VARIANT_LEN]; /* its tuned configuration (variant.h) */
} bf16fp32__plan;

typedef struct bf16fp32__plan_cache {
  pthread_mutex_t mutex;
  uint32_t generation;            /* bumped by clear: every entry becomes invalid at once */
  bf16fp32__plan *slots;          /* BF16FP32__PLAN_SLOTS entries */
} bf16fp32__plan_cache;

bf16fp32_status bf16fp32__plan_cache_init(bf16fp32__plan_cache *c);
void bf16fp32__plan_cache_destroy(bf16fp32__plan_cache *c);
void bf16fp32__plan_cache_clear(bf16fp32__plan_cache *c);

/* Copies the plan for key into *out; 0 when there is none. */
int bf16fp32__plan_get(bf16fp32__plan_cache *c, const bf16fp32__shape *key, bf16fp32__plan *out);
/* Stores order for key (keeping its quarantine if present); 0 when the cache is full (around
 * key's slot: plan-cache.c). */
int bf16fp32__plan_put(bf16fp32__plan_cache *c, const bf16fp32__plan *p);
/* Marks backend quarantined for key, in a cached order's place when the cache is full; 0 when
 * quarantines fill it (the failure is not remembered). */
int bf16fp32__plan_quarantine(bf16fp32__plan_cache *c, const bf16fp32__shape *key, int backend,
                              bf16fp32_status why);
/* Calls fn for every valid plan with a quarantined backend (under the cache's mutex). */
void bf16fp32__plan_each_quarantined(bf16fp32__plan_cache *c,
                                     void (*fn)(void *user, const bf16fp32__plan *p), void *user);

#endif
