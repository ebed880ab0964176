/* Timestamps inside the smallm kernels, for bench/smallm-probe.cu --trace only: where a call's
 * time goes (block starts, weights landed, main loop, block sum, cluster sum). The library is
 * never built with BF16FP32_SMALLM_TRACE, and then every stamp is nothing. With it, thread 0 of
 * each block writes the global timer at point p (0-6) and its SM at slot 7 of the block's
 * eight-word record in bf16fp32__smallm_trace, which the probe defines (relocatable device code);
 * each call overwrites the last one's records. */
#ifndef BF16FP32_SMALLM_TRACE_CUH
#define BF16FP32_SMALLM_TRACE_CUH

#ifdef BF16FP32_SMALLM_TRACE
#include <cuda_runtime.h>

/* Records of up to this many blocks; blocks past it are not stamped. */
#define BF16FP32__SMALLM_TRACE_BLOCKS 4096
extern __device__ unsigned long long bf16fp32__smallm_trace[BF16FP32__SMALLM_TRACE_BLOCKS * 8];

static __device__ __forceinline__ void bf16fp32__smallm_stamp(int point) {
  const unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  if (threadIdx.x != 0 || b >= BF16FP32__SMALLM_TRACE_BLOCKS) return;
  unsigned long long t;
  unsigned sm;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  bf16fp32__smallm_trace[8 * b + point] = t;
  if (point == 0) bf16fp32__smallm_trace[8 * b + 7] = sm;
}
#define BF16FP32__SMALLM_STAMP(point) bf16fp32__smallm_stamp(point)
#else
#define BF16FP32__SMALLM_STAMP(point) ((void)0)
#endif

#endif
