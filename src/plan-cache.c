/* The shape-keyed plan cache: open addressing over a fixed array, keys compared as bytes,
 * a generation counter that invalidates every entry at once. */
#include <stdlib.h>
#include <string.h>

#include "plan-cache.h"

static uint64_t hash_shape(const bf16fp32__shape *s) {
  /* FNV-1a over the key's bytes: the struct has no padding by construction. */
  const unsigned char *p = (const unsigned char *)s;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < sizeof *s; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

_Static_assert(sizeof(bf16fp32__shape) == 6 * 8 + 2 * 4, "the shape key must have no padding");

bf16fp32_status bf16fp32__plan_cache_init(bf16fp32__plan_cache *c) {
  c->slots = calloc(BF16FP32__PLAN_SLOTS, sizeof *c->slots);
  if (!c->slots) return bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "plan cache allocation");
  if (pthread_mutex_init(&c->mutex, NULL) != 0) {
    free(c->slots);
    c->slots = NULL;
    return bf16fp32__fail(BF16FP32_INTERNAL, "pthread_mutex_init failed");
  }
  c->generation = 1; /* calloc'd slots hold generation 0: all invalid */
  return BF16FP32_OK;
}

void bf16fp32__plan_cache_destroy(bf16fp32__plan_cache *c) {
  if (!c->slots) return;
  pthread_mutex_destroy(&c->mutex);
  free(c->slots);
  c->slots = NULL;
}

void bf16fp32__plan_cache_clear(bf16fp32__plan_cache *c) {
  pthread_mutex_lock(&c->mutex);
  if (++c->generation == 0) { /* wrapped: old entries could look valid again */
    memset(c->slots, 0, BF16FP32__PLAN_SLOTS * sizeof *c->slots);
    c->generation = 1;
  }
  pthread_mutex_unlock(&c->mutex);
}

/* A key is stored within this many slots of its hash's, so that a miss in a full cache compares
 * that many keys, not every slot's under the mutex (16 us per call, other threads waiting). */
#define MAX_PROBE 64

/* Slot i of the window that starts at hash h. */
static bf16fp32__plan *window_slot(bf16fp32__plan_cache *c, uint64_t h, unsigned i) {
  return &c->slots[(h + i) % BF16FP32__PLAN_SLOTS];
}

/* The slot holding key, or the first invalid slot on its probe path (NULL when full).
 * Valid entries are never removed one by one, so a probe path has no holes. */
static bf16fp32__plan *find_slot(bf16fp32__plan_cache *c, const bf16fp32__shape *key) {
  uint64_t h = hash_shape(key);
  for (unsigned i = 0; i < MAX_PROBE; i++) {
    bf16fp32__plan *p = window_slot(c, h, i);
    if (p->generation != c->generation) return p;
    if (memcmp(&p->key, key, sizeof *key) == 0) return p;
  }
  return NULL;
}

int bf16fp32__plan_get(bf16fp32__plan_cache *c, const bf16fp32__shape *key, bf16fp32__plan *out) {
  int found = 0;
  pthread_mutex_lock(&c->mutex);
  bf16fp32__plan *p = find_slot(c, key);
  if (p && p->generation == c->generation) {
    *out = *p;
    found = 1;
  }
  pthread_mutex_unlock(&c->mutex);
  return found;
}

int bf16fp32__plan_put(bf16fp32__plan_cache *c, const bf16fp32__plan *plan) {
  pthread_mutex_lock(&c->mutex);
  bf16fp32__plan *p = find_slot(c, &plan->key);
  if (p) {
    if (p->generation != c->generation) {
      memset(p, 0, sizeof *p);
      p->key = plan->key;
      p->generation = c->generation;
    }
    memcpy(p->order, plan->order, sizeof p->order);
    p->order_len = plan->order_len;
    p->reason = plan->reason;
    p->variant_of = plan->variant_of;
    memcpy(p->variant, plan->variant, sizeof p->variant);
  }
  pthread_mutex_unlock(&c->mutex);
  return p != NULL;
}

/* Where key's window is full: its first slot without a quarantine. A cached order is only
 * recomputed when lost, a quarantine would be tried and failed again on every call. The slot stays
 * valid (another key), so no probe path gets a hole. */
static bf16fp32__plan *unquarantined_slot(bf16fp32__plan_cache *c, const bf16fp32__shape *key) {
  uint64_t h = hash_shape(key);
  for (unsigned i = 0; i < MAX_PROBE; i++) {
    bf16fp32__plan *p = window_slot(c, h, i);
    if (!p->quarantined) return p;
  }
  return NULL;
}

int bf16fp32__plan_quarantine(bf16fp32__plan_cache *c, const bf16fp32__shape *key, int backend,
                              bf16fp32_status why) {
  pthread_mutex_lock(&c->mutex);
  bf16fp32__plan *p = find_slot(c, key);
  if (!p) p = unquarantined_slot(c, key);
  if (p) {
    if (p->generation != c->generation || memcmp(&p->key, key, sizeof *key) != 0) {
      memset(p, 0, sizeof *p);
      p->key = *key;
      p->generation = c->generation;
      p->reason = -1; /* no order yet: the next call computes it */
    }
    p->quarantined |= 1u << backend;
    p->failed_status[backend] = (uint8_t)why;
  }
  pthread_mutex_unlock(&c->mutex);
  return p != NULL;
}

void bf16fp32__plan_each_quarantined(bf16fp32__plan_cache *c,
                                     void (*fn)(void *user, const bf16fp32__plan *p), void *user) {
  pthread_mutex_lock(&c->mutex);
  for (unsigned i = 0; i < BF16FP32__PLAN_SLOTS; i++) {
    const bf16fp32__plan *p = &c->slots[i];
    if (p->generation == c->generation && p->quarantined) fn(user, p);
  }
  pthread_mutex_unlock(&c->mutex);
}
