/* CUDA graph capture: for each GPU backend forced (cublas, cublaslt, fp32) and for auto, prewarm
 * on a stream, capture a sequence of calls on it, replay twice and check against the oracle,
 * then capture again while another thread makes its first call on a new stream.
 * A shape or a stream that was not prewarmed, met during capture, must either run (and be right
 * on replay) or return NOT_PREWARMED, and the capture must stay intact either way. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "gpu-case.h"
#include "support.h"
#include "testing.h"

typedef sup_gcase gcase;

/* Prewarmed: weight shapes (n, k) at these m, contiguous rows, 256-byte aligned buffers. */
static gcase warm[] = {{.m = 1, .n = 256, .k = 512}, {.m = 4, .n = 256, .k = 512},
                       {.m = 33, .n = 256, .k = 512}, {.m = 7, .n = 96, .k = 320},
                       {.m = 3, .n = 130, .k = 257}};
#define NWARM ((int)(sizeof warm / sizeof warm[0]))

static const char *const forced_names[] = {"cublas", "cublaslt", "fp32", "auto"};

static int case_alloc(gcase *c, uint64_t seed) { return sup_gcase_alloc(c, seed); }
static void case_free(gcase *c) { sup_gcase_free(c); }
static int case_poison(gcase *c) { return sup_gcase_poison(c, c->dout); }

static bf16fp32_status case_call(bf16fp32_context *ctx, gcase *c, cudaStream_t s) {
  return bf16fp32_linear(ctx, BF16FP32_DEVICE, c->m, c->n, c->k, c->dx, c->k, c->dw, c->k,
                         c->dout, c->n, s);
}

static void case_check(gcase *c, const char *what) { sup_gcase_check(c, c->dout, what); }

/* Calls completed by backend b (or by all device backends when b < 0), and failures. */
static void counters(bf16fp32_context *ctx, int b, uint64_t *calls, uint64_t *failures) {
  *calls = *failures = 0;
  for (int i = 0; i < bf16fp32_backend_count(); i++) {
    bf16fp32_backend_info info;
    if (bf16fp32_backend_info_get(ctx, i, &info) != BF16FP32_OK) continue;
    if ((b >= 0 && i != b) || info.where != BF16FP32_DEVICE) continue;
    *calls += info.calls;
    *failures += info.failures;
  }
}

/* Ends the capture on s, checks it ended cleanly, replays the graph once when it holds calls.
 * Returns 0 when the graph ran (or was empty and ended cleanly). */
static int end_and_replay(cudaStream_t s, int replay) {
  const int e = sup_gpu_end_capture_and_replay(s, replay ? 1 : 0);
  CHECK(e == 0);
  if (e) fprintf(stderr, "capture's end or replay: %s\n", cudaGetErrorString((cudaError_t)e));
  CHECK(cudaGetLastError() == cudaSuccess);
  return e != 0;
}

/* Prewarm on s, capture every warm case, replay twice (re-poisoned), check each time. */
static void captured_sequence(bf16fp32_context *ctx, const char *name, cudaStream_t s) {
  int b = strcmp(name, "auto") == 0 ? -1 : sup_backend_index(ctx, name);
  uint64_t calls0, fails0, calls1, fails1;
  const int64_t ms_256[] = {1, 4, 33}, ms_96[] = {7}, ms_130[] = {3};
  CHECK_OK(bf16fp32_prewarm(ctx, BF16FP32_DEVICE, 256, 512, ms_256, 3, s));
  CHECK_OK(bf16fp32_prewarm(ctx, BF16FP32_DEVICE, 96, 320, ms_96, 1, s));
  CHECK_OK(bf16fp32_prewarm(ctx, BF16FP32_DEVICE, 130, 257, ms_130, 1, s));
  for (int i = 0; i < NWARM; i++) CHECK(case_poison(&warm[i]) == 0);
  CHECK(sup_gpu_sync() == 0);
  counters(ctx, b, &calls0, &fails0);

  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  for (int i = 0; i < NWARM; i++) CHECK_OK(case_call(ctx, &warm[i], s));
  CHECK(sup_gpu_capturing(s));
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  CHECK(cudaStreamEndCapture(s, &graph) == cudaSuccess && graph);
  CHECK(graph && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  counters(ctx, b, &calls1, &fails1);
  /* A forced backend must have taken every captured call itself, with no failure. */
  if (calls1 - calls0 != (uint64_t)NWARM || fails1 != fails0)
    fprintf(stderr, "%s: %llu calls, %llu failures during capture (want %d, 0)\n", name,
            (unsigned long long)(calls1 - calls0), (unsigned long long)(fails1 - fails0), NWARM);
  CHECK(calls1 - calls0 == (uint64_t)NWARM);
  CHECK(fails1 == fails0);

  for (int replay = 0; replay < 2 && exec; replay++) {
    for (int i = 0; i < NWARM; i++) CHECK(case_poison(&warm[i]) == 0);
    CHECK(sup_gpu_sync() == 0); /* the uploads ran on the legacy stream; s does not wait for it */
    CHECK(cudaGraphLaunch(exec, s) == cudaSuccess);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess);
    char what[64];
    snprintf(what, sizeof what, "%s replay %d", name, replay);
    for (int i = 0; i < NWARM; i++) case_check(&warm[i], what);
  }
  if (exec) (void)cudaGraphExecDestroy(exec);
  if (graph) (void)cudaGraphDestroy(graph);
  CHECK(cudaGetLastError() == cudaSuccess);
}

/* A call of the thread below: its first on a new stream, so the backend makes its handle and
 * workspace (or fp32 its scratch) while the main thread captures. */
typedef struct beside_job {
  bf16fp32_context *ctx;
  gcase *c;
  cudaStream_t s;
  bf16fp32_status st;
} beside_job;

static void *beside(void *p) {
  beside_job *j = p;
  j->st = case_call(j->ctx, j->c, j->s);
  return NULL;
}

/* While s captures in global mode (PyTorch's default), another thread's first call on a new
 * stream goes through, and the capture stays intact: the library's lazy allocations run in the
 * relaxed mode. */
static void capture_beside_new_stream(bf16fp32_context *ctx, const char *name, cudaStream_t s,
                                      gcase *other) {
  cudaStream_t fresh = sup_gpu_stream_create();
  CHECK(fresh != NULL);
  if (!fresh) return;
  CHECK(case_poison(&warm[0]) == 0 && case_poison(other) == 0);
  CHECK(sup_gpu_sync() == 0);
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  CHECK_OK(case_call(ctx, &warm[0], s)); /* prewarmed on s by captured_sequence */
  beside_job job = {ctx, other, fresh, BF16FP32_INTERNAL};
  pthread_t t;
  CHECK(pthread_create(&t, NULL, beside, &job) == 0 && pthread_join(t, NULL) == 0);
  if (job.st != BF16FP32_OK)
    fprintf(stderr, "%s beside a capture: %s (%s)\n", name, bf16fp32_status_name(job.st),
            bf16fp32_last_error());
  CHECK(job.st == BF16FP32_OK);
  CHECK(sup_gpu_capturing(s));
  char what[96];
  snprintf(what, sizeof what, "%s, captured beside another thread's new stream", name);
  if (end_and_replay(s, 1) == 0) case_check(&warm[0], what);
  CHECK(sup_gpu_stream_sync(fresh) == 0);
  snprintf(what, sizeof what, "%s, new stream beside a capture", name);
  case_check(other, what);
  sup_gpu_stream_destroy(fresh);
}

/* One call of c during a capture on s that was not prewarmed for it: OK (then right on replay)
 * or NOT_PREWARMED, the capture still active after it and ending cleanly. */
static void unprewarmed_capture(bf16fp32_context *ctx, const char *name, gcase *c, cudaStream_t s,
                                const char *what) {
  CHECK(case_poison(c) == 0);
  CHECK(sup_gpu_sync() == 0);
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  bf16fp32_status st = case_call(ctx, c, s);
  if (st != BF16FP32_OK && st != BF16FP32_NOT_PREWARMED)
    fprintf(stderr, "%s, %s: %s (%s)\n", name, what, bf16fp32_status_name(st), bf16fp32_last_error());
  CHECK(st == BF16FP32_OK || st == BF16FP32_NOT_PREWARMED);
  CHECK(sup_gpu_capturing(s));
  if (end_and_replay(s, st == BF16FP32_OK) == 0 && st == BF16FP32_OK) {
    char full[96];
    snprintf(full, sizeof full, "%s, %s", name, what);
    case_check(c, full);
  }
}

int main(void) {
  if (!sup_gpu_available()) return testing_skip("gpu-capture", "no CUDA device");
  bf16fp32_context *ctx = NULL;
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  if (!ctx) return testing_summary("gpu-capture");
  for (int i = 0; i < 3; i++) {
    bf16fp32_backend_info info;
    memset(&info, 0, sizeof info);
    int b = sup_backend_index(ctx, forced_names[i]);
    CHECK(b >= 0 && bf16fp32_backend_info_get(ctx, b, &info) == BF16FP32_OK);
    if (b >= 0 && !info.available) fprintf(stderr, "%s unavailable: %s\n", info.name, info.reason);
    CHECK(b >= 0 && info.available);
  }
  for (int i = 0; i < NWARM; i++) CHECK(case_alloc(&warm[i], 100 + 10 * (uint64_t)i) == 0);
  gcase cold = {.m = 5, .n = 72, .k = 200};   /* no prewarm for this (n, k) at all */
  gcase big = {.m = 300, .n = 256, .k = 512}; /* (n, k) prewarmed, but only for m <= 33 */
  CHECK(case_alloc(&cold, 7) == 0);
  CHECK(case_alloc(&big, 8) == 0);
  gcase beside_case = {.m = 6, .n = 128, .k = 384}; /* called from another thread, new streams */
  CHECK(case_alloc(&beside_case, 9) == 0);

  cudaStream_t s = sup_gpu_stream_create();
  cudaStream_t fresh[4] = {NULL, NULL, NULL, NULL}; /* kept alive: each is new to the library */
  CHECK(s != NULL);
  for (int f = 0; f < 4 && s; f++) {
    const char *name = forced_names[f];
    int b = strcmp(name, "auto") == 0 ? -1 : sup_backend_index(ctx, name);
    CHECK_OK(bf16fp32_force_backend(ctx, name));
    captured_sequence(ctx, name, s);
    capture_beside_new_stream(ctx, name, s, &beside_case);

    /* Prewarmed stream, shape not prewarmed (fp32's scratch too small, no cuBLASLt plan). */
    unprewarmed_capture(ctx, name, &big, s, "prewarmed stream, larger m");
    /* A stream the library has never seen. */
    fresh[f] = sup_gpu_stream_create();
    CHECK(fresh[f] != NULL);
    if (!fresh[f]) continue;
    unprewarmed_capture(ctx, name, &cold, fresh[f], "new stream, new shape");

    /* Outside capture the call makes what it needs; a capture after it then needs nothing. */
    CHECK(case_poison(&cold) == 0);
    CHECK(sup_gpu_sync() == 0);
    CHECK_OK(case_call(ctx, &cold, fresh[f]));
    CHECK(sup_gpu_stream_sync(fresh[f]) == 0);
    case_check(&cold, name);
    uint64_t calls0, fails0, calls1, fails1;
    counters(ctx, b, &calls0, &fails0);
    CHECK(case_poison(&cold) == 0);
    CHECK(sup_gpu_sync() == 0);
    CHECK(cudaStreamBeginCapture(fresh[f], cudaStreamCaptureModeGlobal) == cudaSuccess);
    CHECK_OK(case_call(ctx, &cold, fresh[f]));
    counters(ctx, b, &calls1, &fails1);
    CHECK(calls1 - calls0 == 1 && fails1 == fails0);
    if (end_and_replay(fresh[f], 1) == 0) case_check(&cold, name);
  }
  CHECK(cudaGetLastError() == cudaSuccess);

  for (int f = 0; f < 4; f++)
    if (fresh[f]) sup_gpu_stream_destroy(fresh[f]);
  if (s) sup_gpu_stream_destroy(s);
  for (int i = 0; i < NWARM; i++) case_free(&warm[i]);
  case_free(&cold);
  case_free(&big);
  case_free(&beside_case);
  bf16fp32_destroy(ctx);
  return testing_summary("gpu-capture");
}
