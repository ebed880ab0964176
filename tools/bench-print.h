/* `bf16fp32 bench`'s table on stdout, its CSV and its closing summary. */
#ifndef BF16FP32_TOOLS_BENCH_PRINT_H
#define BF16FP32_TOOLS_BENCH_PRINT_H

#include <stdint.h>
#include <stdio.h>

#include "bench-args.h"
#include "bench-plan.h"

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

/* A row of backend with no time and no check (its status still to write). */
void bench_blank_row(bench_row *r, const char *backend);
/* A candidate's row from its measure. */
void bench_row_from_candidate(bench_row *r, const bf16fp32__candidate *c);

/* The lines above the table: device or CPU, protocol, suite, M values, column names. */
void bench_print_header(const bench_plan *p, const bench_opts *o, const suite *s,
                        const int64_t *ms, int m_count, bf16fp32_context *ctx);
/* The CSV's column names, the first line of the file. */
void bench_print_csv_header(FILE *csv);
/* One cell's rows (baseline first, base_us < 0: none) on stdout and in csv (or NULL), the
 * fastest marked; adds the ratios to sum (or NULL). */
void bench_print_rows(FILE *csv, const bench_plan *p, const bench_shape *sh, int64_t m,
                      const bench_row *rows, int nrows, double base_us, bench_summary *sum,
                      int threads);
/* Each row's geometric mean against the baseline (row 0) over the cells. */
void bench_print_summary(const bench_plan *p, const bench_summary *sum, const char *const *names,
                         int count, int nshapes, int m_count);

#endif
