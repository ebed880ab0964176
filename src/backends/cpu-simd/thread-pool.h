/* cpu-simd's small thread pool: workers made at probe and joined at reset, one job at a time,
 * the calling thread taking part as thread 0. Workers join a job when they can: a worker that
 * was asleep (hundreds of microseconds to wake on a virtual machine) may find the job done, so
 * jobs share their work dynamically rather than wait for every thread. In a child made by fork
 * (whose workers stayed in the parent) jobs run on the caller alone and destroy only frees. */
#ifndef BF16FP32_CPU_SIMD_THREAD_POOL_H
#define BF16FP32_CPU_SIMD_THREAD_POOL_H

typedef struct bf16fp32__pool bf16fp32__pool;

/* The job, called by each thread that joins it (tid in [0, size), each tid at most once at a
 * time); it takes work until none is left. */
typedef void (*bf16fp32__pool_fn)(void *arg, int tid);

/* A pool of `threads` threads in all (threads - 1 workers). Returns NULL when out of memory;
 * when the system refuses some workers the pool keeps the ones it got (see the size). */
bf16fp32__pool *bf16fp32__pool_create(int threads);
/* Threads a job may get (workers plus the caller). */
int bf16fp32__pool_size(const bf16fp32__pool *p);
/* Ownership: 1 when the caller now owns the pool (and what it keeps per thread) until
 * bf16fp32__pool_end; 0 while another caller owns it (that caller should then work alone rather
 * than wait). */
int bf16fp32__pool_begin(bf16fp32__pool *p);
void bf16fp32__pool_end(bf16fp32__pool *p);
/* Owner only: runs fn on the caller (tid 0) and on the workers that join in time; returns when
 * the caller's call has returned and no worker is inside fn. */
void bf16fp32__pool_run(bf16fp32__pool *p, bf16fp32__pool_fn fn, void *arg);
/* Stops and joins the workers, frees the pool. NULL is fine. */
void bf16fp32__pool_destroy(bf16fp32__pool *p);

#endif
