/* One context used from many threads at once (host calls; tests/gpu-threads.c does device
 * calls): every result checked against the oracle, counters add up, while another thread
 * keeps asking select, backend info and the quarantine list. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

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
  return testing_summary("test-threads");
}
