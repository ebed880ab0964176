/* Timing by the protocol of MEASURING.md, shared by `bf16fp32 bench` and the tuner:
 * GPU: graph replay of many calls over rotating operand copies (cold L2), interleaved
 * candidates, median of replays; CPU: median wall time. Each candidate's output is checked
 * against the fp64 oracle (sampled rows, every element for unwritten poison) before it is timed. */
#ifndef BF16FP32_MEASURE_H
#define BF16FP32_MEASURE_H

#include "internal.h"
#include "measure-floor.h"

/* Host operands a caller already made, for a host measure to time over instead of making its
 * own (the bench's oneDNN baseline, so that the two share one rotation and one oracle): copy i of
 * x at x + i * xstride and of w at w + i * wstride (elements; rows of k, contiguous), copies >= 1,
 * and ref the fp64 oracle of copy 0 at the measure's m, n and k. */
typedef struct bf16fp32__host_operands {
  const uint16_t *x, *w;
  size_t copies, xstride, wstride;
  const struct bf16fp32__check_ref *ref;
  /* the copies whose x or w the caller flipped (bf16fp32__flipped_copies), checked after the
   * timed calls as the measure's own are; 0: none (copy 0 never is) */
  size_t x_flipped, w_flipped;
} bf16fp32__host_operands;

typedef struct bf16fp32__measure_opts {
  int calls_per_graph;   /* GPU: calls captured in one graph (>= 200; more for small shapes) */
  int replays;           /* median over this many timed replays / CPU runs (>= 5) */
  int warmup;            /* untimed replays / runs first */
  size_t rotate_bytes;   /* GPU: total bytes of distinct operand copies (>= 400 MB) */
  int check_rows;        /* rows compared with the oracle (0: all rows) */
  uint64_t seed;         /* random operands in [-0.5, 0.5] */
  /* added: GPU stream (cudaStream_t) to prewarm, check, capture and replay on; not the legacy
   * default stream. NULL: a fresh stream per measure. Pass one stream for a whole run: the
   * library keeps per-stream state (cuBLAS handle, workspace, scratch; at most 64 streams per
   * backend) keyed by the stream value until reset. */
  void *stream;
  /* added: the host measure's operands when the caller made them; NULL: its own */
  const bf16fp32__host_operands *host;
} bf16fp32__measure_opts;

void bf16fp32__measure_defaults(bf16fp32__measure_opts *o);

/* One thing to time. run computes one call (for a library backend: that backend alone; for
 * the baseline: a direct cuBLAS call). The measure fills the results. */
typedef struct bf16fp32__candidate {
  const char *name;
  bf16fp32_status (*run)(void *user, const bf16fp32__call *call);
  /* Optional: lazy work done before the check and capture (handles, plans) for this shape. */
  bf16fp32_status (*prewarm)(void *user, const bf16fp32__shape *s, void *stream);
  void *user;
  /* results */
  bf16fp32_status status; /* OK, or why it has no time (DECLINED, a failure, wrong result) */
  double median_us;       /* per call; < 0 when not timed */
  /* per call, the fastest and slowest timed replay (the noise, as measured); <= 0 when not
   * known: not timed, or a time derived from others (a tuner's) */
  double min_us, max_us;
  double worst_ratio;     /* worst |err| / bound in the checked rows */
  /* results (added): the oracle check's findings; wrong != 0 comes with status INTERNAL */
  int wrong;              /* 1 when the output failed the check (eager run or graph replay) */
  int64_t unwritten;      /* output elements still holding the poison */
  int64_t violations;     /* checked elements beyond their bound */
  char detail[256];       /* why status is not OK: the last error or the check's finding */
  /* timed: the distinct operand bytes its calls rotated over, and 1 where that is less than the
   * protocol's (a toy shape's copies hit the call cap first): caches may then hold them */
  size_t rotated_bytes;
  int warm;
} bf16fp32__candidate;

/* Times every candidate on the contiguous shape (m, n, k) at `where`, interleaving them in
 * each replay round. Returns non-OK only when nothing could be measured (no device, OOM); every
 * candidate left without a time then carries that status. */
bf16fp32_status bf16fp32__measure(bf16fp32_location where, int64_t m, int64_t n, int64_t k,
                                  bf16fp32__candidate *cands, int count,
                                  const bf16fp32__measure_opts *opt);

/* Marks a candidate failed with status s and this thread's last error as the detail; its times
 * become unknown. */
void bf16fp32__candidate_fail(bf16fp32__candidate *c, bf16fp32_status s);
/* Marks a candidate's result wrong: status INTERNAL, no time, `why` as the detail. */
void bf16fp32__candidate_wrong(bf16fp32__candidate *c, const char *why);

/* Host timing rotates its operands over distinct copies of at least this many bytes, so that a
 * timed call streams its weights from memory as in serving; over twice the machine's last-level
 * cache where that is more (bf16fp32__host_rotate_bytes). */
#define BF16FP32__HOST_ROTATE_BYTES ((size_t)256 << 20)
/* The host rotation's bytes for a machine of cache_bytes of last-level cache and memory_bytes of
 * memory (0: not known): twice the cache, at least BF16FP32__HOST_ROTATE_BYTES, at most an
 * eighth of the memory where that is more than the least. */
size_t bf16fp32__host_rotate_bytes_for(size_t cache_bytes, size_t memory_bytes);
/* ... for this machine: its last-level cache as cache-size.h reads it (all of its instances, as
 * every thread of a call may read from its own) and its physical memory. */
size_t bf16fp32__host_rotate_bytes(void);
/* The cap bounds the call table and the copying for toy shapes; copies of 64 KiB and more still
 * reach BF16FP32__HOST_ROTATE_BYTES, and of a 4096th of the rotation the whole of it (every DSV4
 * weight, 2 MiB and more, up to 8 GiB of rotation). It was 64: a router's 2 MiB made 128 MiB,
 * which a 300 MiB L3 partly held. */
#define BF16FP32__HOST_MAX_COPIES 4096
/* How many copies of bytes_per_copy make the host rotation (bf16fp32__host_rotate_bytes; at
 * least 1). */
size_t bf16fp32__host_copies(size_t bytes_per_copy);

/* A GPU graph of the protocol's calls (200) over one operand copy per call reads under
 * MEASURING.md's 400 MB of distinct copies where a copy is under 2 MB (none of DSV4's shapes;
 * a 64 x 96 toy rotated 2.5 MB, which L2 held): such a graph takes more calls, one copy each,
 * up to the cap (16384 calls of a toy's 12.5 KB still make 200 MB, over three times L2). */
#define BF16FP32__DEVICE_COLD_BYTES ((size_t)400 * 1000 * 1000)
#define BF16FP32__DEVICE_PROTOCOL_CALLS 200
#define BF16FP32__DEVICE_MAX_CALLS 16384
/* The calls per graph of a device measure that asked for `calls` with copies of bytes_per_copy:
 * `calls` itself below the protocol's (a quick run asked for) or where they already make
 * BF16FP32__DEVICE_COLD_BYTES. */
int bf16fp32__device_graph_calls(size_t bytes_per_copy, int calls);

/* Marks a timed candidate with the bytes its calls rotated over (warm where under the least
 * the protocol asks at `where`: BF16FP32__DEVICE_COLD_BYTES, or this host's rotation). */
void bf16fp32__candidate_rotated(bf16fp32__candidate *c, bf16fp32_location where, size_t bytes);

/* The median of n values (sorts v in place). */
double bf16fp32__median(double *v, int n);
/* A candidate's per-call median, min and max from its n samples (sorted in place), each sample
 * the time of `calls` calls in `unit_us` microseconds. */
void bf16fp32__candidate_times(bf16fp32__candidate *c, double *samples, int n, double unit_us,
                               int calls);

/* The floor F of MEASURING.md in microseconds: bf16fp32__floor_us, in measure-floor.h. */

/* --- added: the pieces the measure is made of, for the decode-step benchmark and the tuner --- */

/* Several graphs timed in one run: each job's prepare (optional: prewarm, an eager run) runs on
 * one stream (bf16fp32__time_graphs_on's), then its record is captured and instantiated, its arm
 * (optional: poison the outputs) runs, the graph is replayed once and its check (optional:
 * compare the outputs) runs after that replay; then warm-up replays and timed rounds with the
 * jobs interleaved (the first job rotates each round; each timed replay follows an untimed one of
 * the same graph). The poison goes after the capture so that outputs written by work that ran
 * outside it (on another stream, at once) are not taken for the replay's. A job whose prepare,
 * record, arm or check fails, or whose graph holds fewer nodes than min_nodes, gets that status
 * (INTERNAL for the short graph) and no time; the call returns non-OK only when nothing could be
 * timed because of the stream or device (NO_DEVICE, OUT_OF_MEMORY, fatal). */
typedef struct bf16fp32__graph_job {
  bf16fp32_status (*prepare)(void *user, void *stream);
  bf16fp32_status (*record)(void *user, void *stream);
  bf16fp32_status (*arm)(void *user, void *stream);
  bf16fp32_status (*check)(void *user, void *stream);
  void *user;
  /* the calls record captures: each puts at least one kernel or copy into the graph (0: not
   * checked) */
  int min_nodes;
  bf16fp32_status status; /* result */
  double median_ms;       /* result: median replay; < 0 when not timed */
  char detail[160];       /* result: why the run itself failed the job (its hooks keep their own) */
} bf16fp32__graph_job;

/* The jobs timed on the caller's stream (not the legacy default stream; NULL: a fresh one, for
 * a single run). A run of many timings passes one stream to all: the backends keep per-stream
 * state (measure_opts.stream), and graphs timed on a fresh stream per run were slower from the
 * second run on (session 83). */
bf16fp32_status bf16fp32__time_graphs_on(bf16fp32__graph_job *jobs, int count, int warmup,
                                         int replays, void *stream);

/* The fixed bit pattern written into outputs before a checked run (a signalling NaN that no
 * arithmetic produces; the same as SUP_POISON_BITS). */
#define BF16FP32__POISON_BITS 0x7fbadbadu

/* count bf16 values uniform in [-0.5, 0.5), never zero, reproducible from seed. */
void bf16fp32__fill_random_bf16(uint16_t *p, size_t count, uint64_t seed);
void bf16fp32__poison_f32(float *p, size_t count);

/* The fp64 oracle on sampled rows of one (m, n, k) problem, computed once and compared with
 * any number of outputs. Rows: all when m <= check_rows or check_rows == 0, else the first,
 * the last and evenly spread rows with a seeded jitter (at least those two). */
typedef struct bf16fp32__check_ref {
  int64_t m, n, k;
  int rows;          /* sampled rows */
  int64_t *row;      /* their indices, increasing */
  double *ref;       /* rows x n */
  double *absdot;    /* rows x n */
} bf16fp32__check_ref;

typedef struct bf16fp32__check_result {
  double worst_ratio;      /* max |out - ref| / bound over the sampled rows' finite refs */
  int64_t worst_row, worst_col;
  int64_t violations;      /* sampled elements beyond their bound (or wrong NaN/Inf class) */
  int64_t unwritten;       /* elements of the whole output still holding the poison */
  bf16fp32__rounding_tally rounding; /* over the sampled rows: results stored short? */
} bf16fp32__check_result;

/* x, w: host copies of the operands. Uses up to one thread per core. */
bf16fp32_status bf16fp32__check_ref_init(bf16fp32__check_ref *r, int64_t m, int64_t n, int64_t k,
                                         const uint16_t *x, int64_t ldx, const uint16_t *w,
                                         int64_t ldw, int check_rows, uint64_t seed);
void bf16fp32__check_ref_free(bf16fp32__check_ref *r);
/* out: host copy of the whole output, m rows of ldo floats (columns >= n are not looked at). */
void bf16fp32__check_ref_compare(const bf16fp32__check_ref *r, const float *out, int64_t ldo,
                                 bf16fp32__check_result *res);
/* The same for the output of a flipped copy, whose x or w has every sign flipped: its exact
 * result is the oracle's negated (bf16fp32__flip_signs). */
void bf16fp32__check_ref_compare_flipped(const bf16fp32__check_ref *r, const float *out,
                                         int64_t ldo, bf16fp32__check_result *res);
/* Flips the sign bit of count bf16 values. The timed calls rotate over copies of the operands,
 * and each measure flips x in its last copy and w in the one before: a candidate that computed
 * from stale pointers (an earlier copy's operands, in cache) gives the unflipped result there,
 * which the check of those copies finds; all copies holding the same values it could not. */
void bf16fp32__flip_signs(uint16_t *p, size_t count);
/* The copies a measure of `copies` flips: x in the last (*x_copy), w in the one before
 * (*w_copy); 0 where there is no such copy besides copy 0 (which is never flipped). */
void bf16fp32__flipped_copies(size_t copies, size_t *x_copy, size_t *w_copy);
/* 1 when the result passes (no violation, nothing unwritten); else 0 with a line in msg. */
int bf16fp32__check_ok(const bf16fp32__check_result *res, char *msg, size_t len);
/* Adds one check's findings to a candidate (its worst ratio, unwritten and violating elements)
 * and marks it wrong where the check failed. */
void bf16fp32__candidate_record_check(bf16fp32__candidate *c, const bf16fp32__check_result *res);

#ifdef BF16FP32_HAVE_CUDA
/* cuda-measure.c: the device half of bf16fp32__measure, and the device poison fill. */
bf16fp32_status bf16fp32__measure_device(int64_t m, int64_t n, int64_t k,
                                         bf16fp32__candidate *cands, int count,
                                         const bf16fp32__measure_opts *opt);
bf16fp32_status bf16fp32__time_graphs_device(bf16fp32__graph_job *jobs, int count, int warmup,
                                             int replays, void *stream);
/* Writes BF16FP32__POISON_BITS into count floats of device memory, ordered on stream. */
bf16fp32_status bf16fp32__device_poison_f32(float *dev, size_t count, void *stream);
#endif

#endif
