// What the tensor-map probes in bench/ share: the driver's map encoder, and (from the library)
// the wait on an mbarrier's phase, bf16fp32__bar_wait (acquire at CTA scope, or at cluster
// scope where other blocks arrive on it).
#ifndef BF16FP32_BENCH_TMA_CUH
#define BF16FP32_BENCH_TMA_CUH

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "bench-cuda.cuh"
#include "../src/backends/smallm/smallm-fragments.cuh" /* bf16fp32__bar_wait */

using bench_encode_fn = CUresult (*)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                     const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                     const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                     CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// cuTensorMapEncodeTiled from the driver, without linking libcuda.
static bench_encode_fn bench_map_encoder() {
  void *p = nullptr;
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q));
  return reinterpret_cast<bench_encode_fn>(p);
}

#endif
