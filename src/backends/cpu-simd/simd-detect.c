/* Run-time detection of the vector instructions cpu-simd may use: the CPU must report them
 * (cpuid) and the OS must save their register state (xgetbv), or the first use would fault. */
#include "cpu-simd.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* XCR0 bits: 1 SSE, 2 AVX (YMM upper halves), 5 opmask, 6 ZMM upper halves, 7 ZMM16-31. */
#define XCR0_YMM 0x06u
#define XCR0_ZMM 0xe6u

static uint64_t read_xcr0(void) {
  uint32_t lo, hi;
  /* The instruction, not the _xgetbv intrinsic: that one needs -mxsave, this file is plain C. */
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

bf16fp32__simd_isa bf16fp32__simd_detect(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return BF16FP32__ISA_NONE;
  const int osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, fma = (c >> 12) & 1;
  if (!osxsave || !avx || !fma) return BF16FP32__ISA_NONE;
  const uint64_t xcr0 = read_xcr0();
  if ((xcr0 & XCR0_YMM) != XCR0_YMM) return BF16FP32__ISA_NONE;

  unsigned max7, b7, c7, d7;
  if (!__get_cpuid_count(7, 0, &max7, &b7, &c7, &d7)) return BF16FP32__ISA_NONE;
  if (!((b7 >> 5) & 1)) return BF16FP32__ISA_NONE; /* AVX2 */

  /* AVX-512 F (16), DQ (17), BW (30), VL (31) in leaf 7.0 EBX; BF16 (5) in leaf 7.1 EAX. */
  const unsigned need = (1u << 16) | (1u << 17) | (1u << 30) | (1u << 31);
  if ((b7 & need) != need || max7 < 1) return BF16FP32__ISA_AVX2;
  unsigned a71, b71, c71, d71;
  if (!__get_cpuid_count(7, 1, &a71, &b71, &c71, &d71)) return BF16FP32__ISA_AVX2;
  if (!((a71 >> 5) & 1)) return BF16FP32__ISA_AVX2;
  if ((xcr0 & XCR0_ZMM) != XCR0_ZMM) return BF16FP32__ISA_AVX2;
  return BF16FP32__ISA_AVX512BF16;
}

#else

bf16fp32__simd_isa bf16fp32__simd_detect(void) { return BF16FP32__ISA_NONE; }

#endif

const char *bf16fp32__simd_isa_name(bf16fp32__simd_isa isa) {
  switch (isa) {
    case BF16FP32__ISA_AVX512BF16: return "avx512bf16";
    case BF16FP32__ISA_AVX2: return "avx2";
    default: return "none";
  }
}
