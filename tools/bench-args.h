/* `bf16fp32 bench`'s command line: its options, their parsing and checks, and the command's
 * messages on stderr. */
#ifndef BF16FP32_TOOLS_BENCH_ARGS_H
#define BF16FP32_TOOLS_BENCH_ARGS_H

#include <stdint.h>

#include "suite.h"

#define BENCH_CPU_DEFAULT_M "1,16,256"
/* cpu-ref is the slow fp64 oracle: beyond this many multiply-adds it is not timed. */
#define BENCH_CPU_REF_LIMIT (64LL << 20)

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

/* Fills *o from argv (argv[0] is "bench"). Returns 0, -1 when the help was printed (exit 0),
 * or 2 on a usage error (reported with the usage text). */
int bench_parse_args(int argc, char **argv, bench_opts *o);

/* "bf16fp32 bench: " and the message, on stderr. */
void bench_errorf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

#endif
