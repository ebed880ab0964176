/* The host measure (bf16fp32__measure at HOST) with a fake candidate that copies a result
 * computed once: what operands its timed calls are given, a wrong or unwritten output found, a
 * slow call's time, failures at each stage, the rounds' order, a candidate measured twice; the
 * copies' cap; operands the caller made; the GPU graph's calls; a device measure with no GPU; the random operands, the
 * sampled rows, the median. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device.h"
#include "measure.h"
#include "oracle.h"
#include "testing.h"

enum { FAKE_MAX_SEEN = 4096 };

/* Writes the first call's oracle result into every call's output, and records the distinct
 * weight copies it was given. Planted faults: bump added to the last element, writes only on
 * the first call (once), a sleep of sleep_us per call, status `fail` returned by call number
 * fail_at (from 1) or by its prewarm, and by every call after give_up_after calls. Each call
 * appends id to *order (when set). */
typedef struct fake {
  float *result;
  const uint16_t *seen[FAKE_MAX_SEEN];
  int distinct;
  float bump;
  int once, calls;
  long sleep_us;
  int runs; /* every call */
  int fail_at, fail_prewarm, give_up_after;
  bf16fp32_status fail;
  int inexact_first; /* the first call's last element off by half its bound */
  int round_bf16;    /* every result rounded to bf16 before it is stored */
  int stale;         /* the first call's result for every call (as if from cached operands) */
  uint16_t x0, w0;   /* the first call's first x and w: a copy's sign flips show against them */
  double last_bound;
  char id;
  char *order;
} fake;

static void fake_note(fake *f, const uint16_t *w) {
  for (int i = 0; i < f->distinct; i++)
    if (f->seen[i] == w) return;
  if (f->distinct < FAKE_MAX_SEEN) f->seen[f->distinct++] = w;
}

static bf16fp32_status fake_run(void *user, const bf16fp32__call *call) {
  fake *f = user;
  const bf16fp32__shape *s = &call->shape;
  const size_t on = (size_t)s->m * (size_t)s->n;
  if (!f->result) {
    double *ref = malloc(on * sizeof *ref), *absdot = malloc(on * sizeof *absdot);
    f->result = malloc(on * sizeof *f->result);
    if (!ref || !absdot || !f->result) return BF16FP32_OUT_OF_MEMORY;
    bf16fp32__oracle(s->m, s->n, s->k, call->x, s->ldx, call->w, s->ldw, ref, absdot);
    for (size_t i = 0; i < on; i++) f->result[i] = (float)ref[i];
    f->last_bound = bf16fp32__error_bound(s->k, absdot[on - 1]);
    f->x0 = call->x[0], f->w0 = call->w[0];
    free(ref);
    free(absdot);
  }
  fake_note(f, call->w);
  f->runs++;
  if (f->order) strncat(f->order, &f->id, 1);
  if (f->runs == f->fail_at || (f->give_up_after && f->runs > f->give_up_after)) return f->fail;
  if (f->sleep_us) nanosleep(&(struct timespec){f->sleep_us / 1000000, f->sleep_us % 1000000 * 1000}, NULL);
  if (f->once && f->calls++ > 0) return BF16FP32_OK;
  memcpy(call->out, f->result, on * sizeof *f->result);
  /* a copy with x or w negated (the measure's flipped copies): the result negated, unless stale */
  const bool negated = ((call->x[0] ^ f->x0) ^ (call->w[0] ^ f->w0)) & 0x8000u;
  for (size_t i = 0; negated && !f->stale && i < on; i++) call->out[i] = -call->out[i];
  call->out[on - 1] += f->bump;
  for (size_t i = 0; f->round_bf16 && i < on; i++)
    call->out[i] = bf16fp32__bf16_to_float(bf16fp32__float_to_bf16(call->out[i]));
  if (f->inexact_first && f->runs == 1) call->out[on - 1] += (float)(0.5 * f->last_bound);
  return BF16FP32_OK;
}

static bf16fp32_status fake_prewarm(void *user, const bf16fp32__shape *s, void *stream) {
  (void)s, (void)stream;
  const fake *f = user;
  return f->fail_prewarm ? f->fail : BF16FP32_OK;
}

/* Options of the fake's measures: replays, one warm-up run, 8 rows checked. */
static bf16fp32__measure_opts fake_opts(int replays) {
  bf16fp32__measure_opts o;
  bf16fp32__measure_defaults(&o);
  o.replays = replays;
  o.warmup = 1;
  o.check_rows = 8;
  return o;
}

/* Measures c (a fake's candidate, measured before or not) alone at HOST (m, n, k). */
static void measure_again(bf16fp32__candidate *c, int64_t m, int64_t n, int64_t k, int replays) {
  const bf16fp32__measure_opts o = fake_opts(replays);
  CHECK_OK(bf16fp32__measure(BF16FP32_HOST, m, n, k, c, 1, &o));
}

/* Measures the fake alone at HOST (m, n, k). */
static bf16fp32__candidate measure_fake(fake *f, int64_t m, int64_t n, int64_t k, int replays) {
  bf16fp32__candidate c = {.name = "fake", .run = fake_run, .prewarm = fake_prewarm, .user = f};
  measure_again(&c, m, n, k, replays);
  return c;
}

/* The timed calls read as many bytes of distinct operand copies as measure.h promises, so that
 * their weights come from memory: at DSV4's flash.router (256 x 4096, 2 MiB of weights) and
 * M = 1 the copies were capped at 64, 128 MiB in all, which the development machine's 300 MiB
 * L3 partly held (a streaming read: 23-26 GB/s over 128 MiB, 15-17 over 256 MiB and 1 GiB).
 * Where calls are too slow to go round (an emulator), each must have had a copy of its own. */
static void test_host_rotation(void) {
  enum { M = 1, N = 256, K = 4096 };
  fake f = {0};
  const bf16fp32__candidate c = measure_fake(&f, M, N, K, 1);
  CHECK(c.status == BF16FP32_OK && c.median_us > 0);
  const double copy_bytes = 2.0 * ((double)M * K + (double)N * K);
  const int promised = (int)ceil((double)bf16fp32__host_rotate_bytes() / copy_bytes);
  /* copy 0 serves the first timed call and the checks before and after the timed calls */
  const int want = f.runs - 2 < promised ? f.runs - 2 : promised;
  EXPECT(f.distinct >= want,
         "%d distinct copies of %.0f bytes in %d calls: %.0f MiB, under the %zu MiB promised",
         f.distinct, copy_bytes, f.runs, f.distinct * copy_bytes / (1 << 20),
         bf16fp32__host_rotate_bytes() >> 20);
  EXPECT(!c.warm && c.rotated_bytes >= bf16fp32__host_rotate_bytes(), "rotated %zu bytes, warm %d",
         c.rotated_bytes, c.warm);
  free(f.result);
  /* a toy's copies reach the cap first: its time is marked warm, with the bytes it rotated */
  fake toy = {0};
  const bf16fp32__candidate t = measure_fake(&toy, 1, 16, 64, 1);
  EXPECT(t.status == BF16FP32_OK && t.warm && t.rotated_bytes > 0 &&
             t.rotated_bytes < bf16fp32__host_rotate_bytes(),
         "toy: rotated %zu bytes, warm %d", t.rotated_bytes, t.warm);
  free(toy.result);
}

/* A wrong element in the last row (an edge tile), with more rows than are checked: the last row
 * is always among them; the candidate is wrong with status INTERNAL and no time, and the worst
 * ratio and its place are the wrong element's. */
static void test_wrong_last_row(void) {
  enum { M = 16, N = 8, K = 32 };
  fake f = {.bump = 1.0f};
  const bf16fp32__candidate c = measure_fake(&f, M, N, K, 1);
  CHECK(c.wrong && c.status == BF16FP32_INTERNAL && c.median_us < 0 && c.violations == 1);
  EXPECT(c.worst_ratio > 1 && strstr(c.detail, "[15,7]"), "worst %g: %s", c.worst_ratio, c.detail);
  EXPECT(f.runs == 1, "a wrong candidate is not run again to be timed: %d calls", f.runs);
  free(f.result);
}

/* The worst error of a candidate is the worst of its checks: half the bound in the first
 * call's output, none in the last, passes with a worst ratio of about 0.5. */
static void test_worst_of_checks(void) {
  fake f = {.inexact_first = 1};
  const bf16fp32__candidate c = measure_fake(&f, 4, 8, 32, 1);
  EXPECT(c.status == BF16FP32_OK && c.worst_ratio > 0.4 && c.worst_ratio < 1, "%s, worst %g",
         bf16fp32_status_name(c.status), c.worst_ratio);
  free(f.result);
}

/* Results rounded to bf16 before they are stored: within the element-wise bound at K = 7168,
 * and wrong all the same (nearly every value needs fp32's low bits, none has them). */
static void test_stored_short(void) {
  fake f = {.round_bf16 = 1};
  const bf16fp32__candidate c = measure_fake(&f, 8, 64, 7168, 1);
  EXPECT(c.wrong && c.status == BF16FP32_INTERNAL && c.violations == 0 &&
             strstr(c.detail, "fewer significand bits"),
         "bf16 results: wrong %d, %lld beyond the bound: %s", c.wrong, (long long)c.violations,
         c.detail);
  free(f.result);
}

/* A candidate that computes every call from its first call's operands (a stale pointer, the
 * operands in cache) passes the check of copy 0, and is wrong in a flipped copy's. */
static void test_stale_operands(void) {
  fake f = {.stale = 1};
  const bf16fp32__candidate c = measure_fake(&f, 4, 8, 32, 1);
  EXPECT(c.wrong && c.status == BF16FP32_INTERNAL && c.violations > 0 && c.median_us < 0,
         "stale operands: wrong %d, %lld beyond the bound, %g us: %s", c.wrong,
         (long long)c.violations, c.median_us, c.detail);
  free(f.result);
  fake honest = {0};
  const bf16fp32__candidate h = measure_fake(&honest, 4, 8, 32, 1);
  EXPECT(h.status == BF16FP32_OK && !h.wrong, "the same fake, honest: %s", h.detail);
  free(honest.result);
}

/* A candidate that writes its output on the first call only is wrong: the check after the timed
 * calls poisons the output again first. */
static void test_writes_once(void) {
  fake f = {.once = 1};
  const bf16fp32__candidate c = measure_fake(&f, 4, 8, 32, 1);
  EXPECT(c.wrong && c.unwritten == 4 * 8 && c.status == BF16FP32_INTERNAL, "wrong %d, unwritten %lld: %s",
         c.wrong, (long long)c.unwritten, c.detail);
  free(f.result);
}

/* A call longer than a sample (2 ms) is timed once per sample, in microseconds. */
static void test_slow_call_time(void) {
  fake f = {.sleep_us = 3000};
  const bf16fp32__candidate c = measure_fake(&f, 2, 8, 32, 3);
  EXPECT(c.status == BF16FP32_OK && isfinite(c.median_us) && c.median_us >= 3000 && c.median_us < 1e6,
         "a 3 ms call timed at %g us", c.median_us);
  free(f.result);
}

/* Operands the caller made (the bench's oneDNN cell): the timed calls walk exactly its copies,
 * and the checks use its oracle (one of other data makes the fake's result wrong), the copy it
 * flipped x in among them (a stale candidate is wrong there); operands of another M, N or K are
 * refused, and the candidate gets that status. */
static void test_host_operands(void) {
  enum { M = 2, N = 16, K = 64, COPIES = 3, XSTRIDE = M * K + 32, WSTRIDE = N * K + 32 };
  uint16_t *x = calloc(COPIES * XSTRIDE, 2), *w = calloc(COPIES * WSTRIDE, 2);
  CHECK(x && w);
  if (!x || !w) return;
  bf16fp32__fill_random_bf16(x, M * K, 7);
  bf16fp32__fill_random_bf16(w, N * K, 8);
  for (int i = 1; i < COPIES; i++) {
    memcpy(x + i * XSTRIDE, x, M * K * 2);
    memcpy(w + i * WSTRIDE, w, N * K * 2);
  }
  bf16fp32__flip_signs(x + (COPIES - 1) * XSTRIDE, M * K);
  bf16fp32__check_ref ref = {0}, other = {0}, small = {0}, narrow = {0}, short_k = {0};
  CHECK_OK(bf16fp32__check_ref_init(&ref, M, N, K, x, K, w, K, 0, 1));
  CHECK_OK(bf16fp32__check_ref_init(&other, M, N, K, w, K, w, K, 0, 1)); /* x replaced by w */
  CHECK_OK(bf16fp32__check_ref_init(&small, 1, N, K, x, K, w, K, 0, 1));
  CHECK_OK(bf16fp32__check_ref_init(&narrow, M, N / 2, K, x, K, w, K, 0, 1));
  CHECK_OK(bf16fp32__check_ref_init(&short_k, M, N, K / 2, x, K, w, K, 0, 1));
  bf16fp32__host_operands ops = {x, w, COPIES, XSTRIDE, WSTRIDE, &ref, COPIES - 1, 0};
  bf16fp32__measure_opts o = fake_opts(3);
  o.host = &ops;

  fake f = {0};
  bf16fp32__candidate c = {.name = "fake", .run = fake_run, .user = &f};
  CHECK_OK(bf16fp32__measure(BF16FP32_HOST, M, N, K, &c, 1, &o));
  int inside = f.distinct == COPIES;
  for (int i = 0; i < f.distinct; i++)
    inside &= f.seen[i] >= w && f.seen[i] < w + COPIES * WSTRIDE && (f.seen[i] - w) % WSTRIDE == 0;
  EXPECT(c.status == BF16FP32_OK && c.median_us > 0 && inside,
         "given operands: %s, %.3f us, %d copies seen (%d given), inside: %d",
         bf16fp32_status_name(c.status), c.median_us, f.distinct, COPIES, inside);
  free(f.result);

  fake stale = {.stale = 1};
  c.user = &stale;
  CHECK_OK(bf16fp32__measure(BF16FP32_HOST, M, N, K, &c, 1, &o));
  EXPECT(c.wrong && c.violations > 0, "given operands, a stale candidate: %s, %lld beyond the bound",
         bf16fp32_status_name(c.status), (long long)c.violations);
  free(stale.result);

  ops.ref = &other;
  fake g = {0};
  c.user = &g;
  CHECK_OK(bf16fp32__measure(BF16FP32_HOST, M, N, K, &c, 1, &o));
  EXPECT(c.wrong && c.status == BF16FP32_INTERNAL, "the given oracle unused: %s",
         bf16fp32_status_name(c.status));
  free(g.result);

  fake h = {0};
  c.user = &h;
  const bf16fp32__check_ref *others[] = {&small, &narrow, &short_k};
  for (int i = 0; i < 3; i++) {
    ops.ref = others[i];
    EXPECT(bf16fp32__measure(BF16FP32_HOST, M, N, K, &c, 1, &o) == BF16FP32_BAD_SIZE &&
               c.status == BF16FP32_BAD_SIZE && h.runs == 0,
           "operands of another M, N or K (%d): %s, %d runs", i, bf16fp32_status_name(c.status),
           h.runs);
  }
  bf16fp32__check_ref_free(&ref);
  bf16fp32__check_ref_free(&other);
  bf16fp32__check_ref_free(&small);
  bf16fp32__check_ref_free(&narrow);
  bf16fp32__check_ref_free(&short_k);
  free(x);
  free(w);
}

/* The copies are capped for toy shapes (the call table and the copying), at least 1 when huge. */
static void test_copies_cap(void) {
  CHECK(bf16fp32__host_copies(64) == BF16FP32__HOST_MAX_COPIES);
  CHECK(bf16fp32__host_copies(0) == BF16FP32__HOST_MAX_COPIES);
  CHECK(bf16fp32__host_copies(bf16fp32__host_rotate_bytes() * 2) == 1);
}

/* A GPU graph of the protocol's 200 calls takes more calls where 200 copies make under 400 MB:
 * a 64 x 96 toy's rotation was 2.5 MB, which L2 held. DSV4's smallest operands (the flash router
 * at M = 1, 2.1 MB with the measure's alignment) keep 200 calls; a quick run keeps its own. */
static void test_device_graph_calls(void) {
  const size_t router = 4096 * 2 + (size_t)256 * 4096 * 2 + 256 * 4, toy = 256 + 64 * 96 * 2 + 256;
  EXPECT(bf16fp32__device_graph_calls(router, 200) == 200, "router: %d calls",
         bf16fp32__device_graph_calls(router, 200));
  const int toy_calls = bf16fp32__device_graph_calls(toy, 200);
  EXPECT(toy_calls == BF16FP32__DEVICE_MAX_CALLS && (double)toy_calls * toy > 3 * (50 << 20),
         "toy: %d calls of %zu bytes", toy_calls, toy);
  const size_t mid = (size_t)100 << 10; /* 100 KiB: 400 MB in 3907 calls, under the cap */
  const int mid_calls = bf16fp32__device_graph_calls(mid, 200);
  EXPECT(mid_calls < BF16FP32__DEVICE_MAX_CALLS && (size_t)mid_calls * mid >= BF16FP32__DEVICE_COLD_BYTES &&
             (size_t)(mid_calls - 1) * mid < BF16FP32__DEVICE_COLD_BYTES,
         "100 KiB: %d calls", mid_calls);
  CHECK(bf16fp32__device_graph_calls(mid, 5000) == 5000); /* more asked for than needed */
  CHECK(bf16fp32__device_graph_calls(toy, 199) == 199);  /* below the protocol: as asked */
  CHECK(bf16fp32__device_graph_calls(0, 200) == BF16FP32__DEVICE_MAX_CALLS);
}

/* A device measure where no GPU can run it (a build without CUDA, or none present) fails as a
 * whole and leaves each candidate that status, untimed, with the reason. */
static void test_device_without_gpu(void) {
  if (bf16fp32__device_count() > 0) return; /* the fake reads host memory */
  fake f = {0};
  bf16fp32__candidate c[2] = {{.name = "a", .run = fake_run, .user = &f},
                              {.name = "b", .run = fake_run, .user = &f}};
  const bf16fp32_status st = bf16fp32__measure(BF16FP32_DEVICE, 4, 8, 32, c, 2, NULL);
  CHECK(st != BF16FP32_OK && f.runs == 0);
  for (int i = 0; i < 2; i++)
    EXPECT(c[i].status == st && c[i].median_us < 0 && strstr(c[i].detail, bf16fp32_status_name(st)),
           "%s: status %s, %g us, \"%s\"", c[i].name, bf16fp32_status_name(c[i].status),
           c[i].median_us, c[i].detail);
}

/* A candidate that fails at any stage (its prewarm, the checked call, a warm-up call, a round's
 * untimed or timed call) keeps that status with no time, and is not called again. */
static void test_failure_stages(void) {
  static const struct {
    int prewarm, fail_at; /* fail_at: 1 checked call, 2-3 warm-up, 4 untimed, 6 a timed call */
    bf16fp32_status fail;
  } stages[] = {{1, 0, BF16FP32_CUDA_ERROR}, {0, 1, BF16FP32_DECLINED}, {0, 2, BF16FP32_CUDA_ERROR},
                {0, 4, BF16FP32_CUDA_ERROR}, {0, 6, BF16FP32_NOT_PREWARMED}};
  for (size_t i = 0; i < sizeof stages / sizeof *stages; i++) {
    fake f = {.fail_prewarm = stages[i].prewarm, .fail_at = stages[i].fail_at,
              .fail = stages[i].fail};
    bf16fp32__candidate c = {.name = "fake", .run = fake_run, .prewarm = fake_prewarm, .user = &f};
    bf16fp32__measure_opts o = fake_opts(3);
    o.warmup = 2;
    CHECK_OK(bf16fp32__measure(BF16FP32_HOST, 4, 8, 32, &c, 1, &o));
    const bool untimed = c.median_us < 0 && c.min_us < 0 && c.max_us < 0;
    EXPECT(c.status == stages[i].fail && untimed && f.runs == stages[i].fail_at &&
               strstr(c.detail, bf16fp32_status_name(stages[i].fail)),
           "stage %zu: status %s, %g us, %d calls, \"%s\"", i, bf16fp32_status_name(c.status),
           c.median_us, f.runs, c.detail);
    free(f.result);
  }
}

/* The rounds: each candidate's timed call right after an untimed one of its own, and the first
 * candidate rotating from round to round. Calls of 3 ms are one to a sample. */
static void test_round_order(void) {
  char order[64] = "";
  fake a = {.sleep_us = 3000, .id = 'A', .order = order};
  fake b = {.sleep_us = 3000, .id = 'B', .order = order};
  bf16fp32__candidate c[2] = {{.name = "a", .run = fake_run, .user = &a},
                              {.name = "b", .run = fake_run, .user = &b}};
  const bf16fp32__measure_opts o = fake_opts(2);
  CHECK_OK(bf16fp32__measure(BF16FP32_HOST, 2, 8, 32, c, 2, &o));
  /* checked call and warm-up each, round 0 from a, round 1 from b, the checks after (copy 0
   * and the two flipped copies) */
  EXPECT(strcmp(order, "AABB" "AABB" "BBAA" "AAABBB") == 0, "calls in the order %s", order);
  free(a.result);
  free(b.result);
}

/* Each candidate gets its own samples, per call: of two measured together, the one whose calls
 * take 200 us (ten to a sample) is timed under 1 ms, the other at 3 ms or more. */
static void test_own_time_per_call(void) {
  fake slow = {.sleep_us = 3000}, fast = {.sleep_us = 200};
  bf16fp32__candidate c[2] = {{.name = "slow", .run = fake_run, .user = &slow},
                              {.name = "fast", .run = fake_run, .user = &fast}};
  const bf16fp32__measure_opts o = fake_opts(3);
  CHECK_OK(bf16fp32__measure(BF16FP32_HOST, 2, 8, 32, c, 2, &o));
  EXPECT(c[0].median_us >= 3000 && c[1].median_us > 0 && c[1].median_us < 1000,
         "3 ms calls timed at %g us, 200 us calls at %g us", c[0].median_us, c[1].median_us);
  free(slow.result);
  free(fast.result);
}

/* warmup 0 still times one warm-up call to size the samples: a 3 ms call is one to a sample
 * (the fake gives up after 50 calls, as a sample of 10^6 calls would never end): the checked
 * call, the warm-up, the lead-in and the timed call, and the three checks after. */
static void test_no_warmup(void) {
  fake f = {.sleep_us = 3000, .give_up_after = 50, .fail = BF16FP32_CUDA_ERROR};
  bf16fp32__candidate c = {.name = "fake", .run = fake_run, .user = &f};
  bf16fp32__measure_opts o = fake_opts(1);
  o.warmup = 0;
  CHECK_OK(bf16fp32__measure(BF16FP32_HOST, 2, 8, 32, &c, 1, &o));
  EXPECT(c.status == BF16FP32_OK && c.median_us >= 3000 && f.runs == 7, "%s, %g us, %d calls",
         bf16fp32_status_name(c.status), c.median_us, f.runs);
  free(f.result);
}

/* A candidate measured again (the tuner measures the same ones at every shape) starts afresh:
 * nothing of a wrong, declined or timed earlier measure stays. */
static void test_measured_again(void) {
  enum { M = 4, N = 8, K = 32 };
  fake f = {.bump = 1.0f};
  bf16fp32__candidate c = measure_fake(&f, M, N, K, 1);
  CHECK(c.wrong && c.violations == 1);
  f.bump = 0;
  measure_again(&c, M, N, K, 1);
  EXPECT(c.status == BF16FP32_OK && !c.wrong && c.violations == 0 && c.unwritten == 0 &&
             c.worst_ratio < 1 && c.median_us > 0 && !c.detail[0],
         "after a wrong measure: %s, wrong %d, %lld beyond, %lld unwritten, worst %g, %g us, %s",
         bf16fp32_status_name(c.status), c.wrong, (long long)c.violations, (long long)c.unwritten,
         c.worst_ratio, c.median_us, c.detail);
  f.once = 1, f.calls = 0; /* unwritten after the timed calls */
  measure_again(&c, M, N, K, 1);
  CHECK(c.wrong && c.unwritten == M * N && c.median_us < 0);
  f.once = 0;
  measure_again(&c, M, N, K, 1);
  EXPECT(c.status == BF16FP32_OK && c.unwritten == 0, "after an unwritten measure: %lld",
         (long long)c.unwritten);
  f.bump = 1.0f; /* timed, then wrong */
  measure_again(&c, M, N, K, 1);
  EXPECT(c.wrong && c.median_us < 0, "wrong after a timed measure: %g us", c.median_us);
  f.bump = 0, f.fail_at = 1, f.fail = BF16FP32_DECLINED, f.runs = 0;
  measure_again(&c, M, N, K, 1);
  CHECK(c.status == BF16FP32_DECLINED);
  f.fail_at = 0;
  measure_again(&c, M, N, K, 1);
  EXPECT(c.status == BF16FP32_OK && c.median_us > 0, "after a decline: %s",
         bf16fp32_status_name(c.status));
  free(f.result);
}

/* A failed candidate's times become unknown, whatever they were. */
static void test_candidate_fail(void) {
  bf16fp32__candidate c = {.name = "c", .median_us = 5, .min_us = 4, .max_us = 6};
  bf16fp32__candidate_fail(&c, BF16FP32_DECLINED);
  EXPECT(c.status == BF16FP32_DECLINED && c.median_us < 0 && c.min_us < 0 && c.max_us < 0 &&
             strncmp(c.detail, "DECLINED", 8) == 0,
         "%g %g %g \"%s\"", c.median_us, c.min_us, c.max_us, c.detail);
}

/* The median of an odd and an even count; a candidate's median, fastest and slowest per call. */
static void test_median_and_times(void) {
  double odd[] = {5, 1, 3}, even[] = {4, 1, 3, 2}, samples[] = {3, 1, 2};
  CHECK(bf16fp32__median(odd, 3) == 3);
  CHECK(bf16fp32__median(even, 4) == 2.5);
  bf16fp32__candidate c = {0};
  bf16fp32__candidate_times(&c, samples, 3, 1e3, 2); /* samples in ms, of 2 calls each */
  EXPECT(c.median_us == 1000 && c.min_us == 500 && c.max_us == 1500, "%g (%g to %g)", c.median_us,
         c.min_us, c.max_us);
}

/* The measure's operands: never zero, within [-0.5, 0.5], every element written (a count that
 * is no multiple of 4 too), no value repeating its neighbour's bits, the same for a seed and
 * not for another. */
static void test_random_operands(void) {
  enum { COUNT = (1 << 20) + 3 };
  uint16_t *p = testing_alloc(COUNT * sizeof *p), *q = testing_alloc(COUNT * sizeof *q);
  memset(p, 0xff, COUNT * sizeof *p); /* NaN: no random value */
  bf16fp32__fill_random_bf16(p, COUNT, 42);
  int bad = 0, repeats = 0;
  for (size_t i = 0; i < COUNT; i++) {
    const float v = bf16fp32__bf16_to_float(p[i]);
    bad += !(v != 0 && fabsf(v) <= 0.5f);
    repeats += i > 0 && p[i] == p[i - 1];
  }
  EXPECT(bad == 0 && repeats < COUNT / 20, "%d values zero, NaN or beyond 0.5; %d repeats", bad,
         repeats);
  bf16fp32__fill_random_bf16(q, COUNT, 42);
  CHECK(memcmp(p, q, COUNT * sizeof *p) == 0);
  bf16fp32__fill_random_bf16(q, COUNT, 43);
  CHECK(memcmp(p, q, COUNT * sizeof *p) != 0);
  free(p);
  free(q);
}

/* The oracle's rows: all of them when check_rows is 0 or at least m, else check_rows rows,
 * increasing, the first and the last among them, for any seed. */
static void test_sampled_rows(void) {
  enum { K = 8 };
  static const int64_t ms[] = {3, 9, 10, 17, 100, 1000};
  static const int check_rows[] = {0, 1, 3, 4, 8};
  uint16_t x[1000 * K], w[K];
  bf16fp32__fill_random_bf16(x, 1000 * K, 1);
  bf16fp32__fill_random_bf16(w, K, 2);
  int bad = 0;
  for (size_t a = 0; a < sizeof ms / sizeof *ms; a++)
    for (size_t b = 0; b < sizeof check_rows / sizeof *check_rows; b++)
      for (uint64_t seed = 1; seed <= 40; seed++) {
        const int64_t m = ms[a];
        int want = check_rows[b] == 0 || m <= check_rows[b] ? (int)m : check_rows[b];
        if (want < 2) want = 2; /* one row asked for: the first and the last all the same */
        bf16fp32__check_ref r;
        CHECK_OK(bf16fp32__check_ref_init(&r, m, 1, K, x, K, w, K, check_rows[b], seed));
        int ok = r.rows == want && r.row[0] == 0 && r.row[r.rows - 1] == m - 1;
        for (int i = 1; ok && i < r.rows; i++) ok = r.row[i] > r.row[i - 1];
        if (!ok && ++bad <= 5)
          fprintf(stderr, "m=%lld check_rows=%d seed %llu: %d rows\n", (long long)m, check_rows[b],
                  (unsigned long long)seed, r.rows);
        bf16fp32__check_ref_free(&r);
      }
  CHECK(bad == 0);
}

static bf16fp32_status record_nothing(void *user, void *stream) {
  (void)user, (void)stream;
  return BF16FP32_OK;
}

/* With no GPU the graph timer times nothing: a job without record is refused first, the others
 * left untimed (an earlier run's median too) and, without CUDA, each NO_DEVICE. */
static void test_time_graphs_without_gpu(void) {
  if (bf16fp32__device_count() > 0) return;
  bf16fp32__graph_job jobs[2] = {{.record = record_nothing, .median_ms = 5},
                                 {.record = record_nothing, .median_ms = 5}};
  const bf16fp32_status st = bf16fp32__time_graphs_on(jobs, 2, 1, 1, NULL);
  CHECK(st != BF16FP32_OK && jobs[0].median_ms < 0 && jobs[1].median_ms < 0);
#ifndef BF16FP32_HAVE_CUDA
  CHECK(st == BF16FP32_NO_DEVICE && jobs[0].status == st && jobs[1].status == st);
#endif
  jobs[1].record = NULL;
  CHECK(bf16fp32__time_graphs_on(jobs, 2, 1, 1, NULL) == BF16FP32_NULL_POINTER);
}

/* Candidates at NULL are refused, as is a candidate without run. */
static void test_measure_arguments(void) {
  CHECK(bf16fp32__measure(BF16FP32_HOST, 4, 8, 32, NULL, 1, NULL) == BF16FP32_NULL_POINTER);
  bf16fp32__candidate c = {.name = "c"};
  CHECK(bf16fp32__measure(BF16FP32_HOST, 4, 8, 32, &c, 1, NULL) == BF16FP32_NULL_POINTER);
}

int main(void) {
  test_host_rotation();
  test_wrong_last_row();
  test_stored_short();
  test_stale_operands();
  test_writes_once();
  test_slow_call_time();
  test_copies_cap();
  test_host_operands();
  test_device_graph_calls();
  test_device_without_gpu();
  test_worst_of_checks();
  test_failure_stages();
  test_round_order();
  test_own_time_per_call();
  test_no_warmup();
  test_measured_again();
  test_candidate_fail();
  test_median_and_times();
  test_random_operands();
  test_sampled_rows();
  test_time_graphs_without_gpu();
  test_measure_arguments();
  return testing_summary("test-measure");
}
