/* The measure's rounds (bf16fp32__time_graphs_on, which the bench's decode step and the step tuner
 * use, and whose round loop bf16fp32__measure shares; here on a fresh stream): each graph is
 * replayed once when it is made (for its check, after its arm), once per warm-up round, then twice
 * per timed round, a lead-in and the timed replay back to back, the first graph rotating with the
 * round; every job that ran gets a median, and a job whose record fails, or whose work ran outside
 * its capture, gets its status and no time. Each graph is one host-function node that logs which
 * job's replay ran, so the log is the order of the replays on the stream. The one-shape measure
 * (bf16fp32__measure) also fails a candidate whose calls ran outside the capture, and one that
 * computes every call from copy 0's operands (the flipped copies' check). */
#include <cuda_runtime_api.h>
#include <math.h>
#include <string.h>

#include "measure.h"
#include "support.h"
#include "testing.h"

enum { JOBS = 3, WARMUP = 2, REPLAYS = 5, MAXLOG = 64 };

typedef struct replay_log {
  int n;
  int job[MAXLOG];
} replay_log;

typedef struct job_user {
  replay_log *log;
  int id;
  int arm_at; /* replays logged when the job's arm ran; -1: it did not run */
  cudaStream_t elsewhere; /* record_elsewhere's stream */
} job_user;

static void CUDART_CB log_replay(void *user) {
  job_user *u = user;
  if (u->log->n < MAXLOG) u->log->job[u->log->n] = u->id;
  u->log->n++;
}

static bf16fp32_status record_logged(void *user, void *stream) {
  return cudaLaunchHostFunc((cudaStream_t)stream, log_replay, user) == cudaSuccess
             ? BF16FP32_OK
             : BF16FP32_INTERNAL;
}

static bf16fp32_status record_fails(void *user, void *stream) {
  (void)user, (void)stream;
  return BF16FP32_DECLINED;
}

/* Its node goes to another stream, which is not capturing: it runs at once, outside the graph. */
static bf16fp32_status record_elsewhere(void *user, void *stream) {
  (void)stream;
  job_user *u = user;
  return cudaLaunchHostFunc(u->elsewhere, log_replay, user) == cudaSuccess ? BF16FP32_OK
                                                                            : BF16FP32_INTERNAL;
}

static bf16fp32_status arm_noted(void *user, void *stream) {
  (void)stream;
  job_user *u = user;
  u->arm_at = u->log->n;
  return BF16FP32_OK;
}

/* A candidate that writes a result computed once (by the library, eagerly) into each call's
 * output with one copy: on the call's stream (stale: right for copy 0's operands alone), or on a
 * stream of its own (escape), which the capture does not see; or, honest, the library's call on
 * each call's own operands. */
typedef struct copier {
  bf16fp32_context *ctx;
  float *result; /* device, m x n */
  int ready;
  int escape, honest;
  cudaStream_t own;
} copier;

static bf16fp32_status copier_run(void *user, const bf16fp32__call *call) {
  copier *c = user;
  const bf16fp32__shape *s = &call->shape;
  const cudaStream_t stream = (cudaStream_t)call->stream;
  if (c->honest)
    return bf16fp32_linear(c->ctx, BF16FP32_DEVICE, s->m, s->n, s->k, call->x, s->ldx, call->w,
                           s->ldw, call->out, s->ldo, stream);
  if (!c->ready) {
    if (call->capturing) return BF16FP32_NOT_PREWARMED;
    bf16fp32_status st = bf16fp32_linear(c->ctx, BF16FP32_DEVICE, s->m, s->n, s->k, call->x, s->ldx,
                                         call->w, s->ldw, c->result, s->n, stream);
    if (st != BF16FP32_OK) return st;
    if (cudaStreamSynchronize(stream) != cudaSuccess) return BF16FP32_CUDA_ERROR; /* for `own` */
    c->ready = 1;
  }
  const cudaStream_t to = c->escape ? c->own : stream;
  cudaError_t e = cudaMemcpyAsync(call->out, c->result, (size_t)(s->m * s->n) * sizeof(float),
                                  cudaMemcpyDeviceToDevice, to);
  if (e == cudaSuccess && c->escape && !call->capturing) e = cudaStreamSynchronize(c->own);
  return e == cudaSuccess ? BF16FP32_OK : BF16FP32_CUDA_ERROR;
}

/* The honest copier's shape readied on the measure's stream, as before a capture. */
static bf16fp32_status copier_prewarm(void *user, const bf16fp32__shape *s, void *stream) {
  copier *c = user;
  const int64_t m = s->m;
  return c->honest ? bf16fp32_prewarm(c->ctx, BF16FP32_DEVICE, s->n, s->k, &m, 1, stream)
                   : BF16FP32_OK;
}

/* An honest candidate is timed; one that copies copy 0's result everywhere is a wrong result,
 * found in the flipped copies; one whose copies go to its own stream is a wrong result, found by
 * its graph holding no node for its calls (the check after the replay could see the outputs that
 * its eager copies wrote). */
static void test_measure_escape(void) {
  const int64_t m = 3, n = 64, k = 96;
  bf16fp32_context *ctx = NULL;
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  copier cp[3];
  memset(cp, 0, sizeof cp);
  for (int i = 0; i < 3; i++) {
    cp[i].ctx = ctx, cp[i].honest = i == 0, cp[i].escape = i == 2;
    CHECK(cudaMalloc((void **)&cp[i].result, (size_t)(m * n) * sizeof(float)) == cudaSuccess);
    CHECK(cudaStreamCreateWithFlags(&cp[i].own, cudaStreamNonBlocking) == cudaSuccess);
  }
  bf16fp32__candidate cands[3] = {{.name = "library", .run = copier_run, .prewarm = copier_prewarm,
                                   .user = &cp[0]},
                                  {.name = "copies", .run = copier_run, .user = &cp[1]},
                                  {.name = "copies elsewhere", .run = copier_run, .user = &cp[2]}};
  bf16fp32__measure_opts o;
  bf16fp32__measure_defaults(&o);
  o.replays = 5, o.warmup = 1;
  if (ctx) CHECK_OK(bf16fp32__measure(BF16FP32_DEVICE, m, n, k, cands, 3, &o));
  EXPECT(cands[0].status == BF16FP32_OK && cands[0].median_us > 0 && !cands[0].wrong,
         "honest candidate: %s, %.3f us: %s", bf16fp32_status_name(cands[0].status),
         cands[0].median_us, cands[0].detail);
  /* a toy: 16384 copies of about 14 KB, under the protocol's 400 MB, so its time is warm */
  EXPECT(cands[0].warm && cands[0].rotated_bytes > 0 &&
             cands[0].rotated_bytes < BF16FP32__DEVICE_COLD_BYTES,
         "honest candidate rotated %zu bytes, warm %d", cands[0].rotated_bytes, cands[0].warm);
  EXPECT(cands[1].status == BF16FP32_INTERNAL && cands[1].wrong && cands[1].median_us < 0 &&
             cands[1].violations > 0,
         "stale copier: %s, wrong %d, %lld beyond the bound, %.3f us: %s",
         bf16fp32_status_name(cands[1].status), cands[1].wrong, (long long)cands[1].violations,
         cands[1].median_us, cands[1].detail);
  EXPECT(cands[2].status == BF16FP32_INTERNAL && cands[2].wrong && cands[2].median_us < 0 &&
             strstr(cands[2].detail, "graph nodes: work ran outside it") != NULL,
         "escaping copier: %s, wrong %d, %.3f us: %s", bf16fp32_status_name(cands[2].status),
         cands[2].wrong, cands[2].median_us, cands[2].detail);
  for (int i = 0; i < 3; i++) {
    cudaFree(cp[i].result);
    cudaStreamDestroy(cp[i].own);
  }
  bf16fp32_destroy(ctx);
}

int main(void) {
  if (!sup_gpu_available()) return testing_skip("gpu-measure", "no CUDA device");
  replay_log log = {0}, elsewhere_log = {0};
  job_user users[JOBS + 1];
  bf16fp32__graph_job jobs[JOBS + 2];
  for (int j = 0; j < JOBS; j++) {
    users[j] = (job_user){.log = &log, .id = j, .arm_at = -1};
    jobs[j] = (bf16fp32__graph_job){
        .record = record_logged, .arm = arm_noted, .user = &users[j], .min_nodes = 1};
  }
  /* a job that cannot be recorded, and one whose node runs outside its capture: neither may stop
   * the others */
  jobs[JOBS] = (bf16fp32__graph_job){.record = record_fails, .user = NULL};
  users[JOBS] = (job_user){.log = &elsewhere_log, .id = JOBS, .arm_at = -1};
  CHECK(cudaStreamCreateWithFlags(&users[JOBS].elsewhere, cudaStreamNonBlocking) == cudaSuccess);
  jobs[JOBS + 1] = (bf16fp32__graph_job){
      .record = record_elsewhere, .arm = arm_noted, .user = &users[JOBS], .min_nodes = 1};
  CHECK_OK(bf16fp32__time_graphs_on(jobs, JOBS + 2, WARMUP, REPLAYS, NULL));
  CHECK(cudaStreamSynchronize(users[JOBS].elsewhere) == cudaSuccess);
  cudaStreamDestroy(users[JOBS].elsewhere);

  /* the expected order: the first replays in job order, the warm-up rounds in job order, then
   * per timed round each job twice, starting from job round % jobs (the failed jobs are skipped
   * in the rotation, though counted in it) */
  int want[MAXLOG], n = 0;
  for (int j = 0; j < JOBS; j++) want[n++] = j;
  for (int r = 0; r < WARMUP; r++)
    for (int j = 0; j < JOBS; j++) want[n++] = j;
  for (int r = 0; r < REPLAYS; r++)
    for (int i = 0; i < JOBS + 2; i++) {
      const int j = (r + i) % (JOBS + 2);
      if (j >= JOBS) continue;
      want[n++] = j, want[n++] = j;
    }
  EXPECT(log.n == n, "%d replays ran, %d expected", log.n, n);
  for (int i = 0; i < n && i < log.n; i++)
    EXPECT(log.job[i] == want[i], "replay %d ran job %d, expected %d", i, log.job[i], want[i]);

  for (int j = 0; j < JOBS; j++) {
    EXPECT(jobs[j].status == BF16FP32_OK && isfinite(jobs[j].median_ms) && jobs[j].median_ms >= 0,
           "job %d: status %s, median %.6f ms", j, bf16fp32_status_name(jobs[j].status),
           jobs[j].median_ms);
    /* each arm between the jobs' first replays: after the previous job's, before its own */
    EXPECT(users[j].arm_at == j, "job %d armed after %d replays", j, users[j].arm_at);
  }
  EXPECT(jobs[JOBS].status == BF16FP32_DECLINED && jobs[JOBS].median_ms < 0,
         "failing job: status %s, median %.6f ms", bf16fp32_status_name(jobs[JOBS].status),
         jobs[JOBS].median_ms);
  /* the escaping job: its node ran once, at its record; not armed, not replayed, not timed */
  EXPECT(jobs[JOBS + 1].status == BF16FP32_INTERNAL && jobs[JOBS + 1].median_ms < 0 &&
             users[JOBS].arm_at == -1 && elsewhere_log.n == 1 &&
             strstr(jobs[JOBS + 1].detail, "holds 0 graph nodes") != NULL,
         "escaping job: status %s, median %.6f ms, armed at %d, %d runs: %s",
         bf16fp32_status_name(jobs[JOBS + 1].status), jobs[JOBS + 1].median_ms, users[JOBS].arm_at,
         elsewhere_log.n, jobs[JOBS + 1].detail);
  test_measure_escape();
  return testing_summary("gpu-measure");
}
