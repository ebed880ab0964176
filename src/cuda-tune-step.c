/* The step tuner's measure (bf16fp32_tune_step): each GEMM's candidates timed inside the whole
 * step. One shape at a time a candidate is timed in graphs of its own calls, where under PDL the
 * next call is the same shape; in a model's step the neighbours are other shapes, and on the
 * H200 choices made one shape at a time turned around there (docs/smallm-notes.md, sessions
 * 44-49: 30-40 us per flash step at batch 160-192 under PDL, 21-27 us per pro step at batch 1-4). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "dispatch.h"
#include "step.h"
#include "tune.h"

/* A step's time spreads by 1-3 us between replays on the H200 (session 50's decode-step
 * rounds), 0.03-0.1 us per call of a GEMM with 30 calls: more replays than one shape needs. */
#define STEP_MIN_REPLAYS 15
#define STEP_SEED 0x57e9ULL
/* A bucket's new choices are kept only when the whole step with them beats the step as auto
 * runs it now by this fraction: the step's replays spread by 0.1-0.2 % on the H200 (session 51's
 * A/B rounds), and on the H200 three choices that each measured faster per call made the pro
 * step plainly at batch 128 17 us slower together (session 51). */
#define STEP_KEEP_MARGIN 0.002
/* ... in each of this many runs of their own: one run's verdict at that margin turned out wrong
 * on the H200 (session 52: the pro step under PDL at batch 2 was kept by 0.02 us over the margin
 * and measured 0.4-0.8 % slower in three later A/B rounds), as two runs of one graph differ by
 * more than its replays within a run. */
#define STEP_CONFIRM_ROUNDS 3
/* A candidate's time per call when the step without its GEMM took as long or longer: the
 * calls cost nothing measurable. Times in the tuning file are positive. */
#define STEP_FREE_US 0.01

/* Who runs a GEMM at the step's m: auto's first choice now, or the new choice of this run.
 * Every call goes through that one backend (no fallback, no quarantine in the caller's
 * context), as the one-shape tuner runs its candidates. */
typedef struct step_choice {
  int backend;
  const char *variant; /* into name, after '@'; NULL for the default */
  char name[BF16FP32__TUNE_NAME_LEN];
} step_choice;

static void set_choice(step_choice *c, const char *name) {
  snprintf(c->name, sizeof c->name, "%s", name);
  c->backend = bf16fp32__registry_find_tuned(c->name, &c->variant);
}

/* "backend" or "backend@variant" ("" for none) into name. */
static void tuned_name(char name[BF16FP32__TUNE_NAME_LEN], int backend, const char *variant) {
  if (variant[0])
    bf16fp32__tune_variant_name(name, bf16fp32__registry[backend].name, variant);
  else
    snprintf(name, BF16FP32__TUNE_NAME_LEN, "%s", bf16fp32__registry[backend].name);
}

static bf16fp32__shape gemm_shape(const bf16fp32__step *s, int g) {
  const bf16fp32__step_gemm *gm = &s->gemm[g];
  return bf16fp32__make_shape(BF16FP32_DEVICE, s->m, gm->n, gm->k, gm->k, gm->k, gm->n, NULL, NULL, NULL);
}

/* Auto's first and second choice for GEMM g now, as names; returns how many (0..2). */
static int auto_names(bf16fp32_context *ctx, const bf16fp32__step *s, int g,
                      char names[2][BF16FP32__TUNE_NAME_LEN]) {
  const bf16fp32__shape shape = gemm_shape(s, g);
  int b[2];
  char v[2][BF16FP32__VARIANT_LEN];
  const int n = bf16fp32__auto_order(ctx, &shape, b, v);
  for (int i = 0; i < n; i++) tuned_name(names[i], b[i], v[i]);
  return n;
}

/* One graph to time: the step with GEMM `gemm` on one candidate, or left out (backend < 0), and
 * the others on their choices (gemm -1: all of them). */
typedef struct step_job {
  bf16fp32_context *ctx;
  const bf16fp32__step *s;
  const step_choice *chosen; /* per GEMM */
  int gemm;
  int backend;
  const char *variant;
  char detail[256];
} step_job;

/* Who runs GEMM g in job j: the candidate, or the GEMM's choice. */
static int runner(const step_job *j, int g, const char **variant) {
  *variant = g == j->gemm ? j->variant : j->chosen[g].variant;
  return g == j->gemm ? j->backend : j->chosen[g].backend;
}

static bf16fp32_status issue(step_job *j, void *stream, bool capturing) {
  const bool pdl = bf16fp32__context_config(j->ctx)->use_pdl != 0;
  for (int i = 0; i < j->s->call_count; i++) {
    const int g = j->s->call[i].gemm;
    /* The filler stays where its GEMM is left out: the difference is that GEMM's alone. */
    bf16fp32_status fs = bf16fp32__step_filler(j->s, i, pdl, stream);
    if (fs != BF16FP32_OK) {
      snprintf(j->detail, sizeof j->detail, "filler before call %d: %s", i, bf16fp32_last_error());
      return fs;
    }
    if (g == j->gemm && j->backend < 0) continue;
    bf16fp32__call c = bf16fp32__step_call_at(j->s, i, stream, capturing);
    bf16fp32_status st = bf16fp32__run_one(j->ctx, runner(j, g, &c.variant), &c);
    if (st != BF16FP32_OK) {
      snprintf(j->detail, sizeof j->detail, "%s call %d: %s: %s", capturing ? "captured" : "eager",
               i, bf16fp32_status_name(st), bf16fp32_last_error());
      return st;
    }
  }
  return BF16FP32_OK;
}

/* Prewarm each GEMM's runner, then one eager step. */
static bf16fp32_status job_prepare(void *user, void *stream) {
  step_job *j = user;
  for (int g = 0; g < j->s->gemm_count; g++) {
    const int first = bf16fp32__step_first_call(j->s, g);
    if (first < 0 || (g == j->gemm && j->backend < 0)) continue;
    bf16fp32__call c = bf16fp32__step_call_at(j->s, first, stream, false);
    const char *variant;
    const int b = runner(j, g, &variant);
    bf16fp32_status st = bf16fp32__prewarm_one(j->ctx, b, &c.shape, variant, stream);
    if (st != BF16FP32_OK) {
      snprintf(j->detail, sizeof j->detail, "prewarm of GEMM %d: %s", g, bf16fp32_last_error());
      return st;
    }
  }
  return issue(j, stream, false);
}

static bf16fp32_status job_record(void *user, void *stream) { return issue(user, stream, true); }

/* After the capture: poison every output so that the checked replay must write them all. */
static bf16fp32_status job_arm(void *user, void *stream) {
  step_job *j = user;
  const bf16fp32_status st = bf16fp32__step_poison(j->s, stream);
  if (st != BF16FP32_OK) snprintf(j->detail, sizeof j->detail, "poison: %s", bf16fp32_last_error());
  return st;
}

static bf16fp32_status job_check(void *user, void *stream) {
  step_job *j = user;
  return bf16fp32__step_check(j->s, j->backend < 0 ? j->gemm : -1, stream, j->detail, sizeof j->detail);
}

/* The graph job of step job j: its GEMM left out when it has no backend. */
static bf16fp32__graph_job graph_job(step_job *j) {
  return (bf16fp32__graph_job){
      .prepare = job_prepare,
      .record = job_record,
      .arm = job_arm,
      .check = job_check,
      .user = j,
      .min_nodes = bf16fp32__step_min_nodes(j->s, true, j->backend < 0 ? j->gemm : -1)};
}

/* The candidates for GEMM g at the step's m: every available device backend, the variants they
 * offer, and auto's current choices where those are not among them (a tuned variant the
 * heuristic no longer lists first). Returns the count; names live in `names`. */
static int list_candidates(bf16fp32_context *ctx, const bf16fp32__step *s, const step_choice *chosen,
                           int g, step_job *jobs, char (*names)[BF16FP32__TUNE_NAME_LEN], int cap) {
  int count = 0;
  const bf16fp32__shape shape = gemm_shape(s, g);
  for (int b = 0; b < bf16fp32__registry_count && count < cap; b++) {
    if (bf16fp32__registry[b].where != BF16FP32_DEVICE || !bf16fp32__backend_available(ctx, b)) continue;
    snprintf(names[count], BF16FP32__TUNE_NAME_LEN, "%s", bf16fp32__registry[b].name);
    jobs[count++] = (step_job){ctx, s, chosen, g, b, NULL, ""};
  }
  const int plain = count;
  const int room = cap < plain + BF16FP32__TUNE_VARIANT_ROOM ? cap : plain + BF16FP32__TUNE_VARIANT_ROOM;
  for (int i = 0; i < plain; i++) {
    const int b = jobs[i].backend;
    const int nv = bf16fp32__tune_variant_names(ctx, b, &shape, names + count, room - count);
    for (int v = 0; v < nv; v++, count++)
      jobs[count] = (step_job){ctx, s, chosen, g, b, strchr(names[count], '@') + 1, ""};
  }
  char now[2][BF16FP32__TUNE_NAME_LEN];
  const int n = auto_names(ctx, s, g, now);
  for (int a = 0; a < n && count < cap; a++) {
    bool listed = false;
    for (int i = 0; i < count && !listed; i++) listed = strcmp(names[i], now[a]) == 0;
    if (listed) continue;
    memcpy(names[count], now[a], sizeof names[count]);
    const char *variant;
    const int b = bf16fp32__registry_find_tuned(names[count], &variant);
    jobs[count++] = (step_job){ctx, s, chosen, g, b, variant, ""};
  }
  return count;
}

#define STEP_MAX_CANDS (BF16FP32__MAX_BACKENDS + BF16FP32__TUNE_VARIANT_ROOM + 2)

static int step_replays(const bf16fp32__measure_opts *o) {
  return o->replays > STEP_MIN_REPLAYS ? o->replays : STEP_MIN_REPLAYS;
}

/* A GEMM's candidates and their times per call in the step at the current m (< 0: none). */
typedef struct step_times {
  int count;
  char name[STEP_MAX_CANDS][BF16FP32__TUNE_NAME_LEN];
  double us[STEP_MAX_CANDS];
} step_times;

static double time_of(const step_times *t, const char *name) {
  for (int i = 0; i < t->count; i++)
    if (strcmp(t->name[i], name) == 0) return t->us[i];
  return -1;
}

/* Times GEMM g's candidates in the step at its current m, records the pick in found and makes
 * what a context would run by it GEMM g's runner for the GEMMs tuned after it at this m. */
static bf16fp32_status tune_gemm(bf16fp32_context *ctx, const bf16fp32__tune_request *r,
                                 const bf16fp32__step *s, step_choice *chosen, step_times *times,
                                 int g, const bf16fp32__measure_opts *o, bf16fp32__tune_table *found) {
  const bf16fp32__config *cfg = bf16fp32__context_config(ctx);
  step_job jobs[1 + STEP_MAX_CANDS];
  char (*names)[BF16FP32__TUNE_NAME_LEN] = times[g].name; /* the candidates' names live there */
  bf16fp32__graph_job graph[1 + STEP_MAX_CANDS];
  bf16fp32__candidate cands[STEP_MAX_CANDS];
  jobs[0] = (step_job){ctx, s, chosen, g, -1, NULL, ""};
  const int count = list_candidates(ctx, s, chosen, g, jobs + 1, names, STEP_MAX_CANDS);
  times[g].count = count;
  for (int i = 0; i <= count; i++)
    graph[i] = graph_job(&jobs[i]);
  bf16fp32_status st = bf16fp32__time_graphs_on(graph, 1 + count, o->warmup, step_replays(o), o->stream);
  if (st != BF16FP32_OK) return st;
  const bool without_timed = graph[0].status == BF16FP32_OK && graph[0].median_ms >= 0;
  for (int i = 0; i < count; i++) {
    bf16fp32__candidate *c = &cands[i];
    const bf16fp32__graph_job *gj = &graph[1 + i];
    memset(c, 0, sizeof *c);
    c->name = names[i];
    c->status = gj->status;
    c->median_us = -1;
    /* the job's own finding, else the graph run's */
    snprintf(c->detail, sizeof c->detail, "%s",
             jobs[1 + i].detail[0] ? jobs[1 + i].detail : gj->detail);
    if (gj->status != BF16FP32_OK || gj->median_ms < 0) continue;
    if (!without_timed) {
      c->status = graph[0].status != BF16FP32_OK ? graph[0].status : BF16FP32_INTERNAL;
      /* at most 200 of the other job's characters, so that the message fits c->detail */
      snprintf(c->detail, sizeof c->detail, "the step without this GEMM has no time: %.200s",
               jobs[0].detail);
      continue;
    }
    const double per_call = (gj->median_ms - graph[0].median_ms) * 1e3 / s->gemm[g].calls;
    c->median_us = per_call > STEP_FREE_US ? per_call : STEP_FREE_US;
  }
  for (int i = 0; i < count; i++) times[g].us[i] = cands[i].median_us;
  const int pdl = cfg->use_pdl != 0;
  bf16fp32__tune_entry e;
  const bool got = bf16fp32__tune_pick(cands, count, BF16FP32_DEVICE, pdl, s->gemm[g].n, s->gemm[g].k, s->m, &e);
  if (got) {
    st = bf16fp32__tune_table_add(found, &e);
    if (st != BF16FP32_OK) return st;
    /* What a context with this entry runs first (tune-table.h's margin). */
    set_choice(&chosen[g], bf16fp32__tune_baseline_first(&e) ? e.runner_up : e.winner);
    bf16fp32__log(cfg, 2, "tune: step %s n=%lld k=%lld m=%lld: %s %.2f us per call, runner-up %s",
                  bf16fp32__tune_where_name(&e), (long long)e.n, (long long)e.k, (long long)e.m,
                  e.winner, e.winner_us, e.runner_up[0] ? e.runner_up : "none");
  } else {
    bf16fp32__log(cfg, 1, "tune: step n=%lld k=%lld m=%lld: no backend gave a valid time",
                  (long long)s->gemm[g].n, (long long)s->gemm[g].k, (long long)s->m);
  }
  if (r->progress) r->progress(r->user, s->gemm[g].n, s->gemm[g].k, s->m, got ? &e : NULL, cands, count);
  return BF16FP32_OK;
}

/* The entry that makes a context run GEMM g at the step's m as auto runs it now (its first
 * two choices, with their variants), with the times measured in the step. False when auto's
 * first choice has no time here (it failed in the step). */
static bool auto_entry(bf16fp32_context *ctx, const bf16fp32__step *s, int g, const step_times *t,
                       int pdl, bf16fp32__tune_entry *e) {
  char name[2][BF16FP32__TUNE_NAME_LEN];
  const int n = auto_names(ctx, s, g, name);
  const double us0 = n > 0 ? time_of(t, name[0]) : -1, us1 = n > 1 ? time_of(t, name[1]) : -1;
  if (us0 < 0) return false;
  memset(e, 0, sizeof *e);
  e->where = BF16FP32_DEVICE;
  e->pdl = pdl;
  e->n = s->gemm[g].n, e->k = s->gemm[g].k, e->m = s->m;
  snprintf(e->winner, sizeof e->winner, "%s", name[0]);
  e->winner_us = us0;
  e->runner_up_us = -1;
  if (us1 >= 0) {
    snprintf(e->runner_up, sizeof e->runner_up, "%s", name[1]);
    e->runner_up_us = us1;
  }
  /* Written with cuBLAS second within the margin, the context would put cuBLAS first. */
  if (bf16fp32__tune_baseline_first(e)) e->runner_up[0] = '\0', e->runner_up_us = -1;
  return true;
}

/* Times the step with this bucket's new choices against the step as auto runs it now, in
 * STEP_CONFIRM_ROUNDS runs of their own (each captures both graphs afresh); where the new
 * choices are not faster by STEP_KEEP_MARGIN in every run, the bucket's entries (found from
 * index `first`) are rewritten to auto's choices, and those that cannot be (auto's first choice
 * failed in the step) are dropped. */
static bf16fp32_status confirm_bucket(bf16fp32_context *ctx, const bf16fp32__tune_request *r,
                                      const bf16fp32__step *s, const step_choice *as_now,
                                      const step_choice *chosen, const step_times *times,
                                      const bf16fp32__measure_opts *o, bf16fp32__tune_table *found,
                                      int first) {
  const bf16fp32__config *cfg = bf16fp32__context_config(ctx);
  double old_us[STEP_CONFIRM_ROUNDS], new_us[STEP_CONFIRM_ROUNDS];
  int rounds = 0, won = 0;
  /* A lost round settles it: the runs after it could not keep the choices. */
  while (rounds < STEP_CONFIRM_ROUNDS && won == rounds) {
    step_job jobs[2] = {{ctx, s, as_now, -1, -1, NULL, ""}, {ctx, s, chosen, -1, -1, NULL, ""}};
    bf16fp32__graph_job graph[2];
    for (int i = 0; i < 2; i++) graph[i] = graph_job(&jobs[i]);
    bf16fp32_status st = bf16fp32__time_graphs_on(graph, 2, o->warmup, step_replays(o), o->stream);
    if (st != BF16FP32_OK) return st;
    const double was = graph[0].status == BF16FP32_OK ? graph[0].median_ms * 1e3 : -1;
    const double is = graph[1].status == BF16FP32_OK ? graph[1].median_ms * 1e3 : -1;
    old_us[rounds] = was, new_us[rounds] = is;
    rounds++;
    won += is > 0 && (was <= 0 || is < was * (1 - STEP_KEEP_MARGIN));
    bf16fp32__log(cfg, 2, "tune: step m=%lld run %d: %.1f us with the new choices, %.1f us as auto runs now",
                  (long long)s->m, rounds, is, was);
  }
  const bool kept = won == STEP_CONFIRM_ROUNDS;
  int reverted = 0, kept_count = found->count;
  if (!kept) {
    kept_count = first;
    for (int i = first; i < found->count; i++) {
      bf16fp32__tune_entry a = found->entries[i];
      for (int g = 0; g < s->gemm_count; g++)
        if (s->gemm[g].n == a.n && s->gemm[g].k == a.k && auto_entry(ctx, s, g, &times[g], a.pdl, &a)) {
          found->entries[kept_count++] = a;
          reverted++;
        }
    }
    found->count = kept_count;
  }
  const double new_mid = bf16fp32__median(new_us, rounds), old_mid = bf16fp32__median(old_us, rounds);
  bf16fp32__log(cfg, 2, "tune: step m=%lld: new choices faster in %d of %d runs: %s", (long long)s->m,
                won, rounds, kept ? "kept" : "auto's choices written");
  if (r->step_confirm) r->step_confirm(r->user, s->m, new_mid, old_mid, won, rounds, kept, reverted);
  return BF16FP32_OK;
}

bf16fp32_status bf16fp32__tune_measure_step(bf16fp32_context *ctx, const bf16fp32__tune_request *r,
                                            const int64_t *buckets, int nb,
                                            bf16fp32__tune_table *found) {
  bf16fp32__measure_opts o;
  if (r->measure)
    o = *r->measure;
  else
    bf16fp32__measure_defaults(&o);
  bf16fp32__step_gemm *gemm = malloc((size_t)r->pair_count * sizeof *gemm);
  if (!gemm) return bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "tune: %d GEMMs", r->pair_count);
  for (int i = 0; i < r->pair_count; i++)
    gemm[i] = (bf16fp32__step_gemm){r->nk_pairs[2 * i], r->nk_pairs[2 * i + 1], r->calls[i]};
  bf16fp32__step s;
  void *stream = NULL;
  bf16fp32_status st = bf16fp32__step_create(&s, gemm, r->pair_count, buckets[nb - 1], STEP_SEED);
  free(gemm);
  if (st != BF16FP32_OK) return st;
  if (r->filler_kb > 0 && (st = bf16fp32__step_set_fillers(&s, r->filler_kb, r->filler_trigger)) != BF16FP32_OK) {
    bf16fp32__step_free(&s);
    return st;
  }
  if (!o.stream) {
    st = bf16fp32__tune_stream_create(&stream);
    o.stream = stream;
  }
  step_choice *chosen = calloc((size_t)s.gemm_count, sizeof *chosen);
  step_choice *as_now = calloc((size_t)s.gemm_count, sizeof *as_now);
  step_times *times = calloc((size_t)s.gemm_count, sizeof *times);
  if (!chosen || !as_now || !times) st = bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "tune: %d GEMMs", s.gemm_count);
  int64_t done = 0; /* the largest bucket whose entries are final */
  for (int i = 0; i < nb && st == BF16FP32_OK; i++) {
    const int first = found->count;
    st = bf16fp32__step_set_m(&s, buckets[i], o.check_rows);
    for (int g = 0; g < s.gemm_count && st == BF16FP32_OK; g++) {
      char now[2][BF16FP32__TUNE_NAME_LEN];
      times[g].count = 0;
      if (s.gemm[g].calls == 0) continue;
      if (auto_names(ctx, &s, g, now) == 0)
        st = bf16fp32__fail(BF16FP32_UNSUPPORTED, "tune: no available backend runs %lldx%lld at m=%lld",
                            (long long)s.gemm[g].n, (long long)s.gemm[g].k, (long long)s.m);
      else
        set_choice(&as_now[g], now[0]);
      set_choice(&chosen[g], as_now[g].name);
    }
    for (int g = 0; g < s.gemm_count && st == BF16FP32_OK; g++)
      if (s.gemm[g].calls > 0) st = tune_gemm(ctx, r, &s, chosen, times, g, &o, found);
    if (st == BF16FP32_OK && found->count > first)
      st = confirm_bucket(ctx, r, &s, as_now, chosen, times, &o, found, first);
    /* A bucket cut short keeps none of its entries: they were not checked as a whole. */
    if (st != BF16FP32_OK) found->count = first;
    else done = buckets[i];
  }
  if (done > 0 && ctx->tune) {
    bf16fp32_status carried = bf16fp32__tune_carry_larger(ctx->tune, r, done, bf16fp32__context_config(ctx)->use_pdl != 0, found);
    if (st == BF16FP32_OK) st = carried;
  }
  free(as_now);
  free(times);
  free(chosen);
  if (stream) bf16fp32__tune_stream_destroy(ctx, stream);
  bf16fp32__step_free(&s);
  return st;
}
