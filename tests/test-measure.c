/* The host measure (bf16fp32__measure at HOST) with a fake candidate that copies a result
 * computed once: what operands its timed calls are given, a wrong or unwritten output found, a
 * slow call's time; the copies' cap; the GPU graph's calls; a device measure with no GPU. */
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
 * the first call (once), a sleep of sleep_us per call. */
typedef struct fake {
  float *result;
  const uint16_t *seen[FAKE_MAX_SEEN];
  int distinct;
  float bump;
  int once, calls;
  long sleep_us;
  int runs; /* every call */
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
    free(ref);
    free(absdot);
  }
  fake_note(f, call->w);
  f->runs++;
  if (f->sleep_us) nanosleep(&(struct timespec){f->sleep_us / 1000000, f->sleep_us % 1000000 * 1000}, NULL);
  if (f->once && f->calls++ > 0) return BF16FP32_OK;
  memcpy(call->out, f->result, on * sizeof *f->result);
  call->out[on - 1] += f->bump;
  return BF16FP32_OK;
}

/* Measures the fake alone at HOST (m, n, k): replays, one warm-up run, 8 rows checked. */
static bf16fp32__candidate measure_fake(fake *f, int64_t m, int64_t n, int64_t k, int replays) {
  bf16fp32__candidate c = {.name = "fake", .run = fake_run, .user = f};
  bf16fp32__measure_opts o;
  bf16fp32__measure_defaults(&o);
  o.replays = replays;
  o.warmup = 1;
  o.check_rows = 8;
  CHECK_OK(bf16fp32__measure(BF16FP32_HOST, m, n, k, &c, 1, &o));
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
  const int promised = (int)ceil((double)BF16FP32__HOST_ROTATE_BYTES / copy_bytes);
  /* copy 0 serves the first timed call and the checks before and after the timed calls */
  const int want = f.runs - 2 < promised ? f.runs - 2 : promised;
  EXPECT(f.distinct >= want,
         "%d distinct copies of %.0f bytes in %d calls: %.0f MiB, under the %zu MiB promised",
         f.distinct, copy_bytes, f.runs, f.distinct * copy_bytes / (1 << 20),
         BF16FP32__HOST_ROTATE_BYTES >> 20);
  free(f.result);
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
  free(f.result);
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

/* The copies are capped for toy shapes (the call table and the copying), at least 1 when huge. */
static void test_copies_cap(void) {
  CHECK(bf16fp32__host_copies(64) == BF16FP32__HOST_MAX_COPIES);
  CHECK(bf16fp32__host_copies(0) == BF16FP32__HOST_MAX_COPIES);
  CHECK(bf16fp32__host_copies(BF16FP32__HOST_ROTATE_BYTES * 2) == 1);
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

int main(void) {
  test_host_rotation();
  test_wrong_last_row();
  test_writes_once();
  test_slow_call_time();
  test_copies_cap();
  test_device_graph_calls();
  test_device_without_gpu();
  return testing_summary("test-measure");
}
