/* Run-time detection of the vector instructions cpu-simd may use (x86-features.h: reported by
 * the CPU and saved by the OS). */
#include "cpu-simd.h"
#include "x86-features.h"

bf16fp32__simd_isa bf16fp32__simd_detect(void) {
  bf16fp32__x86_features f;
  bf16fp32__x86_features_query(&f);
  if (!f.avx2 || !f.fma) return BF16FP32__ISA_NONE;
  if (f.avx512f && f.avx512dq && f.avx512bw && f.avx512vl && f.avx512bf16)
    return BF16FP32__ISA_AVX512BF16;
  return BF16FP32__ISA_AVX2;
}

const char *bf16fp32__simd_isa_name(bf16fp32__simd_isa isa) {
  switch (isa) {
    case BF16FP32__ISA_AVX512BF16: return "avx512bf16";
    case BF16FP32__ISA_AVX2: return "avx2";
    default: return "none";
  }
}
