/* The device pieces the smallm kernels build their sums from: the 16-byte weight load, the
 * bf16 MMA and the sum over cluster ranks. One definition, so that the kernels multiply and add
 * exactly alike (the batch invariance across kernels rests on it). */
#ifndef BF16FP32_SMALLM_FRAGMENTS_CUH
#define BF16FP32_SMALLM_FRAGMENTS_CUH

#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "smallm-config.h"

/* 16 bytes of a weight row, streamed once: no L1 allocation, whole 128-byte lines from DRAM
 * (the other half is the neighbouring sub-chunk). Zeros where pred is false (past k). */
static __device__ __forceinline__ uint4 ldg_w(const uint16_t *p, bool pred) {
  uint4 v;
  asm volatile(
      "{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %5, 0;\n\t"
      "mov.b32 %0, 0;\n\tmov.b32 %1, 0;\n\tmov.b32 %2, 0;\n\tmov.b32 %3, 0;\n\t"
      "@q ld.global.nc.L1::no_allocate.L2::128B.v4.u32 {%0, %1, %2, %3}, [%4];\n\t}"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p), "r"(static_cast<int>(pred)));
  return v;
}

/* d += a . b on one m16n8k16 tile, bf16 operands, fp32 accumulator. */
static __device__ __forceinline__ void mma16816(float (&d)[4], uint32_t a0, uint32_t a1,
                                                uint32_t a2, uint32_t a3, uint32_t b0,
                                                uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/* The float4 at part + off in the shared memory of every rank of the cluster (the block sums),
 * added over ranks 0..ksplit-1 in that order (all loads issued first). */
static __device__ __forceinline__ float4 rank_sum(cooperative_groups::cluster_group &cluster,
                                                  float *part, int off, int ksplit) {
  float4 v[BF16FP32__SMALLM_MAX_SPLIT];
#pragma unroll
  for (int q = 0; q < BF16FP32__SMALLM_MAX_SPLIT; q++)
    if (q < ksplit) v[q] = *reinterpret_cast<const float4 *>(cluster.map_shared_rank(part, q) + off);
  float4 sum = v[0];
#pragma unroll
  for (int q = 1; q < BF16FP32__SMALLM_MAX_SPLIT; q++)
    if (q < ksplit) sum.x += v[q].x, sum.y += v[q].y, sum.z += v[q].z, sum.w += v[q].w;
  return sum;
}

#endif
