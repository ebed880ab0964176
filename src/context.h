/* The context: configuration, each backend's state and counters, the plan cache, the tuned
 * table. Calls hold the lock shared (bf16fp32__context_read_lock); reset holds it exclusively,
 * and calls that arrive while it waits for the lock wait behind it. */
#ifndef BF16FP32_CONTEXT_H
#define BF16FP32_CONTEXT_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>

#include "internal.h"
#include "plan-cache.h"

typedef struct bf16fp32__tune_table bf16fp32__tune_table;

typedef struct bf16fp32__backend_slot {
  void *state;                 /* from probe; freed by reset */
  int available;               /* probe succeeded */
  char why[160];               /* why not available */
  atomic_uint_least64_t calls;
  atomic_uint_least64_t failures;
} bf16fp32__backend_slot;

struct bf16fp32_context {
  bf16fp32_options opt;        /* as given at create; strings copied below */
  char opt_algo[32];
  char opt_tune_file[1024];
  bf16fp32__config cfg;        /* options with the environment over them */
  char family[16];             /* rule family: "sm_90", "cuda" (other GPUs) or "cpu" */
  int sm_count;                /* the device's SMs (0 without one): some rules hold at one count */
  pthread_rwlock_t lock;
  pthread_mutex_t reset_gate;  /* held by a reset from before it asks for the lock to its end */
  atomic_int resetting;        /* 1 while a reset holds the gate: new calls wait at it */
  atomic_int forced;           /* registry index of the forced backend, -1 for auto */
  bf16fp32__backend_slot slot[BF16FP32__MAX_BACKENDS];
  bf16fp32__plan_cache plans;
  bf16fp32__tune_table *tune;  /* NULL: no tuned choices */
  pid_t owner;                 /* the process that created it: CUDA's state stays there */
};

/* config.c: resolves options plus environment into cfg (and the forced backend index); without
 * `with_device` (in a fork's child) CUDA is not asked and cfg->device is -1. */
bf16fp32_status bf16fp32__config_resolve(const bf16fp32_options *opt, bf16fp32__config *cfg,
                                         int *forced, int with_device);

/* context.c: a call's shared hold of the lock, taken behind a reset that waits for it. The
 * lock alone (glibc's default) lets new readers pass a waiting writer, so that threads calling
 * without a pause held a reset off for as long as they called. A thread must not take it twice
 * (a reset between would wait for the first hold, and the second for the reset). */
void bf16fp32__context_read_lock(bf16fp32_context *ctx);
void bf16fp32__context_read_unlock(bf16fp32_context *ctx);

/* context.c: the CUDA device this process may use through the context, or -1. CUDA's state does
 * not carry into a fork's child: there the context acts as one made without a device. */
int bf16fp32__context_device(const bf16fp32_context *ctx);

/* rules.c: the built-in rule's backend (registry index) for a shape in a family on a device with
 * sm_count SMs, for a context that launches with PDL or not, or -1. */
int bf16fp32__rule_choice(const char *family, int sm_count, bool pdl, const bf16fp32__shape *s,
                          char *why, size_t why_len);

#endif
