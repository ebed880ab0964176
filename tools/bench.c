/* `bf16fp32 bench`: argument parsing, the per-shape loop over the suite, the table, the CSV
 * and the progress line. Timing itself is the library's measure core (src/measure.c). */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench-baseline.h"
#include "bench-decode.h"
#include "bench-dnnl.h"
#include "bf16fp32.h"
#include "dispatch.h"
#include "measure.h"
#include "step.h"
#include "suite.h"
#include "support.h"

#ifdef BF16FP32_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "cuda-check.h"
#endif

#define BENCH_MAX_CANDS (BF16FP32__MAX_BACKENDS + 2)
#define BENCH_CPU_DEFAULT_M "1,16,256"
/* cpu-ref is the slow fp64 oracle: beyond this many multiply-adds it is not timed. */
#define BENCH_CPU_REF_LIMIT (64LL << 20)
#define BENCH_ONEDNN_NAME "onednn-baseline"

static const char *usage_text =
    "usage: bf16fp32 bench [--suite FILE] [--backends a,b,...] [--m LIST] [--csv FILE]\n"
    "                      [--shapes NAMES] [--cpu] [--threads N] [--replays N] [--calls N]\n"
    "                      [--cpu-ref-limit MACS]\n"
    "       bf16fp32 bench --decode-step dsv4-flash|dsv4-pro [--batch LIST] [--suite FILE]\n"
    "                      [--filler-kb N] [--filler-trigger end|entry|none]\n"
    "\n"
    "Times every available backend, auto and the vendor baseline (cuBLAS called directly on a\n"
    "GPU, oneDNN's bf16 matmul on the CPU, or its f32 matmul on upcast operands where it has no\n"
    "bf16 one) on each (N, K) of the suite at each M, by the protocol\n"
    "of MEASURING.md: each output is checked against the fp64 oracle first, then CUDA graphs of\n"
    "--calls calls over rotating operand copies (512 MiB, at most one per call; from 200 calls\n"
    "on, more calls, up to 16384, where that many copies make under 400 MB) are replayed in\n"
    "interleaved rounds, each timed replay right after an untimed one of the same graph (median\n"
    "of --replays).\n"
    "Without a GPU, or with --cpu, the CPU backends are timed. Exit status 1 when a backend gave\n"
    "a wrong result or failed a shape it accepted (a decline is no failure), 2 on a usage error.\n"
    "\n"
    "  --suite FILE       shape suite (default: the shared shapes/dsv4.txt)\n"
    "  --backends LIST    library backends to time, comma-separated; may include auto\n"
    "                     (default: every available backend and auto)\n"
    "  --m LIST           M values, comma-separated (default: the suite's; CPU: " BENCH_CPU_DEFAULT_M ")\n"
    "  --shapes NAMES     only these suite entries (a trailing '*' matches a prefix)\n"
    "  --csv FILE         also write one row per (backend, N, K, M)\n"
    "  --cpu              time the CPU backends even when a GPU is there\n"
    "  --threads N        CPU backends' and oneDNN's threads (default: one per core)\n"
    "  --replays N        timed rounds, median taken (default 7; at least 5 for the protocol)\n"
    "  --calls N          GPU calls per graph (default 200; at least 200 for the protocol)\n"
    "  --cpu-ref-limit N  CPU mode: time cpu-ref only up to M*N*K <= N (default 67108864)\n"
    "  --decode-step M    one decode step of dsv4-flash or dsv4-pro in one CUDA graph\n"
    "  --batch LIST       decode step: token counts (default 1,4,16,64,256)\n"
    "  --filler-kb N      decode step: before every GEMM a memory-bound kernel reading N KB, as\n"
    "                     an engine runs other kernels between them (default 0: none)\n"
    "  --filler-trigger T under PDL the filler waits at entry and lets the next kernel launch\n"
    "                     after its reads (end, the default) or right after its wait (entry);\n"
    "                     none: it launches plainly\n";

typedef struct bench_opts {
  const char *suite_path; /* NULL: the default suite; not copied, which cut a long path */
  char backends[512];
  int backends_given;
  int64_t ms[SUITE_MAX_M];
  int m_count;
  char shapes[512];
  const char *csv;
  int cpu;
  int threads;
  int replays;
  int calls;
  int64_t cpu_ref_limit;
  const char *decode;
  int64_t batch[SUITE_MAX_M];
  int batch_count;
  int filler_kb;
  int filler_trigger; /* -1 while parsing: not given */
  const char *table_option; /* the first option given that only the one-shape table uses */
} bench_opts;

static void errorf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

static void errorf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("bf16fp32 bench: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static int usage_error(const char *fmt, const char *arg) {
  fputs("bf16fp32 bench: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\n", stderr);
  fputs(usage_text, stderr);
  return 2;
}

static int parse_positive(const char *text, int64_t max, int64_t *v) {
  if (!text || !*text) return -1;
  errno = 0;
  char *end = NULL;
  long long x = strtoll(text, &end, 10);
  if (errno || *end || x < 1 || x > max) return -1;
  *v = x;
  return 0;
}

/* --name VALUE or --name=VALUE: returns the value and advances *i, or NULL when absent. */
static const char *option_value(int argc, char **argv, int *i, const char *name, int *matched) {
  size_t len = strlen(name);
  const char *a = argv[*i];
  *matched = 0;
  if (strncmp(a, name, len) != 0) return NULL;
  if (a[len] == '=') {
    *matched = 1;
    return a + len + 1;
  }
  if (a[len] != '\0') return NULL;
  *matched = 1;
  if (*i + 1 >= argc) return NULL;
  (*i)++;
  return argv[*i];
}

/* The one-shape table's options: a decode step has no use for them. */
static const char *const table_options[] = {"--cpu",     "--backends", "--m",     "--shapes",
                                            "--csv",     "--threads",  "--calls", "--cpu-ref-limit"};

/* The table option that argument a is (--name or --name=value), or NULL. */
static const char *table_option(const char *a) {
  for (size_t i = 0; i < sizeof table_options / sizeof *table_options; i++) {
    size_t len = strlen(table_options[i]);
    if (strncmp(a, table_options[i], len) == 0 && (a[len] == '\0' || a[len] == '='))
      return table_options[i];
  }
  return NULL;
}

/* Returns 0, or the exit code of a usage error (already reported). */
static int parse_args(int argc, char **argv, bench_opts *o) {
  memset(o, 0, sizeof *o);
  o->replays = 7;
  o->calls = BF16FP32__DEVICE_PROTOCOL_CALLS;
  o->cpu_ref_limit = BENCH_CPU_REF_LIMIT;
  o->filler_trigger = -1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v;
    int matched = 0;
    char err[256];
    int64_t x;
    if (!o->table_option) o->table_option = table_option(a);
#define VALUE_OF(name)                                                        \
  (v = option_value(argc, argv, &i, name, &matched), matched)
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage_text, stdout);
      return -1; /* help printed: exit 0 */
    } else if (strcmp(a, "--cpu") == 0) {
      o->cpu = 1;
    } else if (VALUE_OF("--suite")) {
      if (!v || !*v) return usage_error("%s needs a file name", "--suite");
      o->suite_path = v;
    } else if (VALUE_OF("--backends")) {
      /* commas alone name nothing: the baseline alone was timed */
      if (!v || !v[strspn(v, ",")]) return usage_error("%s needs a comma-separated list", "--backends");
      if (strlen(v) >= sizeof o->backends) return usage_error("%s: list too long", "--backends");
      snprintf(o->backends, sizeof o->backends, "%s", v);
      o->backends_given = 1;
    } else if (VALUE_OF("--m")) {
      if (!v) return usage_error("%s needs a list such as 1,16,256", "--m");
      o->m_count = suite_parse_int_list(v, o->ms, SUITE_MAX_M, err, sizeof err);
      if (o->m_count < 0) return usage_error("--m %s", err);
    } else if (VALUE_OF("--batch")) {
      if (!v) return usage_error("%s needs a list such as 1,4,16", "--batch");
      o->batch_count = suite_parse_int_list(v, o->batch, SUITE_MAX_M, err, sizeof err);
      if (o->batch_count < 0) return usage_error("--batch %s", err);
    } else if (VALUE_OF("--shapes")) {
      /* commas alone name nothing: no shape was timed, exit 0 */
      if (!v || !v[strspn(v, ",")]) return usage_error("%s needs suite entry names", "--shapes");
      if (strlen(v) >= sizeof o->shapes) return usage_error("%s: list too long", "--shapes");
      snprintf(o->shapes, sizeof o->shapes, "%s", v);
    } else if (VALUE_OF("--csv")) {
      if (!v || !*v) return usage_error("%s needs a file name", "--csv");
      o->csv = v;
    } else if (VALUE_OF("--threads")) {
      if (parse_positive(v, 4096, &x)) return usage_error("--threads: \"%s\" is not in [1, 4096]", v ? v : "");
      o->threads = (int)x;
    } else if (VALUE_OF("--replays")) {
      if (parse_positive(v, 100000, &x)) return usage_error("--replays: \"%s\" is not in [1, 100000]", v ? v : "");
      o->replays = (int)x;
    } else if (VALUE_OF("--calls")) {
      if (parse_positive(v, 100000, &x)) return usage_error("--calls: \"%s\" is not in [1, 100000]", v ? v : "");
      o->calls = (int)x;
    } else if (VALUE_OF("--cpu-ref-limit")) {
      if (parse_positive(v, INT64_MAX, &x)) return usage_error("--cpu-ref-limit: \"%s\" is not a positive integer", v ? v : "");
      o->cpu_ref_limit = x;
    } else if (VALUE_OF("--filler-kb")) {
      if (parse_positive(v, BF16FP32__STEP_MAX_FILLER_KB, &x)) {
        char msg[128]; /* the bound from step.h, not a copy of it */
        snprintf(msg, sizeof msg, "--filler-kb: \"%.64s\" is not in [1, %d]", v ? v : "",
                 BF16FP32__STEP_MAX_FILLER_KB);
        return usage_error("%s", msg);
      }
      o->filler_kb = (int)x;
    } else if (VALUE_OF("--filler-trigger")) {
      if (!v || (o->filler_trigger = bench_decode_filler_trigger(v)) < 0)
        return usage_error("--filler-trigger: \"%s\" is not end, entry or none", v ? v : "");
    } else if (VALUE_OF("--decode-step")) {
      if (!v || !*v) return usage_error("%s needs dsv4-flash or dsv4-pro", "--decode-step");
      o->decode = v;
    } else {
      return usage_error("unknown argument \"%s\"", a);
    }
#undef VALUE_OF
  }
  if (o->decode && !bench_decode_prefix(o->decode))
    return usage_error("--decode-step: unknown model \"%s\" (known: dsv4-flash, dsv4-pro)", o->decode);
  if (!o->decode && o->batch_count) return usage_error("%s only goes with --decode-step", "--batch");
  /* Refused, not ignored: a step run with --csv wrote no file, with --cpu ran on the GPU. */
  if (o->decode && o->table_option)
    return usage_error("%s does not go with --decode-step", o->table_option);
  const char *filler_error = bench_decode_filler_rules(o->decode != NULL, o->filler_kb, &o->filler_trigger);
  if (filler_error) return usage_error("%s", filler_error);
  return 0;
}

/* --- candidates --- */

typedef struct lib_cand {
  bf16fp32_context *ctx;
  int index; /* registry index; -1: auto */
} lib_cand;

static bf16fp32_status lib_run(void *u, const bf16fp32__call *call) {
  lib_cand *l = (lib_cand *)u;
  return l->index < 0 ? bf16fp32__dispatch(l->ctx, call) : bf16fp32__run_one(l->ctx, l->index, call);
}

static bf16fp32_status lib_prewarm(void *u, const bf16fp32__shape *s, void *stream) {
  lib_cand *l = (lib_cand *)u;
  if (l->index >= 0) return bf16fp32__prewarm_one(l->ctx, l->index, s, NULL, stream);
  int64_t m = s->m;
  return bf16fp32_prewarm(l->ctx, (bf16fp32_location)s->where, s->n, s->k, &m, 1, stream);
}

/* What is timed in this run: names in table order, the library ones with their user data. */
typedef struct bench_plan {
  bf16fp32_location where;
  int count;                        /* library candidates (backends, then auto) */
  const char *name[BENCH_MAX_CANDS];
  lib_cand lib[BENCH_MAX_CANDS];
  int has_auto;
  bench_baseline *cublas;           /* GPU baseline, or NULL */
  int dnnl;                         /* CPU baseline available */
  char baseline_why[256];           /* why there is no baseline */
  const char *baseline_name;
} bench_plan;

/* Checks the --backends names against the registry (no context needed). */
static int check_backend_names(const char *list) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (strcmp(t, "auto") == 0 || bf16fp32__registry_find(t) >= 0) continue;
    char known[512] = "";
    size_t used = 0;
    for (int i = 0; i < bf16fp32__registry_count && used < sizeof known; i++)
      used += (size_t)snprintf(known + used, sizeof known - used, "%s, ", bf16fp32__registry[i].name);
    errorf("unknown backend \"%s\" in --backends (known: %sauto)", t, known);
    return 2;
  }
  return 0;
}

static int name_in_list(const char *list, const char *name) {
  size_t len = strlen(name);
  for (const char *p = list; p && *p;) {
    const char *comma = strchr(p, ',');
    size_t l = comma ? (size_t)(comma - p) : strlen(p);
    if (l == len && strncmp(p, name, len) == 0) return 1;
    p = comma ? comma + 1 : NULL;
  }
  return 0;
}

static void build_plan(bench_plan *p, bf16fp32_context *ctx, const bench_opts *o,
                       bf16fp32_location where) {
  memset(p, 0, sizeof *p);
  p->where = where;
  for (int b = 0; b < bf16fp32__registry_count; b++) {
    const bf16fp32__registry_entry *e = &bf16fp32__registry[b];
    int wanted = !o->backends_given || name_in_list(o->backends, e->name);
    if (!wanted) continue;
    if (e->where != where) {
      if (o->backends_given)
        fprintf(stderr, "bf16fp32 bench: %s is a %s backend: not timed in %s mode%s\n", e->name,
                e->where == BF16FP32_HOST ? "CPU" : "GPU", where == BF16FP32_HOST ? "CPU" : "GPU",
                e->where == BF16FP32_HOST ? " (add --cpu)" : "");
      continue;
    }
    if (!bf16fp32__backend_available(ctx, b)) {
      bf16fp32_backend_info info;
      if (bf16fp32_backend_info_get(ctx, b, &info) != BF16FP32_OK) info.reason[0] = '\0';
      fprintf(stderr, "bf16fp32 bench: %s not available: %s\n", e->name,
              info.reason[0] ? info.reason : (e->not_built ? e->not_built : "probe failed"));
      continue;
    }
    p->name[p->count] = e->name;
    p->lib[p->count] = (lib_cand){ctx, b};
    p->count++;
  }
  if (!o->backends_given || name_in_list(o->backends, "auto")) {
    p->name[p->count] = "auto";
    p->lib[p->count] = (lib_cand){ctx, -1};
    p->count++;
    p->has_auto = 1;
  }
  if (where == BF16FP32_DEVICE) {
    p->baseline_name = BENCH_BASELINE_NAME;
    p->cublas = bench_baseline_create(p->baseline_why, sizeof p->baseline_why);
  } else {
    p->baseline_name = BENCH_ONEDNN_NAME;
    p->dnnl = bench_dnnl_available(p->baseline_why, sizeof p->baseline_why);
  }
}

/* --- shapes --- */

typedef struct bench_shape {
  char label[160]; /* the suite names sharing this (N, K) */
  int64_t n, k;
} bench_shape;

static int shape_selected(const char *filter, const char *name) {
  if (!filter[0]) return 1;
  char buf[512];
  snprintf(buf, sizeof buf, "%s", filter);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    size_t l = strlen(t);
    if (l && t[l - 1] == '*' ? strncmp(name, t, l - 1) == 0 : strcmp(name, t) == 0) return 1;
  }
  return 0;
}

/* Unique (N, K) of the selected entries, in suite order. Returns the count, or -1 when a
 * --shapes name matches nothing (reported). */
static int collect_shapes(const suite *s, const char *filter, bench_shape *out) {
  int count = 0;
  if (filter[0]) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", filter);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
      int any = 0;
      for (int i = 0; i < s->count && !any; i++) any = shape_selected(t, s->entries[i].name);
      if (!any) {
        errorf("--shapes: no entry \"%s\" in %s", t, s->path);
        return -1;
      }
    }
  }
  for (int i = 0; i < s->count; i++) {
    const suite_entry *e = &s->entries[i];
    if (!shape_selected(filter, e->name)) continue;
    int j = 0;
    while (j < count && !(out[j].n == e->n && out[j].k == e->k)) j++;
    if (j == count) {
      out[count].n = e->n;
      out[count].k = e->k;
      snprintf(out[count].label, sizeof out[count].label, "%s", e->name);
      count++;
    } else {
      size_t used = strlen(out[j].label);
      if (used + strlen(e->name) + 2 < sizeof out[j].label)
        snprintf(out[j].label + used, sizeof out[j].label - used, "/%s", e->name);
    }
  }
  return count;
}

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

/* --- output --- */

typedef struct bench_row {
  const char *backend;
  double us;          /* < 0: no time */
  double min_us, max_us; /* fastest and slowest timed round; <= 0: unknown (oneDNN times itself) */
  char status[400];   /* "ok" or why there is no time */
  double worst_ratio; /* < 0: not checked */
  char note[64];
} bench_row;

typedef struct bench_summary {
  double log_sum[BENCH_MAX_CANDS];
  int n[BENCH_MAX_CANDS];
  double lo[BENCH_MAX_CANDS], hi[BENCH_MAX_CANDS];
  int wins[BENCH_MAX_CANDS];
} bench_summary;

static void csv_field(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\n")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s == '\n' ? ' ' : *s, f);
  }
  fputc('"', f);
}

static void print_header(const bench_plan *p, const bench_opts *o, const suite *s,
                         const int64_t *ms, int m_count, bf16fp32_context *ctx) {
  const bf16fp32__config *cfg = bf16fp32__context_config(ctx);
  if (p->where == BF16FP32_DEVICE) {
    char dev[320] = "GPU";
#ifdef BF16FP32_HAVE_CUDA
    bf16fp32__device_info info;
    if (cfg->device >= 0 && bf16fp32__device_query(cfg->device, &info) == BF16FP32_OK)
      snprintf(dev, sizeof dev, "GPU %d: %s (sm_%d%d, %d SMs)", info.ordinal, info.name,
               info.cc_major, info.cc_minor, info.sm_count);
#endif
    printf("# bf16fp32 bench, %s\n", dev);
    printf("# timing: CUDA graph of %d calls over rotating operand copies (cold L2; more calls,"
           " up to %d, where that many copies make under 400 MB), %d warm-up replays, median of %d"
           " interleaved replays (each after an untimed one of itself)%s\n",
           o->calls, BF16FP32__DEVICE_MAX_CALLS, 2, o->replays,
           o->calls < BF16FP32__DEVICE_PROTOCOL_CALLS || o->replays < 5
               ? " (below the protocol's 200 calls x 5 replays)"
               : "");
    printf("# us = microseconds per call; vs-cuBLAS = %s us / us (> 1: faster than cuBLAS);"
           " us/F = us / floor F of MEASURING.md (1: at the floor)\n",
           BENCH_BASELINE_NAME);
  } else {
    printf("# bf16fp32 bench, CPU mode, %d thread%s\n", cfg->cpu_threads,
           cfg->cpu_threads == 1 ? "" : "s");
    printf("# timing: median of %d interleaved runs (short calls repeated to >= 2 ms per run);"
           " baseline: %s, median of %d calls timed before and after the candidates, the better"
           " of the two; operands rotated over %zu MiB of copies (twice the last-level cache, at"
           " least %zu MiB; at most %d copies)\n",
           o->replays, p->dnnl ? p->baseline_why : "oneDNN's matmul", o->replays,
           bf16fp32__host_rotate_bytes() >> 20, BF16FP32__HOST_ROTATE_BYTES >> 20,
           BF16FP32__HOST_MAX_COPIES);
    printf("# us = microseconds per call; vs-oneDNN = %s us / us (> 1: faster than oneDNN);"
           " GFLOP/s = 2 M N K / time\n",
           BENCH_ONEDNN_NAME);
  }
  if (strcmp(cfg->algo, "auto") != 0)
    printf("# note: BF16FP32_ALGO=%s forces the backend that auto tries first\n", cfg->algo);
  if (cfg->tune_file[0]) printf("# tune file: %s\n", cfg->tune_file);
  printf("# checked, the baseline too: output poisoned, every element must be written; %s rows"
         " compared with the fp64 oracle (check = worst |err| / bound)\n",
         "8 sampled");
  printf("# suite: %s; M:", s->path);
  for (int i = 0; i < m_count; i++) printf(" %lld", (long long)ms[i]);
  printf("\n");
  if (!p->cublas && !p->dnnl)
    printf("# baseline %s missing: %s (no ratios)\n", p->baseline_name, p->baseline_why);
  printf("\n%-22s %6s %6s %6s  %-16s %10s %10s %9s  %s\n", "shape", "N", "K", "M", "backend",
         "us/call", p->where == BF16FP32_DEVICE ? "vs-cuBLAS" : "vs-oneDNN",
         p->where == BF16FP32_DEVICE ? "us/F" : "GFLOP/s", "check");
}

static void print_rows(FILE *csv, const bench_plan *p, const bench_shape *sh, int64_t m,
                       const bench_row *rows, int nrows, double base_us, bench_summary *sum,
                       int threads) {
  double floor_us = bf16fp32__floor_us(m, sh->n, sh->k);
  double flops = 2.0 * (double)m * (double)sh->n * (double)sh->k;
  int best = -1;
  for (int i = 0; i < nrows; i++)
    if (rows[i].us > 0 && (best < 0 || rows[i].us < rows[best].us)) best = i;
  for (int i = 0; i < nrows; i++) {
    const bench_row *r = &rows[i];
    char us[32] = "-", vs[32] = "-", third[32] = "-", check[480];
    if (r->us > 0) {
      snprintf(us, sizeof us, "%.2f", r->us);
      if (base_us > 0) snprintf(vs, sizeof vs, "%.2f", base_us / r->us);
      if (p->where == BF16FP32_DEVICE) snprintf(third, sizeof third, "%.2f", r->us / floor_us);
      else snprintf(third, sizeof third, "%.1f", flops / (r->us * 1e3));
    }
    if (r->us > 0 && r->worst_ratio >= 0)
      snprintf(check, sizeof check, "ok %.2g%s%s", r->worst_ratio, r->note[0] ? " " : "", r->note);
    else
      snprintf(check, sizeof check, "%s%s%s", r->status, r->note[0] ? " " : "", r->note);
    printf("%-22s %6lld %6lld %6lld  %-16s %10s %10s %9s  %s%s\n", i == 0 ? sh->label : "",
           (long long)sh->n, (long long)sh->k, (long long)m, r->backend, us, vs, third, check,
           i == best && nrows > 1 ? "  <- fastest" : "");
    if (csv) {
      fprintf(csv, "%s,", p->where == BF16FP32_DEVICE ? "gpu" : "cpu");
      csv_field(csv, sh->label);
      fprintf(csv, ",%lld,%lld,%lld,", (long long)sh->n, (long long)sh->k, (long long)m);
      csv_field(csv, r->backend);
      fprintf(csv, ",");
      if (r->us > 0) fprintf(csv, "%.4f", r->us);
      fprintf(csv, ",%s,", p->baseline_name);
      if (base_us > 0) fprintf(csv, "%.4f", base_us);
      fprintf(csv, ",");
      if (r->us > 0 && base_us > 0) fprintf(csv, "%.4f", base_us / r->us);
      fprintf(csv, ",");
      if (p->where == BF16FP32_DEVICE) fprintf(csv, "%.4f", floor_us);
      fprintf(csv, ",");
      if (p->where == BF16FP32_DEVICE && r->us > 0) fprintf(csv, "%.4f", r->us / floor_us);
      fprintf(csv, ",");
      if (r->us > 0) fprintf(csv, "%.3f", flops / (r->us * 1e3));
      fprintf(csv, ",%d,", threads);
      csv_field(csv, r->us > 0 ? "ok" : r->status);
      fprintf(csv, ",");
      if (r->worst_ratio >= 0) fprintf(csv, "%.4g", r->worst_ratio);
      fprintf(csv, ",");
      csv_field(csv, r->note);
      fprintf(csv, ",");
      /* smallm's target of issue 4 at this cell, from this run's cuBLAS time */
      if (p->where == BF16FP32_DEVICE && base_us > 0)
        fprintf(csv, "%.4f", bf16fp32__target_us(m, sh->n, sh->k, base_us));
      fprintf(csv, ",");
      if (r->min_us > 0) fprintf(csv, "%.4f", r->min_us);
      fprintf(csv, ",");
      if (r->max_us > 0) fprintf(csv, "%.4f", r->max_us);
      fprintf(csv, "\n");
    }
    if (sum && r->us > 0 && base_us > 0 && i > 0) {
      double ratio = base_us / r->us;
      sum->log_sum[i] += log(ratio);
      if (sum->n[i] == 0 || ratio < sum->lo[i]) sum->lo[i] = ratio;
      if (sum->n[i] == 0 || ratio > sum->hi[i]) sum->hi[i] = ratio;
      sum->n[i]++;
    }
    if (sum && i == best) sum->wins[i]++;
  }
  if (csv) fflush(csv);
  fflush(stdout);
}

/* A row of backend with no time and no check (its status still to write). */
static void blank_row(bench_row *r, const char *backend) {
  memset(r, 0, sizeof *r);
  r->backend = backend;
  r->us = -1.0;
  r->worst_ratio = -1.0;
}

static void row_from_candidate(bench_row *r, const bf16fp32__candidate *c) {
  memset(r, 0, sizeof *r);
  r->backend = c->name;
  r->us = c->status == BF16FP32_OK ? c->median_us : -1.0;
  r->min_us = r->us > 0 ? c->min_us : -1.0;
  r->max_us = r->us > 0 ? c->max_us : -1.0;
  r->worst_ratio = c->status == BF16FP32_OK || c->wrong ? c->worst_ratio : -1.0;
  if (c->wrong) snprintf(r->status, sizeof r->status, "WRONG: %s", c->detail);
  else if (c->status == BF16FP32_DECLINED) snprintf(r->status, sizeof r->status, "declined");
  else if (c->status != BF16FP32_OK)
    snprintf(r->status, sizeof r->status, "%s",
             c->detail[0] ? c->detail : bf16fp32_status_name(c->status));
  else snprintf(r->status, sizeof r->status, "ok");
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
  errorf("%s has no \"M\" line: give the M values with --m", s->path);
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
  blank_row(r, BENCH_ONEDNN_NAME);
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

/* Each row's geometric mean against the baseline (row 0) over the cells. */
static void print_summary(const bench_plan *p, const bench_summary *sum, const char *const *names,
                          int count, int nshapes, int m_count) {
  printf("summary over %d shapes x %d M values (geometric mean of %s us / us; > 1: faster):\n",
         nshapes, m_count, p->baseline_name);
  for (int i = 1; i < count; i++) {
    if (sum->n[i])
      printf("  %-16s %6.3f  (min %.3f, max %.3f over %d cells; fastest in %d)\n", names[i],
             exp(sum->log_sum[i] / sum->n[i]), sum->lo[i], sum->hi[i], sum->n[i], sum->wins[i]);
    else
      printf("  %-16s -      (no cell with both times)\n", names[i]);
  }
  if (count && sum->wins[0]) printf("  %-16s fastest in %d cells\n", names[0], sum->wins[0]);
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
    errorf("%s M=%lld: %s: %s; stopping", sh->label, (long long)m, bf16fp32_status_name(st),
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
      row_from_candidate(r, &cell[cell_i]);
      /* a wrong result or a failure fails the run; a decline is the backend's answer */
      const bf16fp32_status cs = cell[cell_i].status;
      if (cs != BF16FP32_OK && cs != BF16FP32_DECLINED) rc = 1;
      cell_i++;
    } else {
      blank_row(r, cands[c].name);
      snprintf(r->status, sizeof r->status, "skipped (too slow: M*N*K > %lld)",
               (long long)o->cpu_ref_limit);
    }
    if (use_gpu && plan->cublas && c == 0 && r->us > 0) base_us = r->us;
    if (strcmp(r->backend, "auto") == 0) {
      const char *chosen = NULL;
      if (bf16fp32_select(t->ctx, where, m, sh->n, sh->k, &chosen, NULL, 0) == BF16FP32_OK && chosen)
        snprintf(r->note, sizeof r->note, "(-> %s)", chosen);
    }
  }
  if (use_gpu && !plan->cublas) {
    /* No baseline: a row that says so keeps the table's shape. */
    memmove(rows + 1, rows, sizeof(bench_row) * (size_t)nrows);
    blank_row(&rows[0], BENCH_BASELINE_NAME);
    snprintf(rows[0].status, sizeof rows[0].status, "missing: %s", plan->baseline_why);
    nrows++;
  }
  if (st != BF16FP32_OK && st != BF16FP32_CUDA_FATAL) rc = 1;
  if (t->row_count == 0) {
    t->row_count = nrows;
    for (int i = 0; i < nrows; i++) t->row_names[i] = rows[i].backend;
  }
  print_rows(t->csv, plan, sh, m, rows, nrows, base_us, &t->sum, threads);
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

  int nshapes = collect_shapes(s, o->shapes, shapes);
  if (nshapes < 0) return 2;
  int64_t ms[SUITE_MAX_M];
  const int m_count = run_ms(o, s, use_gpu, ms);
  if (m_count < 0) return 2;

  bf16fp32_options opt;
  bf16fp32_options_init(&opt);
  if (o->threads) opt.cpu_threads = o->threads;
  bf16fp32_status st = bf16fp32_create(&ctx, &opt);
  if (st != BF16FP32_OK) {
    errorf("cannot create a context: %s: %s", bf16fp32_status_name(st), bf16fp32_last_error());
    return 1;
  }
  build_plan(&plan, ctx, o, where);
  if (plan.count == 0 && !plan.cublas && !plan.dnnl) {
    errorf("nothing to time in %s mode", use_gpu ? "GPU" : "CPU");
    rc = 1;
    goto done;
  }
#ifdef BF16FP32_HAVE_CUDA
  if (use_gpu) {
    cudaStream_t cs = NULL;
    cudaError_t e = cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
      errorf("cudaStreamCreate: %s", cudaGetErrorString(e));
      rc = 1;
      goto done;
    }
    stream = cs;
  }
#endif
  if (o->csv) {
    t.csv = fopen(o->csv, "w");
    if (!t.csv) {
      errorf("cannot write %s: %s", o->csv, strerror(errno));
      rc = 1;
      goto done;
    }
    fprintf(t.csv, "mode,shape,n,k,m,backend,us_per_call,baseline,baseline_us,vs_baseline,"
                 "floor_us,us_over_floor,gflops,threads,status,check_worst,note,target_us,min_us,"
                 "max_us\n");
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

  print_header(&plan, o, s, ms, m_count, ctx);

  /* Every cell's candidates: baseline (GPU), library backends, auto. */
  if (plan.cublas)
    t.cands[t.ncands++] = (bf16fp32__candidate){.name = BENCH_BASELINE_NAME,
                                                .run = bench_baseline_run,
                                                .prewarm = bench_baseline_prewarm,
                                                .user = plan.cublas};
  t.first_lib = t.ncands;
  for (int i = 0; i < plan.count; i++)
    t.cands[t.ncands++] = (bf16fp32__candidate){
        .name = plan.name[i], .run = lib_run, .prewarm = lib_prewarm, .user = &plan.lib[i]};

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

  print_summary(&plan, &t.sum, t.row_names, t.row_count, nshapes, m_count);

done:
  if (t.csv && fclose(t.csv) != 0) {
    errorf("writing %s: %s", o->csv, strerror(errno));
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
  int rc = parse_args(argc, argv, &o);
  if (rc == -1) return 0;
  if (rc) return rc;
  if (o.backends_given && (rc = check_backend_names(o.backends)) != 0) return rc;

  char default_path[1024];
  if (!o.suite_path) o.suite_path = suite_default_path(default_path, sizeof default_path);
  suite *s = (suite *)malloc(sizeof *s);
  if (!s) {
    errorf("out of memory");
    return 1;
  }
  char err[SUITE_ERR_LEN];
  if (suite_load(o.suite_path, s, err, sizeof err) != 0) {
    errorf("%s", err);
    free(s);
    return 1;
  }

  if (o.decode) {
    const char *prefix = bench_decode_prefix(o.decode);
    if (suite_filter_prefix(s, prefix) == 0) {
      errorf("%s has no \"%s*\" entries for --decode-step %s", s->path, prefix, o.decode);
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
