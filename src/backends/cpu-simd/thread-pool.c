/* cpu-simd's thread pool. Workers spin a while after a job (back-to-back calls, like a decode
 * loop's, then start at once), then sleep on a condition variable. The caller never waits for a
 * worker to wake: a job is closed when the caller's part returns, and only workers already
 * inside it are waited for. */
#include "thread-pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* How long an idle worker spins before sleeping. Measured on the 2-vCPU VM: a sleeping worker
 * takes 250-700 us to wake, so calls closer together than this keep their second thread. */
#define SPIN_NS 500000

struct bf16fp32__pool {
  int size;    /* threads a job may get: workers + the caller */
  int started; /* workers actually running */
  pid_t owner; /* the process that started them: a fork's child has none of them */
  pthread_t *workers;
  pthread_mutex_t busy; /* held by the caller that owns the pool (begin .. end) */
  pthread_mutex_t lock; /* with wake: sleeping and waking workers */
  pthread_cond_t wake;
  int sleepers;             /* under lock */
  atomic_uint_fast64_t gen; /* bumped (under lock) for each job and for stop */
  /* Joining (a Dekker pair, sequentially consistent): a worker counts itself in `active`, then
   * reads `closed`; the owner sets `closed`, then waits for `active` to drain. Either the owner
   * sees the worker and waits for it, or the worker sees the job closed and leaves it. */
  atomic_int active;
  atomic_int closed;
  atomic_int stop;
  /* The current job: written while closed, read only by workers that joined it. */
  bf16fp32__pool_fn fn;
  void *arg;
};

typedef struct worker_arg {
  bf16fp32__pool *pool;
  int tid;
} worker_arg;

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Waits for gen to move past seen: spin, then sleep. Returns the new gen. */
static uint64_t wait_job(bf16fp32__pool *p, uint64_t seen) {
  uint64_t g, t0 = 0;
  for (unsigned i = 0;; i++) {
    g = atomic_load_explicit(&p->gen, memory_order_acquire);
    if (g != seen) return g;
    cpu_relax();
    if ((i & 127) == 127) {
      uint64_t t = now_ns();
      if (!t0) t0 = t;
      else if (t - t0 > SPIN_NS) break;
    }
  }
  pthread_mutex_lock(&p->lock);
  p->sleepers++;
  while ((g = atomic_load_explicit(&p->gen, memory_order_acquire)) == seen)
    pthread_cond_wait(&p->wake, &p->lock);
  p->sleepers--;
  pthread_mutex_unlock(&p->lock);
  return g;
}

static void *worker_main(void *v) {
  worker_arg *wa = v;
  bf16fp32__pool *p = wa->pool;
  const int tid = wa->tid;
  free(wa);
  uint64_t seen = 0;
  for (;;) {
    seen = wait_job(p, seen);
    if (atomic_load(&p->stop)) return NULL;
    atomic_fetch_add(&p->active, 1);
    if (!atomic_load(&p->closed)) p->fn(p->arg, tid);
    atomic_fetch_sub_explicit(&p->active, 1, memory_order_release);
  }
}

/* Publishes a job (or stop): gen moves under lock so no sleeper misses it. */
static void bump(bf16fp32__pool *p) {
  pthread_mutex_lock(&p->lock);
  atomic_fetch_add_explicit(&p->gen, 1, memory_order_release);
  if (p->sleepers) pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->lock);
}

bf16fp32__pool *bf16fp32__pool_create(int threads) {
  if (threads < 1) threads = 1;
  bf16fp32__pool *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->workers = calloc((size_t)threads, sizeof *p->workers);
  if (!p->workers) {
    free(p);
    return NULL;
  }
  pthread_mutex_init(&p->busy, NULL);
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->wake, NULL);
  atomic_init(&p->gen, 0);
  atomic_init(&p->active, 0);
  atomic_init(&p->closed, 1);
  atomic_init(&p->stop, 0);
  p->owner = getpid();
  for (int i = 1; i < threads; i++) {
    worker_arg *wa = malloc(sizeof *wa);
    if (!wa) break;
    wa->pool = p;
    wa->tid = i;
    if (pthread_create(&p->workers[p->started], NULL, worker_main, wa) != 0) {
      free(wa);
      break;
    }
    p->started++;
  }
  p->size = p->started + 1;
  return p;
}

int bf16fp32__pool_size(const bf16fp32__pool *p) { return p ? p->size : 1; }

int bf16fp32__pool_begin(bf16fp32__pool *p) { return pthread_mutex_trylock(&p->busy) == 0; }

void bf16fp32__pool_end(bf16fp32__pool *p) { pthread_mutex_unlock(&p->busy); }

/* In a child made by fork the workers are gone, and the lock and condition variable are in
 * whatever state the parent's threads left them (a sleeping worker counted as a waiter: a
 * destroy would wait for it forever). The child runs every job alone and only frees. */
static bool forked(const bf16fp32__pool *p) { return getpid() != p->owner; }

void bf16fp32__pool_run(bf16fp32__pool *p, bf16fp32__pool_fn fn, void *arg) {
  if (p->started == 0 || forked(p)) {
    fn(arg, 0);
    return;
  }
  p->fn = fn;
  p->arg = arg;
  atomic_store(&p->closed, 0);
  bump(p);
  fn(arg, 0);
  atomic_store(&p->closed, 1);
  for (unsigned i = 0; atomic_load(&p->active) != 0; i++) {
    cpu_relax();
    if (i > (1u << 14)) sched_yield(); /* a worker inside was descheduled: give it the core */
  }
}

void bf16fp32__pool_destroy(bf16fp32__pool *p) {
  if (!p) return;
  if (forked(p)) {
    free(p->workers);
    free(p);
    return;
  }
  atomic_store(&p->stop, 1);
  bump(p);
  for (int i = 0; i < p->started; i++) pthread_join(p->workers[i], NULL);
  pthread_cond_destroy(&p->wake);
  pthread_mutex_destroy(&p->lock);
  pthread_mutex_destroy(&p->busy);
  free(p->workers);
  free(p);
}
