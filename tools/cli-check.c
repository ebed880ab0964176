/* `bf16fp32 info`, `check` (every available backend against the fp64 oracle on a suite) and
 * `select` (what auto picks for each shape, and why). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-check.h"
#include "cpu-count.h"
#include "dispatch.h"
#include "suite.h"
#include "support.h"

/* Short default M list of check and select: decode sizes, odd ones included. */
static const int64_t default_ms[] = {1, 7, 16, 64, 256};
/* cpu-ref is the slow fp64 reference: skipped above this many multiply-adds per call. */
static const double cpu_ref_max_macs = 2e9;

typedef struct cli_args {
  suite s;
  int64_t ms[SUITE_MAX_M];
  int m_count;
  int cpu_only;
} cli_args;

static int parse_args(int argc, char **argv, cli_args *a) {
  char path[1024], err[SUITE_ERR_LEN];
  const char *suite_path = suite_default_path(path, sizeof path);
  const char *m_list = NULL;
  a->cpu_only = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--suite") == 0 && i + 1 < argc)
      suite_path = argv[++i];
    else if (strcmp(argv[i], "--m") == 0 && i + 1 < argc)
      m_list = argv[++i];
    else if (strcmp(argv[i], "--cpu") == 0)
      a->cpu_only = 1;
    else {
      fprintf(stderr, "bf16fp32 %s: unknown or incomplete option '%s'\n", argv[0], argv[i]);
      return 2;
    }
  }
  if (suite_load(suite_path, &a->s, err, sizeof err) != 0) {
    fprintf(stderr, "bf16fp32 %s: %s\n", argv[0], err);
    return 2;
  }
  if (m_list) {
    a->m_count = suite_parse_int_list(m_list, a->ms, SUITE_MAX_M, err, sizeof err);
    if (a->m_count < 0) {
      fprintf(stderr, "bf16fp32 %s: --m: %s\n", argv[0], err);
      return 2;
    }
  } else {
    a->m_count = (int)(sizeof default_ms / sizeof default_ms[0]);
    memcpy(a->ms, default_ms, sizeof default_ms);
  }
  return 0;
}

static bf16fp32_context *open_context(void) {
  bf16fp32_context *ctx = NULL;
  bf16fp32_status st = bf16fp32_create(&ctx, NULL);
  if (st != BF16FP32_OK)
    fprintf(stderr, "bf16fp32: cannot create a context: %s: %s\n", bf16fp32_status_name(st),
            bf16fp32_last_error());
  return ctx;
}

int cli_info(int argc, char **argv) {
  (void)argv;
  if (argc > 1) {
    fprintf(stderr, "bf16fp32 info: takes no options\n");
    return 2;
  }
  bf16fp32_context *ctx = open_context();
  if (!ctx) return 1;
  char text[4096];
  bf16fp32_describe(ctx, text, sizeof text);
  fputs(text, stdout);
  bf16fp32_destroy(ctx);
  return 0;
}

/* One (shape, M): operands in host memory, and in device memory when device backends run. */
typedef struct check_case {
  int64_t m, n, k;
  uint16_t *x, *w;
  float *out;
  double *ref, *absdot;
  void *dx, *dw, *dout;
} check_case;

/* Runs backend b (-1: auto) at `where` and compares with the oracle. Writes the cell text;
 * returns 1 on a violation. */
static int check_one(bf16fp32_context *ctx, int b, bf16fp32_location where, check_case *c,
                     char *cell, size_t len) {
  size_t out_elems = (size_t)(c->m * c->n);
  sup_poison_f32(c->out, out_elems);
  const uint16_t *x = c->x, *w = c->w;
  float *out = c->out;
  if (where == BF16FP32_DEVICE) {
    if (sup_gpu_upload(c->dout, c->out, out_elems * 4)) {
      snprintf(cell, len, "ERR(upload)");
      return 1;
    }
    x = c->dx, w = c->dw, out = c->dout;
  }
  bf16fp32_status st;
  if (b < 0) {
    st = bf16fp32_linear(ctx, where, c->m, c->n, c->k, x, c->k, w, c->k, out, c->n, NULL);
  } else {
    bf16fp32__call call = {bf16fp32__make_shape(where, c->m, c->n, c->k, c->k, c->k, c->n, x, w, out),
                           x, w, out, NULL, false, NULL};
    st = bf16fp32__run_one(ctx, b, &call);
  }
  if (st == BF16FP32_DECLINED) {
    snprintf(cell, len, "declined");
    return 0;
  }
  if (st == BF16FP32_OK && where == BF16FP32_DEVICE &&
      (sup_gpu_sync() || sup_gpu_download(c->out, c->dout, out_elems * 4)))
    st = BF16FP32_CUDA_ERROR;
  if (st != BF16FP32_OK) {
    snprintf(cell, len, "ERR(%s)", bf16fp32_status_name(st));
    fprintf(stderr, "  %s m=%lld n=%lld k=%lld: %s\n", b < 0 ? "auto" : bf16fp32__registry[b].name,
            (long long)c->m, (long long)c->n, (long long)c->k, bf16fp32_last_error());
    return 1;
  }
  sup_check_result r = sup_compare(c->m, c->n, c->k, c->ref, c->absdot, c->out, c->n);
  if (!sup_check_ok(&r)) {
    snprintf(cell, len, "FAIL(%lld)",
             (long long)(r.violations + r.unwritten + r.overwritten + r.stored_short));
    return 1;
  }
  snprintf(cell, len, "%.4f", r.worst_ratio);
  return 0;
}

static int prepare_case(check_case *c, int64_t m, int64_t n, int64_t k, uint64_t seed, int device) {
  memset(c, 0, sizeof *c);
  c->m = m, c->n = n, c->k = k;
  c->x = malloc((size_t)(m * k) * 2), c->w = malloc((size_t)(n * k) * 2);
  c->out = malloc((size_t)(m * n) * 4);
  c->ref = malloc((size_t)(m * n) * 8), c->absdot = malloc((size_t)(m * n) * 8);
  if (!c->x || !c->w || !c->out || !c->ref || !c->absdot) return 1;
  sup_fill_bf16(c->x, (size_t)(m * k), seed);
  sup_fill_bf16(c->w, (size_t)(n * k), seed + 1);
  if (sup_oracle(m, n, k, c->x, k, c->w, k, c->ref, c->absdot, bf16fp32__usable_cpus())) return 1;
  if (!device) return 0;
  c->dx = sup_gpu_alloc((size_t)(m * k) * 2), c->dw = sup_gpu_alloc((size_t)(n * k) * 2);
  c->dout = sup_gpu_alloc((size_t)(m * n) * 4);
  if (!c->dx || !c->dw || !c->dout) return 1;
  return sup_gpu_upload(c->dx, c->x, (size_t)(m * k) * 2) || sup_gpu_upload(c->dw, c->w, (size_t)(n * k) * 2);
}

static void release_case(check_case *c) {
  free(c->x), free(c->w), free(c->out), free(c->ref), free(c->absdot);
  sup_gpu_free(c->dx), sup_gpu_free(c->dw), sup_gpu_free(c->dout);
}

int cli_check(int argc, char **argv) {
  cli_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc;
  bf16fp32_context *ctx = open_context();
  if (!ctx) return 1;
  int device = !a.cpu_only && bf16fp32__context_config(ctx)->device >= 0;
  int cols[BF16FP32__MAX_BACKENDS], ncols = 0, failures = 0;
  printf("bf16fp32 check: worst |out - ref| / bound per backend (<= 1 passes); suite %s\n", a.s.path);
  printf("%-18s %5s %5s %5s", "shape", "N", "K", "M");
  for (int b = 0; b < bf16fp32__registry_count; b++) {
    if (!bf16fp32__backend_available(ctx, b)) continue;
    if (bf16fp32__registry[b].where == BF16FP32_DEVICE && !device) continue;
    cols[ncols++] = b;
    printf(" %10s", bf16fp32__registry[b].name);
  }
  printf(" %10s %10s\n", "auto-host", device ? "auto-dev" : "");
  for (int e = 0; e < a.s.count; e++) {
    const suite_entry *se = &a.s.entries[e];
    for (int mi = 0; mi < a.m_count; mi++) {
      check_case c;
      char cell[32];
      if (prepare_case(&c, a.ms[mi], se->n, se->k, 100u * (uint64_t)e + (uint64_t)mi, device)) {
        fprintf(stderr, "bf16fp32 check: out of memory for %s M=%lld\n", se->name, (long long)a.ms[mi]);
        release_case(&c);
        failures++;
        continue;
      }
      printf("%-18s %5lld %5lld %5lld", se->name, (long long)se->n, (long long)se->k, (long long)c.m);
      for (int i = 0; i < ncols; i++) {
        int b = cols[i];
        bool slow = strcmp(bf16fp32__registry[b].name, "cpu-ref") == 0 &&
                    (double)c.m * (double)c.n * (double)c.k > cpu_ref_max_macs;
        if (slow)
          snprintf(cell, sizeof cell, "skip(slow)");
        else
          failures += check_one(ctx, b, bf16fp32__registry[b].where, &c, cell, sizeof cell);
        printf(" %10s", cell);
      }
      failures += check_one(ctx, -1, BF16FP32_HOST, &c, cell, sizeof cell);
      printf(" %10s", cell);
      if (device) {
        failures += check_one(ctx, -1, BF16FP32_DEVICE, &c, cell, sizeof cell);
        printf(" %10s", cell);
      }
      printf("\n");
      fflush(stdout);
      release_case(&c);
    }
  }
  printf("%s: %d failure(s)\n", failures ? "FAILED" : "all within bound", failures);
  bf16fp32_destroy(ctx);
  return failures ? 1 : 0;
}

int cli_select(int argc, char **argv) {
  cli_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc;
  bf16fp32_context *ctx = open_context();
  if (!ctx) return 1;
  bf16fp32_location where =
      !a.cpu_only && bf16fp32__context_config(ctx)->device >= 0 ? BF16FP32_DEVICE : BF16FP32_HOST;
  printf("bf16fp32 select: %s calls, suite %s\n", where == BF16FP32_DEVICE ? "device" : "host", a.s.path);
  printf("%-18s %5s %5s %5s  %-9s %s\n", "shape", "N", "K", "M", "backend", "why");
  int failures = 0;
  for (int e = 0; e < a.s.count; e++) {
    const suite_entry *se = &a.s.entries[e];
    for (int mi = 0; mi < a.m_count; mi++) {
      const char *name = NULL;
      char why[256];
      bf16fp32_status st = bf16fp32_select(ctx, where, a.ms[mi], se->n, se->k, &name, why, sizeof why);
      printf("%-18s %5lld %5lld %5lld  %-9s %s\n", se->name, (long long)se->n, (long long)se->k,
             (long long)a.ms[mi], st == BF16FP32_OK ? name : "(none)",
             st == BF16FP32_OK ? why : bf16fp32_last_error());
      failures += st != BF16FP32_OK;
    }
  }
  bf16fp32_destroy(ctx);
  return failures ? 1 : 0;
}
