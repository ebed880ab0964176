/* cpu-simd's AMX kernel, its source as it is, on the instruction model. */
#include "x86-model.h"

#define bf16fp32__simd_block_amx model_amx_kernel
#include "backends/cpu-simd/kernel-amx.c"
#undef bf16fp32__simd_block_amx

#include "model-kernels.h"

int bf16fp32__model_block_amx(const bf16fp32__simd_args *a, int64_t m0, int64_t m1, int64_t n0,
                              int64_t n1, uint16_t *scratch) {
  const int subnormal = model_amx_kernel(a, m0, m1, n0, n1, scratch);
  if (x86_model_tiles_configured()) x86_model_fault("the AMX kernel returned with tiles configured");
  return subnormal;
}
