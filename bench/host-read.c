/* host-read: how fast this machine's CPUs read a buffer of each size, to tell where its caches
 * stop helping. The host measure rotates its operands over twice the last-level cache that sysfs
 * reports (src/measure.c); a buffer of that size should read as fast as one many times larger,
 * or the bench and the tuner time part of the cache. Each thread reads its own contiguous slice
 * (first touched by that thread, so its pages are local), once untimed, then timed passes; the
 * figure is the whole buffer over the slowest thread's pass, best and median pass.
 *
 * Build and run (gcc, Linux):
 *   gcc -O3 -march=native -std=c11 -pthread bench/host-read.c -o host-read
 *   ./host-read [threads] [MiB ...]   (default: every usable CPU; 32 128 256 512 600 1024 2048
 *                                      4096 MiB)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PASSES 7 /* timed */

typedef struct slice {
  const uint64_t *p;
  size_t n;
  pthread_barrier_t *start;
  double seconds[PASSES];
  uint64_t sum; /* kept so the reads are not optimized away */
} slice;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t read_all(const uint64_t *p, size_t n) {
  uint64_t a = 0, b = 0, c = 0, d = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) a += p[i], b += p[i + 1], c += p[i + 2], d += p[i + 3];
  for (; i < n; i++) a += p[i];
  return a + b + c + d;
}

static void *reader(void *arg) {
  slice *s = arg;
  memset((void *)s->p, 1, s->n * sizeof *s->p); /* first touch: the pages near this thread */
  pthread_barrier_wait(s->start);
  s->sum = read_all(s->p, s->n); /* untimed */
  for (int r = 0; r < PASSES; r++) {
    pthread_barrier_wait(s->start); /* every thread starts each pass together */
    const double t0 = now_s();
    s->sum += read_all(s->p, s->n);
    s->seconds[r] = now_s() - t0;
  }
  return NULL;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* GB/s of `threads` threads reading `mib` MiB: best and median pass into gbs[0], gbs[1]. */
static int measure(int threads, size_t mib, double gbs[2]) {
  const size_t bytes = mib << 20, per = bytes / sizeof(uint64_t) / (size_t)threads;
  uint64_t *buf = aligned_alloc(64, bytes);
  slice *s = calloc((size_t)threads, sizeof *s);
  pthread_t *tid = calloc((size_t)threads, sizeof *tid);
  pthread_barrier_t start;
  if (!buf || !s || !tid || pthread_barrier_init(&start, NULL, (unsigned)threads) != 0) {
    free(buf), free(s), free(tid);
    return 0;
  }
  int made = 0;
  for (; made < threads; made++) {
    s[made] = (slice){.p = buf + (size_t)made * per, .n = per, .start = &start};
    if (pthread_create(&tid[made], NULL, reader, &s[made]) != 0) break;
  }
  /* a thread that failed to start would leave the others at the barrier: then none ran */
  if (made < threads) {
    fprintf(stderr, "host-read: could not start thread %d\n", made);
    exit(1);
  }
  uint64_t sum = 0;
  for (int t = 0; t < threads; t++) pthread_join(tid[t], NULL), sum += s[t].sum;
  double pass[PASSES];
  for (int r = 0; r < PASSES; r++) {
    pass[r] = 0;
    for (int t = 0; t < threads; t++)
      if (s[t].seconds[r] > pass[r]) pass[r] = s[t].seconds[r];
  }
  qsort(pass, PASSES, sizeof pass[0], cmp_double);
  const double read = (double)per * sizeof(uint64_t) * threads;
  gbs[0] = read / pass[0] * 1e-9;
  gbs[1] = read / pass[PASSES / 2] * 1e-9;
  pthread_barrier_destroy(&start);
  free(buf), free(s), free(tid);
  return sum != 0; /* every word is nonzero: a zero sum means the reads did not happen */
}

int main(int argc, char **argv) {
  cpu_set_t set;
  CPU_ZERO(&set);
  int threads = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  if (argc > 1) threads = atoi(argv[1]);
  static const size_t fallback[] = {32, 128, 256, 512, 600, 1024, 2048, 4096};
  const int given = argc > 2 ? argc - 2 : 0;
  const int count = given ? given : (int)(sizeof fallback / sizeof fallback[0]);
  if (threads < 1) {
    fprintf(stderr, "usage: host-read [threads] [MiB ...]\n");
    return 2;
  }
  printf("threads %d\n%8s %10s %10s\n", threads, "MiB", "best GB/s", "median");
  for (int i = 0; i < count; i++) {
    const size_t mib = given ? (size_t)strtoull(argv[2 + i], NULL, 10) : fallback[i];
    double gbs[2];
    if (mib == 0 || !measure(threads, mib, gbs)) {
      fprintf(stderr, "host-read: %zu MiB could not be measured\n", mib);
      return 1;
    }
    printf("%8zu %10.1f %10.1f\n", mib, gbs[0], gbs[1]);
    fflush(stdout);
  }
  return 0;
}
