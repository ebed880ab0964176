/* The tune run (bf16fp32_tune, `bf16fp32 tune`): for each (N, K) and M bucket, every available
 * backend is checked against the oracle and timed by the measure protocol; the fastest and
 * the second are merged into the tuning file under its lock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "device.h"
#include "dispatch.h"
#include "step.h"
#include "tune-file.h"
#include "tune.h"
#include "validate.h"

#define MAX_DIM (((int64_t)1 << 31) - 1) /* the suite files' limit; far above real weights */

/* A candidate is one registry backend run through the context. Tuned under PDL, a backend
 * that launches plainly takes turns with one that launches under PDL (`partner`, call by call,
 * each on its own operand copy): between two of our PDL calls it also costs the next one its
 * early start, which a chain of its own calls cannot show (on the H200 a decode step under PDL
 * ran 7 % faster at batch 64 with every GEMM on smallm than with the chains' choice of cuBLAS
 * for three of four shapes). Its time is then the pair's less the partner's alone. */
typedef struct cand_user {
  bf16fp32_context *ctx;
  int backend;
  int partner; /* registry index, or -1: alone */
  int pairs;   /* partner set and it runs this shape: the calls alternate */
  int turn;    /* the partner's call is next */
  const char *variant; /* the backend's variant (variant.h), or NULL */
} cand_user;

static bf16fp32_status cand_run(void *user, const bf16fp32__call *call) {
  cand_user *u = user;
  const bool partners_turn = u->pairs && u->turn;
  bf16fp32__call c = *call;
  c.variant = partners_turn ? NULL : u->variant;
  u->turn = u->pairs && !u->turn;
  return bf16fp32__run_one(u->ctx, partners_turn ? u->partner : u->backend, &c);
}

/* Before each shape's check and capture: the first call (the checked eager run) is the
 * backend's own. */
static bf16fp32_status cand_prewarm(void *user, const bf16fp32__shape *s, void *stream) {
  cand_user *u = user;
  u->turn = 0;
  u->pairs = u->partner >= 0 && bf16fp32__prewarm_one(u->ctx, u->partner, s, NULL, stream) == BF16FP32_OK;
  return bf16fp32__prewarm_one(u->ctx, u->backend, s, u->variant, stream);
}

/* Variants are timed per backend and shape besides its default (BF16FP32__TUNE_VARIANTS):
 * cuBLASLt's next heuristic choices were up to 10 % faster than its first at M <= 256 on the
 * H200 (512x7168 M = 128, 256x7168 M = 256) and up to 14 % at prefill sizes (bench/lt-algos.cu,
 * docs/lt-algos-h200.txt). */
bool bf16fp32__tune_variant_name(char *buf, const char *backend, const char *variant) {
  int len = snprintf(buf, BF16FP32__TUNE_NAME_LEN, "%s@%s", backend, variant);
  return len >= 0 && len < BF16FP32__TUNE_NAME_LEN;
}

int bf16fp32__tune_variant_names(bf16fp32_context *ctx, int backend, const bf16fp32__shape *s,
                                 char (*names)[BF16FP32__TUNE_NAME_LEN], int max) {
  char found[BF16FP32__TUNE_VARIANTS][BF16FP32__VARIANT_LEN];
  const int nv = bf16fp32__variants_one(ctx, backend, s, found, BF16FP32__TUNE_VARIANTS);
  int count = 0;
  for (int v = 0; v < nv && count < max; v++)
    count += bf16fp32__tune_variant_name(names[count], bf16fp32__registry[backend].name, found[v]);
  return count;
}

/* Appends, after the `base` registry candidates, one candidate per variant that a backend
 * offers for (where, m, n, k); returns the new count. Names and variants live in `names`. */
static int add_variants(bf16fp32_context *ctx, int where, int pdl, int64_t m, int64_t n, int64_t k,
                        bf16fp32__candidate *cands, cand_user *users, int base,
                        char (*names)[BF16FP32__TUNE_NAME_LEN]) {
  int count = base;
  /* Operands at NULL: 16-byte aligned, as the measure's own buffers. */
  const bf16fp32__shape s =
      bf16fp32__make_shape((bf16fp32_location)where, m, n, k, k, k, n, NULL, NULL, NULL);
  for (int i = 0; i < base; i++) {
    /* Under PDL only the variants of backends that launch under it: one that launches plainly
     * is timed in turns with one of ours, and on the H200 two of the five cuBLASLt variants that
     * won so at M = 256 then took 1.07x and 1.18x cuBLAS's time in the bench, and the pro decode
     * step under PDL 110 us longer at batch 256 (docs/h200-results.md, session 50). */
    if (pdl && !bf16fp32__registry[users[i].backend].pdl) continue;
    const int nv = bf16fp32__tune_variant_names(ctx, users[i].backend, &s, names + (count - base),
                                                base + BF16FP32__TUNE_VARIANT_ROOM - count);
    for (int v = 0; v < nv; v++) {
      users[count] = users[i];
      users[count].variant = strchr(names[count - base], '@') + 1;
      cands[count] = cands[i];
      cands[count].name = names[count - base];
      cands[count].user = &users[count];
      count++;
    }
  }
  return count;
}

/* The paired candidates' own time: 2 x (the pair's mean per call) less the partner's alone (its
 * default: the pair runs no variant of it). Without the partner's time (it failed its check),
 * or with nothing left, no time: dropped. */
static void unpair_times(bf16fp32__candidate *c, const cand_user *u, int count) {
  for (int i = 0; i < count; i++) {
    if (!u[i].pairs || c[i].status != BF16FP32_OK || c[i].median_us < 0) continue;
    int p = -1;
    for (int j = 0; j < count && p < 0; j++)
      if (u[j].backend == u[i].partner && u[j].partner < 0 && !u[j].variant) p = j;
    const bool partner_timed = p >= 0 && c[p].status == BF16FP32_OK && c[p].median_us >= 0;
    const double own = partner_timed ? 2 * c[i].median_us - c[p].median_us : -1;
    c[i].min_us = c[i].max_us = -1; /* the pair's rounds, not this candidate's own */
    if (own > 0) {
      c[i].median_us = own;
    } else {
      c[i].status = BF16FP32_UNSUPPORTED;
      c[i].median_us = -1;
      snprintf(c[i].detail, sizeof c[i].detail, "timed in turns with %s, %s",
               bf16fp32__registry[u[i].partner].name,
               partner_timed ? "which took all of the pair's time" : "which has no time");
    }
  }
}

static void merge_warning(void *user, int line, const char *msg) {
  const bf16fp32__config *cfg = user;
  if (line > 0)
    bf16fp32__log(cfg, 1, "tune: merging into %s, line %d: %s: malformed", cfg->tune_file, line, msg);
  else
    bf16fp32__log(cfg, 1, "tune: merging into %s: %s", cfg->tune_file, msg);
}

/* A GEMM of a step: its weight shape and its place in the request. */
typedef struct step_gemm {
  int64_t n, k;
  int index;
} step_gemm;

static int cmp_step_gemm(const void *a, const void *b) {
  const step_gemm *x = a, *y = b;
  if (x->n != y->n) return (x->n > y->n) - (x->n < y->n);
  if (x->k != y->k) return (x->k > y->k) - (x->k < y->k);
  return (x->index > y->index) - (x->index < y->index);
}

/* BAD_OPTION naming the first two GEMMs of the same weight shape, if any: sorted, so that a long
 * request is checked in n log n, not n^2. */
static bf16fp32_status check_step_unique(const int64_t *nk_pairs, int count) {
  step_gemm *g = malloc((size_t)count * sizeof *g);
  if (!g) return bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "tune: %d GEMMs", count);
  for (int i = 0; i < count; i++) g[i] = (step_gemm){nk_pairs[2 * i], nk_pairs[2 * i + 1], i};
  qsort(g, (size_t)count, sizeof *g, cmp_step_gemm);
  int j = -1, i = -1; /* the pair with the lowest second index */
  for (int t = 1; t < count; t++)
    if (g[t].n == g[t - 1].n && g[t].k == g[t - 1].k && (i < 0 || g[t].index < i))
      j = g[t - 1].index, i = g[t].index;
  bf16fp32_status st = BF16FP32_OK;
  if (i >= 0)
    st = bf16fp32__fail(BF16FP32_BAD_OPTION,
                        "tune: GEMMs %d and %d of the step are both %lldx%lld: give it once, with its "
                        "calls added", j, i, (long long)nk_pairs[2 * i], (long long)nk_pairs[2 * i + 1]);
  free(g);
  return st;
}

/* A step: on the device, calls per step in [0, 2^20] with at least one and at most 2^20 in all,
 * each weight shape once (its entries are keyed by (N, K)). */
static bf16fp32_status check_step(const bf16fp32__tune_request *r) {
  if (r->where != BF16FP32_DEVICE)
    return bf16fp32__fail(BF16FP32_BAD_OPTION, "tune: a step is tuned on the device only");
  int64_t total = 0;
  for (int i = 0; i < r->pair_count; i++) {
    if (r->calls[i] < 0 || r->calls[i] > BF16FP32__STEP_MAX_CALLS)
      return bf16fp32__fail(BF16FP32_BAD_SIZE, "tune: calls[%d]=%d (0 to 2^20)", i, r->calls[i]);
    total += r->calls[i];
    if (total > BF16FP32__STEP_MAX_CALLS)
      return bf16fp32__fail(BF16FP32_BAD_SIZE, "tune: more than 2^20 calls per step");
  }
  if (total == 0) return bf16fp32__fail(BF16FP32_BAD_SIZE, "tune: the step has no calls");
  bf16fp32_status st = check_step_unique(r->nk_pairs, r->pair_count);
  if (st != BF16FP32_OK) return st;
  return bf16fp32__step_check_fillers("tune", r->filler_kb, r->filler_trigger);
}

static bf16fp32_status check_request(const bf16fp32__config *cfg, int device,
                                     const bf16fp32__tune_request *r) {
  if (r->where != BF16FP32_HOST && r->where != BF16FP32_DEVICE)
    return bf16fp32__fail(BF16FP32_BAD_OPTION, "tune: where=%d is neither HOST nor DEVICE", (int)r->where);
  if (!r->nk_pairs || !r->ms) return bf16fp32__fail(BF16FP32_NULL_POINTER, "tune: nk_pairs or ms is NULL");
  if (r->pair_count < 1 || r->pair_count > 1 << 20 || r->m_count < 1 || r->m_count > 1 << 20)
    return bf16fp32__fail(BF16FP32_BAD_SIZE, "tune: pair_count=%d m_count=%d (1 to 2^20 each)",
                          r->pair_count, r->m_count);
  for (int i = 0; i < 2 * r->pair_count; i++)
    if (r->nk_pairs[i] < 1 || r->nk_pairs[i] > MAX_DIM)
      return bf16fp32__fail(BF16FP32_BAD_SIZE, "tune: nk_pairs[%d]=%lld (1 to 2^31-1)", i,
                            (long long)r->nk_pairs[i]);
  for (int i = 0; i < r->m_count; i++)
    if (r->ms[i] < 1 || r->ms[i] > MAX_DIM)
      return bf16fp32__fail(BF16FP32_BAD_SIZE, "tune: ms[%d]=%lld (1 to 2^31-1)", i, (long long)r->ms[i]);
  if (r->calls) {
    bf16fp32_status st = check_step(r);
    if (st != BF16FP32_OK) return st;
  } else if (r->filler_kb) {
    return bf16fp32__fail(BF16FP32_BAD_OPTION, "tune: fillers go between a step's GEMMs: no step given");
  }
  if (r->where == BF16FP32_DEVICE && device < 0)
    return bf16fp32__fail(BF16FP32_NO_DEVICE,
                          "tune: device tuning but the context has no CUDA device in this process");
  const char *out = r->out_path ? r->out_path : cfg->tune_file;
  if (!out[0])
    return bf16fp32__fail(BF16FP32_BAD_OPTION,
                          "tune: no output file (out_path is NULL and the context has no tuning "
                          "file: BF16FP32_TUNE_FILE is empty or HOME is not set)");
  /* the merge would refuse it: before minutes of measuring, not after */
  return bf16fp32__tune_file_check_path(out, "nothing measured");
}

/* The baseline goes second even when a variant of the winner came second. */
bool bf16fp32__tune_pick(const bf16fp32__candidate *c, int count, int where, int pdl, int64_t n,
                         int64_t k, int64_t m, bf16fp32__tune_entry *e) {
  int best = -1, second = -1, baseline = -1;
  for (int i = 0; i < count; i++) {
    if (c[i].status != BF16FP32_OK || c[i].median_us < 0) continue;
    if (strcmp(c[i].name, BF16FP32__TUNE_BASELINE) == 0) baseline = i;
    if (best < 0 || c[i].median_us < c[best].median_us) {
      second = best;
      best = i;
    } else if (second < 0 || c[i].median_us < c[second].median_us) {
      second = i;
    }
  }
  if (best < 0) return false;
  if (baseline >= 0 && baseline != best &&
      bf16fp32__tune_within_margin(c[best].name, c[best].median_us, c[baseline].median_us))
    second = baseline;
  memset(e, 0, sizeof *e);
  e->where = where;
  e->pdl = pdl;
  e->n = n, e->k = k, e->m = m;
  snprintf(e->winner, sizeof e->winner, "%s", c[best].name);
  e->winner_us = c[best].median_us;
  e->runner_up_us = -1;
  if (second >= 0) {
    snprintf(e->runner_up, sizeof e->runner_up, "%s", c[second].name);
    e->runner_up_us = c[second].median_us;
  }
  return true;
}

/* The measuring part, under the context's shared lock and with its device current. */
static bf16fp32_status measure_all(bf16fp32_context *ctx, const bf16fp32__tune_request *r,
                                   const int64_t *buckets, int nb, bf16fp32__tune_table *found) {
  const bf16fp32__config *cfg = bf16fp32__context_config(ctx);
  /* Our kernels launch under PDL when the context says so; their times then go under
   * device-pdl, for the dispatcher of such contexts. */
  const int pdl = r->where == BF16FP32_DEVICE && cfg->use_pdl;
  bf16fp32_status st = BF16FP32_OK;
  bf16fp32__candidate cands[BF16FP32__MAX_BACKENDS + BF16FP32__TUNE_VARIANT_ROOM];
  cand_user users[BF16FP32__MAX_BACKENDS + BF16FP32__TUNE_VARIANT_ROOM];
  char variant_names[BF16FP32__TUNE_VARIANT_ROOM][BF16FP32__TUNE_NAME_LEN];
  bf16fp32__measure_opts opts;
  void *stream = NULL;
  int count = 0, partner = -1;
  for (int b = 0; b < bf16fp32__registry_count && pdl && partner < 0; b++)
    if ((int)bf16fp32__registry[b].where == (int)r->where && bf16fp32__registry[b].pdl &&
        bf16fp32__backend_available(ctx, b))
      partner = b;
  for (int b = 0; b < bf16fp32__registry_count && count < BF16FP32__MAX_BACKENDS; b++) {
    if ((int)bf16fp32__registry[b].where != (int)r->where || !bf16fp32__backend_available(ctx, b))
      continue;
    users[count] = (cand_user){ctx, b, bf16fp32__registry[b].pdl ? -1 : partner, 0, 0, NULL};
    memset(&cands[count], 0, sizeof cands[count]);
    cands[count].name = bf16fp32__registry[b].name;
    cands[count].run = cand_run;
    cands[count].prewarm = cand_prewarm;
    cands[count].user = &users[count];
    count++;
  }
  if (count == 0)
    return bf16fp32__fail(BF16FP32_UNSUPPORTED, "tune: no backend is available at %s",
                          r->where == BF16FP32_DEVICE ? "device" : "host");
  if (r->measure)
    opts = *r->measure;
  else
    bf16fp32__measure_defaults(&opts);
  if (r->where == BF16FP32_DEVICE && !opts.stream) {
    BF16FP32__TRY(bf16fp32__tune_stream_create(&stream));
    opts.stream = stream;
  }
  for (int p = 0; p < r->pair_count; p++) {
    int64_t n = r->nk_pairs[2 * p], k = r->nk_pairs[2 * p + 1];
    for (int i = 0; i < nb; i++) {
      const int all = add_variants(ctx, r->where, pdl, buckets[i], n, k, cands, users, count, variant_names);
      bf16fp32_status ms = bf16fp32__measure(r->where, buckets[i], n, k, cands, all, &opts);
      if (ms != BF16FP32_OK) {
        bf16fp32__log(cfg, 1, "tune: n=%lld k=%lld m=%lld not measured: %s (%s)", (long long)n,
                      (long long)k, (long long)buckets[i], bf16fp32_status_name(ms),
                      bf16fp32_last_error());
        if (r->progress) r->progress(r->user, n, k, buckets[i], NULL, cands, all);
        /* Too big for memory: the next, smaller pair may still fit. Anything else stops. */
        if (ms == BF16FP32_OUT_OF_MEMORY) continue;
        st = ms;
        goto cleanup;
      }
      unpair_times(cands, users, all);
      bf16fp32__tune_entry e;
      bool got = bf16fp32__tune_pick(cands, all, r->where, pdl, n, k, buckets[i], &e);
      if (got) {
        BF16FP32__TRY(bf16fp32__tune_table_add(found, &e));
        bf16fp32__log(cfg, 2, "tune: %s n=%lld k=%lld m=%lld: %s %.2f us, runner-up %s",
                      bf16fp32__tune_where_name(&e), (long long)n, (long long)k,
                      (long long)buckets[i], e.winner, e.winner_us, e.runner_up[0] ? e.runner_up : "none");
      } else {
        bf16fp32__log(cfg, 1, "tune: n=%lld k=%lld m=%lld: no backend gave a valid time",
                      (long long)n, (long long)k, (long long)buckets[i]);
      }
      if (r->progress) r->progress(r->user, n, k, buckets[i], got ? &e : NULL, cands, all);
    }
  }
cleanup:
  if (stream) bf16fp32__tune_stream_destroy(ctx, stream);
  return st;
}

/* Under the context's lock, held by the caller from the configuration's copy to the measure's
 * end (a reset between them could change the threads or the device the header names): the
 * request's check, the buckets (malloc'ed into *buckets), the header's identity and the measure.
 * Returns a failure of those; the measure's own goes into *measured, what it found before it
 * stopped into *found. */
static bf16fp32_status measure_locked(bf16fp32_context *ctx, const bf16fp32__tune_request *r,
                                      bf16fp32__config *config, int64_t **buckets,
                                      bf16fp32__tune_header *mine, bf16fp32__tune_table *found,
                                      bf16fp32_status *measured) {
  *config = *bf16fp32__context_config(ctx);
  bf16fp32_status st = check_request(config, bf16fp32__context_device(ctx), r);
  if (st != BF16FP32_OK) return st;
  /* The buckets of the requested M values, each once, ascending. */
  if (!(*buckets = malloc((size_t)r->m_count * sizeof **buckets)))
    return bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "tune: %d M values", r->m_count);
  const int nb = bf16fp32__tune_buckets(r->ms, r->m_count, *buckets);
  /* Who measures: the header of what we merge. */
  if (r->where == BF16FP32_DEVICE) {
    if ((st = bf16fp32__gpu_identity_query(config->device, &mine->gpu)) != BF16FP32_OK) return st;
    mine->has_gpu = true;
  } else {
    bf16fp32__cpu_identity_query(config->cpu_threads, &mine->cpu);
    mine->has_cpu = true;
  }
  int prev = -1;
  *measured = r->where == BF16FP32_DEVICE ? bf16fp32__device_enter(config->device, &prev) : BF16FP32_OK;
  if (*measured != BF16FP32_OK) return BF16FP32_OK;
  *measured = r->calls ? bf16fp32__tune_measure_step(ctx, r, *buckets, nb, found)
                       : measure_all(ctx, r, *buckets, nb, found);
  if (r->where == BF16FP32_DEVICE) bf16fp32__device_leave(prev);
  return BF16FP32_OK;
}

bf16fp32_status bf16fp32__tune_run(bf16fp32_context *ctx, const bf16fp32__tune_request *r,
                                   int *merged) {
  if (merged) *merged = 0;
  if (!ctx || !r) return bf16fp32__fail(BF16FP32_NULL_POINTER, "tune: ctx or request is NULL");
  bf16fp32__config config;
  const bf16fp32__config *cfg = &config;
  bf16fp32__tune_table found = {0};
  bf16fp32__tune_header mine;
  memset(&mine, 0, sizeof mine);
  int64_t *buckets = NULL;
  const char *out = NULL;
  bf16fp32_status measured = BF16FP32_OK;
  bf16fp32__context_read_lock(ctx);
  bf16fp32_status st = measure_locked(ctx, r, &config, &buckets, &mine, &found, &measured);
  bf16fp32__context_read_unlock(ctx);
  if (st != BF16FP32_OK) goto cleanup;
  /* the merge into the tuning file, after the lock is let go, from the copy */
  out = r->out_path ? r->out_path : cfg->tune_file;

  /* Whatever was measured is kept, even when the run stopped early. */
  if (found.count > 0) {
    bf16fp32__tune_table_finish(&found);
    if (r->out_path) /* the file the merge's warnings name */
      snprintf(config.tune_file, sizeof config.tune_file, "%s", r->out_path);
    st = bf16fp32__tune_file_merge(out, &mine, found.entries, found.count, merge_warning, &config);
    if (st == BF16FP32_OK) {
      if (merged) *merged = found.count;
      bf16fp32__log(cfg, 2, "tune: %d entries merged into %s", found.count, out);
    }
  }
  if (measured != BF16FP32_OK) {
    st = measured;
  } else if (st == BF16FP32_OK && found.count == 0) {
    st = bf16fp32__fail(BF16FP32_UNSUPPORTED, "tune: no backend gave a valid time for any shape");
  }
cleanup:
  free(buckets);
  bf16fp32__tune_table_clear(&found);
  return st;
}

bf16fp32_status bf16fp32__tune_carry_larger(const bf16fp32__tune_table *from,
                                            const bf16fp32__tune_request *r, int64_t largest,
                                            int pdl, bf16fp32__tune_table *to) {
  const int measured = to->count;
  for (int i = 0; i < from->count; i++) {
    const bf16fp32__tune_entry *e = &from->entries[i];
    if (e->where != (int)r->where || e->pdl != pdl || e->m <= largest) continue;
    bool ours = false; /* a shape of the request with an entry measured in this run */
    for (int j = 0; j < measured && !ours; j++) {
      const bf16fp32__tune_entry *x = &to->entries[j];
      ours = x->where == e->where && x->pdl == pdl && x->n == e->n && x->k == e->k;
    }
    for (int p = 0; p < r->pair_count && ours; p++)
      if (r->nk_pairs[2 * p] == e->n && r->nk_pairs[2 * p + 1] == e->k) ours = !r->calls || r->calls[p] > 0;
    if (!ours) continue;
    bf16fp32__tune_entry copy = *e;
    copy.line = -1; /* the file's own entry of that key stays */
    bf16fp32_status st = bf16fp32__tune_table_add(to, &copy);
    if (st != BF16FP32_OK) return st;
  }
  return BF16FP32_OK;
}

/* The public entry points' request: calls NULL tunes each shape alone. */
static bf16fp32_status tune_public(bf16fp32_context *ctx, bf16fp32_location where,
                                   const int64_t *nk_pairs, const int *calls, int pair_count,
                                   const int64_t *ms, int m_count, int filler_kb,
                                   bf16fp32_filler_trigger trigger, const char *out_path) {
  bf16fp32__tune_request r;
  memset(&r, 0, sizeof r);
  r.where = where;
  r.nk_pairs = nk_pairs;
  r.calls = calls;
  r.pair_count = pair_count;
  r.ms = ms;
  r.m_count = m_count;
  r.filler_kb = filler_kb;
  r.filler_trigger = (int)trigger;
  r.out_path = out_path;
  return bf16fp32__tune_run(ctx, &r, NULL);
}

bf16fp32_status bf16fp32_tune(bf16fp32_context *ctx, bf16fp32_location where, const int64_t *nk_pairs,
                              int pair_count, const int64_t *ms, int m_count, const char *out_path) {
  return tune_public(ctx, where, nk_pairs, NULL, pair_count, ms, m_count, 0, BF16FP32_FILLER_END,
                     out_path);
}

bf16fp32_status bf16fp32_tune_step_fillers(bf16fp32_context *ctx, const int64_t *nk_pairs,
                                           const int *calls, int gemm_count, const int64_t *ms,
                                           int m_count, int filler_kb,
                                           bf16fp32_filler_trigger trigger, const char *out_path) {
  if (!calls) return bf16fp32__fail(BF16FP32_NULL_POINTER, "tune: calls is NULL");
  return tune_public(ctx, BF16FP32_DEVICE, nk_pairs, calls, gemm_count, ms, m_count, filler_kb,
                     trigger, out_path);
}

bf16fp32_status bf16fp32_tune_step(bf16fp32_context *ctx, const int64_t *nk_pairs, const int *calls,
                                   int gemm_count, const int64_t *ms, int m_count,
                                   const char *out_path) {
  return bf16fp32_tune_step_fillers(ctx, nk_pairs, calls, gemm_count, ms, m_count, 0,
                                    BF16FP32_FILLER_END, out_path);
}

#ifndef BF16FP32_HAVE_CUDA
bf16fp32_status bf16fp32__tune_measure_step(bf16fp32_context *ctx, const bf16fp32__tune_request *r,
                                            const int64_t *buckets, int nb,
                                            bf16fp32__tune_table *found) {
  (void)ctx, (void)r, (void)buckets, (void)nb, (void)found;
  return bf16fp32__fail(BF16FP32_NO_DEVICE, "tune: a step is tuned on a GPU; this library was built without CUDA");
}
bf16fp32_status bf16fp32__tune_stream_create(void **stream) {
  *stream = NULL;
  return bf16fp32__fail(BF16FP32_NO_DEVICE, "this library was built without CUDA");
}
void bf16fp32__tune_stream_destroy(bf16fp32_context *ctx, void *stream) { (void)ctx, (void)stream; }
#endif
