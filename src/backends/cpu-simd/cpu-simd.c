/* cpu-simd: the fast host backend. Picks the AMX, AVX-512 BF16 or AVX2 kernel (x86) or the NEON
 * kernel (aarch64) at probe from what the CPU and OS support, and splits each call over its own
 * thread pool. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "cpu-simd.h"
#include "fp-mode.h"
#include "thread-pool.h"

/* Below this many multiply-adds a call runs on the caller alone: waking workers costs more. */
#define MIN_PARALLEL_MACS (1 << 17)
/* Shares are multiples of these (the widest tile, the tallest), and rows are taken 32 at a time
 * when the rows are split (few columns, many rows). */
#define COL_GRAIN 8
#define ROW_GRAIN 4
#define ROW_UNIT 32
/* Columns or rows per job: shares are kept in 32-bit halves of one atomic word. */
#define SLICE ((int64_t)1 << 30)

typedef struct simd_state {
  bf16fp32__simd_isa detected;    /* what the machine runs */
  bf16fp32__simd_isa isa;         /* what calls use: detected, or lower when a test forces it */
  bf16fp32__simd_block_fn kernel; /* NULL: the level's own; else a test's */
  bf16fp32__pool *pool;
  /* Per pool thread, used by the pool's owner only: copies of w or x, grown on demand. */
  uint16_t **scratch;
  int64_t *scratch_elems;
} simd_state;

/* A thread's share [next, end) of the columns (or rows) in one atomic word: the thread takes
 * work from the front, threads that ran out take it from the back, and a compare-and-swap keeps
 * them from taking any twice. Padded to a cache line each. */
typedef struct simd_range {
  _Atomic uint64_t v;
  char pad[56];
} simd_range;

typedef struct simd_job {
  bf16fp32__simd_args a;
  bf16fp32__simd_block_fn block;
  int split_n;        /* the shares are columns (else rows) */
  int64_t unit;       /* columns or rows taken at a time: one group or block of the blocking */
  int nt;             /* shares */
  simd_range *ranges; /* one per share */
  uint16_t **scratch; /* one per thread; an entry may be NULL (nothing copied then) */
  int64_t copy_x_ld;  /* > 0: each thread first copies x to its scratch at this stride */
  int daz;            /* the kernel takes bf16 subnormals as zeros (redo_subnormal) */
} simd_job;

bf16fp32__simd_block_fn bf16fp32__simd_block_for(bf16fp32__simd_isa isa) {
#if defined(__aarch64__)
  (void)isa; /* one level */
  return bf16fp32__simd_block_neon;
#elif BF16FP32__SIMD_KERNELS
  return isa == BF16FP32__ISA_AMX          ? bf16fp32__simd_block_amx
         : isa == BF16FP32__ISA_AVX512BF16 ? bf16fp32__simd_block_avx512bf16
                                           : bf16fp32__simd_block_avx2;
#else
  (void)isa; /* not built here; the probe declines (no level) */
  return NULL;
#endif
}

static int take(simd_range *r, int64_t unit, int from_back, int64_t *lo, int64_t *hi) {
  uint64_t v = atomic_load(&r->v);
  for (;;) {
    const uint32_t next = (uint32_t)v, end = (uint32_t)(v >> 32);
    if (next >= end) return 0;
    /* A thin remainder goes with the last unit (see bf16fp32__simd_span_end). */
    const uint32_t size = (uint32_t)(bf16fp32__simd_span_end(next, end, unit) - next);
    const uint64_t nv = from_back ? ((uint64_t)(end - size) << 32) | next
                                  : ((uint64_t)end << 32) | (uint64_t)(next + size);
    if (atomic_compare_exchange_weak(&r->v, &v, nv)) {
      *lo = from_back ? end - size : next;
      *hi = *lo + size;
      return 1;
    }
  }
}

static int row_subnormal(const uint16_t *p, int64_t k) {
#if defined(__x86_64__) || defined(__i386__)
  return bf16fp32__simd_subnormal_avx2(p, k);
#else
  (void)p, (void)k;
  return 0; /* only x86's levels take subnormals as zeros */
#endif
}

static int rows_subnormal(const uint16_t *p, int64_t rows, int64_t ld, int64_t k) {
  for (int64_t i = 0; i < rows; i++)
    if (row_subnormal(p + i * ld, k)) return 1;
  return 0;
}

/* VDPBF16PS and TDPBF16PS take bf16 subnormal inputs as zeros: a subnormal x times a large w
 * (2^-133 * 2^127 = 2^-6) was lost whole, far past the error bound. The elements of a share
 * whose x row or w row holds one are computed again by the AVX2 kernel, which widens bf16
 * exactly. Which kernel an element gets depends on its own two rows alone, so results stay
 * deterministic and batch-invariant. The kernel looked at the share's w rows as it read them
 * (w_seen: one held a subnormal), and only then are they scanned, to find which. x is scanned
 * here, after the kernel read it (from cache, in every thread at once; a scan of x by the caller
 * before the threads started cost 8-18 % at M = 16 on AMX, geometric means): a share of rows
 * scans its own, a thread with shares of columns all of x once (*x_seen: -1 until it has). */
static void redo_subnormal(const simd_job *j, const bf16fp32__simd_args *a, int64_t lo,
                           int64_t hi, int w_seen, int *x_seen) {
  const bf16fp32__simd_block_fn exact = bf16fp32__simd_block_for(BF16FP32__ISA_AVX2);
  const int64_t m0 = j->split_n ? 0 : lo, m1 = j->split_n ? a->m : hi;
  const int64_t n0 = j->split_n ? lo : 0, n1 = j->split_n ? hi : a->n;
  if (j->split_n && *x_seen < 0) *x_seen = rows_subnormal(a->x, a->m, a->ldx, a->k);
  if (!j->split_n || *x_seen)
    for (int64_t i = m0; i < m1; i++)
      if (row_subnormal(a->x + i * a->ldx, a->k)) exact(a, i, i + 1, n0, n1, NULL);
  if (w_seen)
    for (int64_t c = n0; c < n1; c++)
      if (row_subnormal(a->w + c * a->ldw, a->k)) exact(a, m0, m1, c, c + 1, NULL);
}

/* Each thread works through its own share (the even split: nothing changes hands when all
 * threads are there), then helps the others from the back of theirs (a thread that joined late
 * or was descheduled costs only what it had not started). Results do not depend on who computes
 * what: each element is reduced in one fixed order. */
static void job_part(void *arg, int tid) {
  const bf16fp32__fp_mode mode = bf16fp32__fp_mode_ieee(); /* subnormals kept in every thread */
  simd_job *j = arg;
  bf16fp32__simd_args a = j->a;
  a.x_cold = 1;
  uint16_t *scratch = j->scratch[tid];
  int copied = 0, x_seen = -1;
  for (int v = tid < j->nt ? 0 : 1; v < j->nt; v++) {
    simd_range *r = &j->ranges[(tid + v) % j->nt];
    int64_t lo, hi;
    while (take(r, j->unit, v > 0, &lo, &hi)) {
      if (j->copy_x_ld && scratch && !copied) {
        /* x's rows compete with w's for L1 sets: work from a copy at a padded stride (the
         * kernels then see no aliasing and copy nothing themselves). */
        for (int64_t i = 0; i < a.m; i++)
          memcpy(scratch + i * j->copy_x_ld, a.x + i * a.ldx, (size_t)a.k * 2);
        a.x = scratch;
        a.ldx = j->copy_x_ld;
        scratch = NULL;
        copied = 1;
      }
      const int w_seen = j->split_n ? j->block(&a, 0, a.m, lo, hi, scratch)
                                    : j->block(&a, lo, hi, 0, a.n, scratch);
      if (j->daz) redo_subnormal(j, &a, lo, hi, w_seen, &x_seen);
      a.x_cold = !j->split_n; /* a share of columns meets the same x rows again */
    }
  }
  bf16fp32__fp_mode_restore(mode);
}

static bf16fp32_status simd_probe(const bf16fp32__config *cfg, void **state, char *why,
                                  size_t len) {
  *state = NULL;
  bf16fp32__simd_isa isa = bf16fp32__simd_detect();
  /* BF16FP32_CPU_ISA caps the level (another machine's bits, or a comparison of levels). */
  const bf16fp32__simd_isa cap =
      cfg ? bf16fp32__simd_isa_from_name(cfg->cpu_isa) : BF16FP32__ISA_NONE;
  if (cap != BF16FP32__ISA_NONE && (cap < BF16FP32__ISA_LOWEST || cap > BF16FP32__ISA_HIGHEST)) {
    if (why && len)
      snprintf(why, len, "BF16FP32_CPU_ISA=%s is not a level of this architecture", cfg->cpu_isa);
    return BF16FP32_BACKEND_UNAVAILABLE;
  }
  const int capped = isa != BF16FP32__ISA_NONE && cap != BF16FP32__ISA_NONE && cap < isa;
  if (capped) isa = cap;
  if (isa == BF16FP32__ISA_NONE) {
    if (why && len)
      snprintf(why, len, "%s",
               BF16FP32__ISA_LOWEST == BF16FP32__ISA_AVX2
                   ? "needs AVX2 and FMA with the OS saving YMM state"
               : BF16FP32__ISA_LOWEST == BF16FP32__ISA_NEON
                   ? "needs Advanced SIMD (NEON), which the OS does not report"
                   : "its kernels are x86 (AVX2, AVX-512 BF16) and aarch64 (NEON) code");
    return BF16FP32_BACKEND_UNAVAILABLE;
  }
  simd_state *s = calloc(1, sizeof *s);
  if (!s) {
    if (why && len) snprintf(why, len, "out of memory");
    return BF16FP32_OUT_OF_MEMORY;
  }
  s->detected = s->isa = isa;
  /* Workers the system refuses leave a smaller pool, still correct: results do not depend on
   * the thread count. */
  int threads = cfg && cfg->cpu_threads > 0 ? cfg->cpu_threads : 1;
  if (threads > BF16FP32__SIMD_MAX_THREADS) threads = BF16FP32__SIMD_MAX_THREADS;
  s->pool = bf16fp32__pool_create(threads);
  if (s->pool) {
    s->scratch = calloc((size_t)bf16fp32__pool_size(s->pool), sizeof *s->scratch);
    s->scratch_elems = calloc((size_t)bf16fp32__pool_size(s->pool), sizeof *s->scratch_elems);
  }
  if (!s->pool || !s->scratch || !s->scratch_elems) {
    bf16fp32__pool_destroy(s->pool);
    free(s->scratch);
    free(s->scratch_elems);
    free(s);
    if (why && len) snprintf(why, len, "out of memory");
    return BF16FP32_OUT_OF_MEMORY;
  }
  if (why && len) {
    const int size = bf16fp32__pool_size(s->pool);
    snprintf(why, len, "%s kernel%s, %d thread%s", bf16fp32__simd_isa_name(isa),
             capped ? " (BF16FP32_CPU_ISA)" : "", size, size == 1 ? "" : "s");
  }
  *state = s;
  return BF16FP32_OK;
}

static bool simd_supports(const void *state, const bf16fp32__shape *s) {
  (void)state;
  return s->where == BF16FP32_HOST; /* any size, stride and 2-byte alignment */
}

static bf16fp32_status simd_prewarm(void *state, const bf16fp32__shape *s, const char *variant,
                                    void *stream) {
  (void)variant; /* no variants */
  (void)state;
  (void)s;
  (void)stream;
  return BF16FP32_OK; /* nothing lazy: the pool exists since probe */
}

/* Scratch of `elems` for thread tid of the pool's owner; NULL when memory is short (the kernels
 * then read w in place: slower for large m, same results). */
static uint16_t *scratch_for(simd_state *st, int tid, int64_t elems) {
  if (st->scratch_elems[tid] < elems) {
    free(st->scratch[tid]);
    st->scratch[tid] = bf16fp32__simd_scratch_alloc(elems);
    st->scratch_elems[tid] = st->scratch[tid] ? elems : 0;
  }
  return st->scratch[tid];
}

/* Runs one job (all of a call, or a slice of a huge one) on the pool or, when another thread's
 * call holds the pool, alone with scratch of its own. */
static void run_job(simd_state *st, simd_job *job, int64_t total, int64_t grain, int alone,
                    int wants_scratch) {
  const int64_t elems = bf16fp32__simd_scratch_elems(job->a.k);
  const int64_t grains = (total + grain - 1) / grain;
  simd_range ranges[BF16FP32__SIMD_MAX_THREADS];
  uint16_t *scratch[BF16FP32__SIMD_MAX_THREADS];
  job->ranges = ranges;
  job->scratch = scratch;
  if (bf16fp32__pool_begin(st->pool)) {
    job->nt = alone ? 1 : bf16fp32__pool_size(st->pool);
    for (int t = 0; t < job->nt; t++) {
      int64_t lo = grains * t / job->nt * grain, hi = grains * (t + 1) / job->nt * grain;
      if (hi > total) hi = total;
      if (lo > hi) lo = hi;
      atomic_init(&ranges[t].v, ((uint64_t)hi << 32) | (uint64_t)lo);
      scratch[t] = wants_scratch ? scratch_for(st, t, elems) : NULL;
    }
    if (alone) job_part(job, 0);
    else bf16fp32__pool_run(st->pool, job_part, job);
    bf16fp32__pool_end(st->pool);
  } else {
    scratch[0] = wants_scratch ? bf16fp32__simd_scratch_alloc(elems) : NULL;
    atomic_init(&ranges[0].v, (uint64_t)total << 32);
    job->nt = 1;
    job_part(job, 0);
    free(scratch[0]);
  }
}

static bf16fp32_status simd_run(void *state, const bf16fp32__call *c) {
  simd_state *st = state;
  const bf16fp32__shape *s = &c->shape;
  if (s->where != BF16FP32_HOST) return BF16FP32_DECLINED;
  const int size = bf16fp32__pool_size(st->pool);
  simd_job job = {
      .a = {c->x, c->w, c->out, s->m, s->n, s->k, s->ldx, s->ldw, s->ldo, .x_cold = 0},
      .block = st->kernel ? st->kernel : bf16fp32__simd_block_for(st->isa),
  };
  /* Columns: each thread then streams its own part of w (M = 1). Rows when the columns are too
   * few to go round and the rows are many. Shares are multiples of the widest tile (or of row
   * tiles), taken a group (or an L2 block) of the blocking at a time. */
  const int few = s->m <= BF16FP32__SIMD_FEW_ROWS;
  const int64_t col_grains = (s->n + COL_GRAIN - 1) / COL_GRAIN;
  job.split_n = col_grains >= 2 * size || col_grains >= (s->m + ROW_GRAIN - 1) / ROW_GRAIN;
  const int amx = st->isa == BF16FP32__ISA_AMX;
  job.unit = !job.split_n ? ROW_UNIT
             : amx        ? (few ? BF16FP32__AMX_PASS_COLS : BF16FP32__AMX_UNIT_COLS)
             : few        ? BF16FP32__SIMD_GROUP
                          : bf16fp32__simd_w_block_rows(s->k);
  const int64_t total = job.split_n ? s->n : s->m, grain = job.split_n ? COL_GRAIN : ROW_GRAIN;
  const int alone = size == 1 || total <= grain ||
                    (double)s->m * (double)s->n * (double)s->k < MIN_PARALLEL_MACS;
  /* Few rows that alias w in L1 are copied whole by each thread first (cheap: few rows);
   * sweeps of many rows copy w instead. Both need scratch. */
  const int copy_x = few && bf16fp32__simd_should_copy_x(s->m, c->x, s->ldx, c->w, s->ldw);
  job.copy_x_ld = copy_x ? bf16fp32__simd_packed_ld(s->k) : 0;
  /* The AMX kernel packs w for sweeps of more than one pass of rows. */
  const int amx_panels = amx && s->m > BF16FP32__AMX_PASS_ROWS;
  const int wants_scratch = copy_x || amx_panels || bf16fp32__simd_should_pack(s->m, s->ldw);
  /* The levels whose instructions take bf16 subnormals as zeros look for them (redo_subnormal). */
  job.daz = st->isa == BF16FP32__ISA_AVX512BF16 || st->isa == BF16FP32__ISA_AMX;
  /* Shares are 32-bit: a call beyond that (4 G columns or rows) goes in slices. */
  for (int64_t off = 0; off < total; off += SLICE) {
    simd_job part = job;
    const int64_t len = total - off < SLICE ? total - off : SLICE;
    if (job.split_n) {
      part.a.w += off * s->ldw;
      part.a.out += off;
      part.a.n = len;
    } else {
      part.a.x += off * s->ldx;
      part.a.out += off * s->ldo;
      part.a.m = len;
    }
    run_job(st, &part, len, grain, alone, wants_scratch);
  }
  return BF16FP32_OK;
}

static void simd_reset(void *state) {
  simd_state *s = state;
  if (!s) return;
  const int size = bf16fp32__pool_size(s->pool);
  bf16fp32__pool_destroy(s->pool);
  for (int t = 0; t < size; t++) free(s->scratch[t]);
  free(s->scratch);
  free(s->scratch_elems);
  free(s);
}

int bf16fp32__cpu_simd_force_isa(void *state, bf16fp32__simd_isa isa) {
  simd_state *s = state;
  if (!s || isa == BF16FP32__ISA_NONE || isa < BF16FP32__ISA_LOWEST || isa > s->detected)
    return -1;
  s->isa = isa;
  s->kernel = NULL;
  return 0;
}

int bf16fp32__cpu_simd_force_kernel(void *state, bf16fp32__simd_isa isa,
                                    bf16fp32__simd_block_fn block) {
  simd_state *s = state;
  if (!s || !block || isa < BF16FP32__ISA_LOWEST || isa > BF16FP32__ISA_HIGHEST ||
      isa == BF16FP32__ISA_NONE)
    return -1;
  s->isa = isa;
  s->kernel = block;
  return 0;
}

bf16fp32__simd_isa bf16fp32__cpu_simd_isa(const void *state) {
  const simd_state *s = state;
  return s ? s->isa : BF16FP32__ISA_NONE;
}

int bf16fp32__cpu_simd_threads(const void *state) {
  const simd_state *s = state;
  return s ? bf16fp32__pool_size(s->pool) : 0;
}

const bf16fp32__backend bf16fp32__backend_cpu_simd = {
    .name = "cpu-simd",
    .where = BF16FP32_HOST,
    .probe = simd_probe,
    .supports = simd_supports,
    .prewarm = simd_prewarm,
    .run = simd_run,
    .reset = simd_reset,
};
