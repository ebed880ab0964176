/* `bf16fp32 bench --decode-step`: all router and compressor GEMMs of one decode step (each
 * layer with its own weight) captured in one CUDA graph; auto against direct cuBLAS calls and
 * the library's cublas backend, same graph shape, interleaved replays. */
#include "bench-decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
#include "bf16fp32.h"
#include "dispatch.h"
#include "measure.h"

#define DECODE_ALIGN 256
#define DECODE_VARIANTS 3

enum { V_AUTO, V_BASELINE, V_LIB_CUBLAS };
static const char *const variant_name[DECODE_VARIANTS] = {"auto", BENCH_BASELINE_NAME,
                                                          "lib-cublas"};

/* One GEMM of the step: its suite entry and its own operands. */
typedef struct decode_gemm {
  int entry;
  uint16_t *w, *x;
  float *out;
  int first, last; /* first / last call of its entry: these are checked */
} decode_gemm;

typedef struct decode_state {
  const bench_decode_args *a;
  const suite *s;
  int calls;
  decode_gemm *g;
  int64_t m, max_m;
  bf16fp32_context *ctx;
  int cublas_index; /* -1: the library has no usable cublas backend */
  bench_baseline *baseline;
  uint16_t **wh, **xh;          /* host copies per entry */
  bf16fp32__check_ref *ref;     /* per entry, for the current m */
  float *outh;                  /* host buffer for one output */
} decode_state;

typedef struct decode_variant {
  decode_state *d;
  int kind;
  int wrong;
  char detail[320];
} decode_variant;

static size_t align_up(size_t v) { return (v + DECODE_ALIGN - 1) / DECODE_ALIGN * DECODE_ALIGN; }

static bf16fp32__call gemm_call(const decode_state *d, const decode_gemm *g, void *stream,
                                bool capturing) {
  const suite_entry *e = &d->s->entries[g->entry];
  bf16fp32__call c;
  memset(&c, 0, sizeof c);
  c.shape = bf16fp32__make_shape(BF16FP32_DEVICE, d->m, e->n, e->k, e->k, e->k, e->n, g->x, g->w,
                                 g->out);
  c.x = g->x;
  c.w = g->w;
  c.out = g->out;
  c.stream = stream;
  c.capturing = capturing;
  return c;
}

static bf16fp32_status issue_step(decode_variant *v, void *stream, bool capturing) {
  decode_state *d = v->d;
  for (int i = 0; i < d->calls; i++) {
    const decode_gemm *g = &d->g[i];
    const suite_entry *e = &d->s->entries[g->entry];
    bf16fp32_status st;
    if (v->kind == V_AUTO) {
      /* The public entry point, as an engine calls it (it sees the capture itself). */
      st = bf16fp32_linear(d->ctx, BF16FP32_DEVICE, d->m, e->n, e->k, g->x, e->k, g->w, e->k,
                           g->out, e->n, stream);
    } else {
      bf16fp32__call c = gemm_call(d, g, stream, capturing);
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
 * plans), then poison every output so that the checked replay must write them all. */
static bf16fp32_status variant_prepare(void *user, void *stream) {
  decode_variant *v = (decode_variant *)user;
  decode_state *d = v->d;
  bf16fp32_status st = BF16FP32_OK;
  for (int e = 0; e < d->s->count && st == BF16FP32_OK; e++) {
    const suite_entry *en = &d->s->entries[e];
    const decode_gemm *g = NULL;
    for (int i = 0; i < d->calls && !g; i++)
      if (d->g[i].entry == e) g = &d->g[i];
    if (!g) continue; /* no call of this GEMM in a step */
    if (v->kind == V_AUTO) {
      st = bf16fp32_prewarm(d->ctx, BF16FP32_DEVICE, en->n, en->k, &d->m, 1, stream);
    } else if (v->kind == V_LIB_CUBLAS) {
      bf16fp32__call c = gemm_call(d, g, stream, false);
      st = bf16fp32__prewarm_one(d->ctx, d->cublas_index, &c.shape, NULL, stream);
    }
    if (st != BF16FP32_OK)
      snprintf(v->detail, sizeof v->detail, "prewarm %s: %s: %s", en->name,
               bf16fp32_status_name(st), bf16fp32_last_error());
  }
  if (st == BF16FP32_OK) st = issue_step(v, stream, false);
  for (int i = 0; i < d->calls && st == BF16FP32_OK; i++) {
    const suite_entry *e = &d->s->entries[d->g[i].entry];
    st = bf16fp32__device_poison_f32(d->g[i].out, (size_t)d->m * (size_t)e->n, stream);
    if (st != BF16FP32_OK)
      snprintf(v->detail, sizeof v->detail, "poison: %s", bf16fp32_last_error());
  }
  return st;
}

static bf16fp32_status variant_record(void *user, void *stream) {
  return issue_step((decode_variant *)user, stream, true);
}

/* After the first replay: the first and last call of every GEMM against the oracle. */
static bf16fp32_status variant_check(void *user, void *stream) {
  decode_variant *v = (decode_variant *)user;
  decode_state *d = v->d;
  cudaError_t e = cudaStreamSynchronize((cudaStream_t)stream);
  for (int i = 0; i < d->calls && e == cudaSuccess; i++) {
    const decode_gemm *g = &d->g[i];
    if (!g->first && !g->last) continue;
    const suite_entry *en = &d->s->entries[g->entry];
    e = cudaMemcpy(d->outh, g->out, (size_t)d->m * (size_t)en->n * sizeof(float),
                   cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) break;
    bf16fp32__check_result res;
    bf16fp32__check_ref_compare(&d->ref[g->entry], d->outh, en->n, &res);
    char msg[200];
    if (!bf16fp32__check_ok(&res, msg, sizeof msg)) {
      v->wrong = 1;
      snprintf(v->detail, sizeof v->detail, "call %d (%s): %s", i, en->name, msg);
      return bf16fp32__fail(BF16FP32_INTERNAL, "%s", v->detail);
    }
  }
  if (e != cudaSuccess) {
    snprintf(v->detail, sizeof v->detail, "check: %s", cudaGetErrorString(e));
    (void)cudaGetLastError();
    return bf16fp32__fail(BF16FP32_CUDA_ERROR, "%s", v->detail);
  }
  return BF16FP32_OK;
}

/* Calls in layer order: layer l issues every GEMM that has more than l calls per step. */
static int build_calls(decode_state *d) {
  int total = 0, layers = 0;
  for (int e = 0; e < d->s->count; e++) {
    total += d->s->entries[e].calls;
    if (d->s->entries[e].calls > layers) layers = d->s->entries[e].calls;
  }
  d->g = (decode_gemm *)calloc((size_t)total + 1, sizeof *d->g);
  if (!d->g) return -1;
  int i = 0;
  for (int l = 0; l < layers; l++)
    for (int e = 0; e < d->s->count; e++)
      if (l < d->s->entries[e].calls) {
        d->g[i].entry = e;
        d->g[i].first = l == 0;
        d->g[i].last = l == d->s->entries[e].calls - 1;
        i++;
      }
  d->calls = total;
  return 0;
}

int bench_decode(const bench_decode_args *a) {
  int rc = 1;
  decode_state d;
  memset(&d, 0, sizeof d);
  d.a = a;
  d.s = a->suite;
  char *base = NULL;
  char why[256] = "";
  int ne = d.s->count;

  int devices = 0;
  cudaError_t ce = cudaGetDeviceCount(&devices);
  if (ce != cudaSuccess || devices == 0) {
    fprintf(stderr, "bf16fp32 bench: --decode-step needs a CUDA GPU: %s\n",
            ce != cudaSuccess ? cudaGetErrorString(ce) : "no device");
    return 1;
  }
  for (int i = 0; i < a->batch_count; i++)
    if (a->batch[i] > d.max_m) d.max_m = a->batch[i];
  if (build_calls(&d) != 0 || d.calls == 0) {
    fprintf(stderr, "bf16fp32 bench: --decode-step %s: no calls per step in %s\n", a->model,
            d.s->path);
    goto done;
  }
  d.wh = (uint16_t **)calloc((size_t)ne, sizeof *d.wh);
  d.xh = (uint16_t **)calloc((size_t)ne, sizeof *d.xh);
  d.ref = (bf16fp32__check_ref *)calloc((size_t)ne, sizeof *d.ref);
  int64_t max_n = 0;
  for (int e = 0; e < ne; e++)
    if (d.s->entries[e].n > max_n) max_n = d.s->entries[e].n;
  d.outh = (float *)malloc((size_t)d.max_m * (size_t)max_n * sizeof(float));
  if (!d.wh || !d.xh || !d.ref || !d.outh) {
    fprintf(stderr, "bf16fp32 bench: out of memory\n");
    goto done;
  }

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

  /* Every call owns its weight, input and output: weights are read cold, as in a step. */
  size_t total = 0, weight_bytes = 0;
  for (int i = 0; i < d.calls; i++) {
    const suite_entry *e = &d.s->entries[d.g[i].entry];
    total += align_up((size_t)e->n * (size_t)e->k * 2) + align_up((size_t)d.max_m * (size_t)e->k * 2) +
             align_up((size_t)d.max_m * (size_t)e->n * 4);
    weight_bytes += (size_t)e->n * (size_t)e->k * 2;
  }
  ce = cudaMalloc((void **)&base, total);
  if (ce != cudaSuccess) {
    fprintf(stderr, "bf16fp32 bench: cudaMalloc of %.2f GB: %s\n", total / 1e9, cudaGetErrorString(ce));
    goto done;
  }
  size_t off = 0;
  for (int i = 0; i < d.calls; i++) {
    const suite_entry *e = &d.s->entries[d.g[i].entry];
    d.g[i].w = (uint16_t *)(base + off);
    off += align_up((size_t)e->n * (size_t)e->k * 2);
    d.g[i].x = (uint16_t *)(base + off);
    off += align_up((size_t)d.max_m * (size_t)e->k * 2);
    d.g[i].out = (float *)(base + off);
    off += align_up((size_t)d.max_m * (size_t)e->n * 4);
  }
  /* Random operands: one host copy per GEMM, uploaded to its first call, copied to the rest. */
  for (int e = 0; e < ne; e++) {
    const suite_entry *en = &d.s->entries[e];
    size_t wn = (size_t)en->n * (size_t)en->k, xn = (size_t)d.max_m * (size_t)en->k;
    d.wh[e] = (uint16_t *)malloc(wn * 2);
    d.xh[e] = (uint16_t *)malloc(xn * 2);
    if (!d.wh[e] || !d.xh[e]) {
      fprintf(stderr, "bf16fp32 bench: out of memory\n");
      goto done;
    }
    bf16fp32__fill_random_bf16(d.wh[e], wn, 0xdec0de00ULL + 2 * (uint64_t)e);
    bf16fp32__fill_random_bf16(d.xh[e], xn, 0xdec0de01ULL + 2 * (uint64_t)e);
    const decode_gemm *first = NULL;
    for (int i = 0; i < d.calls; i++) {
      if (d.g[i].entry != e) continue;
      if (!first) {
        first = &d.g[i];
        ce = cudaMemcpy(first->w, d.wh[e], wn * 2, cudaMemcpyHostToDevice);
        if (ce == cudaSuccess) ce = cudaMemcpy(first->x, d.xh[e], xn * 2, cudaMemcpyHostToDevice);
      } else {
        ce = cudaMemcpy(d.g[i].w, first->w, wn * 2, cudaMemcpyDeviceToDevice);
        if (ce == cudaSuccess) ce = cudaMemcpy(d.g[i].x, first->x, xn * 2, cudaMemcpyDeviceToDevice);
      }
      if (ce != cudaSuccess) {
        fprintf(stderr, "bf16fp32 bench: filling the operands: %s\n", cudaGetErrorString(ce));
        goto done;
      }
    }
  }

  /* The copies above ran on the legacy stream, which the capture stream does not wait for. */
  ce = cudaDeviceSynchronize();
  if (ce != cudaSuccess) {
    fprintf(stderr, "bf16fp32 bench: filling the operands: %s\n", cudaGetErrorString(ce));
    goto done;
  }

  printf("# bf16fp32 bench --decode-step %s: %d GEMMs per step, each layer with its own weight"
         " (%.0f MB of bf16 weights in all)\n", a->model, d.calls, weight_bytes / 1e6);
  printf("#");
  for (int e = 0; e < ne; e++)
    printf(" %s %lldx%lld x%d%s", d.s->entries[e].name, (long long)d.s->entries[e].n,
           (long long)d.s->entries[e].k, d.s->entries[e].calls, e + 1 < ne ? "," : "\n");
  printf("# one CUDA graph per step and variant (calls in layer order), %d warm-up replays,"
         " median of %d interleaved replays (each after an untimed one of itself); every GEMM's"
         " first and last call checked against the fp64 oracle (%d sampled rows, whole output for unwritten elements)\n",
         a->warmup, a->replays, a->check_rows);
  printf("# auto = the library through bf16fp32_linear (prewarmed on the capture stream);"
         " %s = direct cublasGemmEx as MEASURING.md; lib-cublas = the library's cublas backend"
         " alone; speed-up = %s / auto (> 1: auto faster); floor = sum of F over the step\n\n",
         BENCH_BASELINE_NAME, BENCH_BASELINE_NAME);
  printf("%6s %14s %18s %14s %10s %12s\n", "batch", "auto us/step", "cublas-baseline us", "lib-cublas us",
         "speed-up", "floor us");

  rc = 0;
  for (int bi = 0; bi < a->batch_count; bi++) {
    d.m = a->batch[bi];
    double floor_us = 0;
    for (int i = 0; i < d.calls; i++) {
      const suite_entry *e = &d.s->entries[d.g[i].entry];
      floor_us += bf16fp32__floor_us(d.m, e->n, e->k);
    }
    for (int e = 0; e < ne; e++) {
      bf16fp32__check_ref_free(&d.ref[e]);
      const suite_entry *en = &d.s->entries[e];
      st = bf16fp32__check_ref_init(&d.ref[e], d.m, en->n, en->k, d.xh[e], en->k, d.wh[e], en->k,
                                    a->check_rows, 0x5eedULL + (uint64_t)e);
      if (st != BF16FP32_OK) {
        fprintf(stderr, "bf16fp32 bench: oracle: %s\n", bf16fp32_last_error());
        rc = 1;
        goto done;
      }
    }
    decode_variant var[DECODE_VARIANTS];
    bf16fp32__graph_job jobs[DECODE_VARIANTS];
    int job_of[DECODE_VARIANTS];
    int njobs = 0;
    for (int k = 0; k < DECODE_VARIANTS; k++) {
      memset(&var[k], 0, sizeof var[k]);
      var[k].d = &d;
      var[k].kind = k;
      job_of[k] = -1;
      if (k == V_BASELINE && !d.baseline) continue;
      if (k == V_LIB_CUBLAS && d.cublas_index < 0) continue;
      memset(&jobs[njobs], 0, sizeof jobs[njobs]);
      jobs[njobs] = (bf16fp32__graph_job){.prepare = variant_prepare,
                                          .record = variant_record,
                                          .check = variant_check,
                                          .user = &var[k]};
      job_of[k] = njobs++;
    }
    st = bf16fp32__time_graphs(jobs, njobs, a->warmup, a->replays);
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
    printf("%6lld %14s %18s %14s %10s %12.1f\n", (long long)d.m, cell[V_AUTO], cell[V_BASELINE],
           cell[V_LIB_CUBLAS], speedup, floor_us);
    for (int k = 0; k < DECODE_VARIANTS; k++)
      if (job_of[k] >= 0 && jobs[job_of[k]].status != BF16FP32_OK)
        printf("#   %s at batch %lld: %s\n", variant_name[k], (long long)d.m,
               var[k].detail[0] ? var[k].detail : bf16fp32_status_name(jobs[job_of[k]].status));
    printf("#   auto chose:");
    for (int e = 0; e < ne; e++) {
      const char *chosen = NULL;
      const suite_entry *en = &d.s->entries[e];
      if (bf16fp32_select(d.ctx, BF16FP32_DEVICE, d.m, en->n, en->k, &chosen, NULL, 0) != BF16FP32_OK)
        chosen = "?";
      printf(" %s=%s", en->name, chosen ? chosen : "?");
    }
    printf("\n");
    fflush(stdout);
    if (st == BF16FP32_CUDA_FATAL) {
      fprintf(stderr, "bf16fp32 bench: %s; stopping\n", bf16fp32_last_error());
      rc = 1;
      goto done;
    }
  }

done:
  if (d.ref)
    for (int e = 0; e < ne; e++) bf16fp32__check_ref_free(&d.ref[e]);
  if (d.wh)
    for (int e = 0; e < ne; e++) free(d.wh[e]);
  if (d.xh)
    for (int e = 0; e < ne; e++) free(d.xh[e]);
  free(d.wh);
  free(d.xh);
  free(d.ref);
  free(d.outh);
  free(d.g);
  if (base) cudaFree(base);
  bench_baseline_destroy(d.baseline);
  bf16fp32_destroy(d.ctx);
  return rc;
}

#endif
