/* Context life cycle: create (resolve the configuration, probe every backend, load the tuned
 * table), reset (free everything, re-read the environment, probe again), destroy; logging. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "context.h"
#include "device.h"
#include "tune-table.h"

void bf16fp32__log(const bf16fp32__config *cfg, int level, const char *fmt, ...) {
  if (!cfg || cfg->log_level < level) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (cfg->log_fn)
    cfg->log_fn(cfg->log_user, level, line);
  else
    fprintf(stderr, "bf16fp32: %s\n", line); /* only when logging was asked for */
}

/* Whether this is the process that created the context (not a fork's child), where CUDA's state
 * is. */
static bool in_creator(const bf16fp32_context *ctx) { return getpid() == ctx->owner; }

int bf16fp32__context_device(const bf16fp32_context *ctx) {
  /* getpid is a system call: a context without a device skips it. */
  return ctx->cfg.device >= 0 && in_creator(ctx) ? ctx->cfg.device : -1;
}

static void family_of(const bf16fp32__config *cfg, char *family, size_t len, int *sm_count) {
  int major = 0, minor = 0, sms = 0;
  char name[256];
  snprintf(family, len, "cpu");
  *sm_count = 0;
  if (cfg->device < 0) return;
  if (bf16fp32__device_describe(cfg->device, &major, &minor, &sms, name, sizeof name) != BF16FP32_OK)
    return;
  *sm_count = sms;
  if (major == 9 && minor == 0)
    snprintf(family, len, "sm_90");
  else
    snprintf(family, len, "cuda");
}

/* Probes every built backend; one that fails is unavailable with its reason, not an error. */
static void probe_all(bf16fp32_context *ctx) {
  for (int b = 0; b < bf16fp32__registry_count; b++) {
    const bf16fp32__registry_entry *e = &bf16fp32__registry[b];
    bf16fp32__backend_slot *slot = &ctx->slot[b];
    slot->state = NULL;
    slot->available = 0;
    slot->why[0] = '\0';
    atomic_store(&slot->calls, 0);
    atomic_store(&slot->failures, 0);
    if (!e->ops) {
      snprintf(slot->why, sizeof slot->why, "%s", e->not_built);
      continue;
    }
    if (e->where == BF16FP32_DEVICE && ctx->cfg.device < 0) {
      snprintf(slot->why, sizeof slot->why, "no CUDA device in this process");
      continue;
    }
    int prev = -1;
    bool on_device = e->where == BF16FP32_DEVICE;
    bf16fp32_status st = on_device ? bf16fp32__device_enter(ctx->cfg.device, &prev) : BF16FP32_OK;
    if (st == BF16FP32_OK) st = e->ops->probe(&ctx->cfg, &slot->state, slot->why, sizeof slot->why);
    if (on_device) bf16fp32__device_leave(prev);
    slot->available = st == BF16FP32_OK;
    if (!slot->available && !slot->why[0])
      snprintf(slot->why, sizeof slot->why, "%s: %s", bf16fp32_status_name(st), bf16fp32_last_error());
    bf16fp32__log(&ctx->cfg, 2, "backend %s: %s%s%s", e->name,
                  slot->available ? "available" : "unavailable", slot->why[0] ? ": " : "", slot->why);
  }
  bf16fp32__clear_error();
}

/* In a fork's child a device backend's state (handles, device memory) is the parent's: it is
 * dropped, not freed through CUDA, which the child may not call. */
static void release_all(bf16fp32_context *ctx) {
  const int device = bf16fp32__context_device(ctx);
  for (int b = 0; b < bf16fp32__registry_count; b++) {
    bf16fp32__backend_slot *slot = &ctx->slot[b];
    bool on_device = bf16fp32__registry[b].where == BF16FP32_DEVICE;
    if (slot->available && (!on_device || device >= 0)) {
      int prev = -1;
      if (on_device) bf16fp32__device_enter(device, &prev);
      bf16fp32__registry[b].ops->reset(slot->state);
      if (on_device) bf16fp32__device_leave(prev);
    }
    slot->state = NULL;
    slot->available = 0;
  }
  if (ctx->tune) bf16fp32__tune_free(ctx->tune);
  ctx->tune = NULL;
}

/* What create and reset need before anything is torn down, so that a bad environment value or
 * a corrupt tuning file changes nothing (a second resolve could fail, or read another
 * environment, and the file could fail to load, after reset had released the backends). */
static bf16fp32_status prepare(const bf16fp32_context *ctx, bf16fp32__config *cfg, int *forced,
                               bf16fp32__tune_table **tune) {
  *tune = NULL;
  bf16fp32_status st = bf16fp32__config_resolve(&ctx->opt, cfg, forced, in_creator(ctx));
  return st == BF16FP32_OK ? bf16fp32__tune_load_for_context(cfg, tune) : st;
}

/* Configuration, family, probes, tuned table: everything create and reset (re)build, from what
 * prepare gave. */
static void build(bf16fp32_context *ctx, const bf16fp32__config *cfg, int forced,
                  bf16fp32__tune_table *tune) {
  ctx->cfg = *cfg;
  atomic_store(&ctx->forced, forced);
  family_of(&ctx->cfg, ctx->family, sizeof ctx->family, &ctx->sm_count);
  probe_all(ctx);
  if (forced >= 0 && !ctx->slot[forced].available)
    bf16fp32__log(&ctx->cfg, 1, "forced backend %s is unavailable (%s): using auto",
                  bf16fp32__registry[forced].name, ctx->slot[forced].why);
  ctx->tune = tune;
  bf16fp32__plan_cache_clear(&ctx->plans);
}

bf16fp32_status bf16fp32_create(bf16fp32_context **out, const bf16fp32_options *opt) {
  bf16fp32_status st = BF16FP32_OK;
  bf16fp32_context *ctx = NULL;
  int lock_ready = 0;
  if (!out) return bf16fp32__fail(BF16FP32_NULL_POINTER, "ctx is NULL");
  *out = NULL;
  ctx = calloc(1, sizeof *ctx);
  if (!ctx) return bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "context allocation");
  ctx->owner = getpid();
  if (opt)
    ctx->opt = *opt;
  else
    bf16fp32_options_init(&ctx->opt);
  /* Keep copies of the option strings: the caller's may not outlive the context. */
  if (ctx->opt.algo) {
    snprintf(ctx->opt_algo, sizeof ctx->opt_algo, "%s", ctx->opt.algo);
    if (strlen(ctx->opt.algo) >= sizeof ctx->opt_algo)
      BF16FP32__TRY(bf16fp32__fail(BF16FP32_BAD_OPTION, "algo name too long"));
    ctx->opt.algo = ctx->opt_algo;
  }
  if (ctx->opt.tune_file) {
    if (strlen(ctx->opt.tune_file) >= sizeof ctx->opt_tune_file)
      BF16FP32__TRY(bf16fp32__fail(BF16FP32_BAD_OPTION, "tune_file path too long"));
    snprintf(ctx->opt_tune_file, sizeof ctx->opt_tune_file, "%s", ctx->opt.tune_file);
    ctx->opt.tune_file = ctx->opt_tune_file;
  }
  if (pthread_rwlock_init(&ctx->lock, NULL) != 0)
    BF16FP32__TRY(bf16fp32__fail(BF16FP32_INTERNAL, "pthread_rwlock_init failed"));
  lock_ready = 1;
  if (pthread_mutex_init(&ctx->reset_gate, NULL) != 0)
    BF16FP32__TRY(bf16fp32__fail(BF16FP32_INTERNAL, "pthread_mutex_init failed"));
  lock_ready = 2;
  BF16FP32__TRY(bf16fp32__plan_cache_init(&ctx->plans));
  int forced = -1;
  bf16fp32__config cfg;
  bf16fp32__tune_table *tune;
  BF16FP32__TRY(prepare(ctx, &cfg, &forced, &tune));
  build(ctx, &cfg, forced, tune);
  *out = ctx;
  return BF16FP32_OK;
cleanup:
  release_all(ctx);
  bf16fp32__plan_cache_destroy(&ctx->plans);
  if (lock_ready) pthread_rwlock_destroy(&ctx->lock);
  if (lock_ready == 2) pthread_mutex_destroy(&ctx->reset_gate);
  free(ctx);
  return st;
}

void bf16fp32_destroy(bf16fp32_context *ctx) {
  if (!ctx) return;
  release_all(ctx);
  bf16fp32__plan_cache_destroy(&ctx->plans);
  pthread_rwlock_destroy(&ctx->lock);
  pthread_mutex_destroy(&ctx->reset_gate);
  free(ctx);
}

void bf16fp32__context_read_lock(bf16fp32_context *ctx) {
  if (atomic_load(&ctx->resetting)) { /* pass only once the reset is done */
    pthread_mutex_lock(&ctx->reset_gate);
    pthread_mutex_unlock(&ctx->reset_gate);
  }
  pthread_rwlock_rdlock(&ctx->lock);
}

void bf16fp32__context_read_unlock(bf16fp32_context *ctx) { pthread_rwlock_unlock(&ctx->lock); }

bf16fp32_status bf16fp32_reset(bf16fp32_context *ctx) {
  if (!ctx) return bf16fp32__fail(BF16FP32_NULL_POINTER, "ctx is NULL");
  int forced;
  bf16fp32__config cfg;
  bf16fp32__tune_table *tune;
  bf16fp32_status st = prepare(ctx, &cfg, &forced, &tune);
  if (st != BF16FP32_OK) return st;
  pthread_mutex_lock(&ctx->reset_gate); /* one reset at a time; calls arriving now wait */
  atomic_store(&ctx->resetting, 1);
  pthread_rwlock_wrlock(&ctx->lock);
  release_all(ctx);
  build(ctx, &cfg, forced, tune);
  pthread_rwlock_unlock(&ctx->lock);
  atomic_store(&ctx->resetting, 0);
  pthread_mutex_unlock(&ctx->reset_gate);
  return BF16FP32_OK;
}
