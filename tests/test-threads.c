/* One context used from many threads at once (host calls; tests/gpu-threads.c does device
 * calls): every result checked against the oracle, counters add up, while another thread
 * keeps asking select, backend info and the quarantine list; then again while one thread
 * resets the context (with a tuned table to free) between describe, force, select and tune;
 * and a reset among threads that call without a pause ends (they once held it off). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support.h"
#include "testing.h"

enum { THREADS = 8, CALLS = 40 };

static bf16fp32_context *ctx;
static atomic_int bad_results, bad_status, done_workers;

static void *worker(void *arg) {
  uint64_t rng = 77 + (uint64_t)(uintptr_t)arg;
  for (int c = 0; c < CALLS; c++) {
    int64_t m = 1 + (int64_t)(sup_rng_next(&rng) % 9), n = 1 + (int64_t)(sup_rng_next(&rng) % 70);
    int64_t k = 1 + (int64_t)(sup_rng_next(&rng) % 300), ldx = k + (int64_t)(sup_rng_next(&rng) % 3);
    uint16_t *x = malloc((size_t)(m * ldx) * 2), *w = malloc((size_t)(n * k) * 2);
    float *out = malloc((size_t)(m * n) * 4);
    sup_fill_bf16(x, (size_t)(m * ldx), sup_rng_next(&rng));
    sup_fill_bf16(w, (size_t)(n * k), sup_rng_next(&rng));
    sup_poison_f32(out, (size_t)(m * n));
    if (bf16fp32_linear(ctx, BF16FP32_HOST, m, n, k, x, ldx, w, k, out, n, NULL) != BF16FP32_OK)
      atomic_fetch_add(&bad_status, 1);
    sup_check_result r = sup_check(m, n, k, x, ldx, w, k, out, n);
    if (!sup_check_ok(&r)) atomic_fetch_add(&bad_results, 1);
    free(x), free(w), free(out);
  }
  atomic_fetch_add(&done_workers, 1);
  return NULL;
}

static void *observer(void *arg) {
  (void)arg;
  while (atomic_load(&done_workers) < THREADS) {
    const char *name;
    int count;
    bf16fp32_backend_info info;
    if (bf16fp32_select(ctx, BF16FP32_HOST, 3, 50, 100, &name, NULL, 0) != BF16FP32_OK ||
        bf16fp32_quarantine_list(ctx, NULL, 0, &count) != BF16FP32_OK ||
        bf16fp32_backend_info_get(ctx, 0, &info) != BF16FP32_OK)
      atomic_fetch_add(&bad_status, 1);
  }
  return NULL;
}

/* Reset meets calls in flight: it waits for them and they for it (ThreadSanitizer and
 * AddressSanitizer saw describe read the tuned table reset freed, and the calls read the
 * configuration reset rewrote). */
static void *resetter(void *arg) {
  const char *path = arg;
  for (int i = 0; i < 20 || atomic_load(&done_workers) < THREADS; i++) {
    int64_t nk[2] = {16, 64}, ms[1] = {2};
    if (bf16fp32_reset(ctx) != BF16FP32_OK ||
        (i % 8 == 0 && bf16fp32_tune(ctx, BF16FP32_HOST, nk, 1, ms, 1, path) != BF16FP32_OK))
      atomic_fetch_add(&bad_status, 1);
  }
  return NULL;
}

static void *describer(void *arg) {
  (void)arg;
  char buf[4096], why[256];
  for (int i = 0; atomic_load(&done_workers) < THREADS; i++) {
    const char *name;
    bf16fp32_backend_info info;
    if (bf16fp32_describe(ctx, buf, sizeof buf) != BF16FP32_OK ||
        bf16fp32_backend_info_get(ctx, 0, &info) != BF16FP32_OK ||
        bf16fp32_force_backend(ctx, i % 2 ? "auto" : "cpu-ref") != BF16FP32_OK ||
        bf16fp32_select(ctx, BF16FP32_HOST, 3, 50, 100, &name, why, sizeof why) != BF16FP32_OK)
      atomic_fetch_add(&bad_status, 1);
  }
  return NULL;
}

/* The tuned table's entry count that describe reports (0 for none): the user's file and, on the
 * GPU the built-in table was measured on, that table too. */
static int table_entries(void) {
  char buf[4096];
  int n = 0;
  CHECK_OK(bf16fp32_describe(ctx, buf, sizeof buf));
  const char *line = strstr(buf, "tuned table: ");
  if (line && sscanf(line, "tuned table: %d entries", &n) != 1) n = 0;
  return n;
}

static void with_reset(void) {
  char dir[512], path[600];
  if (sup_temp_dir(dir, sizeof dir, "threads")) return;
  snprintf(path, sizeof path, "%s/tune.tsv", dir);
  setenv("BF16FP32_TUNE_FILE", path, 1); /* read at each reset: ctest sets it empty */
  bf16fp32_options opt;
  bf16fp32_options_init(&opt);
  opt.cpu_threads = 2;
  CHECK_OK(bf16fp32_create(&ctx, &opt));
  if (!ctx) return;
  int64_t nk[2] = {50, 100}, ms[1] = {3};
  const int before = table_entries();
  CHECK_OK(bf16fp32_tune(ctx, BF16FP32_HOST, nk, 1, ms, 1, NULL));
  CHECK_OK(bf16fp32_reset(ctx));
  CHECK(table_entries() == before + 1); /* the file's entry read: reset has a table to free */
  atomic_store(&done_workers, 0);
  pthread_t t[THREADS + 2];
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(100 + i));
  pthread_create(&t[THREADS], NULL, resetter, path);
  pthread_create(&t[THREADS + 1], NULL, describer, NULL);
  for (int i = 0; i < THREADS + 2; i++) pthread_join(t[i], NULL);
  CHECK(atomic_load(&bad_status) == 0);
  CHECK(atomic_load(&bad_results) == 0);
  bf16fp32_destroy(ctx);
  unsetenv("BF16FP32_TUNE_FILE");
  sup_remove_tree(dir);
}

static atomic_int stop_calling, resets_done;

static void *busy_caller(void *arg) {
  (void)arg;
  uint16_t x[16], w[8 * 16];
  float out[8];
  sup_fill_bf16(x, 16, 1);
  sup_fill_bf16(w, 8 * 16, 2);
  while (!atomic_load(&stop_calling))
    if (bf16fp32_linear(ctx, BF16FP32_HOST, 1, 8, 16, x, 16, w, 16, out, 8, NULL) != BF16FP32_OK)
      atomic_fetch_add(&bad_status, 1);
  return NULL;
}

static void *three_resets(void *arg) {
  (void)arg;
  for (int i = 0; i < 3; i++)
    if (bf16fp32_reset(ctx) != BF16FP32_OK) atomic_fetch_add(&bad_status, 1);
  atomic_store(&resets_done, 1);
  return NULL;
}

/* Six threads call a tiny shape back to back (more than the cores here): three resets still end
 * within 20 s. Calls that arrived while a reset waited for the lock went past it, and with four
 * such threads on two cores a reset waited for more than 30 s. */
static void reset_among_busy_callers(void) {
  enum { CALLERS = 6 };
  bf16fp32_options opt;
  bf16fp32_options_init(&opt);
  opt.cpu_threads = 1;
  CHECK_OK(bf16fp32_create(&ctx, &opt));
  if (!ctx) return;
  atomic_store(&stop_calling, 0);
  atomic_store(&resets_done, 0);
  pthread_t callers[CALLERS], resetter_thread;
  for (int i = 0; i < CALLERS; i++) pthread_create(&callers[i], NULL, busy_caller, NULL);
  struct timespec pause = {0, 50 * 1000 * 1000};
  nanosleep(&pause, NULL); /* the calls under way */
  pthread_create(&resetter_thread, NULL, three_resets, NULL);
  for (int waited = 0; waited < 400 && !atomic_load(&resets_done); waited++) nanosleep(&pause, NULL);
  EXPECT(atomic_load(&resets_done), "three resets among %d busy callers: not done after 20 s", CALLERS);
  atomic_store(&stop_calling, 1);
  pthread_join(resetter_thread, NULL);
  for (int i = 0; i < CALLERS; i++) pthread_join(callers[i], NULL);
  CHECK(atomic_load(&bad_status) == 0);
  bf16fp32_destroy(ctx);
}

int main(void) {
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  if (!ctx) return testing_summary("test-threads");
  pthread_t t[THREADS + 1];
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
  pthread_create(&t[THREADS], NULL, observer, NULL);
  for (int i = 0; i <= THREADS; i++) pthread_join(t[i], NULL);
  CHECK(atomic_load(&bad_status) == 0);
  CHECK(atomic_load(&bad_results) == 0);
  uint64_t calls = 0;
  for (int b = 0; b < bf16fp32_backend_count(); b++) {
    bf16fp32_backend_info info;
    CHECK_OK(bf16fp32_backend_info_get(ctx, b, &info));
    calls += info.calls;
  }
  CHECK(calls == THREADS * CALLS);
  bf16fp32_destroy(ctx);
  with_reset();
  reset_among_busy_callers();
  return testing_summary("test-threads");
}
