/* amx-ab: two or three builds of cpu-simd's AMX kernel timed against each other call by call, on
 * a machine too noisy for separate runs (the H200's host: the same cell moved 2-4x between the
 * rounds of `bench --cpu` in session 76). Every thread of the machine computes its share of the
 * columns as cpu-simd does (shares of 8-column grains, taken `unit` columns at a time), a
 * barrier before and after each call; the variants take turns call by call (A B C A B C ...), so
 * a slow spell of the machine falls on all of them. Weights walk through 1 GiB, so each call
 * reads them from memory. Per cell: the median call of each variant, and each one's median over
 * the first's (> 1: slower than the first); every variant's output is checked against the
 * first's, bit for bit.
 *
 * Build (x86 with AMX-BF16; B = a CPU-only CMake build of this tree, -DBF16FP32_CUDA=OFF; each
 * kernel a copy of src/backends/cpu-simd/kernel-amx.c, built with
 * -Dbf16fp32__simd_block_amx=amx_vI, I = 0, 1, 2):
 *   I="-O2 -std=c11 -Isrc -Iinclude -Isrc/backends/cpu-simd -Itests/common"
 *   gcc $I -mavx512f -mavx512bw -mavx512vl -mavx512dq -mamx-tile -mamx-bf16 \
 *     -Dbf16fp32__simd_block_amx=amx_v0 -c A/kernel-amx.c -o v0.o   (and v1.o, v2.o)
 *   gcc $I bench/amx-ab.c v0.o v1.o v2.o B/libbf16fp32_support.a B/libbf16fp32_static.a \
 *     -lpthread -lm -o amx-ab
 * (the main file without the AVX-512 flags: it runs before the check that the CPU has them).
 * Another level's block fills a slot through a wrapper: amx_v1 calling
 * bf16fp32__simd_block_avx512bf16 with its own arguments (its unit: 24 columns, 24:24).
 * Run: amx-ab --names head,units,tree --units 24:24,32:128,32:128 [--calls 31] [--m 1,4,16,64,256]
 *   (unit few:many = the columns a thread takes at a time at M <= 16 and above)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu-simd.h"
#include "measure.h"
#include "support.h"

int amx_v0(const bf16fp32__simd_args *a, int64_t m0, int64_t m1, int64_t n0, int64_t n1,
           uint16_t *scratch);
int amx_v1(const bf16fp32__simd_args *a, int64_t m0, int64_t m1, int64_t n0, int64_t n1,
           uint16_t *scratch);
int amx_v2(const bf16fp32__simd_args *a, int64_t m0, int64_t m1, int64_t n0, int64_t n1,
           uint16_t *scratch);
static bf16fp32__simd_block_fn const kernels[3] = {amx_v0, amx_v1, amx_v2};

#define MAX_THREADS 64
#define POOL_BYTES ((size_t)1 << 30)
#define GRAIN 8

static const int64_t shapes[][2] = {{256, 4096}, {512, 4096},  {1024, 4096},
                                    {2048, 4096}, {256, 7168}, {384, 7168},
                                    {512, 7168},  {1024, 7168}, {2048, 7168}};

typedef struct shared {
  pthread_barrier_t start, done;
  int threads, quit;
  bf16fp32__simd_args a;     /* this call's operands */
  int variant;               /* this call's kernel */
  int64_t unit;              /* this call's columns per block call */
  uint16_t *scratch[MAX_THREADS];
} shared;

typedef struct worker {
  shared *s;
  int tid;
} worker;

/* cpu-simd's column shares (its run_job's split): grains split evenly, each taken `unit` columns
 * at a time, a thin remainder with the last unit. */
static void share(const shared *s, int tid) {
  const int64_t n = s->a.n, grains = (n + GRAIN - 1) / GRAIN;
  int64_t lo = grains * tid / s->threads * GRAIN, hi = grains * (tid + 1) / s->threads * GRAIN;
  if (hi > n) hi = n;
  while (lo < hi) {
    const int64_t end = bf16fp32__simd_span_end(lo, hi, s->unit);
    kernels[s->variant](&s->a, 0, s->a.m, lo, end, s->scratch[tid]);
    lo = end;
  }
}

static void *work(void *arg) {
  worker *w = arg;
  for (;;) {
    pthread_barrier_wait(&w->s->start);
    if (w->s->quit) return NULL;
    share(w->s, w->tid);
    pthread_barrier_wait(&w->s->done);
  }
}

/* One call of variant v on s->a, every thread taking its share, with the variant's unit. */
static void call(shared *s, int v, const int64_t few[3], const int64_t many[3]) {
  s->variant = v;
  s->unit = s->a.m <= BF16FP32__SIMD_FEW_ROWS ? few[v] : many[v];
  pthread_barrier_wait(&s->start);
  share(s, 0);
  pthread_barrier_wait(&s->done);
}

static int parse_list(const char *text, int64_t *out, int max) {
  int n = 0;
  for (const char *p = text; *p && n < max; p++) {
    out[n++] = strtoll(p, (char **)&p, 10);
    if (!*p) break;
  }
  return n;
}

int main(int argc, char **argv) {
  const char *names[3] = {"v0", "v1", "v2"};
  char names_buf[256] = "";
  int64_t few[3] = {24, 24, 24}, many[3] = {24, 24, 24}, ms[16] = {1, 4, 16, 64, 256};
  int variants = 2, calls = 31, mcount = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--names")) {
      snprintf(names_buf, sizeof names_buf, "%s", argv[i + 1]);
      variants = 0;
      for (char *t = strtok(names_buf, ","); t && variants < 3; t = strtok(NULL, ","))
        names[variants++] = t;
    } else if (!strcmp(argv[i], "--units")) {
      const char *p = argv[i + 1];
      for (int v = 0; v < 3 && *p; v++) {
        few[v] = strtoll(p, (char **)&p, 10);
        if (*p == ':') many[v] = strtoll(p + 1, (char **)&p, 10);
        if (*p == ',') p++;
      }
    } else if (!strcmp(argv[i], "--calls")) calls = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--m")) mcount = parse_list(argv[i + 1], ms, 16);
  }
  if (bf16fp32__simd_detect() != BF16FP32__ISA_AMX) {
    printf("amx-ab: this CPU or OS has no AMX-BF16 for this process\n");
    return 77;
  }
  shared s;
  memset(&s, 0, sizeof s);
  s.threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (s.threads > MAX_THREADS) s.threads = MAX_THREADS;
  uint16_t *pool = aligned_alloc(64, POOL_BYTES);
  uint16_t *x = aligned_alloc(64, (size_t)256 * 7168 * 2);
  float *out = aligned_alloc(64, (size_t)256 * 2048 * 4), *ref = aligned_alloc(64, (size_t)256 * 2048 * 4);
  if (!pool || !x || !out || !ref) return 1;
  sup_fill_bf16(pool, POOL_BYTES / 2, 7);
  memcpy(x, pool, (size_t)256 * 7168 * 2);
  for (int t = 0; t < s.threads; t++)
    s.scratch[t] = bf16fp32__simd_scratch_alloc(bf16fp32__simd_scratch_elems(7168));
  pthread_barrier_init(&s.start, NULL, (unsigned)s.threads);
  pthread_barrier_init(&s.done, NULL, (unsigned)s.threads);
  worker workers[MAX_THREADS];
  pthread_t ids[MAX_THREADS];
  for (int t = 1; t < s.threads; t++) {
    workers[t] = (worker){&s, t};
    pthread_create(&ids[t], NULL, work, &workers[t]);
  }
  printf("amx-ab: %d threads, %d calls per variant per cell, taking turns; median us per call\n",
         s.threads, calls);
  printf("%5s %5s %4s", "N", "K", "M");
  for (int v = 0; v < variants; v++) printf(" %10s", names[v]);
  for (int v = 1; v < variants; v++) printf(" %6s/%-4s", names[v], names[0]);
  printf("\n");
  double *times = malloc(sizeof(double) * (size_t)calls * 3);
  size_t at = 0;
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
    for (int mi = 0; mi < mcount; mi++) {
      const int64_t n = shapes[si][0], k = shapes[si][1], m = ms[mi];
      const size_t wbytes = (size_t)(n * k * 2);
      double med[3];
      for (int c = 0; c < calls * variants + variants; c++) {
        const int v = c % variants, warm = c < variants; /* one untimed call each first */
        if (at + wbytes > POOL_BYTES) at = 0;
        s.a = (bf16fp32__simd_args){x, pool + at / 2, out, m, n, k, k, k, n, 1};
        at += (wbytes + 4095) / 4096 * 4096;
        const double t0 = sup_now();
        call(&s, v, few, many);
        if (!warm) times[v * calls + (c / variants - 1)] = (sup_now() - t0) * 1e6;
      }
      /* The variants change where the work goes, not the sums: each one's output, written over
       * a poisoned buffer, must equal the first's bit for bit. */
      int same = 1;
      for (int v = 0; v < variants; v++) {
        memset(v ? out : ref, 0xff, (size_t)(m * n * 4));
        s.a.out = v ? out : ref;
        call(&s, v, few, many);
        if (v && memcmp(out, ref, (size_t)(m * n * 4))) same = 0;
      }
      for (int v = 0; v < variants; v++) med[v] = bf16fp32__median(times + v * calls, calls);
      printf("%5lld %5lld %4lld", (long long)n, (long long)k, (long long)m);
      for (int v = 0; v < variants; v++) printf(" %10.1f", med[v]);
      for (int v = 1; v < variants; v++) printf(" %11.3f", med[v] / med[0]);
      printf("%s\n", same ? "" : "  OUTPUTS DIFFER");
      fflush(stdout);
    }
  s.quit = 1;
  pthread_barrier_wait(&s.start);
  for (int t = 1; t < s.threads; t++) pthread_join(ids[t], NULL);
  return 0;
}
