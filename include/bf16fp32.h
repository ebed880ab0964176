/* bf16fp32: out[M,N] (fp32) = x[M,K] (bf16) . w[N,K]^T (bf16), fp32 accumulation,
 * on the best backend for each shape. The only public header; no CUDA headers here. */
#ifndef BF16FP32_H
#define BF16FP32_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BF16FP32_VERSION "0.1.0"

/* Every status the library returns: X(NAME, message). 0 is success. */
#define BF16FP32_STATUS_MAP(X)                                                              \
  X(OK, "success")                                                                          \
  X(NULL_POINTER, "a required pointer is NULL")                                             \
  X(BAD_SIZE, "a size (M, N, K or a count) is negative or too large")                       \
  X(BAD_LEADING_DIM, "a leading dimension is smaller than its row length")                  \
  X(MISALIGNED, "a pointer is not aligned to its element size")                             \
  X(WRONG_MEMORY, "a pointer's memory (host or device) does not match the call")            \
  X(BAD_OPTION, "an option has an invalid value")                                           \
  X(BAD_ENV, "an environment variable has an invalid value")                                \
  X(UNKNOWN_BACKEND, "no backend has this name")                                            \
  X(BACKEND_UNAVAILABLE, "the backend is not usable in this process")                       \
  X(DECLINED, "the backend does not handle this shape")                                     \
  X(UNSUPPORTED, "no available backend handles this call")                                  \
  X(NOT_PREWARMED, "shape met during CUDA graph capture without prewarm and no capture-safe backend") \
  X(NO_DEVICE, "no usable CUDA device (or the library was built without CUDA)")             \
  X(OUT_OF_MEMORY, "memory allocation failed")                                              \
  X(CUDA_ERROR, "a CUDA call failed (recoverable)")                                         \
  X(CUDA_FATAL, "a sticky CUDA error: the CUDA context is unusable")                        \
  X(CAPTURE_BROKEN, "the stream's CUDA graph capture was invalidated")                      \
  X(CUBLAS_ERROR, "a cuBLAS or cuBLASLt call failed")                                       \
  X(TUNE_FILE, "the tuning file cannot be read or is corrupt")                             \
  X(IO_ERROR, "a file could not be read or written")                                        \
  X(INTERNAL, "internal error")                                                             \
  X(OVERLAP, "out shares memory with x or w")

typedef enum bf16fp32_status {
#define BF16FP32_STATUS_ENUM(name, msg) BF16FP32_##name,
  BF16FP32_STATUS_MAP(BF16FP32_STATUS_ENUM)
#undef BF16FP32_STATUS_ENUM
  BF16FP32_STATUS_COUNT
} bf16fp32_status;

/* "OK", "NULL_POINTER", ... and the one-line message; "UNKNOWN_STATUS" for a bad value. */
const char *bf16fp32_status_name(bf16fp32_status s);
const char *bf16fp32_status_message(bf16fp32_status s);
/* Detail of the last failure in this thread (call, file:line, vendor text): of the last failing
 * call, or of a backend's failure that a later call fell back from; create and reset clear it
 * when they succeed; "" if none. */
const char *bf16fp32_last_error(void);

/* Where the operands of a call live. Host calls never reach a GPU backend and vice versa. */
typedef enum bf16fp32_location { BF16FP32_HOST = 0, BF16FP32_DEVICE = 1 } bf16fp32_location;

typedef struct bf16fp32_context bf16fp32_context;

typedef void (*bf16fp32_log_fn)(void *user, int level, const char *line);

typedef struct bf16fp32_options {
  int device;                /* CUDA device ordinal; -1: the current device at create (below -1:
                                BF16FP32_BAD_OPTION) */
  int cpu_threads;           /* CPU backends' threads; 0: one per usable CPU (affinity, cgroup quota) */
  const char *algo;          /* "auto" or a backend name; NULL: auto */
  int use_pdl;               /* 1: our kernels use programmatic dependent launch: they start
                                while the previous kernel on the stream finishes and read w
                                then (x is read, and out written, only after it is done), so
                                w must not be that kernel's output */
  size_t workspace_bytes;    /* cuBLAS workspace per stream; 0: 32 MiB */
  const char *tune_file;     /* tuning file; NULL: BF16FP32_TUNE_FILE or the per-user cache.
                                Missing (or unreachable, or /dev/null): none. One that is
                                there but cannot be read or is corrupt (not a tune file, a
                                malformed line) fails create and reset with
                                BF16FP32_TUNE_FILE; one measured on another machine or by
                                another version is ignored (said at log level 1) */
  int log_level;             /* 0 silent (default), 1 warnings, 2 decisions */
  bf16fp32_log_fn log_fn;    /* NULL with log_level > 0: lines go to stderr; called inside the
                                library's calls, so it must not call into the same context */
  void *log_user;
} bf16fp32_options;

/* Fills the defaults (NULL: nothing is done). Environment variables (README) are read at create and reset and
 * override the options: BF16FP32_ALGO, BF16FP32_THREADS, BF16FP32_PDL, BF16FP32_LOG,
 * BF16FP32_WORKSPACE_MB, BF16FP32_TUNE_FILE, BF16FP32_TUNE_BUILTIN, BF16FP32_CPU_ISA. */
void bf16fp32_options_init(bf16fp32_options *opt);

/* One context per device; opt may be NULL (defaults). On failure *ctx is NULL: BAD_OPTION,
 * BAD_ENV, TUNE_FILE (last_error names the file and its first problem), OUT_OF_MEMORY. */
bf16fp32_status bf16fp32_create(bf16fp32_context **ctx, const bf16fp32_options *opt);
void bf16fp32_destroy(bf16fp32_context *ctx);
/* Frees every backend's state, clears plans, quarantine and counters, re-reads the
 * environment and the tuning file (a backend forced by bf16fp32_force_backend is forgotten: the
 * options' algo and BF16FP32_ALGO decide again); a bad value or a corrupt file fails it (as at
 * create) with nothing changed. Calls on other threads wait for it, and it for the calls in
 * flight. It frees the workspaces that graphs captured before it use: destroy those graphs (or
 * never replay them again), as after bf16fp32_destroy, and capture anew after prewarming. */
bf16fp32_status bf16fp32_reset(bf16fp32_context *ctx);

/* out[m,n] = sum_k x[m*ldx+k] * w[n*ldw+k]; x and w are bf16 bit patterns (uint16).
 * Row-major, ldx >= k, ldw >= k, ldo >= n; out is fully overwritten and must not share a byte
 * with the rows of x or w (BF16FP32_OVERLAP).
 * m == 0 or n == 0: nothing is done (pointers may be NULL). k == 0: out is set to zeros.
 * stream: a cudaStream_t for device calls (NULL = legacy default stream); ignored on host. The
 * cuBLAS-based backends keep a handle and a workspace per stream until bf16fp32_reset (graphs
 * captured on it may use them): after 64 distinct streams they decline new ones, as they do a
 * new stream whose workspace finds no memory (tried again at its next call), and auto turns to
 * what else can run the shape. An engine that makes streams as it goes resets now and then. */
bf16fp32_status bf16fp32_linear(bf16fp32_context *ctx, bf16fp32_location where, int64_t m,
                                int64_t n, int64_t k, const uint16_t *x, int64_t ldx,
                                const uint16_t *w, int64_t ldw, float *out, int64_t ldo,
                                void *stream);

/* Does every piece of lazy work (handles, workspaces, plans, module load) for the weight
 * shape (n, k) with contiguous rows (ld = k, out ld = n) at each of the m values, on stream,
 * so that a later CUDA graph capture on any prewarmed stream creates and allocates nothing.
 * A backend whose prewarm fails is quarantined for that shape and the next one prewarmed; an
 * M for which no backend could be made ready fails the call (its status, the backend's detail
 * in bf16fp32_last_error), after the other M values are prewarmed. */
bf16fp32_status bf16fp32_prewarm(bf16fp32_context *ctx, bf16fp32_location where, int64_t n,
                                 int64_t k, const int64_t *ms, int count, void *stream);

/* Forces one backend for calls of its location ("auto" or NULL: automatic choice). A forced
 * backend that declines a shape or fails on it falls back like auto. */
bf16fp32_status bf16fp32_force_backend(bf16fp32_context *ctx, const char *name);

/* The backend a contiguous call (ld = k, out ld = n, 16-byte aligned pointers) would try
 * first (the forced one where bf16fp32_force_backend or BF16FP32_ALGO forces one that can
 * take the shape) and why, written to why (may be NULL). *name is a static string.
 * BF16FP32_NO_DEVICE for a device shape when the context has no CUDA device in this process. */
bf16fp32_status bf16fp32_select(bf16fp32_context *ctx, bf16fp32_location where, int64_t m,
                                int64_t n, int64_t k, const char **name, char *why,
                                size_t why_len);

/* Backends in registry order, including the ones this build or machine cannot use. */
typedef struct bf16fp32_backend_info {
  const char *name;
  bf16fp32_location where;
  int available;             /* 1 when probed usable in this context */
  char reason[160];          /* why it is not available; "" when it is */
  uint64_t calls;            /* calls this backend completed since create/reset */
  uint64_t failures;         /* calls it failed, a decline not counted (in auto's calls and
                                prewarms each quarantined a shape) */
} bf16fp32_backend_info;

int bf16fp32_backend_count(void);
bf16fp32_status bf16fp32_backend_info_get(bf16fp32_context *ctx, int index,
                                          bf16fp32_backend_info *info);

/* A (backend, shape) pair taken out of service by a recoverable failure. */
typedef struct bf16fp32_quarantine_entry {
  const char *backend;
  bf16fp32_location where;
  int64_t m, n, k, ldx, ldw, ldo;
  bf16fp32_status status;    /* what the backend returned */
} bf16fp32_quarantine_entry;

/* Copies up to cap entries; *count gets the total number quarantined. */
bf16fp32_status bf16fp32_quarantine_list(bf16fp32_context *ctx, bf16fp32_quarantine_entry *list,
                                         int cap, int *count);

/* Describes the machine: CUDA device, CPU features, backends (like `bf16fp32 info`). */
bf16fp32_status bf16fp32_describe(bf16fp32_context *ctx, char *buf, size_t len);

/* The loaded library's version ("0.1.0"): BF16FP32_VERSION as it was built, to compare with the
 * BF16FP32_VERSION a caller was compiled against. */
const char *bf16fp32_version(void);

/* ---- Tuning (src/tune.c) ------------------------------------------------------------- */

/* Measures every available backend at `where` on each weight shape (N, K) =
 * (nk_pairs[2i], nk_pairs[2i+1]), i < pair_count, and each M bucket of ms: every M up to 16
 * is its own bucket, then multiples of 8 up to 64 (M 17..24 -> 24, 57..64 -> 64), then powers
 * of two (M 65..128 -> 128); a bucket is timed at its largest M. A call whose bucket has no
 * entry uses the next larger bucket tuned for its (N, K), or above the largest one, that one.
 * Each backend's output is checked
 * against the fp64 oracle first (a wrong result never wins), then timed by the benchmark
 * protocol (GPU: graph replay, cold L2).
 * The fastest and the second, with their times, are merged into the tuning file out_path
 * (NULL: the context's tuning file, see bf16fp32_options.tune_file) under an exclusive lock
 * and written atomically, so ranks tuning different shapes into one file lose nothing.
 * Takes seconds to minutes: not while any stream of the context is capturing. Contexts use
 * the new entries from their next bf16fp32_create or bf16fp32_reset.
 * BAD_OPTION: no output file; UNSUPPORTED: no backend gave a valid time; TUNE_FILE: the file
 * cannot be read or is corrupt (left as it was); IO_ERROR: it cannot be written. */
bf16fp32_status bf16fp32_tune(bf16fp32_context *ctx, bf16fp32_location where,
                              const int64_t *nk_pairs /* n0, k0, n1, k1, ... */, int pair_count,
                              const int64_t *ms, int m_count, const char *out_path);

/* Tunes the device GEMMs of one step of a workload (a model's decode step) together, for contexts
 * that run that step: GEMM i has the weight shape (nk_pairs[2i], nk_pairs[2i+1]), each shape
 * once, and calls[i] calls per step, issued in layer order (layer l calls every GEMM with more
 * than l calls), each call with its own operands. At each M bucket of ms (as bf16fp32_tune),
 * each GEMM's backends and their variants are checked and timed inside the whole step captured
 * as one CUDA graph, the other GEMMs running as auto chooses; a backend's time per call is the
 * step's time with it less the step's time without that GEMM, over its calls. Under PDL
 * (device-pdl entries, as bf16fp32_tune) this sees what one shape at a time cannot: the next
 * call is another shape. After each bucket the whole step with the new winners is timed against
 * the step as auto runs it now in three runs of their own; unless they are 0.2 % faster in all
 * three, auto's current choices are written for that bucket instead. The context's entries of
 * these shapes above the largest bucket are written too (where the file has none of that key),
 * since a file's entries for a shape replace all others. Entries merge into the tuning file as
 * bf16fp32_tune's do. Allocates every call's operands for the largest M (meant for decode
 * sizes: OUT_OF_MEMORY otherwise). BAD_OPTION: a shape twice, or no output file; BAD_SIZE: no
 * calls, or more than 2^20 in all; NO_DEVICE. */
bf16fp32_status bf16fp32_tune_step(bf16fp32_context *ctx, const int64_t *nk_pairs,
                                   const int *calls, int gemm_count, const int64_t *ms,
                                   int m_count, const char *out_path);

/* How the kernel that bf16fp32_tune_step_fillers puts before every GEMM call launches. In a
 * context with the PDL option it waits for its predecessor at entry, then lets the next kernel
 * start (without the option every filler launches plainly): */
typedef enum bf16fp32_filler_trigger {
  BF16FP32_FILLER_END = 0,   /* once its reads are done, as PDL-aware engine kernels mostly do */
  BF16FP32_FILLER_ENTRY = 1, /* right after its wait, as ours do */
  BF16FP32_FILLER_NONE = 2   /* never: launched without PDL, so the next kernel starts at its end */
} bf16fp32_filler_trigger;

/* bf16fp32_tune_step with a kernel before every GEMM call standing for what an engine runs
 * between them (attention, norms, experts): it reads its own filler_kb KB of device memory, cold,
 * and launches as trigger says. What runs between the GEMMs changes which backend is fastest: on
 * the H200 the pro step's table tuned back to back was 139 us per step slower than the built-in
 * one with 4 MB fillers, and the table tuned with them 113 us slower back to back (README). So
 * tune with about what the engine reads between two GEMMs, and as its kernels trigger.
 * filler_kb 0 is bf16fp32_tune_step. BAD_SIZE: filler_kb below 0 or above 2^20 (1 GiB);
 * BAD_OPTION: an unknown trigger; OUT_OF_MEMORY: no room for the fillers' bytes (one slice per
 * call, freed on return). */
bf16fp32_status bf16fp32_tune_step_fillers(bf16fp32_context *ctx, const int64_t *nk_pairs,
                                           const int *calls, int gemm_count, const int64_t *ms,
                                           int m_count, int filler_kb,
                                           bf16fp32_filler_trigger trigger, const char *out_path);

#ifdef __cplusplus
}
#endif
#endif
