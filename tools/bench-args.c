/* `bf16fp32 bench`'s command line (bench-args.h). */
#include "bench-args.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-decode.h"
#include "measure.h"
#include "step.h"

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
    "                     an engine runs other kernels between them (default: none)\n"
    "  --filler-trigger T under PDL the filler waits at entry and lets the next kernel launch\n"
    "                     after its reads (end, the default) or right after its wait (entry);\n"
    "                     none: it launches plainly\n";


void bench_errorf(const char *fmt, ...) {
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

int bench_parse_args(int argc, char **argv, bench_opts *o) {
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
      if (parse_positive(v, BF16FP32__MAX_CPU_THREADS, &x)) {
        char msg[128]; /* the library's bound, not a copy of it */
        snprintf(msg, sizeof msg, "--threads: \"%.64s\" is not in [1, %d]", v ? v : "",
                 BF16FP32__MAX_CPU_THREADS);
        return usage_error("%s", msg);
      }
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
