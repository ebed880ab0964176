/* aarch64 feature query (arm-features.h): getauxval's AT_HWCAP and AT_HWCAP2, which the Linux
 * kernel fills from the CPU's ID registers. */
#include <string.h>

#include "arm-features.h"

#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>

#ifndef HWCAP2_BF16 /* kernel headers before 5.10 */
#define HWCAP2_BF16 (1 << 14)
#endif

void bf16fp32__arm_features_query(bf16fp32__arm_features *f) {
  memset(f, 0, sizeof *f);
  const unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
  f->asimd = (hw & HWCAP_ASIMD) != 0;
  f->bf16 = (hw2 & HWCAP2_BF16) != 0;
}

#else

void bf16fp32__arm_features_query(bf16fp32__arm_features *f) { memset(f, 0, sizeof *f); }

#endif
