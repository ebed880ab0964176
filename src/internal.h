/* Internal interfaces: the shape key, the backend interface, the context, error helpers. */
#ifndef BF16FP32_INTERNAL_H
#define BF16FP32_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bf16fp32.h"

/* The lookup key of a call: no pointers, no padding, hashed and compared as bytes.
 * align is the largest power of two (capped at 16) that divides all three pointers. */
typedef struct bf16fp32__shape {
  int64_t m, n, k, ldx, ldw, ldo;
  int32_t where; /* bf16fp32_location */
  int32_t align; /* bytes: 2, 4, 8 or 16 */
} bf16fp32__shape;

/* One call as a backend receives it: arguments already validated, m, n, k > 0. */
typedef struct bf16fp32__call {
  bf16fp32__shape shape;
  const uint16_t *x;
  const uint16_t *w;
  float *out;
  void *stream;   /* cudaStream_t on device calls */
  bool capturing; /* the stream is capturing a CUDA graph: no allocation, handle, sync */
  const char *variant; /* a tuned configuration of the backend (variant.h), or NULL */
} bf16fp32__call;

/* The most CPU threads a context takes (cpu_threads, BF16FP32_THREADS). */
#define BF16FP32__MAX_CPU_THREADS 1024

/* What a context was configured with (options, then the environment over them). */
typedef struct bf16fp32__config {
  int device;       /* resolved CUDA ordinal; -1 when no device */
  int cpu_threads;  /* resolved: >= 1 */
  int use_pdl;
  size_t workspace_bytes;
  int log_level;
  bf16fp32_log_fn log_fn;
  void *log_user;
  char algo[32];        /* "auto" or a backend name */
  char tune_file[1024]; /* "" when none */
  int tune_builtin;     /* use the built-in tuned table (BF16FP32_TUNE_BUILTIN, default 1) */
  char cpu_isa[16];     /* cpu-simd's highest level (BF16FP32_CPU_ISA); "" for the best one */
} bf16fp32__config;

/* The longest variant text of a backend, with its terminator (variant.h). */
#define BF16FP32__VARIANT_LEN 48

/* A backend: one static const instance per backend, listed in registry.c.
 * probe: usable here? creates the backend's state (or writes why not and returns non-OK); on
 *      success why may say which of its paths this machine gets (`bf16fp32 info` shows it).
 * supports: pure "can it" for a shape (no allocation, no CUDA call).
 * prewarm: all lazy work for the shape (and variant, NULL for none) on that stream (handles,
 *      workspaces, plans).
 * run: computes the call; may return DECLINED; with call->capturing it must not allocate,
 *      create handles or synchronize: it returns NOT_PREWARMED when it would have to.
 * reset: frees the state (back to unprobed).
 * variants (optional, NULL for none): up to max configurations of the backend worth timing for
 *      the shape besides its default, as variant texts (variant.h) into names; returns how many.
 *      The tuner times each as "name@variant", and a tuned winner of that form reaches run and
 *      prewarm as call->variant. A variant the backend cannot use here runs its default. */
typedef struct bf16fp32__backend {
  const char *name;
  bf16fp32_location where;
  bf16fp32_status (*probe)(const bf16fp32__config *cfg, void **state, char *why, size_t why_len);
  bool (*supports)(const void *state, const bf16fp32__shape *s);
  bf16fp32_status (*prewarm)(void *state, const bf16fp32__shape *s, const char *variant, void *stream);
  bf16fp32_status (*run)(void *state, const bf16fp32__call *call);
  void (*reset)(void *state);
  int (*variants)(void *state, const bf16fp32__shape *s, char (*names)[BF16FP32__VARIANT_LEN], int max);
  /* Frees what the backend keeps for `stream` (optional): its work is done and it goes away. */
  void (*forget_stream)(void *state, void *stream);
} bf16fp32__backend;

/* registry.c: every backend this build knows, in registry (fallback) order. A backend not
 * built here has ops == NULL and a reason. */
typedef struct bf16fp32__registry_entry {
  const char *name;
  bf16fp32_location where;
  const bf16fp32__backend *ops;
  const char *not_built; /* why ops is NULL */
  bool pdl;              /* launches with programmatic dependent launch when the context asks */
  bool own;              /* our kernel, not a vendor library's (tuned leads: tune-table.h) */
  bool default_per_m;    /* its default configuration is chosen for each call's M (smallm's
                            tables): at a tuned bucket's other M its winner runs that rather
                            than yield to the runner-up (tune-table.c) */
} bf16fp32__registry_entry;

#define BF16FP32__MAX_BACKENDS 16
extern const bf16fp32__registry_entry bf16fp32__registry[];
extern const int bf16fp32__registry_count;
/* Index in the registry, or -1. */
int bf16fp32__registry_find(const char *name);
/* The registry index of a tuned name "backend" or "backend@variant" (-1 when the backend is
 * unknown); *variant points at the text after '@', or is NULL without one. */
int bf16fp32__registry_find_tuned(const char *name, const char **variant);

/* --- errors (status.c) --- */
/* Records the detail of a failure in this thread's last-error string and returns s. */
bf16fp32_status bf16fp32__fail(bf16fp32_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void bf16fp32__clear_error(void);
/* How many times this thread's last_error was written (or cleared): unchanged, the text is too. */
unsigned bf16fp32__error_serial(void);

/* Jumps to the function's cleanup label with status in `st` when expr is not OK. */
#define BF16FP32__TRY(expr)                    \
  do {                                         \
    st = (expr);                               \
    if (st != BF16FP32_OK) goto cleanup;       \
  } while (0)

/* --- logging (context.c) --- */
void bf16fp32__log(const bf16fp32__config *cfg, int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* --- bf16 helpers --- */
static inline float bf16fp32__bf16_to_float(uint16_t b) {
  union { uint32_t u; float f; } v;
  v.u = (uint32_t)b << 16;
  return v.f;
}
/* Round to nearest even; NaN stays NaN (quiet). */
static inline uint16_t bf16fp32__float_to_bf16(float f) {
  union { uint32_t u; float f; } v;
  v.f = f;
  if ((v.u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((v.u >> 16) | 0x40u);
  v.u += 0x7fffu + ((v.u >> 16) & 1u);
  return (uint16_t)(v.u >> 16);
}

/* --- oracle (oracle.c): the fp64 reference every backend is checked against --- */
/* ref[i*n+j] = fp64 sum of the exact products; absdot[i*n+j] = sum of |products| (may be NULL). */
void bf16fp32__oracle(int64_t m, int64_t n, int64_t k, const uint16_t *x, int64_t ldx,
                      const uint16_t *w, int64_t ldw, double *ref, double *absdot);
/* The element-wise bound on |out - ref| for an fp32 accumulation of k products. */
double bf16fp32__error_bound(int64_t k, double absdot);
/* True when got is acceptable for ref: within the bound, or the same NaN/Inf class; where the
 * products' magnitudes add past FLT_MAX, also an infinity of either sign or NaN (a partial sum
 * may overflow in fp32, in some order). */
bool bf16fp32__within_bound(float got, double ref, double absdot, int64_t k);
/* Results stored with fewer significand bits than fp32's, which the bound lets pass (bf16 at K
 * in the thousands): over the elements whose value needs the low 8 of fp32's bits (the fp64
 * reference rounded to fp32 has one set), how many results have all 8 clear. An fp32 sum
 * leaves them clear about once in 256; a result rounded to bf16, fp16 or tf32, every time. */
typedef struct bf16fp32__rounding_tally {
  int64_t needing, cleared;
} bf16fp32__rounding_tally;
void bf16fp32__rounding_add(bf16fp32__rounding_tally *t, float got, double ref);
/* At least 8 such results cleared, and half of those that need the bits. */
bool bf16fp32__rounding_seen(const bf16fp32__rounding_tally *t);

#endif
