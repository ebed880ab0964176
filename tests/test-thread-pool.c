/* cpu-simd's thread pool: ownership (begin / end), workers joining a job, no thread index
 * inside a job twice at once, the caller once per job, many jobs in a row, and a pool of one
 * thread. A pool whose ownership or workers were broken still gives correct results (the
 * caller works alone), so only this test sees it. */
#include <stdatomic.h>

#include "backends/cpu-simd/thread-pool.h"
#include "support.h"
#include "testing.h"

#define THREADS 4

typedef struct job {
  atomic_int entered[THREADS]; /* per tid: how many times the job was entered */
  atomic_int inside[THREADS];  /* per tid: inside the job now */
  atomic_int overlaps;         /* entries by a tid already inside */
  atomic_int others;           /* entries by tids other than 0 */
  int wait_for_worker;         /* tid 0 waits (bounded) until a worker has joined */
} job;

static void job_fn(void *arg, int tid) {
  job *j = arg;
  if (tid < 0 || tid >= THREADS) return; /* counted as missing below */
  atomic_fetch_add(&j->entered[tid], 1);
  if (atomic_exchange(&j->inside[tid], 1)) atomic_fetch_add(&j->overlaps, 1);
  if (tid != 0) {
    atomic_fetch_add(&j->others, 1);
  } else {
    /* Workers may take hundreds of microseconds to wake: 5 s is far past any of them. */
    const double give_up = sup_now() + 5.0;
    while (j->wait_for_worker && atomic_load(&j->others) == 0 && sup_now() < give_up) {
    }
  }
  atomic_store(&j->inside[tid], 0);
}

static void job_init(job *j, int wait_for_worker) {
  for (int t = 0; t < THREADS; t++) {
    atomic_init(&j->entered[t], 0);
    atomic_init(&j->inside[t], 0);
  }
  atomic_init(&j->overlaps, 0);
  atomic_init(&j->others, 0);
  j->wait_for_worker = wait_for_worker;
}

/* tid 0 entered once, no tid past the size, none twice at once (a worker a job behind may enter
 * the current one again after leaving it: its work is taken, so it leaves at once); returns
 * how many tids entered. */
static int check_entries(job *j, int size) {
  int joined = 0;
  EXPECT(atomic_load(&j->entered[0]) == 1, "the caller entered %d times",
         atomic_load(&j->entered[0]));
  EXPECT(atomic_load(&j->overlaps) == 0, "%d entries by a tid already inside",
         atomic_load(&j->overlaps));
  for (int t = 0; t < THREADS; t++) {
    const int e = atomic_load(&j->entered[t]);
    EXPECT(e == 0 || t < size, "tid %d entered %d times (size %d)", t, e, size);
    joined += e > 0;
  }
  return joined;
}

/* begin gives the pool to one owner at a time and end gives it back. */
static void test_ownership(bf16fp32__pool *p) {
  CHECK(bf16fp32__pool_begin(p) == 1);
  CHECK(bf16fp32__pool_begin(p) == 0); /* owned: a second caller should work alone */
  bf16fp32__pool_end(p);
  CHECK(bf16fp32__pool_begin(p) == 1);
  bf16fp32__pool_end(p);
}

/* A job whose caller waits sees a worker join; many short jobs in a row each end whole. */
static void test_jobs(bf16fp32__pool *p) {
  const int size = bf16fp32__pool_size(p);
  CHECK(size >= 1 && size <= THREADS);
  CHECK(bf16fp32__pool_begin(p) == 1);
  job j;
  job_init(&j, size > 1);
  bf16fp32__pool_run(p, job_fn, &j);
  const int joined = check_entries(&j, size);
  EXPECT(size == 1 || joined >= 2, "no worker joined a job of a pool of %d threads", size);
  for (int r = 0; r < 200; r++) {
    job_init(&j, 0);
    bf16fp32__pool_run(p, job_fn, &j);
    check_entries(&j, size);
  }
  bf16fp32__pool_end(p);
}

int main(void) {
  bf16fp32__pool *p = bf16fp32__pool_create(THREADS);
  CHECK(p != NULL);
  if (p) {
    test_ownership(p);
    test_jobs(p);
    bf16fp32__pool_destroy(p);
  }
  /* One thread: no workers, the caller runs every job alone. */
  bf16fp32__pool *one = bf16fp32__pool_create(1);
  CHECK(one != NULL && bf16fp32__pool_size(one) == 1);
  if (one) {
    test_ownership(one);
    test_jobs(one);
    bf16fp32__pool_destroy(one);
  }
  bf16fp32__pool_destroy(NULL);
  return testing_summary("test-thread-pool");
}
