/* Argument validation of the public entry points: done once there, so backends trust what
 * they get. Nothing is written when a check fails. */
#include <stdio.h>

#include "device.h"
#include "validate.h"

/* Largest power of two (at most 16) dividing the address. */
static int32_t alignment_of(const void *p) {
  uintptr_t a = (uintptr_t)p;
  int32_t al = 16;
  while (al > 1 && (a % (uintptr_t)al) != 0) al /= 2;
  return al;
}

bf16fp32__shape bf16fp32__make_shape(bf16fp32_location where, int64_t m, int64_t n, int64_t k,
                                     int64_t ldx, int64_t ldw, int64_t ldo, const void *x,
                                     const void *w, const void *out) {
  bf16fp32__shape s;
  s.m = m, s.n = n, s.k = k, s.ldx = ldx, s.ldw = ldw, s.ldo = ldo;
  s.where = (int32_t)where;
  int32_t a = alignment_of(x), b = alignment_of(w), c = alignment_of(out);
  s.align = a < b ? (a < c ? a : c) : (b < c ? b : c);
  return s;
}

/* Elements spanned by rows x ld with the last row only `cols` long must fit comfortably, and
 * so must ld itself: a one-row operand never steps by it, but the backends form its multiples
 * (cpu-simd's scratch holds 32 rows of a padded k, so 2^56 leaves int64_t room). */
static int span_fits(int64_t rows, int64_t ld, int64_t cols) {
  const int64_t limit = (int64_t)1 << 56;
  if (rows == 0) return 1;
  return ld <= limit && (rows - 1) <= (limit - cols) / ld; /* ld >= cols >= 1 here */
}

/* A matrix's bytes: `rows` rows of `width` bytes, `pitch` bytes apart, from `base`. */
typedef struct region {
  uintptr_t base;
  int64_t rows, pitch, width;
} region;

/* Floor of a / b for b > 0. */
static int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0); }

/* Whether two regions share a byte. Their spans (first to last byte) are compared first; where
 * those meet, each row of the region of fewer rows is checked against the one row of the other
 * that could touch it (the first to end past its start), so rows that interleave without
 * touching are allowed. The spans fit in 2^59 bytes (span_fits), so offsets fit int64_t. */
static int regions_overlap(region a, region b) {
  if (a.rows > b.rows) {
    region t = a;
    a = b, b = t;
  }
  const int64_t d = (int64_t)(b.base - a.base); /* b's start from a's, either sign */
  if (d >= (a.rows - 1) * a.pitch + a.width || -d >= (b.rows - 1) * b.pitch + b.width) return 0;
  for (int64_t i = 0; i < a.rows; i++) {
    const int64_t lo = i * a.pitch - d; /* a's row i from b's start */
    int64_t j = floor_div(lo - b.width, b.pitch) + 1; /* b's first row ending past lo */
    if (j < 0) j = 0;
    if (j < b.rows && j * b.pitch < lo + a.width) return 1;
  }
  return 0;
}

static bf16fp32_status check_memory(const void *p, const char *name, bf16fp32_location where,
                                    int device) {
  int kind = 0, owner = -1;
  if (device < 0) {
    if (where == BF16FP32_DEVICE)
      return bf16fp32__fail(BF16FP32_NO_DEVICE, "device call but the context has no CUDA device in this process");
    return BF16FP32_OK;
  }
  bf16fp32_status st = bf16fp32__pointer_kind(p, &kind, &owner);
  if (st != BF16FP32_OK) return st;
  if (where == BF16FP32_HOST && kind == 1)
    return bf16fp32__fail(BF16FP32_WRONG_MEMORY, "%s is device memory in a host call", name);
  if (where == BF16FP32_DEVICE && kind == 0)
    return bf16fp32__fail(BF16FP32_WRONG_MEMORY, "%s is host memory in a device call", name);
  /* Another GPU's memory would be an illegal address in our kernels (no peer access assumed),
   * which ends the whole CUDA context. */
  if (where == BF16FP32_DEVICE && kind == 1 && owner != device)
    return bf16fp32__fail(BF16FP32_WRONG_MEMORY,
                          "%s is memory of CUDA device %d; the context's is %d", name, owner, device);
  return BF16FP32_OK;
}

static bf16fp32_status check_nonnegative(int64_t m, int64_t n, int64_t k) {
  if (m < 0 || n < 0 || k < 0)
    return bf16fp32__fail(BF16FP32_BAD_SIZE, "m=%lld n=%lld k=%lld: sizes must be >= 0", (long long)m,
                          (long long)n, (long long)k);
  return BF16FP32_OK;
}

bf16fp32_status bf16fp32__validate_contiguous(int64_t m, int64_t n, int64_t k) {
  bf16fp32_status st = check_nonnegative(m, n, k);
  if (st != BF16FP32_OK) return st;
  if (m == 0 || n == 0) return BF16FP32_OK;
  if (!span_fits(m, n, n) || (k > 0 && (!span_fits(m, k, k) || !span_fits(n, k, k))))
    return bf16fp32__fail(BF16FP32_BAD_SIZE, "m=%lld n=%lld k=%lld: m x n, m x k or n x k is too "
                          "large (2^56 elements at most)", (long long)m, (long long)n, (long long)k);
  return BF16FP32_OK;
}

bf16fp32_status bf16fp32__validate(bf16fp32_location where, int64_t m, int64_t n, int64_t k,
                                   const uint16_t *x, int64_t ldx, const uint16_t *w, int64_t ldw,
                                   const float *out, int64_t ldo, int device) {
  if (where != BF16FP32_HOST && where != BF16FP32_DEVICE)
    return bf16fp32__fail(BF16FP32_BAD_OPTION, "where=%d is neither HOST nor DEVICE", (int)where);
  bf16fp32_status st = check_nonnegative(m, n, k);
  if (st != BF16FP32_OK) return st;
  if (m == 0 || n == 0) return BF16FP32_OK; /* nothing to compute, nothing to check */
  if (ldo < n) return bf16fp32__fail(BF16FP32_BAD_LEADING_DIM, "ldo=%lld < n=%lld", (long long)ldo, (long long)n);
  if (!out) return bf16fp32__fail(BF16FP32_NULL_POINTER, "out is NULL");
  if ((uintptr_t)out % sizeof(float))
    return bf16fp32__fail(BF16FP32_MISALIGNED, "out is not 4-byte aligned");
  if (!span_fits(m, ldo, n))
    return bf16fp32__fail(BF16FP32_BAD_SIZE, "m x ldo is too large (2^56 elements at most)");
  st = check_memory(out, "out", where, device);
  if (st != BF16FP32_OK || k == 0) return st;
  if (ldx < k) return bf16fp32__fail(BF16FP32_BAD_LEADING_DIM, "ldx=%lld < k=%lld", (long long)ldx, (long long)k);
  if (ldw < k) return bf16fp32__fail(BF16FP32_BAD_LEADING_DIM, "ldw=%lld < k=%lld", (long long)ldw, (long long)k);
  if (!x) return bf16fp32__fail(BF16FP32_NULL_POINTER, "x is NULL");
  if (!w) return bf16fp32__fail(BF16FP32_NULL_POINTER, "w is NULL");
  if ((uintptr_t)x % 2) return bf16fp32__fail(BF16FP32_MISALIGNED, "x is not 2-byte aligned");
  if ((uintptr_t)w % 2) return bf16fp32__fail(BF16FP32_MISALIGNED, "w is not 2-byte aligned");
  if (!span_fits(m, ldx, k) || !span_fits(n, ldw, k))
    return bf16fp32__fail(BF16FP32_BAD_SIZE, "m x ldx or n x ldw is too large (2^56 elements at most)");
  if ((st = check_memory(x, "x", where, device)) != BF16FP32_OK) return st;
  if ((st = check_memory(w, "w", where, device)) != BF16FP32_OK) return st;
  const region o = {(uintptr_t)out, m, 4 * ldo, 4 * n};
  if (regions_overlap(o, (region){(uintptr_t)x, m, 2 * ldx, 2 * k}))
    return bf16fp32__fail(BF16FP32_OVERLAP, "out shares memory with x");
  if (regions_overlap(o, (region){(uintptr_t)w, n, 2 * ldw, 2 * k}))
    return bf16fp32__fail(BF16FP32_OVERLAP, "out shares memory with w");
  return BF16FP32_OK;
}
