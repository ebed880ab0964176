/* Test and tool support: reproducible random operands, output poisoning, the oracle check,
 * and thin GPU memory helpers (which report "no GPU" in a build without CUDA). */
#ifndef BF16FP32_SUPPORT_H
#define BF16FP32_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "bf16fp32.h"
#include "measure.h"
#include "tune-table.h"

/* Fixed bit pattern written into outputs before a run: a signalling NaN no arithmetic makes. */
#define SUP_POISON_BITS BF16FP32__POISON_BITS

uint64_t sup_rng_next(uint64_t *state);
/* count bf16 values uniform in (-0.5, 0.5), never zero (the library's measurement data). */
void sup_fill_bf16(uint16_t *p, size_t count, uint64_t seed);
void sup_poison_f32(float *p, size_t count);
/* 1 when all count elements at p still hold the poison (nothing wrote them). */
int sup_poisoned(const float *p, size_t count);
/* A quiet NaN into every element of buf (size elements) outside the rows x cols operand at start
 * (stride ld): its padding columns, and whatever lies before or after it. A backend that reads
 * one, even to multiply it by a zero, shows in its output. */
void sup_nan_outside(uint16_t *buf, size_t size, const uint16_t *start, int64_t rows, int64_t cols,
                     int64_t ld);
/* Subnormal inputs against large partners (x of at least 4 rows, w of at least 6, k >= 2): row 3
 * of out is exactly 1 at column 4 (x's 2^-127 times w's 2^127) and at column 5 (x's 2^127 times
 * w's 2^-127), their only terms; a backend that reads subnormals as zeros gives 0 there. */
void sup_plant_subnormals(uint16_t *x, int64_t ldx, uint16_t *w, int64_t ldw, int64_t k);

/* Worst element of out against the fp64 oracle, and the elements left unwritten (still the
 * poison) or written outside [m, n) (padding columns up to ldo that no longer hold poison). */
typedef struct sup_check_result {
  double worst_ratio;   /* max |out - ref| / bound over finite refs */
  double worst_err, worst_bound;
  int64_t worst_i, worst_j;
  int64_t violations;   /* elements beyond their bound or with the wrong NaN/Inf class */
  int64_t unwritten;    /* elements still poisoned */
  int64_t overwritten;  /* padding elements that were written */
  int64_t stored_short; /* results stored with fewer significand bits than fp32, when most that
                           need the low 8 bits lack them (bf16fp32__rounding_seen); else 0 */
} sup_check_result;

/* The oracle over `threads` threads: ref and absdot are m x n, row-major. 0 on success. */
int sup_oracle(int64_t m, int64_t n, int64_t k, const uint16_t *x, int64_t ldx, const uint16_t *w,
               int64_t ldw, double *ref, double *absdot, int threads);
/* Compares out (ldo columns) with a precomputed oracle. */
sup_check_result sup_compare(int64_t m, int64_t n, int64_t k, const double *ref, const double *absdot,
                             const float *out, int64_t ldo);

/* Oracle and compare in one: out has ldo columns; padding columns are expected to hold the poison. */
sup_check_result sup_check(int64_t m, int64_t n, int64_t k, const uint16_t *x, int64_t ldx,
                           const uint16_t *w, int64_t ldw, const float *out, int64_t ldo);
int sup_check_ok(const sup_check_result *r);

/* bf16fp32_create with the default options but use_pdl = pdl. */
bf16fp32_status sup_create_pdl(bf16fp32_context **ctx, int pdl);

/* The index of the backend called name in ctx (for bf16fp32_backend_info_get), or -1. */
int sup_backend_index(bf16fp32_context *ctx, const char *name);

/* A tuning-table entry; an empty runner gets no runner-up time (-1). */
bf16fp32__tune_entry sup_tune_entry(int where, int64_t n, int64_t k, int64_t m, const char *winner,
                                    double us, const char *runner, double runner_us, int line);

/* Merges into the tuning file at path the entries for (n, k) at M = m's bucket, plainly and
 * (with ctx's PDL option) under PDL, that name `winner` first and cuBLAS second (1 and 2 us),
 * under the header of ctx's GPU: nothing is timed, so that the tests that use it also run under
 * compute-sanitizer's racecheck (a tune there grew past the H200 machine's 128 GB of host
 * memory, docs/smallm-notes.md, session 64). 0 on success. */
int sup_tune_file_naming(bf16fp32_context *ctx, const char *path, int64_t n, int64_t k, int64_t m,
                         const char *winner);

/* Monotonic clock in seconds. */
double sup_now(void);

/* A test's trace of its launches, on when environment variable `var` is set and not "0": each
 * sup_trace prints the seconds since sup_trace_start and its text, flushed at once, so that a run
 * that stops (a hang under a sanitizer) names the launch it stopped in. */
void sup_trace_start(const char *var);
void sup_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A new directory $TMPDIR/bf16fp32-NAME-XXXXXX (/tmp without TMPDIR) into dir; 0 on success,
 * else non-zero after perror. */
int sup_temp_dir(char *dir, size_t len, const char *name);

/* path and, where it is a directory (not a link to one), everything in it: a test's temporary
 * directory. */
void sup_remove_tree(const char *path);
/* path and its missing parents, as directories (mkdir -p; a failure is printed). */
void sup_make_dirs(const char *path);
/* Writes text to path (created or truncated); a test that cannot stops there (exit 1). */
void sup_write_text(const char *path, const char *text);
/* The whole of a file as a string (malloc'd, the caller frees; /proc files too); NULL when it
 * cannot be opened or memory runs out. */
char *sup_read_text(const char *path);

/* GPU helpers: return 0 on success, non-zero (and print nothing) on failure. */
int sup_gpu_available(void); /* 1 when a CUDA device can be used */
void *sup_gpu_alloc(size_t bytes);
void sup_gpu_free(void *p);
int sup_gpu_upload(void *dst, const void *src, size_t bytes);
int sup_gpu_download(void *dst, const void *src, size_t bytes);
int sup_gpu_sync(void);
void *sup_gpu_stream_create(void);
void sup_gpu_stream_destroy(void *stream);
int sup_gpu_stream_sync(void *stream);
/* Begins a thread-local capture on stream; the CUDA error's code (0: begun). */
int sup_gpu_begin_capture(void *stream);
/* 1 when a capture on stream is active (not invalidated). */
int sup_gpu_capturing(void *stream);
/* Ends the capture on stream and, when it ended cleanly, instantiates the graph and replays it
 * `replays` times (0: none), waiting for them; the graph is then destroyed. Returns the first
 * CUDA error's code (0: all of it ran). */
int sup_gpu_end_capture_and_replay(void *stream, int replays);

#endif
