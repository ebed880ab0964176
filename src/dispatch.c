/* The dispatcher: the order in which backends are tried for a shape (forced, tuned, rule,
 * registry), the fallback on failure, and the per-shape quarantine. */
#include <stdio.h>
#include <string.h>

#include "context.h"
#include "dispatch.h"
#include "tune-table.h"

/* How a plan's first backend was chosen (bf16fp32__plan.reason). */
enum { REASON_FORCED, REASON_TUNED, REASON_RULE, REASON_REGISTRY, REASON_NONE };

static int usable(bf16fp32_context *ctx, int b, const bf16fp32__shape *s) {
  const bf16fp32__registry_entry *e = &bf16fp32__registry[b];
  return e->where == (bf16fp32_location)s->where && ctx->slot[b].available &&
         e->ops->supports(ctx->slot[b].state, s);
}

static bool listed(const bf16fp32__plan *p, int b) {
  for (int i = 0; i < p->order_len; i++)
    if (p->order[i] == b) return true;
  return false;
}

static void add_unique(bf16fp32__plan *p, int b) {
  if (!listed(p, b)) p->order[p->order_len++] = (uint8_t)b;
}

/* Why backend b (of the shape's location) does not run a shape: unavailable, and why, or not
 * taking it. tag follows the name (" (forced)" or ""). */
static void why_not_usable(bf16fp32_context *ctx, int b, const char *tag, char *buf, size_t len) {
  if (ctx->slot[b].available)
    snprintf(buf, len, "%s%s does not run this shape", bf16fp32__registry[b].name, tag);
  else
    snprintf(buf, len, "%s%s is unavailable: %s", bf16fp32__registry[b].name, tag, ctx->slot[b].why);
}

/* Appends to why that the forced backend (of the shape's location) is passed over, and why:
 * else the reason written (a rule's, the registry's) reads as the outcome of the forcing. */
static void note_forced_skipped(bf16fp32_context *ctx, const bf16fp32__shape *s, int forced,
                                char *why, size_t why_len) {
  if (!why || !why_len || forced < 0 ||
      bf16fp32__registry[forced].where != (bf16fp32_location)s->where)
    return;
  char note[320];
  why_not_usable(ctx, forced, " (forced)", note, sizeof note);
  const size_t used = strlen(why);
  snprintf(why + used, why_len - used, "; %s", note);
}

/* Fills p->order: forced (when >= 0), then the tuned winner and runner-up, then the rule, then
 * the registry. Cached plans are built without the forced backend: forcing changes no plan. */
static void build_order(bf16fp32_context *ctx, const bf16fp32__shape *s, int forced,
                        bf16fp32__plan *p, char *why, size_t why_len) {
  int tuned[2] = {-1, -1};
  const char *variants[2] = {NULL, NULL};
  const bool pdl = ctx->cfg.use_pdl != 0;
  int ntuned = ctx->tune ? bf16fp32__tune_choice(ctx->tune, s, pdl, tuned, variants, NULL, 0) : 0;
  int rule = bf16fp32__rule_choice(ctx->family, ctx->sm_count, pdl, s, NULL, 0);
  p->order_len = 0;
  p->reason = REASON_NONE;
  p->variant_of = -1;
  p->variant[0] = '\0';
  if (forced >= 0 && usable(ctx, forced, s)) {
    add_unique(p, forced);
    p->reason = REASON_FORCED;
    if (why) snprintf(why, why_len, "forced (%s)", bf16fp32__registry[forced].name);
  }
  for (int i = 0; i < ntuned; i++) {
    if (tuned[i] < 0 || !usable(ctx, tuned[i], s)) continue;
    if (p->order_len == 0) {
      p->reason = REASON_TUNED;
      if (why) bf16fp32__tune_choice(ctx->tune, s, pdl, tuned, NULL, why, why_len);
    }
    /* A backend runs one configuration per shape: the first tuned one that names it (a forced
     * backend, listed already, too: the cached plan, built without it, gives it that one). */
    if (variants[i] && p->variant_of < 0 && strlen(variants[i]) < sizeof p->variant &&
        (!listed(p, tuned[i]) || tuned[i] == forced)) {
      p->variant_of = (int8_t)tuned[i];
      snprintf(p->variant, sizeof p->variant, "%s", variants[i]);
    }
    add_unique(p, tuned[i]);
  }
  if (rule >= 0 && usable(ctx, rule, s)) {
    if (p->order_len == 0) {
      p->reason = REASON_RULE;
      if (why) bf16fp32__rule_choice(ctx->family, ctx->sm_count, pdl, s, why, why_len);
    }
    add_unique(p, rule);
  }
  for (int b = 0; b < bf16fp32__registry_count; b++) {
    if (!usable(ctx, b, s)) continue;
    if (p->order_len == 0) {
      p->reason = REASON_REGISTRY;
      if (why) snprintf(why, why_len, "first backend in registry order that supports the shape");
    }
    add_unique(p, b);
  }
  if (p->order_len == 0 && why) snprintf(why, why_len, "no available backend supports this shape");
  if (forced >= 0 && !listed(p, forced)) note_forced_skipped(ctx, s, forced, why, why_len);
}

/* The plan for a shape: from the cache, or built and cached (when the cache has room). */
static void plan_for(bf16fp32_context *ctx, const bf16fp32__shape *s, bf16fp32__plan *p) {
  int found = bf16fp32__plan_get(&ctx->plans, s, p);
  if (found && p->reason >= 0) return;
  uint32_t quarantined = found ? p->quarantined : 0; /* an entry made by a quarantine alone */
  memset(p, 0, sizeof *p);
  p->key = *s;
  build_order(ctx, s, -1, p, NULL, 0);
  bf16fp32__plan_put(&ctx->plans, p);
  p->quarantined = quarantined;
}

/* The backends to try for a shape, in order: the forced one first, then the plan's order,
 * leaving out the ones quarantined for the shape. */
static int call_order(bf16fp32_context *ctx, const bf16fp32__shape *s, bf16fp32__plan *p,
                      int *order) {
  int len = 0;
  plan_for(ctx, s, p);
  int forced = atomic_load(&ctx->forced);
  if (forced >= 0 && usable(ctx, forced, s) && !(p->quarantined & (1u << forced)))
    order[len++] = forced;
  for (int i = 0; i < p->order_len; i++) {
    int b = p->order[i];
    if (b != forced && !(p->quarantined & (1u << b))) order[len++] = b;
  }
  return len;
}

/* The variant the plan gives backend b, or NULL. */
static const char *variant_for(const bf16fp32__plan *p, int b) {
  return p->variant_of == b ? p->variant : NULL;
}

bool bf16fp32__falls_back(bf16fp32_status st) {
  return st != BF16FP32_CUDA_FATAL && st != BF16FP32_CAPTURE_BROKEN;
}

bf16fp32_status bf16fp32__dispatch(bf16fp32_context *ctx, const bf16fp32__call *call) {
  bf16fp32__plan p;
  memset(&p, 0, sizeof p);
  int order[BF16FP32__MAX_BACKENDS + 1];
  int len = call_order(ctx, &call->shape, &p, order);
  /* The outcome must not depend on the order the backends came in: NOT_PREWARMED wins (its
   * remedy is the caller's), and a real failure is reported even when others declined after it. */
  bool not_prewarmed = false;
  int failed = 0, declined = 0;
  char failure[320] = ""; /* the last failing backend's own detail, for the caller's */
  /* The last decline that said why (a stream short of memory), read only if still last_error. */
  int said_b = -1;
  unsigned said_serial = 0;
  bf16fp32__call tuned = *call;
  for (int i = 0; i < len; i++) {
    int b = order[i];
    bf16fp32__backend_slot *slot = &ctx->slot[b];
    tuned.variant = variant_for(&p, b);
    const unsigned serial = bf16fp32__error_serial();
    bf16fp32_status st = bf16fp32__registry[b].ops->run(slot->state, &tuned);
    if (st == BF16FP32_OK) {
      atomic_fetch_add(&slot->calls, 1);
      return BF16FP32_OK;
    }
    if (st == BF16FP32_DECLINED || st == BF16FP32_NOT_PREWARMED) {
      not_prewarmed |= st == BF16FP32_NOT_PREWARMED;
      declined++;
      if (bf16fp32__error_serial() != serial) said_b = b, said_serial = bf16fp32__error_serial();
      continue;
    }
    atomic_fetch_add(&slot->failures, 1);
    if (!bf16fp32__falls_back(st)) return st;
    bf16fp32__plan_quarantine(&ctx->plans, &call->shape, b, st);
    snprintf(failure, sizeof failure, "; the last failure: %s: %s: %s", bf16fp32__registry[b].name,
             bf16fp32_status_name(st), bf16fp32_last_error());
    bf16fp32__log(&ctx->cfg, 1, "%s failed on m=%lld n=%lld k=%lld (%s: %s); quarantined for this shape",
                  bf16fp32__registry[b].name, (long long)call->shape.m, (long long)call->shape.n,
                  (long long)call->shape.k, bf16fp32_status_name(st), bf16fp32_last_error());
    failed++;
  }
  if (not_prewarmed)
    return bf16fp32__fail(BF16FP32_NOT_PREWARMED,
                          "m=%lld n=%lld k=%lld met during graph capture: prewarm it on this stream "
                          "first; no capture-safe backend could run it%s",
                          (long long)call->shape.m, (long long)call->shape.n, (long long)call->shape.k,
                          failure);
  char said[320] = "";
  if (said_b >= 0 && bf16fp32__error_serial() == said_serial)
    snprintf(said, sizeof said, "; the last decline: %s: %s", bf16fp32__registry[said_b].name,
             bf16fp32_last_error());
  int quarantined = 0; /* left out of the order by earlier failures of this shape */
  for (int i = 0; i < p.order_len; i++) quarantined += (p.quarantined >> p.order[i]) & 1u;
  return bf16fp32__fail(BF16FP32_UNSUPPORTED,
                        "m=%lld n=%lld k=%lld: no backend could run it (%d failed, %d declined, %d "
                        "quarantined for this shape%s%s)",
                        (long long)call->shape.m, (long long)call->shape.n, (long long)call->shape.k,
                        failed, declined, quarantined, failure, said);
}

bf16fp32_status bf16fp32__explain(bf16fp32_context *ctx, const bf16fp32__shape *s, int *first,
                                  char *why, size_t why_len) {
  bf16fp32__plan p, cached;
  memset(&p, 0, sizeof p);
  build_order(ctx, s, atomic_load(&ctx->forced), &p, why, why_len);
  *first = -1;
  uint32_t quarantined = bf16fp32__plan_get(&ctx->plans, s, &cached) ? cached.quarantined : 0;
  for (int i = 0; i < p.order_len; i++) {
    if (quarantined & (1u << p.order[i])) continue;
    for (int j = 0; j < i && why && why_len; j++) { /* every one passed over, not the first alone */
      size_t used = strlen(why);
      snprintf(why + used, why_len - used, "; %s is quarantined for this shape",
               bf16fp32__registry[p.order[j]].name);
    }
    *first = p.order[i];
    return BF16FP32_OK;
  }
  return bf16fp32__fail(BF16FP32_UNSUPPORTED, "no available backend supports this shape");
}

int bf16fp32__auto_order(bf16fp32_context *ctx, const bf16fp32__shape *s, int first[2],
                         char variant[2][BF16FP32__VARIANT_LEN]) {
  bf16fp32__plan p, cached;
  memset(&p, 0, sizeof p);
  build_order(ctx, s, atomic_load(&ctx->forced), &p, NULL, 0);
  uint32_t quarantined = bf16fp32__plan_get(&ctx->plans, s, &cached) ? cached.quarantined : 0;
  int n = 0;
  for (int i = 0; i < p.order_len && n < 2; i++) {
    if (quarantined & (1u << p.order[i])) continue;
    first[n] = p.order[i];
    snprintf(variant[n], BF16FP32__VARIANT_LEN, "%s", p.variant_of == p.order[i] ? p.variant : "");
    n++;
  }
  return n;
}

/* The DECLINED of a backend asked by index for a shape it does not take, named. */
static bf16fp32_status refuse_one(bf16fp32_context *ctx, int backend) {
  if (backend < 0 || backend >= bf16fp32__registry_count)
    return bf16fp32__fail(BF16FP32_DECLINED, "no backend %d", backend);
  char msg[320];
  why_not_usable(ctx, backend, "", msg, sizeof msg);
  return bf16fp32__fail(BF16FP32_DECLINED, "%s", msg);
}

bf16fp32_status bf16fp32__run_one(bf16fp32_context *ctx, int backend, const bf16fp32__call *call) {
  if (backend < 0 || backend >= bf16fp32__registry_count || !usable(ctx, backend, &call->shape))
    return refuse_one(ctx, backend);
  bf16fp32__backend_slot *slot = &ctx->slot[backend];
  bf16fp32_status st = bf16fp32__registry[backend].ops->run(slot->state, call);
  if (st == BF16FP32_OK) atomic_fetch_add(&slot->calls, 1);
  else if (st != BF16FP32_DECLINED && st != BF16FP32_NOT_PREWARMED) /* as the dispatcher counts */
    atomic_fetch_add(&slot->failures, 1);
  return st;
}

bf16fp32_status bf16fp32__prewarm_one(bf16fp32_context *ctx, int backend, const bf16fp32__shape *s,
                                      const char *variant, void *stream) {
  if (backend < 0 || backend >= bf16fp32__registry_count || !usable(ctx, backend, s))
    return refuse_one(ctx, backend);
  return bf16fp32__registry[backend].ops->prewarm(ctx->slot[backend].state, s, variant, stream);
}

int bf16fp32__variants_one(bf16fp32_context *ctx, int backend, const bf16fp32__shape *s,
                           char (*names)[BF16FP32__VARIANT_LEN], int max) {
  if (backend < 0 || backend >= bf16fp32__registry_count || !usable(ctx, backend, s) ||
      !bf16fp32__registry[backend].ops->variants)
    return 0;
  return bf16fp32__registry[backend].ops->variants(ctx->slot[backend].state, s, names, max);
}

bf16fp32_status bf16fp32__prewarm_shape(bf16fp32_context *ctx, const bf16fp32__shape *s,
                                        void *stream) {
  /* The first backend auto tries and one fallback, so that a fallback during capture is ready
   * too; further fallbacks (the fp32 path would allocate (M+N)K fp32 copies) stay cold. */
  int ready = 0;
  bf16fp32_status failed = BF16FP32_OK;
  char failure[320] = "";
  bf16fp32__plan p;
  memset(&p, 0, sizeof p);
  int order[BF16FP32__MAX_BACKENDS + 1];
  int len = call_order(ctx, s, &p, order);
  for (int i = 0; i < len && ready < 2; i++) {
    int b = order[i];
    bf16fp32_status st =
        bf16fp32__registry[b].ops->prewarm(ctx->slot[b].state, s, variant_for(&p, b), stream);
    ready += st == BF16FP32_OK;
    if (st == BF16FP32_OK || st == BF16FP32_DECLINED) continue;
    atomic_fetch_add(&ctx->slot[b].failures, 1); /* a quarantine, as a call's failure is */
    if (!bf16fp32__falls_back(st)) return st;
    bf16fp32__plan_quarantine(&ctx->plans, s, b, st);
    failed = st;
    snprintf(failure, sizeof failure, "%s: %s", bf16fp32__registry[b].name, bf16fp32_last_error());
    bf16fp32__log(&ctx->cfg, 1, "prewarm of %s failed on m=%lld n=%lld k=%lld (%s); quarantined "
                  "for this shape", bf16fp32__registry[b].name, (long long)s->m, (long long)s->n,
                  (long long)s->k, failure);
  }
  if (ready > 0) return BF16FP32_OK;
  /* Nothing is ready: a call of this shape would fail, so the prewarm says so now. */
  if (failed != BF16FP32_OK)
    return bf16fp32__fail(failed, "prewarm of m=%lld n=%lld k=%lld: no backend could be made "
                          "ready (%s)", (long long)s->m, (long long)s->n, (long long)s->k, failure);
  return bf16fp32__fail(BF16FP32_UNSUPPORTED, "prewarm of m=%lld n=%lld k=%lld: no backend takes "
                        "this shape", (long long)s->m, (long long)s->n, (long long)s->k);
}

void bf16fp32__forget_stream(bf16fp32_context *ctx, void *stream) {
  for (int b = 0; b < bf16fp32__registry_count; b++) {
    const bf16fp32__backend *ops = bf16fp32__registry[b].ops;
    if (ops && ops->forget_stream && ctx->slot[b].available)
      ops->forget_stream(ctx->slot[b].state, stream);
  }
}

int bf16fp32__backend_available(bf16fp32_context *ctx, int backend) {
  return backend >= 0 && backend < bf16fp32__registry_count && ctx->slot[backend].available;
}

const bf16fp32__config *bf16fp32__context_config(bf16fp32_context *ctx) { return &ctx->cfg; }
