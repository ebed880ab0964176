/* Run-time detection of the vector instructions cpu-simd may use: reported by the CPU and
 * saved by the OS (x86-features.h), or reported by the kernel (arm-features.h). */
#include "arm-features.h"
#include "cpu-simd.h"
#include "x86-features.h"

bf16fp32__simd_isa bf16fp32__simd_detect(void) {
#if defined(__aarch64__)
  bf16fp32__arm_features a;
  bf16fp32__arm_features_query(&a);
  return a.asimd ? BF16FP32__ISA_NEON : BF16FP32__ISA_NONE;
#else
  bf16fp32__x86_features f;
  bf16fp32__x86_features_query(&f);
  if (!f.avx2 || !f.fma) return BF16FP32__ISA_NONE;
  if (f.avx512f && f.avx512dq && f.avx512bw && f.avx512vl && f.avx512bf16)
    return BF16FP32__ISA_AVX512BF16;
  return BF16FP32__ISA_AVX2;
#endif
}

const char *bf16fp32__simd_isa_name(bf16fp32__simd_isa isa) {
  switch (isa) {
    case BF16FP32__ISA_AVX512BF16: return "avx512bf16";
    case BF16FP32__ISA_AVX2: return "avx2";
    case BF16FP32__ISA_NEON: return "neon";
    default: return "none";
  }
}
