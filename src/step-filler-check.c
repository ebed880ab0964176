/* The one check of a step's filler settings (step.h), in every build: the tuner checks a request
 * before it needs a device, and the step checks them again where they are set. */
#include "step.h"

bf16fp32_status bf16fp32__step_check_fillers(const char *who, int kb, int trigger) {
  if (kb < 0 || kb > BF16FP32__STEP_MAX_FILLER_KB)
    return bf16fp32__fail(BF16FP32_BAD_SIZE, "%s: filler of %d KB (0 to %d)", who, kb,
                          BF16FP32__STEP_MAX_FILLER_KB);
  if (trigger < BF16FP32_FILLER_END || trigger > BF16FP32_FILLER_NONE)
    return bf16fp32__fail(BF16FP32_BAD_OPTION, "%s: filler trigger %d", who, trigger);
  return BF16FP32_OK;
}
