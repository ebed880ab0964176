/* Public entry points: validate once, then hand the call to the dispatcher under the
 * context's shared lock. */
#include <stdio.h>
#include <string.h>

#include "context.h"
#include "device.h"
#include "dispatch.h"
#include "validate.h"

/* Device calls run with the context's device current, on a stream of it, and know whether the
 * stream captures. */
typedef struct call_scope {
  int prev_device;
  bool on_device;
} call_scope;

static bf16fp32_status enter(bf16fp32_context *ctx, bf16fp32_location where, void *stream,
                             call_scope *sc, bool *capturing) {
  sc->prev_device = -1;
  sc->on_device = where == BF16FP32_DEVICE;
  *capturing = false;
  if (!sc->on_device) return BF16FP32_OK;
  bf16fp32_status st = bf16fp32__device_enter(ctx->cfg.device, &sc->prev_device);
  if (st == BF16FP32_OK) st = bf16fp32__stream_check(stream, ctx->cfg.device, capturing);
  if (st != BF16FP32_OK) bf16fp32__device_leave(sc->prev_device);
  return st;
}

static void leave(call_scope *sc) {
  if (sc->on_device) bf16fp32__device_leave(sc->prev_device);
}

static void zero_host(float *out, int64_t m, int64_t n, int64_t ldo) {
  for (int64_t i = 0; i < m; i++) memset(out + i * ldo, 0, (size_t)n * sizeof(float));
}

bf16fp32_status bf16fp32_linear(bf16fp32_context *ctx, bf16fp32_location where, int64_t m,
                                int64_t n, int64_t k, const uint16_t *x, int64_t ldx,
                                const uint16_t *w, int64_t ldw, float *out, int64_t ldo,
                                void *stream) {
  if (!ctx) return bf16fp32__fail(BF16FP32_NULL_POINTER, "ctx is NULL");
  call_scope sc;
  bf16fp32__call call;
  memset(&call, 0, sizeof call);
  /* Under the lock from the start: a concurrent reset rewrites the context's device. */
  bf16fp32__context_read_lock(ctx);
  bf16fp32_status st = bf16fp32__validate(where, m, n, k, x, ldx, w, ldw, out, ldo,
                                          bf16fp32__context_device(ctx));
  const bool work = st == BF16FP32_OK && m > 0 && n > 0;
  if (work) st = enter(ctx, where, stream, &sc, &call.capturing);
  if (work && st == BF16FP32_OK) {
    if (k == 0) { /* the empty sum: out = 0 */
      if (where == BF16FP32_HOST)
        zero_host(out, m, n, ldo);
      else
        st = bf16fp32__device_zero(out, m, n, ldo, stream);
    } else {
      call.shape = bf16fp32__make_shape(where, m, n, k, ldx, ldw, ldo, x, w, out);
      call.x = x, call.w = w, call.out = out, call.stream = stream;
      st = bf16fp32__dispatch(ctx, &call);
    }
    leave(&sc);
  }
  bf16fp32__context_read_unlock(ctx);
  return st;
}

/* The key of a contiguous call with 16-byte aligned pointers, as prewarm and select assume. */
static bf16fp32__shape contiguous_shape(bf16fp32_location where, int64_t m, int64_t n, int64_t k) {
  bf16fp32__shape s;
  s.m = m, s.n = n, s.k = k, s.ldx = k, s.ldw = k, s.ldo = n;
  s.where = (int32_t)where;
  s.align = 16;
  return s;
}

/* A shape without operands (m: one of prewarm's, or select's): as a contiguous call's. */
static bf16fp32_status check_shape_args(bf16fp32_location where, int64_t m, int64_t n, int64_t k) {
  if (where != BF16FP32_HOST && where != BF16FP32_DEVICE)
    return bf16fp32__fail(BF16FP32_BAD_OPTION, "where=%d is neither HOST nor DEVICE", (int)where);
  return bf16fp32__validate_contiguous(m, n, k);
}

bf16fp32_status bf16fp32_prewarm(bf16fp32_context *ctx, bf16fp32_location where, int64_t n,
                                 int64_t k, const int64_t *ms, int count, void *stream) {
  if (!ctx) return bf16fp32__fail(BF16FP32_NULL_POINTER, "ctx is NULL");
  bf16fp32_status st = check_shape_args(where, 0, n, k); /* the spans: per M, below */
  if (st != BF16FP32_OK) return st;
  if (count < 0) return bf16fp32__fail(BF16FP32_BAD_SIZE, "count=%d", count);
  if (count > 0 && !ms) return bf16fp32__fail(BF16FP32_NULL_POINTER, "ms is NULL");
  for (int i = 0; i < count; i++)
    if ((st = bf16fp32__validate_contiguous(ms[i], n, k)) != BF16FP32_OK) return st;
  call_scope sc;
  bool capturing = false;
  bf16fp32__context_read_lock(ctx);
  if (where == BF16FP32_DEVICE && bf16fp32__context_device(ctx) < 0)
    st = bf16fp32__fail(BF16FP32_NO_DEVICE,
                        "device prewarm but the context has no CUDA device in this process");
  else
    st = enter(ctx, where, stream, &sc, &capturing);
  if (st == BF16FP32_OK) {
    if (capturing)
      st = bf16fp32__fail(BF16FP32_NOT_PREWARMED, "prewarm called while the stream is capturing");
    /* Past an M that cannot be made ready the others still are, unless the device is lost;
     * the last failure is returned, with its detail in last_error. */
    bf16fp32_status failed = BF16FP32_OK;
    for (int i = 0; i < count && st == BF16FP32_OK; i++) {
      if (ms[i] == 0 || n == 0 || k == 0) continue;
      bf16fp32__shape s = contiguous_shape(where, ms[i], n, k);
      bf16fp32_status one = bf16fp32__prewarm_shape(ctx, &s, stream);
      if (one == BF16FP32_OK) continue;
      failed = one;
      if (!bf16fp32__falls_back(one)) break;
    }
    if (st == BF16FP32_OK) st = failed;
    leave(&sc);
  }
  bf16fp32__context_read_unlock(ctx);
  return st;
}

bf16fp32_status bf16fp32_force_backend(bf16fp32_context *ctx, const char *name) {
  if (!ctx) return bf16fp32__fail(BF16FP32_NULL_POINTER, "ctx is NULL");
  int b = -1;
  bf16fp32_status st = BF16FP32_OK;
  if (name && strcmp(name, "auto") != 0) {
    b = bf16fp32__registry_find(name);
    if (b < 0) return bf16fp32__fail(BF16FP32_UNKNOWN_BACKEND, "'%.64s' is not a backend", name);
  }
  bf16fp32__context_read_lock(ctx); /* the slots are reset's to rewrite */
  if (b >= 0 && !ctx->slot[b].available)
    st = bf16fp32__fail(BF16FP32_BACKEND_UNAVAILABLE, "%s: %s", name, ctx->slot[b].why);
  else
    atomic_store(&ctx->forced, b); /* plans are built without it: none needs clearing */
  bf16fp32__context_read_unlock(ctx);
  return st;
}

bf16fp32_status bf16fp32_select(bf16fp32_context *ctx, bf16fp32_location where, int64_t m,
                                int64_t n, int64_t k, const char **name, char *why, size_t why_len) {
  if (!ctx || !name) return bf16fp32__fail(BF16FP32_NULL_POINTER, "ctx or name is NULL");
  *name = NULL;
  if (why && why_len) why[0] = '\0';
  bf16fp32_status st = check_shape_args(where, m, n, k);
  if (st != BF16FP32_OK) return st;
  if (m == 0 || n == 0 || k == 0)
    return bf16fp32__fail(BF16FP32_BAD_SIZE, "select needs m, n, k >= 1");
  int first = -1;
  bf16fp32__shape s = contiguous_shape(where, m, n, k);
  bf16fp32__context_read_lock(ctx);
  if (where == BF16FP32_DEVICE && bf16fp32__context_device(ctx) < 0)
    st = bf16fp32__fail(BF16FP32_NO_DEVICE,
                        "device select but the context has no CUDA device in this process");
  else
    st = bf16fp32__explain(ctx, &s, &first, why, why_len);
  bf16fp32__context_read_unlock(ctx);
  if (st == BF16FP32_OK) *name = bf16fp32__registry[first].name;
  return st;
}

bf16fp32_status bf16fp32_backend_info_get(bf16fp32_context *ctx, int index, bf16fp32_backend_info *info) {
  if (!ctx || !info) return bf16fp32__fail(BF16FP32_NULL_POINTER, "ctx or info is NULL");
  if (index < 0 || index >= bf16fp32__registry_count)
    return bf16fp32__fail(BF16FP32_BAD_SIZE, "backend index %d of %d", index, bf16fp32__registry_count);
  const bf16fp32__backend_slot *slot = &ctx->slot[index];
  memset(info, 0, sizeof *info);
  info->name = bf16fp32__registry[index].name;
  info->where = bf16fp32__registry[index].where;
  bf16fp32__context_read_lock(ctx); /* the slots are reset's to rewrite */
  info->available = slot->available;
  snprintf(info->reason, sizeof info->reason, "%s", slot->available ? "" : slot->why);
  info->calls = atomic_load(&slot->calls);
  info->failures = atomic_load(&slot->failures);
  bf16fp32__context_read_unlock(ctx);
  return BF16FP32_OK;
}

typedef struct quarantine_walk {
  bf16fp32_quarantine_entry *list;
  int cap, count;
} quarantine_walk;

static void collect(void *user, const bf16fp32__plan *p) {
  quarantine_walk *q = user;
  for (int b = 0; b < bf16fp32__registry_count; b++) {
    if (!(p->quarantined & (1u << b))) continue;
    if (q->count < q->cap) {
      bf16fp32_quarantine_entry *e = &q->list[q->count];
      e->backend = bf16fp32__registry[b].name;
      e->where = (bf16fp32_location)p->key.where;
      e->m = p->key.m, e->n = p->key.n, e->k = p->key.k;
      e->ldx = p->key.ldx, e->ldw = p->key.ldw, e->ldo = p->key.ldo;
      e->status = (bf16fp32_status)p->failed_status[b];
    }
    q->count++;
  }
}

bf16fp32_status bf16fp32_quarantine_list(bf16fp32_context *ctx, bf16fp32_quarantine_entry *list,
                                         int cap, int *count) {
  if (!ctx || !count || (cap > 0 && !list))
    return bf16fp32__fail(BF16FP32_NULL_POINTER, "ctx, count or list is NULL");
  if (cap < 0) return bf16fp32__fail(BF16FP32_BAD_SIZE, "cap=%d", cap);
  quarantine_walk q = {list, cap, 0};
  bf16fp32__context_read_lock(ctx);
  bf16fp32__plan_each_quarantined(&ctx->plans, collect, &q);
  bf16fp32__context_read_unlock(ctx);
  *count = q.count;
  return BF16FP32_OK;
}
