/* A model, in plain C, of the AVX-512 (F, BW, BF16) and AMX (TILE, BF16) intrinsics that
 * cpu-simd's AVX-512 BF16 and AMX kernels use, so that those kernels run and are checked on any
 * x86-64 machine and under the sanitizers: their own source, each intrinsic replaced by a
 * function that does what its instruction does (model-*.c include this header, then a kernel).
 *
 * Loads and stores touch exactly the bytes the instructions would (masked-off elements are not
 * read), so AddressSanitizer sees every access a kernel makes. The tile instructions check their
 * operands as the hardware does and count a fault (x86_model_faults) where it would raise #GP or
 * #UD (a configuration it refuses, a tile used unconfigured, shapes that do not agree), and where
 * it cannot follow (a configuration that restarts at a later row). The arithmetic is the SDM's
 * pseudo-code (products of bf16 pairs by fused multiply-adds, input denormals as zero, output
 * denormals flushed, round to nearest even); that the hardware's bits equal the model's is not
 * assumed: the tests hold both to the fp64 oracle's bound.
 *
 * Its functions take and return 64-byte vectors by value, as the intrinsics do: built without
 * -mavx512f, the compilers warn that such a function's ABI differs from an AVX-512 build's, which
 * is nothing to functions that never leave their file (CMakeLists.txt: -Wno-psabi). */
#ifndef BF16FP32_X86_MODEL_H
#define BF16FP32_X86_MODEL_H

#include <immintrin.h> /* the vector types; the macros below then replace the intrinsics */
#include <stdint.h>
#include <string.h>

#include "model-kernels.h"

/* Counts a fault (x86_model_faults, model-kernels.h). */
void x86_model_fault(const char *what);

/* The tile instructions, on the calling thread's tile state (x86-model.c). */
void x86_model_tile_loadconfig(const void *config);
void x86_model_tile_release(void);
void x86_model_tile_loadd(int t, const void *base, int64_t stride);
void x86_model_tile_stored(int t, void *base, int64_t stride);
void x86_model_tile_zero(int t);
void x86_model_tile_dpbf16ps(int c, int a, int b);
/* Whether the calling thread's tiles are configured (a kernel releases them before it returns). */
int x86_model_tiles_configured(void);

/* One bf16 as fp32 with input denormals as zero, one fp32 result with output denormals flushed,
 * and c + a * b rounded once (a and b bf16 values, c fp32: the product and the sum are exact in
 * double, so the one rounding is the conversion to float). */
float x86_model_bf16(uint16_t h);
float x86_model_ftz(float f);
float x86_model_fma(float a, float b, float c);

/* A register's bits, element by element. */
typedef union x86_model_zmm {
  uint16_t h[32];
  uint32_t d[16];
  uint64_t q[8];
  float f[16];
} x86_model_zmm;

#define X86_MODEL_BITS(z, v) memcpy(&(z), &(v), 64)

static inline __m512i x86_model_setzero_si512(void) {
  __m512i v;
  memset(&v, 0, sizeof v);
  return v;
}
static inline __m512 x86_model_setzero_ps(void) {
  __m512 v;
  memset(&v, 0, sizeof v);
  return v;
}
static inline __m512i x86_model_loadu_si512(const void *p) {
  __m512i v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void x86_model_storeu_si512(void *p, __m512i v) { memcpy(p, &v, sizeof v); }
static inline __m512i x86_model_set1_epi16(short h) {
  x86_model_zmm z;
  for (int i = 0; i < 32; i++) memcpy(&z.h[i], &h, 2);
  __m512i v;
  X86_MODEL_BITS(v, z);
  return v;
}
/* VPTESTMW (VPTESTNMW with none): bit i of the result is set where k's bit i is and a's and b's
 * 16-bit elements i have a set bit in common (none in common). */
static inline __mmask32 x86_model_test_epi16_mask(__mmask32 k, __m512i a, __m512i b, int none) {
  x86_model_zmm x, y;
  X86_MODEL_BITS(x, a);
  X86_MODEL_BITS(y, b);
  __mmask32 r = 0;
  for (int i = 0; i < 32; i++)
    if ((k >> i & 1) && ((x.h[i] & y.h[i]) != 0) != none) r |= (__mmask32)1 << i;
  return r;
}

static inline __m512i x86_model_maskz_loadu_epi16(__mmask32 k, const void *p) {
  x86_model_zmm z;
  memset(&z, 0, sizeof z);
  for (int i = 0; i < 32; i++)
    if (k >> i & 1) memcpy(&z.h[i], (const char *)p + 2 * i, 2);
  __m512i v;
  X86_MODEL_BITS(v, z);
  return v;
}
static inline void x86_model_mask_storeu_ps(void *p, __mmask16 k, __m512 v) {
  x86_model_zmm z;
  X86_MODEL_BITS(z, v);
  for (int i = 0; i < 16; i++)
    if (k >> i & 1) memcpy((char *)p + 4 * i, &z.f[i], 4);
}

/* Within each 128-bit lane of 64-byte r: the elements of `size` bytes in the low (or high) half
 * of a's lane and of b's, interleaved, a's first. */
static inline void x86_model_unpack(void *r, const void *a, const void *b, int size, int high) {
  for (int l = 0; l < 4; l++)
    for (int e = 0; e < 8 / size; e++) {
      const int from = 16 * l + 8 * high + size * e, to = 16 * l + 2 * size * e;
      memcpy((char *)r + to, (const char *)a + from, (size_t)size);
      memcpy((char *)r + to + size, (const char *)b + from, (size_t)size);
    }
}
static inline __m512i x86_model_unpack_si512(__m512i a, __m512i b, int size, int high) {
  __m512i r;
  x86_model_unpack(&r, &a, &b, size, high);
  return r;
}
/* 128-bit lanes of 64-byte r: two of a chosen by imm's low four bits, two of b by its high four
 * (the integer and the float forms move the same bits). */
static inline void x86_model_lanes(void *r, const void *a, const void *b, int imm) {
  for (int l = 0; l < 4; l++)
    memcpy((char *)r + 16 * l, (const char *)(l < 2 ? a : b) + 16 * (imm >> (2 * l) & 3), 16);
}
static inline __m512i x86_model_shuffle_i32x4(__m512i a, __m512i b, int imm) {
  __m512i r;
  x86_model_lanes(&r, &a, &b, imm);
  return r;
}
static inline __m512 x86_model_shuffle_f32x4(__m512 a, __m512 b, int imm) {
  __m512 r;
  x86_model_lanes(&r, &a, &b, imm);
  return r;
}
/* Within each 128-bit lane: two floats of a, then two of b, chosen by imm's 2-bit fields. */
static inline __m512 x86_model_shuffle_ps(__m512 a, __m512 b, int imm) {
  x86_model_zmm x, y, r;
  X86_MODEL_BITS(x, a);
  X86_MODEL_BITS(y, b);
  for (int l = 0; l < 4; l++)
    for (int e = 0; e < 4; e++) r.f[4 * l + e] = (e < 2 ? x : y).f[4 * l + (imm >> (2 * e) & 3)];
  __m512 v;
  X86_MODEL_BITS(v, r);
  return v;
}
static inline __m512 x86_model_add_ps(__m512 a, __m512 b) {
  x86_model_zmm x, y;
  X86_MODEL_BITS(x, a);
  X86_MODEL_BITS(y, b);
  for (int i = 0; i < 16; i++) x.f[i] += y.f[i];
  __m512 v;
  X86_MODEL_BITS(v, x);
  return v;
}
/* VDPBF16PS: each fp32 lane takes its odd pair's product, then its even one's. */
static inline __m512 x86_model_dpbf16_ps(__m512 src, __m512bh a, __m512bh b) {
  x86_model_zmm s, x, y;
  X86_MODEL_BITS(s, src);
  X86_MODEL_BITS(x, a);
  X86_MODEL_BITS(y, b);
  for (int j = 0; j < 16; j++) {
    float acc = x86_model_ftz(s.f[j]);
    for (int e = 1; e >= 0; e--)
      acc = x86_model_fma(x86_model_bf16(x.h[2 * j + e]), x86_model_bf16(y.h[2 * j + e]), acc);
    s.f[j] = acc;
  }
  __m512 v;
  X86_MODEL_BITS(v, s);
  return v;
}

/* The intrinsics' names, from here on, call the model (some are macros in the compilers' own
 * headers, hence the #undef before each). */
#undef _mm512_setzero_si512
#undef _mm512_setzero_ps
#undef _mm512_loadu_si512
#undef _mm512_storeu_si512
#undef _mm512_set1_epi16
#undef _mm512_mask_test_epi16_mask
#undef _mm512_testn_epi16_mask
#undef _mm512_maskz_loadu_epi16
#undef _mm512_mask_storeu_ps
#undef _mm512_unpacklo_epi32
#undef _mm512_unpackhi_epi32
#undef _mm512_unpacklo_epi64
#undef _mm512_unpackhi_epi64
#undef _mm512_shuffle_i32x4
#undef _mm512_shuffle_f32x4
#undef _mm512_shuffle_ps
#undef _mm512_add_ps
#undef _mm512_dpbf16_ps
#undef _tile_loadconfig
#undef _tile_release
#undef _tile_loadd
#undef _tile_stored
#undef _tile_zero
#undef _tile_dpbf16ps
#define _mm512_setzero_si512() x86_model_setzero_si512()
#define _mm512_setzero_ps() x86_model_setzero_ps()
#define _mm512_loadu_si512(p) x86_model_loadu_si512(p)
#define _mm512_storeu_si512(p, v) x86_model_storeu_si512(p, v)
#define _mm512_set1_epi16(h) x86_model_set1_epi16(h)
#define _mm512_mask_test_epi16_mask(k, a, b) x86_model_test_epi16_mask(k, a, b, 0)
#define _mm512_testn_epi16_mask(a, b) x86_model_test_epi16_mask(~(__mmask32)0, a, b, 1)
#define _mm512_maskz_loadu_epi16(k, p) x86_model_maskz_loadu_epi16(k, p)
#define _mm512_mask_storeu_ps(p, k, v) x86_model_mask_storeu_ps(p, k, v)
#define _mm512_unpacklo_epi32(a, b) x86_model_unpack_si512(a, b, 4, 0)
#define _mm512_unpackhi_epi32(a, b) x86_model_unpack_si512(a, b, 4, 1)
#define _mm512_unpacklo_epi64(a, b) x86_model_unpack_si512(a, b, 8, 0)
#define _mm512_unpackhi_epi64(a, b) x86_model_unpack_si512(a, b, 8, 1)
#define _mm512_shuffle_i32x4(a, b, imm) x86_model_shuffle_i32x4(a, b, imm)
#define _mm512_shuffle_f32x4(a, b, imm) x86_model_shuffle_f32x4(a, b, imm)
#define _mm512_shuffle_ps(a, b, imm) x86_model_shuffle_ps(a, b, imm)
#define _mm512_add_ps(a, b) x86_model_add_ps(a, b)
#define _mm512_dpbf16_ps(s, a, b) x86_model_dpbf16_ps(s, a, b)
#define _tile_loadconfig(c) x86_model_tile_loadconfig(c)
#define _tile_release() x86_model_tile_release()
#define _tile_loadd(t, base, stride) x86_model_tile_loadd(t, base, stride)
#define _tile_stored(t, base, stride) x86_model_tile_stored(t, base, stride)
#define _tile_zero(t) x86_model_tile_zero(t)
#define _tile_dpbf16ps(c, a, b) x86_model_tile_dpbf16ps(c, a, b)

#endif
