/* x86 feature query (x86-features.h): cpuid leaves 1, 7.0 and 7.1, and XCR0. Plain C with the
 * compiler's cpuid.h, so that it builds with gcc and clang alike (clang's
 * __builtin_cpu_supports does not know every name gcc's does). */
#include <string.h>

#include "x86-features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* XCR0 bits: 1 SSE, 2 AVX (YMM upper halves), 5 opmask, 6 ZMM upper halves, 7 ZMM16-31,
 * 17 tile configuration, 18 tile data. */
#define XCR0_YMM 0x06u
#define XCR0_ZMM 0xe6u
#define XCR0_TILE 0x60000u

static unsigned long long read_xcr0(void) {
  unsigned lo, hi;
  /* The instruction, not the _xgetbv intrinsic: that one needs -mxsave, this file is plain C. */
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((unsigned long long)hi << 32) | lo;
}

static bool bit(unsigned reg, int n) { return (reg >> n) & 1u; }

void bf16fp32__x86_features_query(bf16fp32__x86_features *f) {
  memset(f, 0, sizeof *f);
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !bit(c, 27) || !bit(c, 28)) return; /* OSXSAVE, AVX */
  const unsigned long long xcr0 = read_xcr0();
  if ((xcr0 & XCR0_YMM) != XCR0_YMM) return;
  f->fma = bit(c, 12), f->f16c = bit(c, 29);
  unsigned max7, b7, c7, d7;
  if (!__get_cpuid_count(7, 0, &max7, &b7, &c7, &d7)) return;
  f->avx2 = bit(b7, 5);
  f->amx_bf16 = bit(d7, 22) && bit(d7, 24) && (xcr0 & XCR0_TILE) == XCR0_TILE; /* + AMX-TILE */
  if ((xcr0 & XCR0_ZMM) != XCR0_ZMM) return;
  f->avx512f = bit(b7, 16), f->avx512dq = bit(b7, 17);
  f->avx512bw = bit(b7, 30), f->avx512vl = bit(b7, 31);
  unsigned a71, b71, c71, d71;
  if (max7 >= 1 && __get_cpuid_count(7, 1, &a71, &b71, &c71, &d71)) f->avx512bf16 = bit(a71, 5);
}

#else

void bf16fp32__x86_features_query(bf16fp32__x86_features *f) { memset(f, 0, sizeof *f); }

#endif
