/* The measurement core (MEASURING.md): defaults, the floor F, random operands, the sampled-row
 * oracle check shared by every mode, and the CPU timing; the GPU half is in cuda-measure.c. */
#include "measure.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache-size.h"
#include "cpu-count.h"
#include "dispatch.h"

/* A CPU sample should last about this long, so that the clock's resolution and one-off
 * interruptions stay small against it: short calls are repeated inside one sample. */
#define MEASURE_HOST_SAMPLE_S 2e-3
#define MEASURE_HOST_MAX_INNER 1000000

#define MEASURE_MAX_ORACLE_THREADS 32

void bf16fp32__measure_defaults(bf16fp32__measure_opts *o) {
  memset(o, 0, sizeof *o);
  o->calls_per_graph = BF16FP32__DEVICE_PROTOCOL_CALLS;
  o->replays = 7;
  o->warmup = 2;
  o->rotate_bytes = (size_t)512 << 20; /* >= 400 MB of distinct copies */
  o->check_rows = 8;
  o->seed = 0x5eedf00dULL;
}

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* 16 random bits u give (u + 0.5) / 65536 - 0.5: uniform in (-0.5, 0.5), never zero (the
 * smallest magnitude is 2^-17, which bf16 holds). */
static uint16_t random_bf16(uint32_t u16) {
  float f = ((float)u16 + 0.5f) * (1.0f / 65536.0f) - 0.5f;
  return bf16fp32__float_to_bf16(f);
}

void bf16fp32__fill_random_bf16(uint16_t *p, size_t count, uint64_t seed) {
  uint64_t s = seed ^ 0x6a09e667f3bcc909ULL;
  size_t i = 0;
  while (i + 4 <= count) {
    uint64_t r = splitmix64(&s);
    p[i++] = random_bf16((uint32_t)(r & 0xffff));
    p[i++] = random_bf16((uint32_t)((r >> 16) & 0xffff));
    p[i++] = random_bf16((uint32_t)((r >> 32) & 0xffff));
    p[i++] = random_bf16((uint32_t)(r >> 48));
  }
  if (i < count) {
    uint64_t r = splitmix64(&s);
    for (; i < count; i++, r >>= 16) p[i] = random_bf16((uint32_t)(r & 0xffff));
  }
}

void bf16fp32__poison_f32(float *p, size_t count) {
  uint32_t bits = BF16FP32__POISON_BITS;
  for (size_t i = 0; i < count; i++) memcpy(&p[i], &bits, sizeof bits);
}

/* --- the sampled-row oracle --- */

typedef struct oracle_job {
  const bf16fp32__check_ref *r;
  const uint16_t *x, *w;
  int64_t ldx, ldw;
  int first, last; /* sampled rows [first, last) */
} oracle_job;

static void *oracle_rows(void *arg) {
  const oracle_job *j = (const oracle_job *)arg;
  const bf16fp32__check_ref *r = j->r;
  for (int i = j->first; i < j->last; i++)
    bf16fp32__oracle(1, r->n, r->k, j->x + r->row[i] * j->ldx, j->ldx, j->w, j->ldw,
                     r->ref + (size_t)i * (size_t)r->n, r->absdot + (size_t)i * (size_t)r->n);
  return NULL;
}

bf16fp32_status bf16fp32__check_ref_init(bf16fp32__check_ref *r, int64_t m, int64_t n, int64_t k,
                                         const uint16_t *x, int64_t ldx, const uint16_t *w,
                                         int64_t ldw, int check_rows, uint64_t seed) {
  memset(r, 0, sizeof *r);
  r->m = m;
  r->n = n;
  r->k = k;
  int rows = (check_rows <= 0 || m <= check_rows) ? (int)m : check_rows;
  if (rows < 2 && m >= 2) rows = 2; /* the first row and the last, always */
  if (m < 1 || n < 1 || k < 1 || (check_rows <= 0 && m > 0x7fffffff))
    return bf16fp32__fail(BF16FP32_BAD_SIZE, "check_ref_init: m=%lld n=%lld k=%lld",
                          (long long)m, (long long)n, (long long)k);
  r->row = (int64_t *)malloc((size_t)rows * sizeof *r->row);
  r->ref = (double *)malloc((size_t)rows * (size_t)n * sizeof *r->ref);
  r->absdot = (double *)malloc((size_t)rows * (size_t)n * sizeof *r->absdot);
  if (!r->row || !r->ref || !r->absdot) {
    bf16fp32__check_ref_free(r);
    return bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "check_ref_init: %d rows of %lld", rows,
                          (long long)n);
  }
  r->rows = rows;
  if (rows == m) {
    for (int i = 0; i < rows; i++) r->row[i] = i;
  } else {
    /* First and last row (edge tiles), and one row in each of rows-2 equal strips between. */
    uint64_t s = seed ^ 0xbb67ae8584caa73bULL;
    r->row[0] = 0;
    r->row[rows - 1] = m - 1;
    int64_t inner = m - 2;
    for (int i = 1; i < rows - 1; i++) {
      int64_t lo = 1 + inner * (i - 1) / (rows - 2);
      int64_t hi = 1 + inner * i / (rows - 2); /* exclusive, > lo since m > rows */
      int64_t span = hi - lo > 0 ? hi - lo : 1;
      r->row[i] = lo + (int64_t)(splitmix64(&s) % (uint64_t)span);
    }
  }
  int threads = bf16fp32__usable_cpus();
  if (threads > MEASURE_MAX_ORACLE_THREADS) threads = MEASURE_MAX_ORACLE_THREADS;
  if (threads > rows) threads = rows;
  /* Small problems: threads would cost more than they save. */
  if ((double)rows * (double)n * (double)k < 4e6) threads = 1;
  oracle_job jobs[MEASURE_MAX_ORACLE_THREADS];
  pthread_t tid[MEASURE_MAX_ORACLE_THREADS];
  bool started[MEASURE_MAX_ORACLE_THREADS] = {false};
  for (int t = 0; t < threads; t++) {
    jobs[t] = (oracle_job){r, x, w, ldx, ldw, rows * t / threads, rows * (t + 1) / threads};
    if (t == 0) continue; /* this thread does the first share */
    started[t] = pthread_create(&tid[t], NULL, oracle_rows, &jobs[t]) == 0;
    if (!started[t]) oracle_rows(&jobs[t]); /* no thread: do that share here */
  }
  oracle_rows(&jobs[0]);
  for (int t = 1; t < threads; t++)
    if (started[t]) pthread_join(tid[t], NULL);
  return BF16FP32_OK;
}

void bf16fp32__check_ref_free(bf16fp32__check_ref *r) {
  if (!r) return;
  free(r->row);
  free(r->ref);
  free(r->absdot);
  memset(r, 0, sizeof *r);
}

void bf16fp32__flip_signs(uint16_t *p, size_t count) {
  for (size_t i = 0; i < count; i++) p[i] ^= 0x8000u;
}

void bf16fp32__flipped_copies(size_t copies, size_t *x_copy, size_t *w_copy) {
  *x_copy = copies >= 2 ? copies - 1 : 0;
  *w_copy = copies >= 3 ? copies - 2 : 0;
}

/* The check against sign x the oracle (+1, or -1 for a flipped copy: exact, as negation is). */
static void compare_signed(const bf16fp32__check_ref *r, const float *out, int64_t ldo,
                           double sign, bf16fp32__check_result *res);

void bf16fp32__check_ref_compare(const bf16fp32__check_ref *r, const float *out, int64_t ldo,
                                 bf16fp32__check_result *res) {
  compare_signed(r, out, ldo, 1.0, res);
}

void bf16fp32__check_ref_compare_flipped(const bf16fp32__check_ref *r, const float *out,
                                         int64_t ldo, bf16fp32__check_result *res) {
  compare_signed(r, out, ldo, -1.0, res);
}

static void compare_signed(const bf16fp32__check_ref *r, const float *out, int64_t ldo,
                           double sign, bf16fp32__check_result *res) {
  memset(res, 0, sizeof *res);
  res->worst_row = res->worst_col = -1;
  const uint32_t poison = BF16FP32__POISON_BITS;
  for (int64_t i = 0; i < r->m; i++) {
    const float *row = out + i * ldo;
    for (int64_t j = 0; j < r->n; j++) {
      uint32_t bits;
      memcpy(&bits, &row[j], sizeof bits);
      res->unwritten += bits == poison;
    }
  }
  for (int s = 0; s < r->rows; s++) {
    const float *row = out + r->row[s] * ldo;
    const double *refs = r->ref + (size_t)s * (size_t)r->n;
    const double *ad = r->absdot + (size_t)s * (size_t)r->n;
    for (int64_t j = 0; j < r->n; j++) {
      const double ref = sign * refs[j];
      if (!bf16fp32__within_bound(row[j], ref, ad[j], r->k)) res->violations++;
      bf16fp32__rounding_add(&res->rounding, row[j], ref);
      if (!isfinite(ref)) continue;
      double bound = bf16fp32__error_bound(r->k, ad[j]);
      double err = fabs((double)row[j] - ref);
      double ratio = bound > 0 ? err / bound : (err > 0 ? INFINITY : 0.0);
      if (isnan(ratio)) ratio = INFINITY; /* a NaN where a number was due */
      if (ratio > res->worst_ratio || res->worst_row < 0) {
        if (ratio > res->worst_ratio) res->worst_ratio = ratio;
        res->worst_row = r->row[s];
        res->worst_col = j;
      }
    }
  }
}

int bf16fp32__check_ok(const bf16fp32__check_result *res, char *msg, size_t len) {
  const bool rounded = bf16fp32__rounding_seen(&res->rounding);
  if (res->violations == 0 && res->unwritten == 0 && !rounded) {
    if (msg && len) msg[0] = '\0';
    return 1;
  }
  if (rounded && res->violations == 0 && res->unwritten == 0 && msg && len)
    snprintf(msg, len,
             "wrong result: stored with fewer significand bits than fp32 (%lld of %lld checked "
             "elements whose values need the low 8 bits have them clear)",
             (long long)res->rounding.cleared, (long long)res->rounding.needing);
  else if (msg && len)
    snprintf(msg, len,
             "wrong result: %lld checked elements beyond the bound (worst %.3g x bound at "
             "[%lld,%lld]), %lld elements left unwritten",
             (long long)res->violations, res->worst_ratio, (long long)res->worst_row,
             (long long)res->worst_col, (long long)res->unwritten);
  return 0;
}

/* --- CPU timing --- */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

size_t bf16fp32__host_rotate_bytes_for(size_t cache_bytes, size_t memory_bytes) {
  size_t bytes = 2 * cache_bytes;
  if (memory_bytes && bytes > memory_bytes / 8) bytes = memory_bytes / 8;
  return bytes > BF16FP32__HOST_ROTATE_BYTES ? bytes : BF16FP32__HOST_ROTATE_BYTES;
}

size_t bf16fp32__host_rotate_bytes(void) {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const size_t memory = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
  return bf16fp32__host_rotate_bytes_for(bf16fp32__llc_bytes("/sys/devices/system/cpu"), memory);
}

size_t bf16fp32__host_copies(size_t bytes_per_copy) {
  size_t copies = bf16fp32__host_rotate_bytes() / (bytes_per_copy ? bytes_per_copy : 1) + 1;
  return copies > BF16FP32__HOST_MAX_COPIES ? BF16FP32__HOST_MAX_COPIES : copies;
}

int bf16fp32__device_graph_calls(size_t bytes_per_copy, int calls) {
  if (calls < BF16FP32__DEVICE_PROTOCOL_CALLS) return calls;
  const size_t per = bytes_per_copy ? bytes_per_copy : 1;
  const size_t need = (BF16FP32__DEVICE_COLD_BYTES + per - 1) / per;
  if (need <= (size_t)calls) return calls;
  return need < BF16FP32__DEVICE_MAX_CALLS ? (int)need : BF16FP32__DEVICE_MAX_CALLS;
}

double bf16fp32__median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void bf16fp32__candidate_times(bf16fp32__candidate *c, double *samples, int n, double unit_us,
                               int calls) {
  const double per_call = unit_us / (calls > 0 ? calls : 1);
  c->median_us = per_call * bf16fp32__median(samples, n); /* sorts */
  c->min_us = per_call * samples[0];
  c->max_us = per_call * samples[n - 1];
}

void bf16fp32__candidate_rotated(bf16fp32__candidate *c, bf16fp32_location where, size_t bytes) {
  c->rotated_bytes = bytes;
  c->warm = bytes < (where == BF16FP32_DEVICE ? BF16FP32__DEVICE_COLD_BYTES
                                               : bf16fp32__host_rotate_bytes());
}

static void cand_reset(bf16fp32__candidate *c) {
  c->rotated_bytes = 0;
  c->warm = 0;
  c->status = BF16FP32_OK;
  c->median_us = c->min_us = c->max_us = -1.0;
  c->worst_ratio = 0.0;
  c->wrong = 0;
  c->unwritten = 0;
  c->violations = 0;
  c->detail[0] = '\0';
}

void bf16fp32__candidate_fail(bf16fp32__candidate *c, bf16fp32_status s) {
  c->status = s;
  c->median_us = c->min_us = c->max_us = -1.0;
  const char *e = bf16fp32_last_error();
  snprintf(c->detail, sizeof c->detail, "%s%s%s", bf16fp32_status_name(s), e && *e ? ": " : "",
           e ? e : "");
}

void bf16fp32__candidate_wrong(bf16fp32__candidate *c, const char *why) {
  c->wrong = 1;
  c->status = BF16FP32_INTERNAL;
  c->median_us = -1.0;
  snprintf(c->detail, sizeof c->detail, "%s", why);
}

void bf16fp32__candidate_record_check(bf16fp32__candidate *c, const bf16fp32__check_result *res) {
  if (res->worst_ratio > c->worst_ratio) c->worst_ratio = res->worst_ratio;
  c->unwritten += res->unwritten;
  c->violations += res->violations;
  char msg[200];
  if (!bf16fp32__check_ok(res, msg, sizeof msg)) bf16fp32__candidate_wrong(c, msg);
}

static bf16fp32_status measure_host(int64_t m, int64_t n, int64_t k, bf16fp32__candidate *cands,
                                    int count, const bf16fp32__measure_opts *opt) {
  bf16fp32_status st = BF16FP32_OK;
  bf16fp32__check_ref ref = {0};
  const int replays = opt->replays > 0 ? opt->replays : 1;
  const size_t xn = (size_t)m * (size_t)k, wn = (size_t)n * (size_t)k, on = (size_t)m * (size_t)n;
  const bf16fp32__host_operands *given = opt->host;
  if (given && (!given->x || !given->w || !given->ref || given->copies < 1 ||
                given->xstride < xn || given->wstride < wn || given->ref->m != m ||
                given->ref->n != n || given->ref->k != k))
    return bf16fp32__fail(BF16FP32_BAD_SIZE, "measure: the caller's host operands are not of "
                          "%lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
  /* elements between copies */
  const size_t xstride = given ? given->xstride : (xn * 2 + 63) / 64 * 32;
  const size_t wstride = given ? given->wstride : (wn * 2 + 63) / 64 * 32;
  const size_t copies = given ? given->copies : bf16fp32__host_copies(2 * (xstride + wstride));
  uint16_t *own_x = given ? NULL : (uint16_t *)aligned_alloc(64, copies * xstride * 2);
  uint16_t *own_w = given ? NULL : (uint16_t *)aligned_alloc(64, copies * wstride * 2);
  const uint16_t *x = given ? given->x : own_x, *w = given ? given->w : own_w;
  const bf16fp32__check_ref *check = given ? given->ref : &ref;
  float *out = (float *)aligned_alloc(64, (on * 4 + 63) / 64 * 64);
  /* + 1: count may be 0, and calloc(0) may return NULL (as the device side allocates). */
  int *inner = (int *)calloc((size_t)count + 1, sizeof *inner);
  double *samples = (double *)calloc((size_t)count * (size_t)replays + 1, sizeof *samples);
  bf16fp32__call *calls = (bf16fp32__call *)calloc(copies, sizeof *calls);
  size_t next = 0; /* the copy the next timed call uses */
  if (!x || !w || !out || !inner || !samples || !calls) {
    st = bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "measure: host operands for %lldx%lldx%lld",
                        (long long)m, (long long)n, (long long)k);
    goto cleanup;
  }
  /* The caller's copies (the CPU baseline's) come with the ones it flipped. */
  size_t x_flipped = given ? given->x_flipped : 0, w_flipped = given ? given->w_flipped : 0;
  if (!given) {
    bf16fp32__fill_random_bf16(own_x, xn, opt->seed);
    bf16fp32__fill_random_bf16(own_w, wn, opt->seed + 1);
    BF16FP32__TRY(bf16fp32__check_ref_init(&ref, m, n, k, x, k, w, k, opt->check_rows, opt->seed));
    for (size_t i = 1; i < copies; i++) {
      memcpy(own_x + i * xstride, own_x, xn * 2);
      memcpy(own_w + i * wstride, own_w, wn * 2);
    }
    bf16fp32__flipped_copies(copies, &x_flipped, &w_flipped);
    if (x_flipped) bf16fp32__flip_signs(own_x + x_flipped * xstride, xn);
    if (w_flipped) bf16fp32__flip_signs(own_w + w_flipped * wstride, wn);
  }
  bf16fp32__call call;
  memset(&call, 0, sizeof call);
  call.shape = bf16fp32__make_shape(BF16FP32_HOST, m, n, k, k, k, n, x, w, out);
  call.x = x;
  call.w = w;
  call.out = out;
  for (size_t i = 0; i < copies; i++) {
    calls[i] = call;
    calls[i].x = x + i * xstride;
    calls[i].w = w + i * wstride;
  }

  for (int c = 0; c < count; c++) {
    bf16fp32__candidate *cd = &cands[c];
    cand_reset(cd);
    bf16fp32_status s = BF16FP32_OK;
    if (cd->prewarm) s = cd->prewarm(cd->user, &call.shape, NULL);
    if (s != BF16FP32_OK) {
      bf16fp32__candidate_fail(cd, s);
      continue;
    }
    bf16fp32__poison_f32(out, on);
    s = cd->run(cd->user, &call);
    if (s != BF16FP32_OK) {
      bf16fp32__candidate_fail(cd, s);
      continue;
    }
    bf16fp32__check_result res;
    bf16fp32__check_ref_compare(check, out, n, &res);
    bf16fp32__candidate_record_check(cd, &res);
    if (cd->wrong) continue;
    /* Warm-up runs, the last one timed to choose how many calls make one sample. */
    double t = 0;
    int warm = opt->warmup > 0 ? opt->warmup : 1;
    for (int i = 0; i < warm && s == BF16FP32_OK; i++) {
      double t0 = now_s();
      s = cd->run(cd->user, &calls[next++ % copies]);
      t = now_s() - t0;
    }
    if (s != BF16FP32_OK) {
      bf16fp32__candidate_fail(cd, s);
      continue;
    }
    double want = MEASURE_HOST_SAMPLE_S / (t > 1e-9 ? t : 1e-9);
    inner[c] = want < 1 ? 1 : want > MEASURE_HOST_MAX_INNER ? MEASURE_HOST_MAX_INNER : (int)ceil(want);
  }

  /* Rounds: every candidate once per round, the first one rotating (ratios in one run). */
  for (int r = 0; r < replays; r++) {
    for (int j = 0; j < count; j++) {
      int c = (r + j) % count;
      bf16fp32__candidate *cd = &cands[c];
      if (cd->status != BF16FP32_OK) continue;
      /* One untimed call first, as MEASURING.md's untimed replay before each timed one: the
       * candidate before (cpu-ref's single thread, oneDNN's) may have let this one's pool
       * threads fall asleep, and waking them costs 250-700 us, a fifth of a sample. */
      bf16fp32_status s = cd->run(cd->user, &calls[next++ % copies]);
      double t0 = now_s();
      for (int i = 0; i < inner[c] && s == BF16FP32_OK; i++) s = cd->run(cd->user, &calls[next++ % copies]);
      double t = now_s() - t0;
      if (s != BF16FP32_OK) {
        bf16fp32__candidate_fail(cd, s);
        continue;
      }
      samples[(size_t)c * (size_t)replays + (size_t)r] = t / inner[c];
    }
  }
  for (int c = 0; c < count; c++) {
    bf16fp32__candidate *cd = &cands[c];
    if (cd->status != BF16FP32_OK) continue;
    /* The timed runs wrote out last: it must still pass (same call, same operands); and so must
     * the flipped copies' calls, computed from their own operands. */
    const bf16fp32__call *checked[3] = {&call, x_flipped ? &calls[x_flipped] : NULL,
                                        w_flipped ? &calls[w_flipped] : NULL};
    for (int i = 0; i < 3 && cd->status == BF16FP32_OK && !cd->wrong; i++) {
      if (!checked[i]) continue;
      bf16fp32__check_result res;
      bf16fp32__poison_f32(out, on);
      bf16fp32_status s = cd->run(cd->user, checked[i]);
      if (s != BF16FP32_OK) {
        bf16fp32__candidate_fail(cd, s);
        break;
      }
      if (i == 0) bf16fp32__check_ref_compare(check, out, n, &res);
      else bf16fp32__check_ref_compare_flipped(check, out, n, &res);
      bf16fp32__candidate_record_check(cd, &res);
    }
    if (cd->status != BF16FP32_OK || cd->wrong) continue;
    bf16fp32__candidate_times(cd, samples + (size_t)c * (size_t)replays, replays, 1e6, 1);
    bf16fp32__candidate_rotated(cd, BF16FP32_HOST, copies * (xstride + wstride) * 2);
  }

cleanup:
  bf16fp32__check_ref_free(&ref);
  free(own_x);
  free(own_w);
  free(out);
  free(inner);
  free(samples);
  free(calls);
  return st;
}

/* A measure that failed as a whole (no memory for the operands, a CUDA error) leaves no
 * candidate at OK without a time: each takes its status and last error. */
static bf16fp32_status fail_untimed(bf16fp32__candidate *cands, int count, bf16fp32_status st) {
  if (st != BF16FP32_OK)
    for (int c = 0; c < count; c++)
      if (cands[c].status == BF16FP32_OK && cands[c].median_us < 0)
        bf16fp32__candidate_fail(&cands[c], st);
  return st;
}

bf16fp32_status bf16fp32__measure(bf16fp32_location where, int64_t m, int64_t n, int64_t k,
                                  bf16fp32__candidate *cands, int count,
                                  const bf16fp32__measure_opts *opt) {
  bf16fp32__measure_opts defaults;
  if (!opt) {
    bf16fp32__measure_defaults(&defaults);
    opt = &defaults;
  }
  if (count < 0 || (count > 0 && !cands))
    return bf16fp32__fail(BF16FP32_NULL_POINTER, "measure: no candidates");
  if (m < 1 || n < 1 || k < 1)
    return bf16fp32__fail(BF16FP32_BAD_SIZE, "measure: m=%lld n=%lld k=%lld", (long long)m,
                          (long long)n, (long long)k);
  for (int c = 0; c < count; c++) {
    if (!cands[c].run) return bf16fp32__fail(BF16FP32_NULL_POINTER, "measure: candidate %d", c);
    cand_reset(&cands[c]);
  }
  if (where == BF16FP32_HOST)
    return fail_untimed(cands, count, measure_host(m, n, k, cands, count, opt));
#ifdef BF16FP32_HAVE_CUDA
  return fail_untimed(cands, count, bf16fp32__measure_device(m, n, k, cands, count, opt));
#else
  return fail_untimed(cands, count,
                      bf16fp32__fail(BF16FP32_NO_DEVICE, "measure: this build has no CUDA"));
#endif
}

bf16fp32_status bf16fp32__time_graphs_on(bf16fp32__graph_job *jobs, int count, int warmup,
                                         int replays, void *stream) {
  if (count < 0 || (count > 0 && !jobs))
    return bf16fp32__fail(BF16FP32_NULL_POINTER, "time_graphs: no jobs");
  for (int j = 0; j < count; j++) {
    jobs[j].status = BF16FP32_OK;
    jobs[j].median_ms = -1.0;
    jobs[j].detail[0] = '\0';
    if (!jobs[j].record) return bf16fp32__fail(BF16FP32_NULL_POINTER, "time_graphs: job %d", j);
  }
#ifdef BF16FP32_HAVE_CUDA
  return bf16fp32__time_graphs_device(jobs, count, warmup, replays, stream);
#else
  (void)warmup;
  (void)replays;
  (void)stream;
  for (int j = 0; j < count; j++) jobs[j].status = BF16FP32_NO_DEVICE;
  return bf16fp32__fail(BF16FP32_NO_DEVICE, "time_graphs: this build has no CUDA");
#endif
}

