/* The step's filler kernel (step.h, bf16fp32__step_set_fillers): a memory-bound kernel that an
 * engine's other kernels stand for between the step's GEMMs. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "step-filler.h"

namespace {

/* Reads n 16-byte words with the whole grid and folds them into one word per block, so that no
 * read can be dropped. griddepcontrol is a no-op in a launch without the PDL attribute. */
__global__ void __launch_bounds__(BF16FP32__FILLER_THREADS)
    filler_read(const uint4 *src, size_t n, unsigned *sink, int trigger_at_entry) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (trigger_at_entry) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  unsigned acc = 0;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) { /* four loads in flight per thread */
    const uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^
           d.z ^ d.w;
  }
  for (; i < n; i += stride) {
    const uint4 a = src[i];
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (!trigger_at_entry) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  for (int off = 16; off > 0; off >>= 1) acc ^= __shfl_xor_sync(0xffffffffu, acc, off);
  __shared__ unsigned warp_acc[BF16FP32__FILLER_THREADS / 32];
  if ((threadIdx.x & 31) == 0) warp_acc[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < BF16FP32__FILLER_THREADS / 32; w++) acc ^= warp_acc[w]; /* acc is warp 0's */
    sink[blockIdx.x] = acc;
  }
}

}  // namespace

extern "C" int bf16fp32__filler_launch(const void *src, size_t bytes, unsigned *sink, int blocks,
                                       int trigger, int pdl, void *stream) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(blocks));
  cfg.blockDim = dim3(BF16FP32__FILLER_THREADS);
  cfg.stream = static_cast<cudaStream_t>(stream);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = pdl && trigger != BF16FP32_FILLER_NONE ? 1 : 0;
  return static_cast<int>(cudaLaunchKernelEx(&cfg, filler_read, static_cast<const uint4 *>(src),
                                             bytes / 16, sink,
                                             trigger == BF16FP32_FILLER_ENTRY ? 1 : 0));
}
