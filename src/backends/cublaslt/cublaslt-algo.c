/* cuBLASLt algorithms to and from variant texts (cublaslt-algo.h). */
#include <stdint.h>
#include <string.h>

#include "cublaslt-algo.h"
#include "variant.h"

/* The attributes in text order, with their sizes (cublasLt.h: int32/uint32, two uint16). */
static const struct {
  cublasLtMatmulAlgoConfigAttributes_t attr;
  size_t size;
} fields[] = {
    {CUBLASLT_ALGO_CONFIG_ID, 4},           {CUBLASLT_ALGO_CONFIG_TILE_ID, 4},
    {CUBLASLT_ALGO_CONFIG_STAGES_ID, 4},    {CUBLASLT_ALGO_CONFIG_SPLITK_NUM, 4},
    {CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, 4}, {CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, 4},
    {CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, 4}, {CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, 2},
    {CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, 2},
};
#define FIELD_COUNT ((int)(sizeof fields / sizeof fields[0]))

bool bf16fp32__lt_algo_to_variant(const cublasLtMatmulAlgo_t *algo, char out[BF16FP32__VARIANT_LEN]) {
  int64_t v[FIELD_COUNT];
  for (int i = 0; i < FIELD_COUNT; i++) {
    uint32_t u32 = 0;
    uint16_t u16 = 0;
    size_t got = 0;
    void *buf = fields[i].size == 4 ? (void *)&u32 : (void *)&u16;
    if (cublasLtMatmulAlgoConfigGetAttribute(algo, fields[i].attr, buf, fields[i].size, &got) !=
            CUBLAS_STATUS_SUCCESS ||
        got != fields[i].size)
      return false;
    v[i] = fields[i].size == 4 ? (int64_t)u32 : (int64_t)u16;
  }
  return bf16fp32__variant_format(v, FIELD_COUNT, out) == 0;
}

bool bf16fp32__lt_algo_from_variant(cublasLtHandle_t lt, const char *variant, cublasLtMatmulAlgo_t *algo) {
  int64_t v[BF16FP32__VARIANT_FIELDS];
  if (bf16fp32__variant_parse(variant, v) != FIELD_COUNT || v[0] > INT32_MAX) return false;
  for (int i = 1; i < FIELD_COUNT; i++)
    if (v[i] > (fields[i].size == 4 ? (int64_t)UINT32_MAX : (int64_t)UINT16_MAX)) return false;
  memset(algo, 0, sizeof *algo);
  if (cublasLtMatmulAlgoInit(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F,
                             CUDA_R_32F, (int)v[0], algo) != CUBLAS_STATUS_SUCCESS)
    return false;
  for (int i = 1; i < FIELD_COUNT; i++) {
    uint32_t u32 = (uint32_t)v[i];
    uint16_t u16 = (uint16_t)v[i];
    const void *buf = fields[i].size == 4 ? (const void *)&u32 : (const void *)&u16;
    if (cublasLtMatmulAlgoConfigSetAttribute(algo, fields[i].attr, buf, fields[i].size) !=
        CUBLAS_STATUS_SUCCESS)
      return false;
  }
  return true;
}
