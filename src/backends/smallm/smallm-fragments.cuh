/* The device pieces the smallm kernels build their sums from: the 16-byte weight load, the bulk
 * copy into shared memory with the mbarrier that counts it, the bulk request into L2, the bf16
 * MMA and a sub-chunk's two of them (the sums over warp groups and cluster ranks:
 * smallm-cluster-sum.cuh). One definition, so that the kernels multiply exactly alike (the
 * batch invariance across kernels rests on it). */
#ifndef BF16FP32_SMALLM_FRAGMENTS_CUH
#define BF16FP32_SMALLM_FRAGMENTS_CUH

#include <cuda_runtime.h>
#include <stdint.h>

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

/* `bytes` (a multiple of 16) from global src into shared dst (both 16-byte aligned), counted on
 * mbarrier bar. */
static __device__ __forceinline__ void bf16fp32__bulk_copy(uint32_t dst, const void *src,
                                                           int bytes, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
      ::"r"(dst), "l"(src), "r"(bytes), "r"(bar)
      : "memory");
}

/* mbarrier bar (in this block's shared memory) set up for `count` arrivals, by one thread before
 * any other use. */
static __device__ __forceinline__ void bf16fp32__bar_init(uint32_t bar, uint32_t count = 1) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count));
}
/* After a thread's mbarrier inits: made visible to the cluster's other threads and to the bulk
 * copies (the async proxy) that will complete them. */
static __device__ __forceinline__ void bf16fp32__bar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n\tfence.proxy.async.shared::cta;" ::: "memory");
}
/* Barrier bar's current phase completes once `bytes` more have landed (its one arrival). */
static __device__ __forceinline__ void bf16fp32__bar_expect(uint32_t bar, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}
/* Until bar's phase `phase` has completed; CLUSTER: with acquire at cluster scope, for an
 * mbarrier that other blocks' remote stores complete (the share kernel's push). */
template <bool CLUSTER = false>
static __device__ __forceinline__ void bf16fp32__bar_wait(uint32_t bar, uint32_t phase) {
  if constexpr (CLUSTER)
    asm volatile(
        "{\n\t.reg .pred p;\n\tWAIT_%=:\n\t"
        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1;\n\t"
        "@!p bra WAIT_%=;\n\t}" ::"r"(bar), "r"(phase)
        : "memory");
  else
    asm volatile(
        "{\n\t.reg .pred p;\n\tWAIT_%=:\n\t"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t"
        "@!p bra WAIT_%=;\n\t}" ::"r"(bar), "r"(phase)
        : "memory");
}
/* bytes (a multiple of 16) from p (16-byte aligned) requested into L2 only: nothing to wait for. */
static __device__ __forceinline__ void bf16fp32__bulk_to_l2(const void *p, uint32_t bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
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

/* d += one 32-wide sub-chunk: r0 and r8 are 16 bytes (k = 8t .. 8t + 7 of the permuted
 * sub-chunk) of weight rows g and g + 8, b those of token g; words 0-1 make one MMA, words 2-3
 * the next, in that order. */
static __device__ __forceinline__ void bf16fp32__smallm_mma_sub(float (&d)[4], const uint4 &r0,
                                                                const uint4 &r8, const uint4 &b) {
  mma16816(d, r0.x, r8.x, r0.y, r8.y, b.x, b.y);
  mma16816(d, r0.z, r8.z, r0.w, r8.w, b.z, b.w);
}

#endif
