/* The oneDNN CPU baseline: bf16 x bf16 -> f32 matmul with the weights transposed through strides,
 * timed like the library's host calls (one primitive per shape, warm-up, median of reps). Where
 * this oneDNN has no bf16 matmul for the CPU (2.x without AVX-512), its f32 matmul instead, on
 * weights upcast once (as an engine would at load) and x upcast in each timed call. */
#include "bench-dnnl.h"

#include <stdio.h>

#ifndef BF16FP32_HAVE_DNNL

#define NOT_FOUND "oneDNN not found at build time (apt-get install libdnnl-dev)"

int bench_dnnl_available(char *why, size_t len) {
  if (why && len) snprintf(why, len, "%s", NOT_FOUND);
  return 0;
}

int bench_dnnl_cell_create(bench_dnnl_cell **cell, int64_t m, int64_t n, int64_t k,
                           int check_rows, char *why, size_t len) {
  (void)m, (void)n, (void)k, (void)check_rows;
  if (cell) *cell = NULL;
  if (why && len) snprintf(why, len, "%s", NOT_FOUND);
  return -1;
}

void bench_dnnl_cell_free(bench_dnnl_cell *cell) { (void)cell; }

int bench_dnnl_cell_operands(const bench_dnnl_cell *cell, struct bf16fp32__host_operands *ops) {
  (void)cell, (void)ops;
  return -1;
}

int bench_dnnl_time(bench_dnnl_cell *cell, int threads, int reps, double *median_us,
                    double *worst_ratio, char *why, size_t len) {
  (void)cell, (void)threads, (void)reps;
  if (median_us) *median_us = 0.0;
  if (worst_ratio) *worst_ratio = -1.0;
  if (why && len) snprintf(why, len, "%s", NOT_FOUND);
  return -1;
}

#else

#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <dnnl.h>

#include "support.h"

__attribute__((format(printf, 3, 4))) static void say(char *why, size_t len, const char *fmt, ...) {
  if (!why || !len) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, len, fmt, ap);
  va_end(ap);
}

/* oneDNN's status codes by name, for the messages. */
static const char *status_name(dnnl_status_t s) {
  switch (s) {
    case dnnl_success: return "success";
    case dnnl_out_of_memory: return "out of memory";
    case dnnl_invalid_arguments: return "invalid arguments";
    case dnnl_unimplemented: return "unimplemented";
    case dnnl_runtime_error: return "runtime error";
    default: return "status not listed";
  }
}

/* Any dnnl call: on failure name it and its status, then leave through cleanup. */
#define DNNL_TRY(call)                                                              \
  do {                                                                              \
    dnnl_status_t s_ = (call);                                                      \
    if (s_ != dnnl_success) {                                                       \
      say(why, len, "oneDNN: %s failed (%s, status %d)", #call, status_name(s_),    \
          (int)s_);                                                                 \
      goto cleanup;                                                                 \
    }                                                                               \
  } while (0)

/* The memory descriptors of out[m,n] (f32) = x[m,k] (in) . w[n,k]^T (in), in bf16 or f32, the
 * weights w[N,K] row-major seen as [K,N] through strides (1, K), and the matmul primitive
 * descriptor on engine: 0, or -1 with the call that failed in why (dnnl_unimplemented where
 * this oneDNN has no such matmul for the CPU, e.g. bf16 without AVX-512 in oneDNN 2.x). */
static int matmul_desc(int64_t m, int64_t n, int64_t k, dnnl_data_type_t in, dnnl_engine_t engine,
                       dnnl_memory_desc_t *xd, dnnl_memory_desc_t *wd, dnnl_memory_desc_t *od,
                       dnnl_primitive_desc_t *pd, char *why, size_t len) {
  dnnl_dims_t xdims = {m, k}, xstr = {k, 1};
  dnnl_dims_t wdims = {k, n}, wstr = {1, k};
  dnnl_dims_t odims = {m, n}, ostr = {n, 1};
  dnnl_matmul_desc_t md;
  DNNL_TRY(dnnl_memory_desc_init_by_strides(xd, 2, xdims, in, xstr));
  DNNL_TRY(dnnl_memory_desc_init_by_strides(wd, 2, wdims, in, wstr));
  DNNL_TRY(dnnl_memory_desc_init_by_strides(od, 2, odims, dnnl_f32, ostr));
  DNNL_TRY(dnnl_matmul_desc_init(&md, xd, wd, NULL, od));
  DNNL_TRY(dnnl_primitive_desc_create(pd, &md, NULL, engine, NULL));
  return 0;
cleanup:
  return -1;
}

/* oneDNN from Debian is OpenMP-threaded. The program is not built with -fopenmp, so the OpenMP
 * runtime oneDNN loaded is reached through dlsym: no link flag, and so the very libgomp oneDNN
 * uses. */
typedef void (*omp_set_fn)(int);
typedef int (*omp_get_fn)(void);

static int set_threads(int threads, int *previous, char *why, size_t len) {
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
  omp_set_fn set = (omp_set_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "omp_set_num_threads");
  omp_get_fn get = (omp_get_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "omp_get_max_threads");
  if (!set || !get) {
    say(why, len, "oneDNN is OpenMP-threaded but omp_set_num_threads is not loaded");
    return -1;
  }
  if (previous) *previous = get();
  set(threads);
  if (get() != threads) {
    say(why, len, "omp_set_num_threads(%d) did not take: OpenMP runs %d threads", threads, get());
    return -1;
  }
  return 0;
#elif DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_SEQ
  if (previous) *previous = 1;
  if (threads != 1) {
    say(why, len, "this sequential oneDNN cannot run %d threads", threads);
    return -1;
  }
  return 0;
#else
  (void)threads;
  (void)previous;
  say(why, len, "the threading runtime of this oneDNN is not supported here");
  return -1;
#endif
}

/* The operand type of the baseline's matmul on this CPU: bf16, else f32 (upcast operands), else
 * none (-1, the failure in why). Probed at a small shape. */
static int baseline_type(dnnl_engine_t engine, dnnl_data_type_t *in, char *why, size_t len) {
  const dnnl_data_type_t types[2] = {dnnl_bf16, dnnl_f32};
  char failed[256] = "";
  for (int t = 0; t < 2; t++) {
    dnnl_memory_desc_t xd, wd, od;
    dnnl_primitive_desc_t pd = NULL;
    const int ok = matmul_desc(1, 16, 32, types[t], engine, &xd, &wd, &od, &pd,
                               t == 0 ? failed : why, t == 0 ? sizeof failed : len) == 0;
    if (pd) dnnl_primitive_desc_destroy(pd);
    if (ok) {
      *in = types[t];
      return 0;
    }
  }
  const dnnl_version_t *v = dnnl_version();
  say(why, len, "oneDNN %d.%d.%d has no bf16 or f32 matmul on this CPU (%s)", v->major, v->minor,
      v->patch, failed);
  return -1;
}

int bench_dnnl_available(char *why, size_t len) {
  const dnnl_version_t *v = dnnl_version();
  dnnl_engine_t engine = NULL;
  if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success) {
    say(why, len, "oneDNN %d.%d.%d: no CPU engine", v->major, v->minor, v->patch);
    return 0;
  }
  dnnl_data_type_t in = dnnl_bf16;
  const int ok = baseline_type(engine, &in, why, len) == 0;
  dnnl_engine_destroy(engine);
  if (!ok) return 0;
  say(why, len, "oneDNN %d.%d.%d %s (%s)", v->major, v->minor, v->patch,
      in == dnnl_bf16 ? "bf16 matmul with fp32 output"
                      : "f32 matmul, no bf16 one on this CPU: weights upcast once, x upcast in "
                        "each timed call",
      v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "not OpenMP");
  return 1;
}

/* bf16 bit patterns to f32 (exact), as an engine without bf16 arithmetic feeds its f32 matmul. */
static void upcast(const uint16_t *in, float *out, size_t count) {
  for (size_t i = 0; i < count; i++) out[i] = bf16fp32__bf16_to_float(in[i]);
}

struct bench_dnnl_cell {
  int64_t m, n, k;
  dnnl_engine_t engine;
  dnnl_data_type_t in;      /* the matmul's operand type: bf16, or f32 on upcast operands */
  size_t copies;
  size_t xstride, wstride;  /* between copies: x in elements, w in bytes */
  uint16_t *x;              /* copies of x, bf16 (upcast into xf in each call when f32) */
  void *w;                  /* copies of w in the matmul's type */
  float *xf, *out;
  bf16fp32__check_ref ref;  /* the oracle of x's and w's first copies */
  size_t x_flipped, w_flipped; /* bf16 copies with x's or w's signs flipped; 0: none */
};

void bench_dnnl_cell_free(bench_dnnl_cell *cell) {
  if (!cell) return;
  if (cell->engine) dnnl_engine_destroy(cell->engine);
  bf16fp32__check_ref_free(&cell->ref);
  free(cell->out);
  free(cell->xf);
  free(cell->w);
  free(cell->x);
  free(cell);
}

int bench_dnnl_cell_create(bench_dnnl_cell **cellp, int64_t m, int64_t n, int64_t k,
                           int check_rows, char *why, size_t len) {
  uint16_t *wsrc = NULL;
  bench_dnnl_cell *c = NULL;
  if (cellp) *cellp = NULL;
  if (!cellp || m < 1 || n < 1 || k < 1 || check_rows < 0) {
    say(why, len, "bench_dnnl_cell_create: bad arguments");
    goto cleanup;
  }
  c = calloc(1, sizeof *c);
  if (!c) {
    say(why, len, "bench_dnnl_cell_create: out of memory");
    goto cleanup;
  }
  c->m = m, c->n = n, c->k = k;
  DNNL_TRY(dnnl_engine_create(&c->engine, dnnl_cpu, 0));
  c->in = dnnl_bf16;
  if (baseline_type(c->engine, &c->in, why, len) != 0) goto cleanup;
  const size_t wbytes = c->in == dnnl_bf16 ? 2 : 4; /* per weight, as the matmul reads them */

  /* The same cold-cache rotation as the library's host timing (measure.h), over the bytes the
   * matmul reads: x as bf16 (upcast in the call when f32), w as the matmul's type. */
  size_t xs = (size_t)(m * k), ws = (size_t)(n * k), os = (size_t)(m * n);
  c->xstride = (xs * 2 + 63) / 64 * 32;
  c->wstride = (ws * wbytes + 63) / 64 * 64;
  c->copies = bf16fp32__host_copies(2 * c->xstride + c->wstride);
  c->x = aligned_alloc(64, c->copies * c->xstride * 2);
  c->w = aligned_alloc(64, c->copies * c->wstride);
  wsrc = malloc(ws * 2);
  c->xf = c->in == dnnl_f32 ? aligned_alloc(64, (xs * 4 + 63) / 64 * 64) : NULL;
  c->out = aligned_alloc(64, (os * 4 + 63) / 64 * 64);
  if (!c->x || !c->w || !wsrc || (c->in == dnnl_f32 && !c->xf) || !c->out) {
    say(why, len, "bench_dnnl_cell_create: out of memory");
    goto cleanup;
  }
  sup_fill_bf16(c->x, xs, 1);
  sup_fill_bf16(wsrc, ws, 2);
  for (size_t i = 0; i < c->copies; i++) {
    if (i) memcpy(c->x + i * c->xstride, c->x, xs * 2);
    char *wc = (char *)c->w + i * c->wstride;
    if (c->in == dnnl_bf16) memcpy(wc, wsrc, ws * 2);
    else upcast(wsrc, (float *)(void *)wc, ws);
  }
  /* bf16 copies are the library's candidates' too: flipped as the measure flips its own, so that
   * one computing from stale operands shows (measure.h); oneDNN's results on them go unchecked */
  if (c->in == dnnl_bf16) {
    bf16fp32__flipped_copies(c->copies, &c->x_flipped, &c->w_flipped);
    if (c->x_flipped) bf16fp32__flip_signs(c->x + c->x_flipped * c->xstride, xs);
    if (c->w_flipped)
      bf16fp32__flip_signs((uint16_t *)(void *)((char *)c->w + c->w_flipped * c->wstride), ws);
  }
  if (bf16fp32__check_ref_init(&c->ref, m, n, k, c->x, k, wsrc, k, check_rows, 1) != BF16FP32_OK) {
    say(why, len, "oneDNN's output cannot be checked: %s", bf16fp32_last_error());
    goto cleanup;
  }
  free(wsrc);
  *cellp = c;
  return 0;

cleanup:
  free(wsrc);
  bench_dnnl_cell_free(c);
  return -1;
}

int bench_dnnl_cell_operands(const bench_dnnl_cell *c, struct bf16fp32__host_operands *ops) {
  if (!c || !ops || c->in != dnnl_bf16) return -1;
  *ops = (bf16fp32__host_operands){.x = c->x,
                                   .w = (const uint16_t *)c->w,
                                   .copies = c->copies,
                                   .xstride = c->xstride,
                                   .wstride = c->wstride / 2, /* bytes to bf16 elements */
                                   .ref = &c->ref,
                                   .x_flipped = c->x_flipped,
                                   .w_flipped = c->w_flipped};
  return 0;
}

/* The cell's out (every element written over the poison) against its oracle: 0 or
 * BENCH_DNNL_WRONG, the reason in why. */
static int check_out(const bench_dnnl_cell *c, double *worst_ratio, char *why, size_t len) {
  bf16fp32__check_result res;
  bf16fp32__check_ref_compare(&c->ref, c->out, c->n, &res);
  *worst_ratio = res.worst_ratio;
  char msg[256];
  if (bf16fp32__check_ok(&res, msg, sizeof msg)) return 0;
  say(why, len, "oneDNN's %s", msg);
  return BENCH_DNNL_WRONG;
}

int bench_dnnl_time(bench_dnnl_cell *c, int threads, int reps, double *median_us,
                    double *worst_ratio, char *why, size_t len) {
  int rc = -1, previous = -1;
  dnnl_stream_t stream = NULL;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_t prim = NULL;
  dnnl_memory_t xm = NULL, wm = NULL, om = NULL;
  double *times = NULL;

  if (median_us) *median_us = 0.0;
  if (worst_ratio) *worst_ratio = -1.0;
  if (!c || threads < 1 || reps < 1 || !median_us || !worst_ratio) {
    say(why, len, "bench_dnnl_time: bad arguments");
    return -1;
  }
  times = malloc(sizeof(double) * (size_t)reps);
  if (!times) {
    say(why, len, "bench_dnnl_time: out of memory");
    return -1;
  }
  const dnnl_data_type_t in = c->in;
  const size_t xs = (size_t)(c->m * c->k);
  /* Before the primitive is made: oneDNN sizes its blocking by the thread count it sees. */
  if (set_threads(threads, &previous, why, len) != 0) goto cleanup;
  dnnl_memory_desc_t xd, wd, od;
  if (matmul_desc(c->m, c->n, c->k, in, c->engine, &xd, &wd, &od, &pd, why, len) != 0)
    goto cleanup;
  DNNL_TRY(dnnl_primitive_create(&prim, pd));
  DNNL_TRY(dnnl_stream_create(&stream, c->engine, dnnl_stream_default_flags));
  DNNL_TRY(dnnl_memory_create(&xm, &xd, c->engine, in == dnnl_bf16 ? (void *)c->x : (void *)c->xf));
  DNNL_TRY(dnnl_memory_create(&wm, &wd, c->engine, c->w));
  DNNL_TRY(dnnl_memory_create(&om, &od, c->engine, c->out));

  dnnl_exec_arg_t args[3] = {
      {DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, om}};
  /* The first call, on the first copies (the oracle's operands), out poisoned: a baseline's
   * time counts only for a right answer. */
  bf16fp32__poison_f32(c->out, (size_t)(c->m * c->n));
  if (in == dnnl_f32) upcast(c->x, c->xf, xs);
  DNNL_TRY(dnnl_primitive_execute(prim, stream, 3, args));
  DNNL_TRY(dnnl_stream_wait(stream));
  const int checked = check_out(c, worst_ratio, why, len);
  if (checked != 0) {
    rc = checked;
    goto cleanup;
  }
  int warm = reps / 10 > 3 ? reps / 10 : 3;
  size_t next = 0; /* the copy the next call reads */
  for (int i = 0; i < warm + reps; i++, next = (next + 1) % c->copies) {
    if (in == dnnl_bf16) DNNL_TRY(dnnl_memory_set_data_handle(xm, c->x + next * c->xstride));
    DNNL_TRY(dnnl_memory_set_data_handle(wm, (char *)c->w + next * c->wstride));
    double t0 = sup_now();
    if (in == dnnl_f32) upcast(c->x + next * c->xstride, c->xf, xs);
    DNNL_TRY(dnnl_primitive_execute(prim, stream, 3, args));
    DNNL_TRY(dnnl_stream_wait(stream));
    if (i >= warm) times[i - warm] = (sup_now() - t0) * 1e6;
  }
  *median_us = bf16fp32__median(times, reps);

  const char *impl = NULL;
  if (why && len) {
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success)
      impl = NULL;
    snprintf(why, len, "%s%s", in == dnnl_f32 ? "f32 " : "", impl ? impl : "oneDNN matmul");
  }
  rc = 0;

cleanup:
  if (om) dnnl_memory_destroy(om);
  if (wm) dnnl_memory_destroy(wm);
  if (xm) dnnl_memory_destroy(xm);
  if (stream) dnnl_stream_destroy(stream);
  if (prim) dnnl_primitive_destroy(prim);
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (previous > 0) set_threads(previous, NULL, NULL, 0);
  free(times);
  return rc;
}

#endif
