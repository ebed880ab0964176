/* `bf16fp32 bench --decode-step`: all router and compressor GEMMs of one decode step (each
 * layer with its own weight) captured in one CUDA graph; auto against direct cuBLAS calls and
 * the library's cublas backend, same graph shape, interleaved replays. With --filler-kb, a
 * memory-bound kernel before every GEMM (step.h's fillers), and the fillers alone timed too. */
#include "bench-decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bf16fp32.h"

static const char *const trigger_name[] = {"end", "entry", "none"}; /* bf16fp32_filler_trigger */

int bench_decode_filler_trigger(const char *text) {
  for (int t = 0; t < (int)(sizeof trigger_name / sizeof *trigger_name); t++)
    if (strcmp(text, trigger_name[t]) == 0) return t;
  return -1;
}

const char *bench_decode_filler_trigger_name(int trigger) {
  return trigger >= 0 && trigger < (int)(sizeof trigger_name / sizeof *trigger_name)
             ? trigger_name[trigger]
             : "?";
}

const char *bench_decode_filler_rules(bool step, int filler_kb, int *trigger) {
  if (!step && filler_kb) return "--filler-kb only goes with --decode-step";
  if (!filler_kb && *trigger >= 0) return "--filler-trigger only goes with --filler-kb";
  if (*trigger < 0) *trigger = BF16FP32_FILLER_END;
  return NULL;
}

const char *bench_decode_prefix(const char *model) {
  if (strcmp(model, "dsv4-flash") == 0) return "flash.";
  if (strcmp(model, "dsv4-pro") == 0) return "pro.";
  return NULL;
}

#ifndef BF16FP32_HAVE_CUDA

int bench_decode(const bench_decode_args *a) {
  fprintf(stderr, "bf16fp32 bench: --decode-step %s needs a GPU: this build has no CUDA\n",
          a->model);
  return 1;
}

#else

#include <cuda_runtime_api.h>

#include "bench-baseline.h"
#include "dispatch.h"
#include "measure.h"
#include "step.h"

#define DECODE_VARIANTS 4

/* V_FILLERS: the fillers alone, without the GEMMs (only with --filler-kb). */
enum { V_AUTO, V_BASELINE, V_LIB_CUBLAS, V_FILLERS };
static const char *const variant_name[DECODE_VARIANTS] = {"auto", BENCH_BASELINE_NAME,
                                                          "lib-cublas", "fillers"};

typedef struct decode_state {
  const bench_decode_args *a;
  const suite *s;
  bf16fp32__step step; /* GEMM g of the step is suite entry g */
  bf16fp32_context *ctx;
  int cublas_index; /* -1: the library has no usable cublas backend */
  bench_baseline *baseline;
  bool pdl; /* the context's PDL option: the fillers launch as its kernels do */
} decode_state;

typedef struct decode_variant {
  decode_state *d;
  int kind;
  int wrong;
  char detail[320];
} decode_variant;

static bf16fp32_status issue_step(decode_variant *v, void *stream, bool capturing) {
  decode_state *d = v->d;
  const bf16fp32__step *sp = &d->step;
  for (int i = 0; i < sp->call_count; i++) {
    const bf16fp32__step_call *g = &sp->call[i];
    const suite_entry *e = &d->s->entries[g->gemm];
    bf16fp32_status st = bf16fp32__step_filler(sp, i, d->pdl, stream);
    if (st != BF16FP32_OK) {
      snprintf(v->detail, sizeof v->detail, "filler before call %d: %s", i, bf16fp32_last_error());
      return st;
    }
    if (v->kind == V_FILLERS) continue;
    if (v->kind == V_AUTO) {
      /* The public entry point, as an engine calls it (it sees the capture itself). */
      st = bf16fp32_linear(d->ctx, BF16FP32_DEVICE, sp->m, e->n, e->k, g->x, e->k, g->w, e->k,
                           g->out, e->n, stream);
    } else {
      bf16fp32__call c = bf16fp32__step_call_at(sp, i, stream, capturing);
      st = v->kind == V_BASELINE ? bench_baseline_run(d->baseline, &c)
                                 : bf16fp32__run_one(d->ctx, d->cublas_index, &c);
    }
    if (st != BF16FP32_OK) {
      snprintf(v->detail, sizeof v->detail, "%s call %d (%s): %s: %s",
               capturing ? "captured" : "eager", i, e->name, bf16fp32_status_name(st),
               bf16fp32_last_error());
      return st;
    }
  }
  return BF16FP32_OK;
}

/* Before the capture, on the capture stream: prewarm, one eager step (module loads, lazy
 * plans). */
static bf16fp32_status variant_prepare(void *user, void *stream) {
  decode_variant *v = (decode_variant *)user;
  decode_state *d = v->d;
  const bf16fp32__step *sp = &d->step;
  bf16fp32_status st = BF16FP32_OK;
  if (v->kind == V_FILLERS) return issue_step(v, stream, false);
  for (int e = 0; e < sp->gemm_count && st == BF16FP32_OK; e++) {
    const suite_entry *en = &d->s->entries[e];
    const int first = bf16fp32__step_first_call(sp, e);
    if (first < 0) continue; /* no call of this GEMM in a step */
    if (v->kind == V_AUTO) {
      st = bf16fp32_prewarm(d->ctx, BF16FP32_DEVICE, en->n, en->k, &sp->m, 1, stream);
    } else if (v->kind == V_LIB_CUBLAS) {
      bf16fp32__call c = bf16fp32__step_call_at(sp, first, stream, false);
      st = bf16fp32__prewarm_one(d->ctx, d->cublas_index, &c.shape, NULL, stream);
    }
    if (st != BF16FP32_OK)
      snprintf(v->detail, sizeof v->detail, "prewarm %s: %s: %s", en->name,
               bf16fp32_status_name(st), bf16fp32_last_error());
  }
  if (st == BF16FP32_OK) st = issue_step(v, stream, false);
  return st;
}

/* After the capture: poison every output so that the checked replay must write them all. */
static bf16fp32_status variant_arm(void *user, void *stream) {
  decode_variant *v = (decode_variant *)user;
  if (v->kind == V_FILLERS) return BF16FP32_OK;
  bf16fp32_status st = bf16fp32__step_poison(&v->d->step, stream);
  if (st != BF16FP32_OK) snprintf(v->detail, sizeof v->detail, "poison: %s", bf16fp32_last_error());
  return st;
}

static bf16fp32_status variant_record(void *user, void *stream) {
  return issue_step((decode_variant *)user, stream, true);
}

/* After the first replay: the first and last call of every GEMM against the oracle. */
static bf16fp32_status variant_check(void *user, void *stream) {
  decode_variant *v = (decode_variant *)user;
  if (v->kind == V_FILLERS) return BF16FP32_OK; /* no GEMM output to check */
  bf16fp32_status st = bf16fp32__step_check(&v->d->step, -1, stream, v->detail, sizeof v->detail);
  v->wrong = st == BF16FP32_INTERNAL;
  return st;
}

/* The table's preamble: the model's GEMMs, how a step is timed and checked, the columns. */
static void print_header(const decode_state *d) {
  const bench_decode_args *a = d->a;
  const int ne = d->s->count;
  printf("# bf16fp32 bench --decode-step %s: %d GEMMs per step, each layer with its own weight"
         " (%.0f MB of bf16 weights in all)\n", a->model, d->step.call_count, d->step.weight_bytes / 1e6);
  printf("#");
  for (int e = 0; e < ne; e++)
    printf(" %s %lldx%lld x%d%s", d->s->entries[e].name, (long long)d->s->entries[e].n,
           (long long)d->s->entries[e].k, d->s->entries[e].calls, e + 1 < ne ? "," : "\n");
  printf("# one CUDA graph per step and variant (calls in layer order), %d warm-up replays,"
         " median of %d interleaved replays (each after an untimed one of itself); every GEMM's"
         " first and last call checked against the fp64 oracle (%d sampled rows, whole output for unwritten elements)\n",
         a->warmup, a->replays, a->check_rows);
  printf("# auto = the library through bf16fp32_linear (prewarmed on the capture stream);"
         " %s = direct cublasGemmEx as MEASURING.md; lib-cublas = the library's cublas backend"
         " alone; speed-up = %s / auto (> 1: auto faster); floor = sum of F over the step\n\n",
         BENCH_BASELINE_NAME, BENCH_BASELINE_NAME);
  if (d->step.filler)
    printf("# before every GEMM a filler kernel reads its own %d KB (cold)%s; fillers us = the"
           " fillers alone; the other columns include them\n", a->filler_kb,
           !d->pdl ? "" : a->filler_trigger == BF16FP32_FILLER_END ? ", launched with PDL: it waits at entry, triggers after its reads"
           : a->filler_trigger == BF16FP32_FILLER_ENTRY ? ", launched with PDL: it waits at entry, triggers right after"
           : ", launched plainly");
  printf("%6s %14s %18s %14s %10s %12s%s\n", "batch", "auto us/step", "cublas-baseline us", "lib-cublas us",
         "speed-up", "floor us", d->step.filler ? "   fillers us" : "");
}

/* Times one batch's step in every variant, prints its row and what auto chose. Returns 0, 1
 * (a variant failed or was wrong) or -1 (the device is lost: stop). */
static int run_batch(decode_state *d, int64_t m, void *stream) {
  const bench_decode_args *a = d->a;
  const int ne = d->s->count;
  const bool fillers = d->step.filler != NULL;
  int rc = 0;
  const double floor_us = bf16fp32__step_floor_us(&d->step);
  decode_variant var[DECODE_VARIANTS];
  bf16fp32__graph_job jobs[DECODE_VARIANTS];
  int job_of[DECODE_VARIANTS];
  int njobs = 0;
  for (int k = 0; k < DECODE_VARIANTS; k++) {
    memset(&var[k], 0, sizeof var[k]);
    var[k].d = d;
    var[k].kind = k;
    job_of[k] = -1;
    if (k == V_BASELINE && !d->baseline) continue;
    if (k == V_LIB_CUBLAS && d->cublas_index < 0) continue;
    if (k == V_FILLERS && !fillers) continue;
    memset(&jobs[njobs], 0, sizeof jobs[njobs]);
    jobs[njobs] = (bf16fp32__graph_job){
        .prepare = variant_prepare,
        .record = variant_record,
        .arm = variant_arm,
        .check = variant_check,
        .user = &var[k],
        .min_nodes = bf16fp32__step_min_nodes(&d->step, k != V_FILLERS, -1)};
    job_of[k] = njobs++;
  }
  const bf16fp32_status st = bf16fp32__time_graphs_on(jobs, njobs, a->warmup, a->replays, stream);
  double us[DECODE_VARIANTS];
  char cell[DECODE_VARIANTS][32];
  for (int k = 0; k < DECODE_VARIANTS; k++) {
    us[k] = -1.0;
    snprintf(cell[k], sizeof cell[k], "-");
    int j = job_of[k];
    if (j < 0) continue;
    if (jobs[j].status == BF16FP32_OK && jobs[j].median_ms > 0) {
      us[k] = jobs[j].median_ms * 1e3;
      snprintf(cell[k], sizeof cell[k], "%.1f", us[k]);
    } else {
      snprintf(cell[k], sizeof cell[k], "%s", var[k].wrong ? "WRONG" : "failed");
      rc = 1;
    }
  }
  char speedup[32] = "-";
  if (us[V_AUTO] > 0 && us[V_BASELINE] > 0)
    snprintf(speedup, sizeof speedup, "%.2fx", us[V_BASELINE] / us[V_AUTO]);
  printf("%6lld %14s %18s %14s %10s %12.1f", (long long)m, cell[V_AUTO], cell[V_BASELINE],
         cell[V_LIB_CUBLAS], speedup, floor_us);
  if (fillers) printf(" %13s", cell[V_FILLERS]);
  printf("\n");
  for (int k = 0; k < DECODE_VARIANTS; k++)
    if (job_of[k] >= 0 && jobs[job_of[k]].status != BF16FP32_OK)
      printf("#   %s at batch %lld: %s\n", variant_name[k], (long long)m,
             var[k].detail[0]            ? var[k].detail
             : jobs[job_of[k]].detail[0] ? jobs[job_of[k]].detail
                                         : bf16fp32_status_name(jobs[job_of[k]].status));
  printf("#   auto chose:");
  for (int e = 0; e < ne; e++) {
    const char *chosen = NULL;
    const suite_entry *en = &d->s->entries[e];
    if (bf16fp32_select(d->ctx, BF16FP32_DEVICE, m, en->n, en->k, &chosen, NULL, 0) != BF16FP32_OK)
      chosen = "?";
    printf(" %s=%s", en->name, chosen ? chosen : "?");
  }
  printf("\n");
  fflush(stdout);
  if (st == BF16FP32_CUDA_FATAL) {
    fprintf(stderr, "bf16fp32 bench: %s; stopping\n", bf16fp32_last_error());
    return -1;
  }
  return rc;
}

int bench_decode(const bench_decode_args *a) {
  int rc = 1;
  decode_state d;
  memset(&d, 0, sizeof d);
  cudaStream_t stream = NULL;
  d.a = a;
  d.s = a->suite;
  char why[256] = "";
  int ne = d.s->count;

  int devices = 0;
  cudaError_t ce = cudaGetDeviceCount(&devices);
  if (ce != cudaSuccess || devices == 0) {
    fprintf(stderr, "bf16fp32 bench: --decode-step needs a CUDA GPU: %s\n",
            ce != cudaSuccess ? cudaGetErrorString(ce) : "no device");
    return 1;
  }
  int64_t max_m = 0;
  for (int i = 0; i < a->batch_count; i++)
    if (a->batch[i] > max_m) max_m = a->batch[i];
  bf16fp32__step_gemm gemm[SUITE_MAX_ENTRIES];
  for (int e = 0; e < ne; e++)
    gemm[e] = (bf16fp32__step_gemm){d.s->entries[e].n, d.s->entries[e].k, d.s->entries[e].calls};

  bf16fp32_status st = bf16fp32_create(&d.ctx, NULL);
  if (st != BF16FP32_OK) {
    fprintf(stderr, "bf16fp32 bench: cannot create a context: %s: %s\n", bf16fp32_status_name(st),
            bf16fp32_last_error());
    goto done;
  }
  d.cublas_index = bf16fp32__registry_find("cublas");
  if (d.cublas_index >= 0 && !bf16fp32__backend_available(d.ctx, d.cublas_index))
    d.cublas_index = -1;
  d.baseline = bench_baseline_create(why, sizeof why);
  if (!d.baseline) fprintf(stderr, "bf16fp32 bench: no cuBLAS baseline: %s\n", why);
  st = bf16fp32__step_create(&d.step, gemm, ne, max_m, 0xdec0de00ULL);
  if (st != BF16FP32_OK) {
    fprintf(stderr, "bf16fp32 bench: --decode-step %s (%s): %s\n", a->model, d.s->path,
            bf16fp32_last_error());
    goto done;
  }
  d.pdl = bf16fp32__context_config(d.ctx)->use_pdl != 0;
  if (a->filler_kb > 0 &&
      (st = bf16fp32__step_set_fillers(&d.step, a->filler_kb, a->filler_trigger)) != BF16FP32_OK) {
    fprintf(stderr, "bf16fp32 bench: --filler-kb %d: %s\n", a->filler_kb, bf16fp32_last_error());
    goto done;
  }

  print_header(&d);

  /* One stream for every batch, as the one-shape bench has: graphs captured and replayed on a
   * fresh stream per batch ran cuBLAS's calls 0.7-0.8 us slower and smallm's 0.2 us slower from
   * the second batch on (H100 and H200, session 83). */
  ce = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (ce != cudaSuccess) {
    fprintf(stderr, "bf16fp32 bench: cudaStreamCreate: %s\n", cudaGetErrorString(ce));
    goto done;
  }
  rc = 0;
  for (int bi = 0; bi < a->batch_count; bi++) {
    const int64_t m = a->batch[bi];
    st = bf16fp32__step_set_m(&d.step, m, a->check_rows);
    if (st != BF16FP32_OK) {
      fprintf(stderr, "bf16fp32 bench: oracle: %s\n", bf16fp32_last_error());
      rc = 1;
      goto done;
    }
    const int batch_rc = run_batch(&d, m, stream);
    if (batch_rc < 0) {
      rc = 1;
      goto done;
    }
    if (batch_rc) rc = 1;
  }

done:
  if (stream) cudaStreamDestroy(stream);
  bf16fp32__step_free(&d.step);
  bench_baseline_destroy(d.baseline);
  bf16fp32_destroy(d.ctx);
  return rc;
}

#endif
