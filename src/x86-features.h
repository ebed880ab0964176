/* The x86 instruction sets the CPU backends and the CPU identity look at, in one place: each is
 * usable only where the CPU reports it (cpuid) and the OS saves its registers (xgetbv), or the
 * first use would fault. Every field is false on other architectures. */
#ifndef BF16FP32_X86_FEATURES_H
#define BF16FP32_X86_FEATURES_H

#include <stdbool.h>

typedef struct bf16fp32__x86_features {
  bool avx2, fma, f16c; /* with the YMM state saved */
  bool avx512f, avx512dq, avx512bw, avx512vl, avx512bf16; /* with the ZMM and opmask state */
  bool amx_bf16; /* with the tile state */
} bf16fp32__x86_features;

void bf16fp32__x86_features_query(bf16fp32__x86_features *f);

#endif
