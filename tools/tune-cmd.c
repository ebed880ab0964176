/* `bf16fp32 tune`: every available backend measured on each (N, K) of a suite and each M
 * bucket, winners merged into a tuning file; --emit-c turns a tuning file into the built-in
 * table's C source (src/tune-builtin.c). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench-decode.h"
#include "dispatch.h"
#include "step.h"
#include "suite.h"
#include "tune-cmd.h"
#include "tune-file.h"
#include "tune.h"

typedef struct tune_args {
  const char *suite_path, *m_list, *only, *out, *emit_c, *from, *step;
  int cpu, device, replays, quiet;
  int filler_kb, filler_trigger; /* trigger -1 while parsing: not given */
} tune_args;

static int usage(FILE *f) {
  fprintf(f,
          "usage: bf16fp32 tune [--suite FILE] [--out FILE] [--cpu] [--m LIST] [--only PREFIX]\n"
          "                     [--device N] [--replays N] [--emit-c FILE] [--quiet]\n"
          "       bf16fp32 tune --decode-step dsv4-flash|dsv4-pro [--m LIST] [--out FILE]\n"
          "                     [--filler-kb N] [--filler-trigger end|entry|none] ...\n"
          "       bf16fp32 tune --from FILE --emit-c FILE\n"
          "Times every available backend (GPU, or the CPU backends with --cpu) on each (N, K) of\n"
          "the suite and each M bucket (each M up to 16, multiples of 8 up to 64, then powers of\n"
          "two; a bucket is timed at its largest M), after checking each one's output against the\n"
          "fp64 oracle, and merges the fastest and the runner-up into the tuning file (locked,\n"
          "written atomically, so several processes may tune different shapes into one file).\n"
          "With BF16FP32_PDL=1 our kernels run under PDL and the GPU entries are written as\n"
          "device-pdl, which contexts with that option consult first. Plain GPU tuning also\n"
          "times cuBLASLt's next heuristic algorithms, written as cublaslt@<its attributes>;\n"
          "a context runs such a winner at the entry's own M only.\n"
          "  --suite FILE    shape suite (default: the DSV4 suite)\n"
          "  --out FILE      tuning file (default: BF16FP32_TUNE_FILE, else\n"
          "                  $XDG_CACHE_HOME/bf16fp32/tune.tsv or ~/.cache/bf16fp32/tune.tsv)\n"
          "  --m LIST        M values, comma-separated (default: the suite's M line)\n"
          "  --only PREFIX   only the suite entries whose name starts with PREFIX\n"
          "  --emit-c FILE   also write the tuned entries as C source for src/tune-builtin.c\n"
          "  --from FILE     with --emit-c: convert this tuning file, measure nothing\n"
          "  --decode-step MODEL  tune the model's GEMMs inside its decode step (the suite's\n"
          "                  calls per step, one CUDA graph), the others as auto chooses;\n"
          "                  the time is per call in the step (default M: every bucket to 256)\n"
          "  --filler-kb N   with --decode-step: before every GEMM a memory-bound kernel reading\n"
          "                  N KB, as an engine runs other kernels between them (bench's option)\n"
          "  --filler-trigger T  how it lets the next kernel start under PDL: after its reads\n"
          "                  (end, default), right after its wait (entry), or plain (none)\n"
          "CPU tuning at large M takes long (cpu-ref is the fp64-accurate reference): pass --m.\n");
  return f == stderr ? 2 : 0;
}

static int parse_int_arg(const char *opt, const char *s, int lo, int hi, int *v) {
  char *end = NULL;
  long x = strtol(s, &end, 10);
  if (!*s || *end || x < lo || x > hi) {
    fprintf(stderr, "bf16fp32 tune: %s '%s': expected an integer from %d to %d\n", opt, s, lo, hi);
    return -1;
  }
  *v = (int)x;
  return 0;
}

/* An option given that only a measuring run uses, or NULL. */
static const char *measuring_option(const tune_args *a) {
  return a->suite_path ? "--suite" : a->m_list ? "--m" : a->only ? "--only" : a->out ? "--out"
         : a->cpu ? "--cpu" : a->device >= 0 ? "--device" : a->replays ? "--replays" : NULL;
}

/* A text option given empty, or NULL: refused, as --out "" was taken for no --out at all. */
static const char *empty_option(const tune_args *a) {
  const char *const values[] = {a->suite_path, a->m_list, a->only, a->out, a->emit_c, a->from, a->step};
  const char *const names[] = {"--suite", "--m", "--only", "--out", "--emit-c", "--from", "--decode-step"};
  for (size_t i = 0; i < sizeof values / sizeof *values; i++)
    if (values[i] && !values[i][0]) return names[i];
  return NULL;
}

static int parse_args(int argc, char **argv, tune_args *a) {
  memset(a, 0, sizeof *a);
  a->device = -1;
  a->filler_trigger = -1;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i];
    bool has = i + 1 < argc;
    if (strcmp(o, "-h") == 0 || strcmp(o, "--help") == 0) return usage(stdout) + 1;
    if (strcmp(o, "--cpu") == 0) a->cpu = 1;
    else if (strcmp(o, "--quiet") == 0) a->quiet = 1;
    else if (strcmp(o, "--suite") == 0 && has) a->suite_path = argv[++i];
    else if (strcmp(o, "--m") == 0 && has) a->m_list = argv[++i];
    else if (strcmp(o, "--only") == 0 && has) a->only = argv[++i];
    else if (strcmp(o, "--out") == 0 && has) a->out = argv[++i];
    else if (strcmp(o, "--emit-c") == 0 && has) a->emit_c = argv[++i];
    else if (strcmp(o, "--from") == 0 && has) a->from = argv[++i];
    else if (strcmp(o, "--decode-step") == 0 && has) a->step = argv[++i];
    else if (strcmp(o, "--device") == 0 && has) {
      if (parse_int_arg(o, argv[++i], 0, 1023, &a->device)) return 2;
    } else if (strcmp(o, "--replays") == 0 && has) {
      if (parse_int_arg(o, argv[++i], 1, 1000, &a->replays)) return 2;
    } else if (strcmp(o, "--filler-kb") == 0 && has) {
      if (parse_int_arg(o, argv[++i], 1, BF16FP32__STEP_MAX_FILLER_KB, &a->filler_kb)) return 2;
    } else if (strcmp(o, "--filler-trigger") == 0 && has) {
      if ((a->filler_trigger = bench_decode_filler_trigger(argv[++i])) < 0) {
        fprintf(stderr, "bf16fp32 tune: --filler-trigger '%s': expected end, entry or none\n", argv[i]);
        return 2;
      }
    } else {
      fprintf(stderr, "bf16fp32 tune: unknown or incomplete option '%s'\n", o);
      return usage(stderr);
    }
  }
  if (empty_option(a)) {
    fprintf(stderr, "bf16fp32 tune: %s needs a value\n", empty_option(a));
    return 2;
  }
  if (a->step && !bench_decode_prefix(a->step)) {
    fprintf(stderr, "bf16fp32 tune: --decode-step: unknown model '%s' (known: dsv4-flash, dsv4-pro)\n", a->step);
    return 2;
  }
  if (a->step && (a->cpu || a->only || a->from)) {
    fprintf(stderr, "bf16fp32 tune: --decode-step tunes the model's GEMMs on the GPU: not with %s\n",
            a->cpu ? "--cpu" : a->only ? "--only" : "--from");
    return 2;
  }
  const char *filler_error = bench_decode_filler_rules(a->step != NULL, a->filler_kb, &a->filler_trigger);
  if (filler_error) {
    fprintf(stderr, "bf16fp32 tune: %s\n", filler_error);
    return 2;
  }
  if (a->from && !a->emit_c) {
    fprintf(stderr, "bf16fp32 tune: --from needs --emit-c\n");
    return 2;
  }
  /* Refused, not ignored: with --from, --cpu still emitted the GPU entries, --out wrote nothing. */
  if (a->from && measuring_option(a)) {
    fprintf(stderr, "bf16fp32 tune: --from converts a tuning file and measures nothing: not with %s\n",
            measuring_option(a));
    return 2;
  }
  return 0;
}

static void print_warning(void *user, int line, const char *msg) {
  const char *path = user;
  if (line > 0)
    fprintf(stderr, "bf16fp32 tune: %s:%d: %s: malformed\n", path, line, msg);
  else
    fprintf(stderr, "bf16fp32 tune: %s: %s\n", path, msg);
}

/* The directory part of path ("." for none) into dir; returns the last component. */
static const char *split_path(const char *path, char *dir, size_t len) {
  const char *slash = strrchr(path, '/');
  if (!slash) snprintf(dir, len, ".");
  else snprintf(dir, len, "%.*s", slash == path ? 1 : (int)(slash - path), path);
  return slash ? slash + 1 : path;
}

/* Whether two paths name one file: the same inode where both exist; where neither does yet,
 * the same last component in the same directory ("t.tsv" and "./t.tsv"). */
static bool same_file(const char *a, const char *b) {
  struct stat sa, sb;
  const bool has_a = stat(a, &sa) == 0, has_b = stat(b, &sb) == 0;
  if (has_a && has_b) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (has_a || has_b) return false;
  char dir_a[4096], dir_b[4096];
  if (strcmp(split_path(a, dir_a, sizeof dir_a), split_path(b, dir_b, sizeof dir_b)) != 0) return false;
  return stat(dir_a, &sa) == 0 && stat(dir_b, &sb) == 0
             ? sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
             : strcmp(dir_a, dir_b) == 0;
}

/* 2 (reported) when --emit-c's destination is the tuning file itself, which it would replace
 * with C source; else 0. */
static int refuse_emit_over(const char *tune_path, const char *dest) {
  if (!same_file(tune_path, dest)) return 0;
  fprintf(stderr, "bf16fp32 tune: --emit-c names the tuning file %s: it would be replaced by C source\n",
          tune_path);
  return 2;
}

/* Writes the entries of `path` at `where` (-1: all) as the built-in table's C source. */
static int emit_c(const char *path, int where, const char *dest) {
  bf16fp32__tune_file f;
  int err = 0;
  char *text = NULL;
  size_t len = 0;
  if (bf16fp32__tune_file_read(path, &f, &err, print_warning, (void *)path) != BF16FP32_OK) {
    fprintf(stderr, "bf16fp32 tune: %s\n", bf16fp32_last_error());
    return 1;
  }
  /* a corrupt file's good lines are not the table it meant to be */
  if (bf16fp32__tune_file_check(&f, path, "nothing emitted") != BF16FP32_OK) {
    fprintf(stderr, "bf16fp32 tune: %s\n", bf16fp32_last_error());
    bf16fp32__tune_file_clear(&f);
    return 1;
  }
  char why[256];
  if (!bf16fp32__tune_header_current(&f.header, why, sizeof why))
    fprintf(stderr, "bf16fp32 tune: warning: %s: %s (emitted anyway)\n", path, why);
  bf16fp32__tune_header h = f.header;
  if (where == BF16FP32_DEVICE) h.has_cpu = false, memset(&h.cpu, 0, sizeof h.cpu);
  if (where == BF16FP32_HOST) h.has_gpu = false, memset(&h.gpu, 0, sizeof h.gpu);
  int kept = 0;
  for (int i = 0; i < f.table.count; i++) {
    const bf16fp32__tune_entry *e = &f.table.entries[i];
    /* An entry needs its section's identity, or it could never match a machine. */
    bool ok = (where < 0 || e->where == where) && (e->where == BF16FP32_DEVICE ? h.has_gpu : h.has_cpu);
    if (ok) f.table.entries[kept++] = *e;
  }
  bf16fp32_status st = bf16fp32__tune_emit_c(&h, f.table.entries, kept, &text, &len);
  if (st == BF16FP32_OK) st = bf16fp32__tune_file_write_atomic(dest, text, len);
  free(text);
  bf16fp32__tune_file_clear(&f);
  if (st != BF16FP32_OK) {
    fprintf(stderr, "bf16fp32 tune: --emit-c %s: %s\n", dest, bf16fp32_last_error());
    return 1;
  }
  printf("wrote %s: %d built-in entries from %s\n", dest, kept, path);
  return 0;
}

typedef struct progress {
  const suite *s;
  bf16fp32_location where;
  int quiet, done, total, measured;
} progress;

/* The suite names of a weight shape, for the reader ("flash.router,v3.router"). */
static void names_of(const suite *s, int64_t n, int64_t k, char *buf, size_t len) {
  buf[0] = '\0';
  for (int i = 0; i < s->count; i++) {
    if (s->entries[i].n != n || s->entries[i].k != k) continue;
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "%s%s", used ? "," : "", s->entries[i].name);
  }
}

static void on_progress(void *user, int64_t n, int64_t k, int64_t m, const bf16fp32__tune_entry *e,
                        const bf16fp32__candidate *c, int count) {
  progress *p = user;
  p->done++;
  p->measured += e != NULL;
  if (p->quiet) return;
  char names[160];
  names_of(p->s, n, k, names, sizeof names);
  printf("[%3d/%d] %-22.22s %6lld %6lld %6lld  ", p->done, p->total, names, (long long)n,
         (long long)k, (long long)m);
  if (e) {
    printf("%-9s %9.2f us", e->winner, e->winner_us);
    if (e->runner_up[0])
      printf("  %-9s %9.2f us", e->runner_up, e->runner_up_us);
    else
      printf("  %-9s %12s", "-", "");
  } else {
    printf("no valid time");
  }
  if (p->where == BF16FP32_DEVICE) printf("  floor %.2f us", bf16fp32__floor_us(m, n, k));
  printf("\n");
  /* Third and later backends, and the ones without a time, with the reason. */
  for (int i = 0; i < count; i++) {
    if (e && (strcmp(c[i].name, e->winner) == 0 || strcmp(c[i].name, e->runner_up) == 0)) continue;
    if (c[i].status == BF16FP32_OK && c[i].median_us >= 0)
      printf("          %-9s %9.2f us\n", c[i].name, c[i].median_us);
    else if (c[i].status != BF16FP32_DECLINED)
      printf("          %-9s %s\n", c[i].name, c[i].detail[0] ? c[i].detail : bf16fp32_status_name(c[i].status));
  }
  fflush(stdout);
}

static void on_step_confirm(void *user, int64_t m, double new_us, double old_us, int won, int rounds,
                            bool kept, int reverted) {
  const progress *p = user;
  if (p->quiet) return;
  printf("        step at M=%lld: %.1f us with these choices, %.1f us as auto runs now (faster in %d of %d "
         "runs): %s",
         (long long)m, new_us, old_us, won, rounds, kept ? "kept\n" : "auto's choices written");
  if (!kept) printf(" (%d entries)\n", reverted);
  fflush(stdout);
}

/* Each weight shape of s once, in suite order, into pairs (N, K) and calls (a step adds up the
 * calls of a shape). Returns the count. */
static int weight_shapes(const suite *s, int64_t *pairs, int *calls) {
  int count = 0;
  for (int i = 0; i < s->count; i++) {
    const suite_entry *e = &s->entries[i];
    int seen = -1;
    for (int j = 0; j < count && seen < 0; j++)
      if (pairs[2 * j] == e->n && pairs[2 * j + 1] == e->k) seen = j;
    if (seen >= 0) {
      /* The library refuses a step of more than 2^20 calls; this only keeps the sum an int. */
      calls[seen] = calls[seen] > (1 << 30) - e->calls ? 1 << 30 : calls[seen] + e->calls;
      continue;
    }
    pairs[2 * count] = e->n;
    pairs[2 * count + 1] = e->k;
    calls[count] = e->calls;
    count++;
  }
  return count;
}

/* Who is measured (the device or CPU), with which backends, how much, and into which file. */
static void print_header(bf16fp32_context *ctx, bf16fp32_location where, const tune_args *a,
                         int pair_count, int buckets, const char *out) {
  const bf16fp32__config *cfg = bf16fp32__context_config(ctx);
  char desc[400], backends[400] = "";
  if (where == BF16FP32_DEVICE) {
    bf16fp32__gpu_identity g;
    if (bf16fp32__gpu_identity_query(cfg->device, &g) == BF16FP32_OK)
      bf16fp32__gpu_identity_describe(&g, desc, sizeof desc);
    else
      snprintf(desc, sizeof desc, "device %d", cfg->device);
  } else {
    bf16fp32__cpu_identity c;
    bf16fp32__cpu_identity_query(cfg->cpu_threads, &c);
    bf16fp32__cpu_identity_describe(&c, desc, sizeof desc);
  }
  for (int b = 0; b < bf16fp32_backend_count(); b++) {
    bf16fp32_backend_info info;
    if (bf16fp32_backend_info_get(ctx, b, &info) != BF16FP32_OK || info.where != where ||
        !info.available)
      continue;
    size_t used = strlen(backends);
    snprintf(backends + used, sizeof backends - used, "%s%s", used ? ", " : "", info.name);
  }
  printf("tuning %d weight shapes x %d M buckets on %s%s%s%s\nbackends: %s\nfile: %s\n",
         pair_count, buckets, desc,
         where == BF16FP32_DEVICE && cfg->use_pdl ? " under PDL (device-pdl entries)" : "",
         a->step ? ", inside the decode step of " : "", a->step ? a->step : "",
         backends[0] ? backends : "(none available)", out);
}

int tune_main(int argc, char **argv) {
  tune_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc == 1 ? 0 : rc; /* 1: --help was printed */
  if (a.from) return (rc = refuse_emit_over(a.from, a.emit_c)) ? rc : emit_c(a.from, -1, a.emit_c);

  suite s;
  char path[1024], err[SUITE_ERR_LEN];
  if (!a.suite_path) a.suite_path = suite_default_path(path, sizeof path);
  if (suite_load(a.suite_path, &s, err, sizeof err) != 0) {
    fprintf(stderr, "bf16fp32 tune: %s\n", err);
    return 2;
  }
  const char *prefix = a.step ? bench_decode_prefix(a.step) : a.only;
  if (prefix && suite_filter_prefix(&s, prefix) == 0) {
    fprintf(stderr, "bf16fp32 tune: no entry of %s starts with '%s'\n", a.suite_path, prefix);
    return 2;
  }
  /* A step's operands are allocated per call for its largest M: decode sizes by default. */
  static const int64_t step_ms[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                    24, 32, 40, 48, 56, 64, 128, 256};
  int64_t ms[SUITE_MAX_M];
  int m_count = a.step ? (int)(sizeof step_ms / sizeof step_ms[0]) : s.m_count;
  memcpy(ms, a.step ? step_ms : s.m, (size_t)m_count * sizeof ms[0]);
  if (a.m_list && (m_count = suite_parse_int_list(a.m_list, ms, SUITE_MAX_M, err, sizeof err)) < 0) {
    fprintf(stderr, "bf16fp32 tune: --m: %s\n", err);
    return 2;
  }
  if (m_count <= 0) {
    fprintf(stderr, "bf16fp32 tune: %s has no M line: pass --m\n", a.suite_path);
    return 2;
  }
  int64_t pairs[2 * SUITE_MAX_ENTRIES];
  int calls[SUITE_MAX_ENTRIES];
  const int pair_count = weight_shapes(&s, pairs, calls);

  bf16fp32_options opt;
  bf16fp32_options_init(&opt);
  opt.device = a.device;
  opt.log_level = 1; /* the library's warnings (tuning file problems) go to stderr */
  bf16fp32_context *ctx = NULL;
  bf16fp32_status st = bf16fp32_create(&ctx, &opt);
  if (st != BF16FP32_OK) {
    fprintf(stderr, "bf16fp32 tune: cannot create a context: %s: %s\n", bf16fp32_status_name(st),
            bf16fp32_last_error());
    return 1;
  }
  const bf16fp32__config *cfg = bf16fp32__context_config(ctx);
  bf16fp32_location where = a.cpu ? BF16FP32_HOST : BF16FP32_DEVICE;
  if (where == BF16FP32_DEVICE && cfg->device < 0) {
    fprintf(stderr, "bf16fp32 tune: no CUDA device here; --cpu tunes the CPU backends\n");
    bf16fp32_destroy(ctx);
    return 1;
  }
  /* A copy: the context (and its configuration) is gone before it is last used. --out is used
   * whole: a copy cut at 1023 bytes wrote another file. */
  char ctx_file[sizeof cfg->tune_file];
  snprintf(ctx_file, sizeof ctx_file, "%s", cfg->tune_file);
  const char *out = a.out ? a.out : ctx_file;
  if (!out[0]) {
    fprintf(stderr, "bf16fp32 tune: no tuning file (BF16FP32_TUNE_FILE is empty or HOME unset): "
                    "pass --out FILE\n");
    bf16fp32_destroy(ctx);
    return 2;
  }
  if (a.emit_c && (rc = refuse_emit_over(out, a.emit_c))) { /* before the measuring, not after it */
    bf16fp32_destroy(ctx);
    return rc;
  }

  int64_t bucket_ms[SUITE_MAX_M];
  const int buckets = bf16fp32__tune_buckets(ms, m_count, bucket_ms);
  print_header(ctx, where, &a, pair_count, buckets, out);
  if (a.step)
    printf("times: us per call in the step (the step with it less the step without that GEMM,"
           " over its calls)\n");
  if (a.filler_kb)
    printf("between the GEMMs: before each a filler kernel reading %d KB (trigger %s)\n",
           a.filler_kb, bench_decode_filler_trigger_name(a.filler_trigger));
  printf("[ i/n ] %-22s %6s %6s %6s  %-9s %12s  %-9s %12s\n", "suite entries", "N", "K", "M",
         "winner", "", "runner-up", "");
  fflush(stdout);

  bf16fp32__measure_opts mo;
  bf16fp32__measure_defaults(&mo);
  if (a.replays) mo.replays = a.replays;
  /* A step's GEMMs without calls are not tuned. */
  int tuned_pairs = 0;
  for (int i = 0; i < pair_count; i++) tuned_pairs += !a.step || calls[i] > 0;
  progress p = {&s, where, a.quiet, 0, tuned_pairs * buckets, 0};
  bf16fp32__tune_request r;
  memset(&r, 0, sizeof r);
  r.where = where;
  r.nk_pairs = pairs;
  r.pair_count = pair_count;
  r.calls = a.step ? calls : NULL;
  r.ms = ms;
  r.m_count = m_count;
  r.out_path = out;
  r.measure = &mo;
  r.filler_kb = a.filler_kb;
  r.filler_trigger = a.filler_trigger;
  r.progress = on_progress;
  r.step_confirm = on_step_confirm;
  r.user = &p;
  int merged = 0;
  st = bf16fp32__tune_run(ctx, &r, &merged);
  char detail[512];
  snprintf(detail, sizeof detail, "%s", bf16fp32_last_error()); /* before destroy touches it */
  bf16fp32_destroy(ctx);
  if (merged > 0) printf("%d entries merged into %s\n", merged, out);
  if (st != BF16FP32_OK) {
    fprintf(stderr, "bf16fp32 tune: %s: %s\n", bf16fp32_status_name(st), detail);
    return 1;
  }
  if (strcmp(out, ctx_file) == 0)
    printf("contexts created from now on (or reset) use them\n");
  else
    printf("to use them: BF16FP32_TUNE_FILE=%s (or bf16fp32_options.tune_file)\n", out);
  if (a.emit_c) return emit_c(out, where, a.emit_c);
  return 0;
}
