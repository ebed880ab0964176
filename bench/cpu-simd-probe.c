/* Timing harness for the cpu-simd backend against oneDNN's bf16 matmul (it calls the backend's
 * ops directly). The CMake build makes it as cpu-simd-probe, with oneDNN where installed.
 * Options: --threads T (2), --m 1,16,256, --isa avx2|avx512bf16|amx|neon, --no-dnnl, --check, --time S
 * (seconds per measurement, 0.3), --cold (evict the caches before every timed call: the weights
 * come from memory, as in a model whose other layers ran in between; oneDNN is then skipped),
 * --rounds R (3: cpu-simd and oneDNN measured alternately R
 * times, the best median of each kept: the machine is shared and other loads come and go).
 * Shapes: the (N, K) pairs of shared/shapes/dsv4.txt. oneDNN is timed as the bench times it,
 * over the host rotation (weights from memory); cpu-simd here only with --cold. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/cpu-simd/cpu-simd.h"
#include "bench-dnnl.h"
#include "internal.h"
#include "support.h"

extern const bf16fp32__backend bf16fp32__backend_cpu_simd;

static const int64_t shapes[][2] = {{256, 4096}, {2048, 4096}, {1024, 4096}, {512, 4096},
                                    {384, 7168}, {2048, 7168}, {1024, 7168}, {512, 7168},
                                    {256, 7168}};

/* Waits (up to 30 s) for a 200 ms window with the CPUs at least 90% idle: the machine is shared
 * and a compile running alongside would halve a 2-thread measurement. */
static void wait_idle(void) {
  for (int tries = 0; tries < 150; tries++) {
    unsigned long long v[2][10] = {{0}};
    for (int s = 0; s < 2; s++) {
      FILE *f = fopen("/proc/stat", "r");
      if (!f) return;
      unsigned long long *c = v[s];
      int got = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &c[0], &c[1],
                       &c[2], &c[3], &c[4], &c[5], &c[6], &c[7], &c[8], &c[9]);
      fclose(f);
      if (got < 5) return;
      if (s == 0) {
        struct timespec ts = {0, 200000000};
        nanosleep(&ts, NULL);
      }
    }
    unsigned long long total = 0, idle = v[1][3] - v[0][3] + v[1][4] - v[0][4];
    for (int i = 0; i < 10; i++) total += v[1][i] - v[0][i];
    if (total == 0 || idle * 10 >= total * 9) return;
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

int main(int argc, char **argv) {
  int threads = 2, use_dnnl = 1, check = 0, rounds = 3, cold = 0;
  double budget = 0.3;
  int64_t ms[16] = {1, 16, 256};
  int mcount = 3;
  const char *isa_name = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--isa") && i + 1 < argc) isa_name = argv[++i];
    else if (!strcmp(argv[i], "--no-dnnl")) use_dnnl = 0;
    else if (!strcmp(argv[i], "--check")) check = 1;
    else if (!strcmp(argv[i], "--cold")) cold = 1;
    else if (!strcmp(argv[i], "--time") && i + 1 < argc) budget = atof(argv[++i]);
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--m") && i + 1 < argc) {
      mcount = 0;
      for (char *t = strtok(argv[++i], ","); t && mcount < 16; t = strtok(NULL, ","))
        ms[mcount++] = atoll(t);
    } else {
      fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  bf16fp32__config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.cpu_threads = threads;
  cfg.device = -1;
  void *state = NULL;
  char why[256] = "";
  const bf16fp32__backend *be = &bf16fp32__backend_cpu_simd;
  if (be->probe(&cfg, &state, why, sizeof why) != BF16FP32_OK) {
    fprintf(stderr, "cpu-simd unavailable: %s\n", why);
    return 1;
  }
  if (isa_name) {
    bf16fp32__simd_isa want = !strcmp(isa_name, "avx2")   ? BF16FP32__ISA_AVX2
                              : !strcmp(isa_name, "neon") ? BF16FP32__ISA_NEON
                              : !strcmp(isa_name, "amx")  ? BF16FP32__ISA_AMX
                                                          : BF16FP32__ISA_AVX512BF16;
    if (bf16fp32__cpu_simd_force_isa(state, want) != 0) {
      fprintf(stderr, "cannot force %s\n", isa_name);
      return 1;
    }
  }
  if (use_dnnl && !bench_dnnl_available(why, sizeof why)) {
    fprintf(stderr, "no oneDNN: %s\n", why);
    use_dnnl = 0;
  }
  /* 96 MiB read before each cold call: more than the L3 of this machine, three times over. */
  const size_t evict_bytes = (size_t)96 << 20;
  char *evict = cold ? calloc(1, evict_bytes) : NULL;
  volatile char evict_sink = 0;
  if (cold) use_dnnl = 0;
  printf("cpu-simd isa %s, %d threads\n", bf16fp32__simd_isa_name(bf16fp32__cpu_simd_isa(state)),
         bf16fp32__cpu_simd_threads(state));
  printf("%6s %6s %6s %12s %12s %8s %10s  %s\n", "M", "N", "K", "simd_us", "dnnl_us", "ratio",
         "simd_GB/s", "dnnl impl");
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
    for (int mi = 0; mi < mcount; mi++) {
      const int64_t m = ms[mi], n = shapes[si][0], k = shapes[si][1];
      uint16_t *x = aligned_alloc(64, (size_t)(m * k * 2 + 64));
      uint16_t *w = aligned_alloc(64, (size_t)(n * k * 2 + 64));
      float *out = aligned_alloc(64, (size_t)(m * n * 4 + 64));
      sup_fill_bf16(x, (size_t)(m * k), 11 + (uint64_t)m);
      sup_fill_bf16(w, (size_t)(n * k), 12 + (uint64_t)n);
      bf16fp32__call call;
      memset(&call, 0, sizeof call);
      call.shape = (bf16fp32__shape){m, n, k, k, k, n, BF16FP32_HOST, 16};
      call.x = x;
      call.w = w;
      call.out = out;
      double t0 = sup_now();
      be->run(state, &call);
      double one = sup_now() - t0;
      for (int r = 0; r < 3; r++) be->run(state, &call);
      int reps = (int)(budget / (one > 1e-6 ? one : 1e-6) / (cold ? 20 : 1));
      if (reps < 11) reps = 11;
      if (reps > 2001) reps = 2001;
      double *ts = malloc(sizeof(double) * (size_t)reps);
      double simd_us = 1e30, dnnl_us = 1e30;
      char impl[128] = "-";
      /* oneDNN's operands and its output's oracle (8 sampled rows), made once for the rounds */
      bench_dnnl_cell *dnnl_cell = NULL;
      if (use_dnnl && bench_dnnl_cell_create(&dnnl_cell, m, n, k, 8, impl, sizeof impl) != 0)
        fprintf(stderr, "oneDNN skipped at %lldx%lldx%lld: %s\n", (long long)m, (long long)n,
                (long long)k, impl);
      for (int round = 0; round < rounds; round++) {
        wait_idle();
        for (int r = 0; r < 3; r++) be->run(state, &call);
        for (int r = 0; r < reps; r++) {
          if (evict) {
            char acc = 0;
            for (size_t b = 0; b < evict_bytes; b += 64) acc ^= evict[b];
            evict_sink = acc;
          }
          t0 = sup_now();
          be->run(state, &call);
          ts[r] = (sup_now() - t0) * 1e6;
        }
        double med = median(ts, reps);
        if (med < simd_us) simd_us = med;
        double d = 0.0, worst = 0.0;
        wait_idle();
        if (dnnl_cell) {
          int rc = bench_dnnl_time(dnnl_cell, threads, reps, &d, &worst, impl, sizeof impl);
          if (rc == 0 && d < dnnl_us) dnnl_us = d;
          if (rc != 0) fprintf(stderr, "oneDNN at %lldx%lldx%lld: %s\n", (long long)m,
                               (long long)n, (long long)k, impl);
        }
      }
      bench_dnnl_cell_free(dnnl_cell);
      if (dnnl_us > 1e29) dnnl_us = 0.0;
      free(ts);
      if (check) {
        sup_poison_f32(out, (size_t)(m * n));
        be->run(state, &call);
        sup_check_result cr = sup_check(m, n, k, x, k, w, k, out, n);
        if (!sup_check_ok(&cr))
          printf("CHECK FAILED m=%lld n=%lld k=%lld worst %g\n", (long long)m, (long long)n,
                 (long long)k, cr.worst_ratio);
      }
      const double bytes = (double)(n * k * 2 + m * k * 2 + m * n * 4);
      printf("%6lld %6lld %6lld %12.1f %12.1f %8.2f %10.1f  %s\n", (long long)m, (long long)n,
             (long long)k, simd_us, dnnl_us, dnnl_us > 0 ? dnnl_us / simd_us : 0.0,
             bytes / simd_us * 1e-3, impl);
      fflush(stdout);
      free(x);
      free(w);
      free(out);
    }
  }
  be->reset(state);
  free(evict);
  (void)evict_sink;
  return 0;
}
