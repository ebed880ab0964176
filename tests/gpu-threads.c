/* Threads: one context, 8 threads each with its own stream, random shapes (padded leading
 * dimensions, pointers offset by a few elements), several calls in flight per stream; every
 * result checked against the oracle, and the backends' counters add up to the calls made.
 * Run with auto and with each GPU backend forced in turn. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "support.h"
#include "testing.h"

#define THREADS 8
#define ROUNDS 12
#define BATCH 4 /* calls queued on a stream before it is synchronized */
#define MAX_M 80
#define MAX_N 300
#define MAX_K 700
#define MAX_PAD 8
#define MAX_OFF 3

typedef struct job {
  bf16fp32_context *ctx;
  pthread_barrier_t *start;
  int device;
  uint64_t seed;
  /* results */
  int calls_ok, calls_failed, wrong, cuda_errors;
} job;

typedef struct one_call {
  int64_t m, n, k, ldx, ldw, ldo;
  int offx, offw, offo;
  uint16_t *hx, *hw;
  float *hout;
  uint16_t *dx, *dw;
  float *dout;
  bf16fp32_status st;
} one_call;

static int64_t pick(uint64_t *rng, int64_t lo, int64_t hi) {
  return lo + (int64_t)(sup_rng_next(rng) % (uint64_t)(hi - lo + 1));
}

static size_t nx_of(const one_call *c) { return (size_t)(c->m * c->ldx + c->offx); }
static size_t nw_of(const one_call *c) { return (size_t)(c->n * c->ldw + c->offw); }
static size_t no_of(const one_call *c) { return (size_t)(c->m * c->ldo + c->offo); }

static void *worker(void *arg) {
  job *j = arg;
  uint64_t rng = j->seed;
  cudaStream_t s = NULL;
  one_call c[BATCH];
  const size_t cap_x = MAX_M * (MAX_K + MAX_PAD) + MAX_OFF, cap_w = MAX_N * (MAX_K + MAX_PAD) + MAX_OFF;
  const size_t cap_o = MAX_M * (MAX_N + MAX_PAD) + MAX_OFF;
  memset(c, 0, sizeof c);
  int setup = cudaSetDevice(j->device) == cudaSuccess &&
              cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess;
  for (int b = 0; b < BATCH && setup; b++) {
    c[b].hx = malloc(cap_x * 2), c[b].hw = malloc(cap_w * 2), c[b].hout = malloc(cap_o * 4);
    setup = c[b].hx && c[b].hw && c[b].hout && cudaMalloc((void **)&c[b].dx, cap_x * 2) == cudaSuccess &&
            cudaMalloc((void **)&c[b].dw, cap_w * 2) == cudaSuccess &&
            cudaMalloc((void **)&c[b].dout, cap_o * 4) == cudaSuccess;
  }
  if (!setup) j->cuda_errors++;
  pthread_barrier_wait(j->start); /* all threads reach the library at once */
  for (int round = 0; round < ROUNDS && setup; round++) {
    for (int b = 0; b < BATCH; b++) {
      one_call *o = &c[b];
      o->m = pick(&rng, 1, MAX_M), o->n = pick(&rng, 1, MAX_N), o->k = pick(&rng, 1, MAX_K);
      o->ldx = o->k + pick(&rng, 0, MAX_PAD), o->ldw = o->k + pick(&rng, 0, MAX_PAD);
      o->ldo = o->n + pick(&rng, 0, MAX_PAD);
      o->offx = (int)pick(&rng, 0, MAX_OFF), o->offw = (int)pick(&rng, 0, MAX_OFF);
      o->offo = (int)pick(&rng, 0, 1);
      sup_fill_bf16(o->hx, nx_of(o), sup_rng_next(&rng));
      sup_fill_bf16(o->hw, nw_of(o), sup_rng_next(&rng));
      sup_poison_f32(o->hout, no_of(o));
      /* Everything on this thread's stream, so that the calls are ordered after the uploads. */
      if (cudaMemcpyAsync(o->dx, o->hx, nx_of(o) * 2, cudaMemcpyHostToDevice, s) != cudaSuccess ||
          cudaMemcpyAsync(o->dw, o->hw, nw_of(o) * 2, cudaMemcpyHostToDevice, s) != cudaSuccess ||
          cudaMemcpyAsync(o->dout, o->hout, no_of(o) * 4, cudaMemcpyHostToDevice, s) != cudaSuccess)
        j->cuda_errors++;
      o->st = bf16fp32_linear(j->ctx, BF16FP32_DEVICE, o->m, o->n, o->k, o->dx + o->offx, o->ldx,
                              o->dw + o->offw, o->ldw, o->dout + o->offo, o->ldo, s);
      if (o->st != BF16FP32_OK)
        fprintf(stderr, "thread %llu: m=%lld n=%lld k=%lld: %s (%s)\n", (unsigned long long)j->seed,
                (long long)o->m, (long long)o->n, (long long)o->k, bf16fp32_status_name(o->st),
                bf16fp32_last_error());
    }
    for (int b = 0; b < BATCH; b++)
      if (cudaMemcpyAsync(c[b].hout, c[b].dout, no_of(&c[b]) * 4, cudaMemcpyDeviceToHost, s) != cudaSuccess)
        j->cuda_errors++;
    if (cudaStreamSynchronize(s) != cudaSuccess) j->cuda_errors++;
    for (int b = 0; b < BATCH; b++) {
      one_call *o = &c[b];
      if (o->st != BF16FP32_OK) {
        j->calls_failed++;
        continue;
      }
      j->calls_ok++;
      sup_check_result r = sup_check(o->m, o->n, o->k, o->hx + o->offx, o->ldx, o->hw + o->offw,
                                     o->ldw, o->hout + o->offo, o->ldo);
      if (!sup_check_ok(&r)) {
        j->wrong++;
        fprintf(stderr, "thread %llu: m=%lld n=%lld k=%lld ld=%lld,%lld,%lld off=%d,%d,%d: worst "
                "ratio %.3g, %lld violations, %lld unwritten, %lld padding written\n",
                (unsigned long long)j->seed, (long long)o->m, (long long)o->n, (long long)o->k,
                (long long)o->ldx, (long long)o->ldw, (long long)o->ldo, o->offx, o->offw, o->offo,
                r.worst_ratio, (long long)r.violations, (long long)r.unwritten,
                (long long)r.overwritten);
      }
    }
  }
  for (int b = 0; b < BATCH; b++) {
    free(c[b].hx), free(c[b].hw), free(c[b].hout);
    (void)cudaFree(c[b].dx), (void)cudaFree(c[b].dw), (void)cudaFree(c[b].dout);
  }
  if (s) (void)cudaStreamDestroy(s);
  return NULL;
}

/* Sum of calls and failures over the device backends, and calls of one backend (b >= 0). */
static void counters(bf16fp32_context *ctx, int b, uint64_t *calls, uint64_t *failures,
                     uint64_t *calls_b) {
  *calls = *failures = *calls_b = 0;
  for (int i = 0; i < bf16fp32_backend_count(); i++) {
    bf16fp32_backend_info info;
    if (bf16fp32_backend_info_get(ctx, i, &info) != BF16FP32_OK || info.where != BF16FP32_DEVICE)
      continue;
    *calls += info.calls;
    *failures += info.failures;
    if (i == b) *calls_b += info.calls;
  }
}

int main(void) {
  if (!sup_gpu_available()) return testing_skip("gpu-threads", "no CUDA device");
  static const char *const phases[] = {"auto", "cublas", "cublaslt", "fp32"};
  bf16fp32_context *ctx = NULL;
  int device = 0;
  CHECK(cudaGetDevice(&device) == cudaSuccess);
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  if (!ctx) return testing_summary("gpu-threads");
  for (int p = 0; p < 4; p++) {
    const char *name = phases[p];
    int b = p == 0 ? -1 : sup_backend_index(ctx, name);
    uint64_t calls0, fails0, b0, calls1, fails1, b1;
    CHECK(p == 0 || b >= 0);
    CHECK_OK(bf16fp32_force_backend(ctx, name));
    counters(ctx, b, &calls0, &fails0, &b0);

    pthread_barrier_t start;
    pthread_t tid[THREADS];
    job jobs[THREADS];
    int started = 0;
    CHECK(pthread_barrier_init(&start, NULL, THREADS) == 0);
    for (int t = 0; t < THREADS; t++) {
      memset(&jobs[t], 0, sizeof jobs[t]);
      jobs[t].ctx = ctx, jobs[t].start = &start, jobs[t].device = device;
      jobs[t].seed = 1000 * (uint64_t)(p + 1) + (uint64_t)t;
    }
    for (int t = 0; t < THREADS; t++) started += pthread_create(&tid[t], NULL, worker, &jobs[t]) == 0;
    CHECK(started == THREADS);
    if (started != THREADS) return testing_summary("gpu-threads"); /* threads wait at the barrier */
    int ok = 0, failed = 0, wrong = 0, cuda_errors = 0;
    for (int t = 0; t < THREADS; t++) {
      pthread_join(tid[t], NULL);
      ok += jobs[t].calls_ok, failed += jobs[t].calls_failed;
      wrong += jobs[t].wrong, cuda_errors += jobs[t].cuda_errors;
    }
    pthread_barrier_destroy(&start);
    counters(ctx, b, &calls1, &fails1, &b1);
    printf("%s: %d calls ok, %d failed, %d wrong; counters: %llu calls (%llu by %s), %llu failures\n",
           name, ok, failed, wrong, (unsigned long long)(calls1 - calls0),
           (unsigned long long)(b1 - b0), name, (unsigned long long)(fails1 - fails0));
    CHECK(cuda_errors == 0);
    CHECK(ok == THREADS * ROUNDS * BATCH && failed == 0);
    CHECK(wrong == 0);
    /* Every completed call counted once, by one backend; no backend failed (quarantined). */
    CHECK(calls1 - calls0 == (uint64_t)ok);
    CHECK(fails1 == fails0);
    /* A forced backend supports every shape here: it must have taken every call itself. */
    if (b >= 0) CHECK(b1 - b0 == (uint64_t)ok);
  }
  CHECK_OK(bf16fp32_force_backend(ctx, "auto"));
  CHECK(cudaGetLastError() == cudaSuccess);
  bf16fp32_destroy(ctx);
  return testing_summary("gpu-threads");
}
