// What the tensor-map probes in bench/ share: the driver's map encoder, and the wait on an
// mbarrier's phase (acquire at CTA scope, or at cluster scope where other blocks arrive on it).
#ifndef BF16FP32_BENCH_TMA_CUH
#define BF16FP32_BENCH_TMA_CUH

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "bench-cuda.cuh"

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

template <bool CLUSTER = false>
__device__ __forceinline__ void bench_wait_parity(uint32_t bar, uint32_t phase) {
  if constexpr (CLUSTER)
    asm volatile(
        "{\n\t.reg .pred p;\n\tW_%=:\n\tmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1;\n\t@!p bra W_%=;\n\t}" ::"r"(bar),
        "r"(phase)
        : "memory");
  else
    asm volatile(
        "{\n\t.reg .pred p;\n\tW_%=:\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t@!p bra W_%=;\n\t}" ::"r"(bar),
        "r"(phase)
        : "memory");
}

#endif
