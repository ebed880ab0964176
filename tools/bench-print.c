/* `bf16fp32 bench`'s table, CSV and summary (bench-print.h). */
#include "bench-print.h"

#include <math.h>
#include <string.h>

#ifdef BF16FP32_HAVE_CUDA
#include "cuda-check.h"
#endif

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

void bench_print_header(const bench_plan *p, const bench_opts *o, const suite *s,
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
         " compared with the fp64 oracle (check = worst |err| / bound), results stored short of"
         " fp32 refused; the copies with x or w negated checked too\n",
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

void bench_print_csv_header(FILE *csv) {
  fprintf(csv, "mode,shape,n,k,m,backend,us_per_call,baseline,baseline_us,vs_baseline,"
               "floor_us,us_over_floor,gflops,threads,status,check_worst,note,target_us,min_us,"
               "max_us\n");
}

void bench_print_rows(FILE *csv, const bench_plan *p, const bench_shape *sh, int64_t m,
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

void bench_blank_row(bench_row *r, const char *backend) {
  memset(r, 0, sizeof *r);
  r->backend = backend;
  r->us = -1.0;
  r->worst_ratio = -1.0;
}

void bench_row_from_candidate(bench_row *r, const bf16fp32__candidate *c) {
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
  /* a toy shape's copies hit the call cap before the protocol's bytes: say its time is warm */
  if (r->us > 0 && c->warm)
    snprintf(r->note, sizeof r->note, "(warm: operands rotated over %.1f MB)",
             (double)c->rotated_bytes / 1e6);
}

void bench_print_summary(const bench_plan *p, const bench_summary *sum, const char *const *names,
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
