/* The producer kernel of pdl-producer.h. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "pdl-producer.h"

namespace {

__global__ void slow_copy_u16(uint16_t *dst, const uint16_t *src, size_t n,
                              unsigned long long spin_ns) {
  /* The dependent kernel may start now; its griddepcontrol.wait still waits for this one. */
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  while (t - t0 < spin_ns);
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    dst[i] = src[i];
}

}  // namespace

extern "C" int sup_gpu_slow_copy_u16(void *dst, const void *src, size_t n, unsigned spin_us,
                                     void *stream) {
  slow_copy_u16<<<4, 256, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<uint16_t *>(dst), static_cast<const uint16_t *>(src), n,
      1000ull * spin_us);
  return cudaGetLastError() != cudaSuccess;
}
