/* A table entry's launch kind: the contexts it applies to, by whether they launch with
 * programmatic dependent launch (PDL). The built-in rules (rules.c) and smallm's tables
 * (smallm-config.c) key their entries on it. */
#ifndef BF16FP32_LAUNCH_KIND_H
#define BF16FP32_LAUNCH_KIND_H

#include <stdbool.h>

enum { BF16FP32__LAUNCH_PLAIN = 0, BF16FP32__LAUNCH_PDL = 1, BF16FP32__LAUNCH_EITHER = 2 };

/* Whether an entry of launch kind `kind` applies to a call with (pdl) or without PDL. */
static inline bool bf16fp32__launch_applies(int kind, bool pdl) {
  return kind == BF16FP32__LAUNCH_EITHER ||
         kind == (pdl ? BF16FP32__LAUNCH_PDL : BF16FP32__LAUNCH_PLAIN);
}

#endif
