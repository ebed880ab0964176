/* The Arm (aarch64) instruction sets the CPU backends and the CPU identity look at, in one
 * place: as the kernel reports them (the auxiliary vector's HWCAP words). Every field is false
 * on other architectures. */
#ifndef BF16FP32_ARM_FEATURES_H
#define BF16FP32_ARM_FEATURES_H

#include <stdbool.h>

typedef struct bf16fp32__arm_features {
  bool asimd; /* Advanced SIMD (NEON) with fp32 FMA: every aarch64 Linux machine */
  bool bf16;  /* FEAT_BF16 (BFMLALB/T, BFDOT): reported, not used by the kernels */
} bf16fp32__arm_features;

void bf16fp32__arm_features_query(bf16fp32__arm_features *f);

#endif
