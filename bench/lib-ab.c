/* lib-ab: whole builds of the library timed against each other in one process, through the
 * public API alone, so that any two trees since the first (whose header had the same calls and
 * options) meet under one harness and one rotation of operands. Each build's shared library is
 * loaded on its own (dlopen, RTLD_LOCAL); the builds take turns within every round (the order
 * rotating round by round), so a slow spell of a shared machine falls on all of them. A turn:
 * a pause longer than cpu-simd's idle spin (so the previous build's workers are asleep), one
 * untimed call (it wakes this build's workers), then --calls timed calls back to back. Operands
 * rotate over --rotate-mb MiB of copies (default 256, the library's host measure's least; give
 * twice the last-level cache where that is more, as the library's measure takes), so each call
 * reads its weights from memory, as in serving.
 * Per cell: each build's median call and its ratio to the first build's (> 1: slower); every
 * build's first output must equal the first build's bit for bit, else the cell says so.
 *
 * Build: gcc -O2 -std=c11 -Iinclude bench/lib-ab.c -ldl -o lib-ab
 * Run:   lib-ab [--algo cpu-simd] [--threads 0] [--rounds 15] [--calls 5] [--m 1,16]
 *               [--shapes 256x4096,...] [--rotate-mb 256] NAME=path/libbf16fp32.so NAME=...
 * (--threads 0: each build's own default; the shapes default to the DSV4 routers and the
 * c4-main weights.)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bf16fp32.h"

enum { MAX_BUILDS = 8, MAX_LIST = 32 };
#define TURN_PAUSE_NS 5000000L /* cpu-simd's workers spin 0.5 ms after a job */

typedef struct build {
  const char *name;
  void *handle;
  bf16fp32_context *ctx;
  void (*options_init)(bf16fp32_options *);
  bf16fp32_status (*create)(bf16fp32_context **, const bf16fp32_options *);
  void (*destroy)(bf16fp32_context *);
  bf16fp32_status (*linear)(bf16fp32_context *, bf16fp32_location, int64_t, int64_t, int64_t,
                            const uint16_t *, int64_t, const uint16_t *, int64_t, float *,
                            int64_t, void *);
  double *times; /* this cell's timed calls */
  int count;
} build;

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* bf16 values in [-2, 2) with all 7 fraction bits random (xorshift64*). */
static void fill(uint16_t *p, size_t count, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < count; i++) {
    s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
    const uint64_t r = s * 0x2545F4914F6CDD1Dull;
    const uint16_t sign = (uint16_t)(r >> 63 << 15), exponent = (uint16_t)(120 + (r >> 40) % 8);
    p[i] = (uint16_t)(sign | exponent << 7 | (r >> 20 & 0x7f));
  }
}

static int load(build *b, const char *spec, const char *algo, int threads) {
  const char *eq = strchr(spec, '=');
  if (!eq) return fprintf(stderr, "lib-ab: %s: expected NAME=path\n", spec), -1;
  b->name = strndup(spec, (size_t)(eq - spec));
  b->handle = dlopen(eq + 1, RTLD_NOW | RTLD_LOCAL);
  if (!b->handle) return fprintf(stderr, "lib-ab: %s\n", dlerror()), -1;
  *(void **)&b->options_init = dlsym(b->handle, "bf16fp32_options_init");
  *(void **)&b->create = dlsym(b->handle, "bf16fp32_create");
  *(void **)&b->destroy = dlsym(b->handle, "bf16fp32_destroy");
  *(void **)&b->linear = dlsym(b->handle, "bf16fp32_linear");
  if (!b->options_init || !b->create || !b->destroy || !b->linear)
    return fprintf(stderr, "lib-ab: %s lacks the public calls\n", eq + 1), -1;
  bf16fp32_options o;
  b->options_init(&o);
  o.algo = algo;
  o.cpu_threads = threads;
  const bf16fp32_status st = b->create(&b->ctx, &o);
  if (st != BF16FP32_OK) return fprintf(stderr, "lib-ab: %s: create: %d\n", b->name, st), -1;
  return 0;
}

static int parse_list(const char *s, int64_t *a, int64_t *b, int max) {
  int n = 0;
  while (*s && n < max) {
    char *end;
    a[n] = strtoll(s, &end, 10);
    if (b) {
      if (*end != 'x') return -1;
      b[n] = strtoll(end + 1, &end, 10);
    }
    if (end == s || (*end && *end != ',')) return -1;
    n++;
    s = *end ? end + 1 : end;
  }
  return *s ? -1 : n;
}

/* One cell: every build's calls on the same rotating copies; 0, or -1 when a call failed. */
static int run_cell(build *bs, int nb, int64_t m, int64_t n, int64_t k, int rounds, int calls,
                    size_t rotate_bytes) {
  const size_t xs = (size_t)(m * k), ws = (size_t)(n * k), os = (size_t)(m * n);
  const size_t per = (xs + ws) * 2;
  size_t copies = rotate_bytes / per + 1;
  if (copies > 4096) copies = 4096;
  uint16_t *x = malloc(copies * xs * 2), *w = malloc(copies * ws * 2);
  float *out = malloc(os * 4), *first = malloc(os * 4);
  int rc = x && w && out && first ? 0 : -1, same = 1;
  for (int i = 0; i < nb; i++) {
    bs[i].times = malloc(sizeof(double) * (size_t)rounds * (size_t)calls);
    if (!bs[i].times) rc = -1;
  }
  if (rc != 0) fprintf(stderr, "lib-ab: out of memory\n");
  else {
    fill(x, xs, 1);
    fill(w, ws, 2);
    for (size_t c = 1; c < copies; c++) {
      memcpy(x + c * xs, x, xs * 2);
      memcpy(w + c * ws, w, ws * 2);
    }
  }
  size_t next = 0;
  for (int i = 0; i < nb && rc == 0; i++) {
    memset(out, 0xff, os * 4); /* NaN poison: an unwritten element differs */
    if (bs[i].linear(bs[i].ctx, BF16FP32_HOST, m, n, k, x, k, w, k, out, n, NULL) != BF16FP32_OK)
      rc = -1;
    if (i == 0) memcpy(first, out, os * 4);
    else same &= memcmp(first, out, os * 4) == 0;
    bs[i].count = 0;
  }
  for (int r = 0; r < rounds && rc == 0; r++)
    for (int t = 0; t < nb && rc == 0; t++) {
      build *b = &bs[(r + t) % nb];
      nanosleep(&(struct timespec){0, TURN_PAUSE_NS}, NULL);
      for (int c = -1; c < calls; c++) {
        const size_t at = next++ % copies;
        const double t0 = now_us();
        if (b->linear(b->ctx, BF16FP32_HOST, m, n, k, x + at * xs, k, w + at * ws, k, out, n,
                      NULL) != BF16FP32_OK)
          rc = -1;
        if (c >= 0) b->times[b->count++] = now_us() - t0;
      }
    }
  if (rc == 0) {
    const double base = median(bs[0].times, bs[0].count);
    printf("%5lld %5lld %4lld", (long long)n, (long long)k, (long long)m);
    for (int i = 0; i < nb; i++) {
      const double med = i ? median(bs[i].times, bs[i].count) : base;
      printf("  %s %9.2f %.3f", bs[i].name, med, med / base);
    }
    printf("%s\n", same ? "" : "  OUTPUTS DIFFER");
  }
  for (int i = 0; i < nb; i++) free(bs[i].times);
  free(x), free(w), free(out), free(first);
  return rc;
}

int main(int argc, char **argv) {
  const char *algo = "cpu-simd";
  int threads = 0, rounds = 15, calls = 5, nb = 0, rotate_mb = 256;
  int64_t ms[MAX_LIST] = {1, 16}, ns[MAX_LIST] = {256, 384, 256, 2048, 2048};
  int64_t ks[MAX_LIST] = {4096, 7168, 7168, 4096, 7168};
  int nm = 2, nsh = 5;
  build bs[MAX_BUILDS];
  memset(bs, 0, sizeof bs);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--algo") && v) algo = v, i++;
    else if (!strcmp(a, "--threads") && v) threads = atoi(v), i++;
    else if (!strcmp(a, "--rounds") && v) rounds = atoi(v), i++;
    else if (!strcmp(a, "--calls") && v) calls = atoi(v), i++;
    else if (!strcmp(a, "--rotate-mb") && v) rotate_mb = atoi(v), i++;
    else if (!strcmp(a, "--m") && v) nm = parse_list(v, ms, NULL, MAX_LIST), i++;
    else if (!strcmp(a, "--shapes") && v) nsh = parse_list(v, ns, ks, MAX_LIST), i++;
    else if (a[0] != '-' && nb < MAX_BUILDS) {
      if (load(&bs[nb], a, algo, threads) != 0) return 1;
      nb++;
    } else return fprintf(stderr, "lib-ab: bad argument %s (see the file's header)\n", a), 2;
  }
  if (nb < 1 || nm < 1 || nsh < 1 || rounds < 1 || calls < 1 || rotate_mb < 1 || threads < 0)
    return fprintf(stderr, "lib-ab: needs a build; M, shapes, rounds, calls, MiB >= 1\n"), 2;
  printf("    N     K    M  (per build: median us per call, ratio to the first)\n");
  int rc = 0;
  for (int s = 0; s < nsh && rc == 0; s++)
    for (int j = 0; j < nm && rc == 0; j++)
      if (run_cell(bs, nb, ms[j], ns[s], ks[s], rounds, calls, (size_t)rotate_mb << 20) != 0) {
        fprintf(stderr, "lib-ab: a call failed at %lldx%lld M = %lld\n", (long long)ns[s],
                (long long)ks[s], (long long)ms[j]);
        rc = 1;
      }
  for (int i = 0; i < nb; i++) bs[i].destroy(bs[i].ctx);
  return rc;
}
