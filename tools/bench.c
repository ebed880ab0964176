/* `bf16fp32 bench`: the per-cell loop over the suite and the progress line; its command line
 * is bench-args.c, what it times bench-plan.c, its table bench-print.c, a decode step
 * bench-decode.c. Timing itself is the library's measure core (src/measure.c). */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench-args.h"
#include "bench-baseline.h"
#include "bench-decode.h"
#include "bench-dnnl.h"
#include "bench-plan.h"
#include "bench-print.h"
#include "bf16fp32.h"
#include "dispatch.h"
#include "measure.h"
#include "suite.h"
#include "support.h"

#ifdef BF16FP32_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

/* --- progress (stderr) --- */

typedef struct progress {
  double start, last_print;
  double total_w, done_w;
  int total, done;
  int tty;
} progress;

static void format_duration(double s, char *buf, size_t len) {
  if (s < 0 || !isfinite(s)) s = 0;
  long t = (long)(s + 0.5);
  if (t >= 3600) snprintf(buf, len, "%ldh%02ldm", t / 3600, (t / 60) % 60);
  else if (t >= 60) snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
  else snprintf(buf, len, "%lds", t);
}

static void progress_step(progress *p, double w, const char *label, int64_t m) {
  p->done++;
  p->done_w += w;
  double now = sup_now();
  int last = p->done == p->total;
  if (!p->tty && !last && now - p->last_print < 10.0) return;
  p->last_print = now;
  double elapsed = now - p->start;
  double left = p->done_w > 0 ? elapsed * (p->total_w - p->done_w) / p->done_w : 0;
  char e[32], l[32];
  format_duration(elapsed, e, sizeof e);
  format_duration(left, l, sizeof l);
  fprintf(stderr, "%s[bench] %d/%d done (%s M=%lld), %s elapsed, about %s left%s",
          p->tty ? "\r\033[K" : "", p->done, p->total, label, (long long)m, e, l,
          p->tty && !last ? "" : "\n");
  fflush(stderr);
}

/* Relative cost of a cell, for the time-left estimate. */
static double cell_weight(bf16fp32_location where, int64_t m, int64_t n, int64_t k, int cands,
                          int calls, int replays, int check_rows) {
  double macs = (double)m * (double)n * (double)k;
  int rows = m < check_rows ? (int)m : check_rows;
  double setup_us = 1e-3 * ((double)m * (double)k + (double)n * (double)k) +
                    1e-3 * rows * (double)n * (double)k + 2e3;
  if (where == BF16FP32_DEVICE) {
    double call_us = 1.3 * bf16fp32__floor_us(m, n, k) + 5.0;
    return setup_us + cands * (calls * (replays + 3.0) * call_us + 1e-3 * 8.0 * (double)m * (double)n);
  }
  double run_us = macs / 2e4; /* about 20 GMAC/s */
  return setup_us + cands * (replays + 4.0) * (run_us > 2e3 ? run_us : 2e3);
}

/* --- the table run --- */

/* oneDNN's OpenMP workers keep spinning for a few milliseconds after a call (libgomp's default
 * wait policy): let them go to sleep before the library's threads are timed on the same cores. */
static void settle_after_dnnl(void) {
  struct timespec ts = {0, 20 * 1000 * 1000};
  nanosleep(&ts, NULL);
}

/* The run's M values: --m, else the CPU default, else the suite's "M" line. Returns their
 * count, or -1 (reported) where the GPU run has none. */
static int run_ms(const bench_opts *o, const suite *s, int use_gpu, int64_t *ms) {
  if (o->m_count) {
    memcpy(ms, o->ms, sizeof(int64_t) * (size_t)o->m_count);
    return o->m_count;
  }
  if (!use_gpu) {
    char err[128];
    return suite_parse_int_list(BENCH_CPU_DEFAULT_M, ms, SUITE_MAX_M, err, sizeof err);
  }
  if (s->m_count) {
    memcpy(ms, s->m, sizeof(int64_t) * (size_t)s->m_count);
    return s->m_count;
  }
  bench_errorf("%s has no \"M\" line: give the M values with --m", s->path);
  return -1;
}

/* oneDNN's two timings of a cell, before and after the candidates (run_table). */
typedef struct dnnl_times {
  double us[2], worst[2];
  char why[2][256];
  int rc[2]; /* bench_dnnl_time's; -1: not run */
} dnnl_times;

/* The CPU baseline's row from oneDNN's two timings: the better median counts, and a wrong
 * answer in either run fails the row. Returns the baseline's time (< 0: none) and sets *wrong. */
static double dnnl_row(bench_row *r, const bench_plan *plan, const dnnl_times *d, int *wrong) {
  bench_blank_row(r, BENCH_ONEDNN_NAME);
  *wrong = 0;
  if (!plan->dnnl) {
    snprintf(r->status, sizeof r->status, "missing: %s", plan->baseline_why);
    return -1.0;
  }
  const int best = d->rc[0] == BENCH_DNNL_WRONG   ? 0
                   : d->rc[1] == BENCH_DNNL_WRONG ? 1
                   : d->rc[0] != 0                ? 1
                   : d->rc[1] != 0                ? 0
                   : d->us[1] < d->us[0]          ? 1
                                                  : 0;
  r->worst_ratio = d->worst[best];
  if (d->rc[best] == 0) {
    r->us = d->us[best];
    snprintf(r->status, sizeof r->status, "ok");
    snprintf(r->note, sizeof r->note, "(%.60s)", d->why[best]);
  } else if (d->rc[best] == BENCH_DNNL_WRONG) {
    snprintf(r->status, sizeof r->status, "WRONG: %.255s", d->why[best]);
    *wrong = 1;
  } else {
    snprintf(r->status, sizeof r->status, "failed: %s", d->why[best]);
  }
  return r->us;
}

/* What every cell of a table run shares. */
typedef struct table_run {
  const bench_opts *o;
  const bench_plan *plan;
  bf16fp32_context *ctx;
  bf16fp32_location where;
  int use_gpu, threads;
  bf16fp32__candidate cands[BENCH_MAX_CANDS]; /* baseline (GPU), library backends, auto */
  int ncands, first_lib;
  bf16fp32__measure_opts mo;
  FILE *csv; /* or NULL */
  bench_summary sum;
  const char *row_names[BENCH_MAX_CANDS + 1]; /* the first cell's rows */
  int row_count;
} table_run;

/* Times one cell (the baseline and every candidate) and prints its rows. Returns 0, 1 (a
 * failure or a wrong result: the run goes on) or -1 (the device is lost: the run stops). */
static int run_cell(table_run *t, const bench_shape *sh, int64_t m) {
  const bench_opts *o = t->o;
  const bench_plan *plan = t->plan;
  const bf16fp32__measure_opts *mo = &t->mo;
  const bf16fp32__candidate *cands = t->cands;
  const int use_gpu = t->use_gpu, threads = t->threads, ncands = t->ncands;
  const int first_lib = t->first_lib;
  const bf16fp32_location where = t->where;
  int rc = 0;
  const double macs = (double)m * (double)sh->n * (double)sh->k;
  /* CPU: cpu-ref beyond its limit is left out of the measure, shown as skipped. */
  bf16fp32__candidate cell[BENCH_MAX_CANDS];
  int map[BENCH_MAX_CANDS]; /* cell index -> cands index */
  int ncell = 0;
  for (int c = 0; c < ncands; c++) {
    int is_ref = c >= first_lib && strcmp(cands[c].name, "cpu-ref") == 0;
    if (!use_gpu && is_ref && macs > (double)o->cpu_ref_limit) continue;
    map[ncell] = c;
    cell[ncell++] = cands[c];
  }
  /* CPU baseline: oneDNN times itself (no per-call hook to join the rounds), so it runs
   * just before and just after the candidates and the better median counts: noise from a
   * shared machine then errs in the baseline's favour, never in ours. */
  dnnl_times dt = {{-1.0, -1.0}, {-1.0, -1.0}, {"", ""}, {-1, -1}};
  bench_dnnl_cell *dnnl_cell = NULL; /* operands and oracle for both of its timings */
  if (!use_gpu && plan->dnnl &&
      bench_dnnl_cell_create(&dnnl_cell, m, sh->n, sh->k, mo->check_rows, dt.why[0],
                             sizeof dt.why[0]) != 0)
    snprintf(dt.why[1], sizeof dt.why[1], "%s", dt.why[0]);
  if (dnnl_cell) {
    dt.rc[0] = bench_dnnl_time(dnnl_cell, threads, o->replays, &dt.us[0], &dt.worst[0],
                               dt.why[0], sizeof dt.why[0]);
    settle_after_dnnl();
  }
  /* the candidates over the baseline's own copies where it reads bf16: one rotation and
   * one oracle for the cell */
  bf16fp32__host_operands shared;
  bf16fp32__measure_opts cell_mo = *mo;
  if (dnnl_cell && bench_dnnl_cell_operands(dnnl_cell, &shared) == 0) cell_mo.host = &shared;
  const bf16fp32_status st = ncell ? bf16fp32__measure(where, m, sh->n, sh->k, cell, ncell, &cell_mo) : BF16FP32_OK;
  if (dnnl_cell) {
    dt.rc[1] = bench_dnnl_time(dnnl_cell, threads, o->replays, &dt.us[1], &dt.worst[1],
                               dt.why[1], sizeof dt.why[1]);
    settle_after_dnnl();
  }
  bench_dnnl_cell_free(dnnl_cell);
  if (st == BF16FP32_CUDA_FATAL) {
    bench_errorf("%s M=%lld: %s: %s; stopping", sh->label, (long long)m, bf16fp32_status_name(st),
           bf16fp32_last_error());
    return -1;
  }

  bench_row rows[BENCH_MAX_CANDS + 1];
  int nrows = 0;
  double base_us = -1.0;
  /* Baseline row first. */
  if (!use_gpu) {
    int wrong;
    base_us = dnnl_row(&rows[nrows++], plan, &dt, &wrong);
    if (wrong) rc = 1; /* as a wrong candidate does */
  }
  int cell_i = 0;
  for (int c = 0; c < ncands; c++) {
    bench_row *r = &rows[nrows++];
    if (cell_i < ncell && map[cell_i] == c) {
      bench_row_from_candidate(r, &cell[cell_i]);
      /* a wrong result or a failure fails the run; a decline is the backend's answer */
      const bf16fp32_status cs = cell[cell_i].status;
      if (cs != BF16FP32_OK && cs != BF16FP32_DECLINED) rc = 1;
      cell_i++;
    } else {
      bench_blank_row(r, cands[c].name);
      snprintf(r->status, sizeof r->status, "skipped (too slow: M*N*K > %lld)",
               (long long)o->cpu_ref_limit);
    }
    if (use_gpu && plan->cublas && c == 0 && r->us > 0) base_us = r->us;
    if (strcmp(r->backend, "auto") == 0) {
      const char *chosen = NULL;
      const size_t used = strlen(r->note); /* after a warm note */
      if (bf16fp32_select(t->ctx, where, m, sh->n, sh->k, &chosen, NULL, 0) == BF16FP32_OK && chosen)
        snprintf(r->note + used, sizeof r->note - used, "%s(-> %s)", used ? " " : "", chosen);
    }
  }
  if (use_gpu && !plan->cublas) {
    /* No baseline: a row that says so keeps the table's shape. */
    memmove(rows + 1, rows, sizeof(bench_row) * (size_t)nrows);
    bench_blank_row(&rows[0], BENCH_BASELINE_NAME);
    snprintf(rows[0].status, sizeof rows[0].status, "missing: %s", plan->baseline_why);
    nrows++;
  }
  if (st != BF16FP32_OK && st != BF16FP32_CUDA_FATAL) rc = 1;
  if (t->row_count == 0) {
    t->row_count = nrows;
    for (int i = 0; i < nrows; i++) t->row_names[i] = rows[i].backend;
  }
  bench_print_rows(t->csv, plan, sh, m, rows, nrows, base_us, &t->sum, threads);
  return rc;
}

static int run_table(const bench_opts *o, const suite *s, int use_gpu) {
  int rc = 0;
  bf16fp32_context *ctx = NULL;
  bench_plan plan;
  memset(&plan, 0, sizeof plan);
  table_run t;
  memset(&t, 0, sizeof t);
  bench_shape shapes[SUITE_MAX_ENTRIES];
  void *stream = NULL;
  const bf16fp32_location where = use_gpu ? BF16FP32_DEVICE : BF16FP32_HOST;

  int nshapes = bench_collect_shapes(s, o->shapes, shapes);
  if (nshapes < 0) return 2;
  int64_t ms[SUITE_MAX_M];
  const int m_count = run_ms(o, s, use_gpu, ms);
  if (m_count < 0) return 2;

  bf16fp32_options opt;
  bf16fp32_options_init(&opt);
  if (o->threads) opt.cpu_threads = o->threads;
  bf16fp32_status st = bf16fp32_create(&ctx, &opt);
  if (st != BF16FP32_OK) {
    bench_errorf("cannot create a context: %s: %s", bf16fp32_status_name(st), bf16fp32_last_error());
    return 1;
  }
  bench_build_plan(&plan, ctx, o, where);
  if (plan.count == 0 && !plan.cublas && !plan.dnnl) {
    bench_errorf("nothing to time in %s mode", use_gpu ? "GPU" : "CPU");
    rc = 1;
    goto done;
  }
#ifdef BF16FP32_HAVE_CUDA
  if (use_gpu) {
    cudaStream_t cs = NULL;
    cudaError_t e = cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
      bench_errorf("cudaStreamCreate: %s", cudaGetErrorString(e));
      rc = 1;
      goto done;
    }
    stream = cs;
  }
#endif
  if (o->csv) {
    t.csv = fopen(o->csv, "w");
    if (!t.csv) {
      bench_errorf("cannot write %s: %s", o->csv, strerror(errno));
      rc = 1;
      goto done;
    }
    bench_print_csv_header(t.csv);
  }

  t.o = o;
  t.plan = &plan;
  t.ctx = ctx;
  t.where = where;
  t.use_gpu = use_gpu;
  t.threads = bf16fp32__context_config(ctx)->cpu_threads;
  bf16fp32__measure_defaults(&t.mo);
  t.mo.calls_per_graph = o->calls;
  t.mo.replays = o->replays;
  t.mo.stream = stream;

  bench_print_header(&plan, o, s, ms, m_count, ctx);

  /* Every cell's candidates: baseline (GPU), library backends, auto. */
  if (plan.cublas)
    t.cands[t.ncands++] = (bf16fp32__candidate){.name = BENCH_BASELINE_NAME,
                                                .run = bench_baseline_run,
                                                .prewarm = bench_baseline_prewarm,
                                                .user = plan.cublas};
  t.first_lib = t.ncands;
  for (int i = 0; i < plan.count; i++)
    t.cands[t.ncands++] = (bf16fp32__candidate){
        .name = plan.name[i], .run = bench_lib_run, .prewarm = bench_lib_prewarm, .user = &plan.lib[i]};

  progress pr;
  memset(&pr, 0, sizeof pr);
  pr.tty = isatty(2);
  pr.start = pr.last_print = sup_now();
  pr.total = nshapes * m_count;
  for (int si = 0; si < nshapes; si++)
    for (int mi = 0; mi < m_count; mi++)
      pr.total_w += cell_weight(where, ms[mi], shapes[si].n, shapes[si].k, t.ncands + 1,
                                o->calls, o->replays, t.mo.check_rows);

  for (int si = 0; si < nshapes; si++) {
    const bench_shape *sh = &shapes[si];
    for (int mi = 0; mi < m_count; mi++) {
      const int64_t m = ms[mi];
      const int cell_rc = run_cell(&t, sh, m);
      if (cell_rc < 0) {
        rc = 1;
        goto done;
      }
      if (cell_rc) rc = 1;
      progress_step(&pr, cell_weight(where, m, sh->n, sh->k, t.ncands + 1, o->calls, o->replays,
                                     t.mo.check_rows),
                    sh->label, m);
    }
    printf("\n");
  }

  bench_print_summary(&plan, &t.sum, t.row_names, t.row_count, nshapes, m_count);

done:
  if (t.csv && fclose(t.csv) != 0) {
    bench_errorf("writing %s: %s", o->csv, strerror(errno));
    rc = 1;
  }
#ifdef BF16FP32_HAVE_CUDA
  if (stream) cudaStreamDestroy((cudaStream_t)stream);
#endif
  bench_baseline_destroy(plan.cublas);
  bf16fp32_destroy(ctx);
  return rc;
}

int bench_main(int argc, char **argv) {
  bench_opts o;
  int rc = bench_parse_args(argc, argv, &o);
  if (rc == -1) return 0;
  if (rc) return rc;
  if (o.backends_given && (rc = bench_check_backend_names(o.backends)) != 0) return rc;

  char default_path[1024];
  if (!o.suite_path) o.suite_path = suite_default_path(default_path, sizeof default_path);
  suite *s = (suite *)malloc(sizeof *s);
  if (!s) {
    bench_errorf("out of memory");
    return 1;
  }
  char err[SUITE_ERR_LEN];
  if (suite_load(o.suite_path, s, err, sizeof err) != 0) {
    bench_errorf("%s", err);
    free(s);
    return 1;
  }

  if (o.decode) {
    const char *prefix = bench_decode_prefix(o.decode);
    if (suite_filter_prefix(s, prefix) == 0) {
      bench_errorf("%s has no \"%s*\" entries for --decode-step %s", s->path, prefix, o.decode);
      free(s);
      return 1;
    }
    static const int64_t default_batch[] = {1, 4, 16, 64, 256};
    bench_decode_args a = {.model = o.decode,
                           .suite = s,
                           .batch = o.batch_count ? o.batch : default_batch,
                           .batch_count = o.batch_count ? o.batch_count : 5,
                           .replays = o.replays > 21 ? o.replays : 21,
                           .warmup = 3,
                           .check_rows = 8,
                           .filler_kb = o.filler_kb,
                           .filler_trigger = o.filler_trigger};
    rc = bench_decode(&a);
    free(s);
    return rc;
  }

  int use_gpu = 0;
  if (!o.cpu) {
    use_gpu = sup_gpu_available();
    if (!use_gpu) fprintf(stderr, "bf16fp32 bench: no usable CUDA GPU: CPU mode\n");
  }
  rc = run_table(&o, s, use_gpu);
  free(s);
  return rc;
}
