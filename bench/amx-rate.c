/* amx-rate: what one core's AMX sustains on this machine, alone and with every core busy, in the
 * patterns cpu-simd's AMX kernel (src/backends/cpu-simd/kernel-amx.c) is built from. It says
 * which part of the kernel's time is the tile unit's own rate, which the tile loads' and which
 * the kernel's: TFLOP/s per thread (one TDPBF16PS = 16 x 16 x 32 multiply-adds), the median
 * thread, for 1, half and all of the CPUs.
 *
 *   tdp4     the kernel's 2 x 2 step without loads: four products on four sums
 *   tdp2     two products on two sums (a pass of one row tile: M <= 16)
 *   l1       the 2 x 2 step with its four tile loads from 4 KB (always in L1)
 *   l2       the same loads walking 256 KB (x tiles and a panel, contiguous: L2)
 *   panel    x tiles from rows of a real x (a stride of k = 7168, 32 rows: L2) and a 128 KB panel,
 *            the kernel's large-M pattern
 *   loads    the panel pattern's loads alone
 *   pf2x, pf2, pf4   the panel pattern with the x tiles' lines (pf2x) or both operands' lines
 *            (pf2, pf4) requested into L1 (prefetcht0) 2 or 4 chunks ahead
 *
 * Build (x86 with AMX-BF16, Linux 5.16 on; B = a CPU-only CMake build of this tree,
 * -DBF16FP32_CUDA=OFF):
 *   gcc -O2 -std=c11 -mamx-tile -mamx-bf16 -Iinclude -Isrc -Isrc/backends/cpu-simd -Itests/common \
 *     bench/amx-rate.c B/libbf16fp32_support.a B/libbf16fp32_static.a -lpthread -lm -o amx-rate
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu-simd.h"
#include "support.h"

#define FLOP_PER_TDP (16.0 * 16 * 32 * 2)
#define X_LD_BYTES (7168 * 2)   /* x's row stride in the panel pattern */
#define CHUNKS 64               /* k chunks a panel (and an x slice) spans, as the kernel's */

enum mode { TDP4, TDP2, L1, L2, PANEL, LOADS, PF2X, PF2, PF4, MODES };
static const char *const mode_names[MODES] = {"tdp4", "tdp2", "l1", "l2", "panel", "loads",
                                              "pf2x", "pf2", "pf4"};

typedef struct job {
  enum mode mode;
  long reps;          /* passes over CHUNKS chunks */
  double seconds;     /* out */
  pthread_barrier_t *start;
} job;

static void configure(void) {
  bf16fp32__amx_tile_config c;
  memset(&c, 0, sizeof c);
  c.palette = 1;
  for (int r = 0; r < 8; r++) c.colsb[r] = 64, c.rows[r] = 16;
  _tile_loadconfig(&c);
}

static void *run(void *arg) {
  job *j = arg;
  const size_t x_bytes = (size_t)32 * X_LD_BYTES, panel_bytes = (size_t)CHUNKS * 2048;
  uint8_t *x = aligned_alloc(64, x_bytes), *panel = aligned_alloc(64, panel_bytes);
  uint8_t *flat = aligned_alloc(64, 2 * panel_bytes);
  float *sink = aligned_alloc(64, 4 * 1024);
  if (!x || !panel || !flat || !sink) {
    j->seconds = -1;
    pthread_barrier_wait(j->start);
    return NULL;
  }
  sup_fill_bf16((uint16_t *)x, x_bytes / 2, 1);
  sup_fill_bf16((uint16_t *)panel, panel_bytes / 2, 2);
  sup_fill_bf16((uint16_t *)flat, panel_bytes, 3);
  configure();
  _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
  _tile_loadd(4, flat, 64); _tile_loadd(5, flat + 1024, 64);
  _tile_loadd(6, flat + 2048, 64); _tile_loadd(7, flat + 3072, 64);
  pthread_barrier_wait(j->start);
  const double t0 = sup_now();
  for (long r = 0; r < j->reps; r++)
    for (int c = 0; c < CHUNKS; c++) {
      switch (j->mode) {
      case TDP4: break;
      case TDP2: break;
      case L1:
        _tile_loadd(6, flat, 64); _tile_loadd(7, flat + 1024, 64);
        _tile_loadd(4, flat + 2048, 64); _tile_loadd(5, flat + 3072, 64);
        break;
      case L2:
        _tile_loadd(6, flat + c * 2048, 64); _tile_loadd(7, flat + c * 2048 + 1024, 64);
        _tile_loadd(4, flat + panel_bytes + c * 2048, 64);
        _tile_loadd(5, flat + panel_bytes + c * 2048 + 1024, 64);
        break;
      case PF2X:
      case PF2:
      case PF4: {
        /* Wraps to the first chunks near the end, as the next k block's would be. */
        const int ahead = (c + (j->mode == PF4 ? 4 : 2)) % CHUNKS;
        for (int r = 0; r < 32; r++) _mm_prefetch((const char *)(x + r * X_LD_BYTES + ahead * 64), _MM_HINT_T0);
        if (j->mode != PF2X)
          for (int l = 0; l < 32; l++) _mm_prefetch((const char *)(panel + ahead * 2048 + l * 64), _MM_HINT_T0);
      }
        /* fall through */
      case PANEL:
      case LOADS:
        _tile_loadd(6, panel + c * 2048, 64); _tile_loadd(7, panel + c * 2048 + 1024, 64);
        _tile_loadd(4, x + c * 64, X_LD_BYTES); _tile_loadd(5, x + 16 * X_LD_BYTES + c * 64, X_LD_BYTES);
        break;
      default: break;
      }
      if (j->mode == LOADS) continue;
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      if (j->mode == TDP2) continue;
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
  _tile_stored(0, sink, 64); /* the sums leave the tiles, so no product is dead */
  j->seconds = sup_now() - t0;
  _tile_release();
  free(x), free(panel), free(flat), free(sink);
  return NULL;
}

static int cmp(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* One run of a mode on t threads: the median thread's rate, and the slowest and fastest. */
static void measure(enum mode m, long t, double *med, double *lo, double *hi) {
  job *jobs = calloc((size_t)t, sizeof *jobs);
  pthread_t *ids = calloc((size_t)t, sizeof *ids);
  double *rates = calloc((size_t)t, sizeof *rates);
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, (unsigned)t);
  for (long i = 0; i < t; i++) {
    jobs[i] = (job){m, 4000, 0, &start};
    pthread_create(&ids[i], NULL, run, &jobs[i]);
  }
  /* TFLOP/s, or GB/s of tile loads for the loads alone. */
  const double per_chunk = m == LOADS ? 4096.0 * 1e-9 : (m == TDP2 ? 2 : 4) * FLOP_PER_TDP * 1e-12;
  for (long i = 0; i < t; i++) {
    pthread_join(ids[i], NULL);
    rates[i] = jobs[i].seconds > 0 ? jobs[i].reps * CHUNKS * per_chunk / jobs[i].seconds : 0;
  }
  qsort(rates, (size_t)t, sizeof *rates, cmp);
  *med = rates[t / 2], *lo = rates[0], *hi = rates[t - 1];
  pthread_barrier_destroy(&start);
  free(jobs), free(ids), free(rates);
}

int main(int argc, char **argv) {
  if (bf16fp32__simd_detect() != BF16FP32__ISA_AMX) {
    printf("amx-rate: this CPU or OS has no AMX-BF16 for this process\n");
    return 77;
  }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (argc > 1) cpus = atol(argv[1]);
  if (cpus < 1) cpus = 1;
  const long counts[3] = {1, cpus / 2 > 1 ? cpus / 2 : 1, cpus};
  /* A shared machine slows a run, never speeds it up: the best of three runs per cell. */
  printf("amx-rate: TFLOP/s per thread, best of 3 runs of the median thread (slowest-fastest thread "
         "over the runs), %ld CPUs\n", cpus);
  printf("%-6s %22s %22s %22s\n", "mode", "1 thread", "half", "all");
  for (int m = 0; m < MODES; m++) {
    printf("%-6s", mode_names[m]);
    for (int ci = 0; ci < 3; ci++) {
      double best = 0, lo = 1e30, hi = 0;
      for (int run_i = 0; run_i < 3; run_i++) {
        double md, l, h;
        measure((enum mode)m, counts[ci], &md, &l, &h);
        if (md > best) best = md;
        if (l < lo) lo = l;
        if (h > hi) hi = h;
      }
      printf("   %6.3f (%6.3f-%6.3f)", best, lo, hi);
    }
    printf("%s\n", m == LOADS ? "   (GB/s of tile loads)" : "");
  }
  return 0;
}
