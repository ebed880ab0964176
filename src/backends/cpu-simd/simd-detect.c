/* Run-time detection of the vector instructions cpu-simd may use: reported by the CPU and
 * saved by the OS (x86-features.h), or reported by the kernel (arm-features.h). */
#include <string.h>

#include "arm-features.h"
#include "cpu-simd.h"
#include "x86-features.h"

#if defined(__linux__) && (defined(__x86_64__) || defined(__i386__))
#include <sys/syscall.h>
#include <unistd.h>

/* Linux (5.16 on) hands out the AMX tile data state only to a process that asks: without the
 * grant the first tile instruction faults. Asking twice is harmless; an older kernel, which
 * never enables the tile state in XCR0, does not get here. */
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18
static int amx_granted(void) {
  return syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
}
#elif !defined(__aarch64__)
static int amx_granted(void) { return 0; } /* no such grant known to this code: not used */
#endif

bf16fp32__simd_isa bf16fp32__simd_detect(void) {
#if defined(__aarch64__)
  bf16fp32__arm_features a;
  bf16fp32__arm_features_query(&a);
  return a.asimd ? BF16FP32__ISA_NEON : BF16FP32__ISA_NONE;
#else
  bf16fp32__x86_features f;
  bf16fp32__x86_features_query(&f);
  if (!f.avx2 || !f.fma) return BF16FP32__ISA_NONE;
  if (!(f.avx512f && f.avx512dq && f.avx512bw && f.avx512vl && f.avx512bf16))
    return BF16FP32__ISA_AVX2;
  return f.amx_bf16 && amx_granted() ? BF16FP32__ISA_AMX : BF16FP32__ISA_AVX512BF16;
#endif
}

const char *bf16fp32__simd_isa_name(bf16fp32__simd_isa isa) {
  switch (isa) {
    case BF16FP32__ISA_AMX: return "amx";
    case BF16FP32__ISA_AVX512BF16: return "avx512bf16";
    case BF16FP32__ISA_AVX2: return "avx2";
    case BF16FP32__ISA_NEON: return "neon";
    default: return "none";
  }
}

bf16fp32__simd_isa bf16fp32__simd_isa_from_name(const char *name) {
  for (int i = BF16FP32__ISA_AVX2; i <= BF16FP32__ISA_NEON; i++)
    if (name && strcmp(name, bf16fp32__simd_isa_name((bf16fp32__simd_isa)i)) == 0)
      return (bf16fp32__simd_isa)i;
  return BF16FP32__ISA_NONE;
}
