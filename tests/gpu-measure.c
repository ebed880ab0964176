/* The measure's rounds (bf16fp32__time_graphs_on, which the bench's decode step and the step tuner
 * use, and whose round loop bf16fp32__measure shares; here on a fresh stream): each graph is
 * replayed once when it is made (for its check), once per warm-up round, then twice per timed
 * round, a lead-in and the timed replay back to back, the first graph rotating with the round;
 * every job that ran gets a median, and a job whose record fails gets its status and no time. Each
 * graph is one host-function node that logs which job's replay ran, so the log is the order of the
 * replays on the stream. */
#include <cuda_runtime_api.h>
#include <math.h>

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

int main(void) {
  if (!sup_gpu_available()) return testing_skip("gpu-measure", "no CUDA device");
  replay_log log = {0};
  job_user users[JOBS];
  bf16fp32__graph_job jobs[JOBS + 1];
  for (int j = 0; j < JOBS; j++) {
    users[j] = (job_user){.log = &log, .id = j};
    jobs[j] = (bf16fp32__graph_job){.record = record_logged, .user = &users[j]};
  }
  /* a fourth job that cannot be recorded: it must not stop the others */
  jobs[JOBS] = (bf16fp32__graph_job){.record = record_fails, .user = NULL};
  CHECK_OK(bf16fp32__time_graphs_on(jobs, JOBS + 1, WARMUP, REPLAYS, NULL));

  /* the expected order: the first replays in job order, the warm-up rounds in job order, then
   * per timed round each job twice, starting from job round % jobs (the failed job is skipped
   * in the rotation, not counted in it) */
  int want[MAXLOG], n = 0;
  for (int j = 0; j < JOBS; j++) want[n++] = j;
  for (int r = 0; r < WARMUP; r++)
    for (int j = 0; j < JOBS; j++) want[n++] = j;
  for (int r = 0; r < REPLAYS; r++)
    for (int i = 0; i < JOBS + 1; i++) {
      const int j = (r + i) % (JOBS + 1);
      if (j == JOBS) continue;
      want[n++] = j, want[n++] = j;
    }
  EXPECT(log.n == n, "%d replays ran, %d expected", log.n, n);
  for (int i = 0; i < n && i < log.n; i++)
    EXPECT(log.job[i] == want[i], "replay %d ran job %d, expected %d", i, log.job[i], want[i]);

  for (int j = 0; j < JOBS; j++)
    EXPECT(jobs[j].status == BF16FP32_OK && isfinite(jobs[j].median_ms) && jobs[j].median_ms >= 0,
           "job %d: status %s, median %.6f ms", j, bf16fp32_status_name(jobs[j].status),
           jobs[j].median_ms);
  EXPECT(jobs[JOBS].status == BF16FP32_DECLINED && jobs[JOBS].median_ms < 0,
         "failing job: status %s, median %.6f ms", bf16fp32_status_name(jobs[JOBS].status),
         jobs[JOBS].median_ms);
  return testing_summary("gpu-measure");
}
