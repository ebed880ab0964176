/* Timestamps inside the smallm kernels, for bench/smallm-probe.cu --trace only: where a call's
 * time goes (block starts, weights landed, main loop, block sum, cluster sum). The library is
 * never built with BF16FP32_SMALLM_TRACE, and then every stamp is nothing. With it, thread 0 of
 * each block writes the global timer at point p (0-6), its SM at slot 7 and its SM's cycle
 * counter at slot 8 + p of the block's 16-word record in bf16fp32__smallm_trace, which the probe
 * defines (relocatable device code): the global timer compares blocks, the cycle counter times
 * the steps of one block finer than the global timer's step.
 * With bf16fp32__smallm_trace_target = 0 each call overwrites the last one's records; with
 * T > 0, record set 0 takes the T-th call of each replay of the probe's graph of
 * bf16fp32__smallm_trace_calls_per_graph calls and set 1 the call after it (each block counts
 * its calls by its grid index: a block of call i + 1 enters after the same block of call i has),
 * so that the last replay's call T in the middle of a PDL chain is seen with its successor.
 * Slot 15 sums the cycles thread 0 spends waiting for its ring's stages (the stream kernel's
 * BF16FP32__SMALLM_WAIT_BEGIN / _END around the wait), from point 0 on; where calls overlap
 * (under PDL without a traced call T) the next call's point 0 may reset it midway, so only plain
 * launches, or T, give the whole of one call's waits. */
#ifndef BF16FP32_SMALLM_TRACE_CUH
#define BF16FP32_SMALLM_TRACE_CUH

#ifdef BF16FP32_SMALLM_TRACE
#include <cuda_runtime.h>

/* Records of up to this many blocks per set; blocks past it are not stamped. */
#define BF16FP32__SMALLM_TRACE_BLOCKS 4096
#define BF16FP32__SMALLM_TRACE_WORDS 16
extern __device__ unsigned long long
    bf16fp32__smallm_trace[2 * BF16FP32__SMALLM_TRACE_BLOCKS * BF16FP32__SMALLM_TRACE_WORDS];
extern __device__ unsigned bf16fp32__smallm_trace_calls[BF16FP32__SMALLM_TRACE_BLOCKS];
extern __device__ unsigned bf16fp32__smallm_trace_target, bf16fp32__smallm_trace_calls_per_graph;

/* Launches through bf16fp32__smallm_launch_config add this many bytes to the dynamic shared
 * memory: the last word of it holds the block's record set, where a static variable would move
 * the kernels' dynamic shared memory (and the alignment their copies need). A block 16 bytes
 * larger may fit fewer times on an SM where its size sits at a divisor of the SM's room. */
#define BF16FP32__SMALLM_TRACE_SMEM 16

/* Thread 0's record of this block in the set its room's last word names (2: none, then null;
 * the probe's own kernels, which have no such room, take set 0); null for the other threads and
 * blocks past the records. At point 0 (entry) the block first picks its set. */
static __device__ __forceinline__ unsigned long long *bf16fp32__smallm_trace_record(bool entry) {
  extern __shared__ __align__(16) unsigned char bf16fp32__smallm_trace_room[];
  const unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  if (threadIdx.x != 0 || b >= BF16FP32__SMALLM_TRACE_BLOCKS) return nullptr;
  unsigned room;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(room));
  unsigned *set = room >= BF16FP32__SMALLM_TRACE_SMEM
                      ? reinterpret_cast<unsigned *>(bf16fp32__smallm_trace_room + room - 4)
                      : nullptr;
  if (entry && set) {
    const unsigned target = bf16fp32__smallm_trace_target;
    const unsigned call = target ? atomicAdd(&bf16fp32__smallm_trace_calls[b], 1u) %
                                           bf16fp32__smallm_trace_calls_per_graph + 1u
                                 : 0u;
    *set = call == target ? 0u : call == target + 1u ? 1u : 2u;
  }
  const unsigned s = set ? *set : 0u;
  if (s > 1) return nullptr;
  return bf16fp32__smallm_trace +
         BF16FP32__SMALLM_TRACE_WORDS * (s * BF16FP32__SMALLM_TRACE_BLOCKS + b);
}
static __device__ __forceinline__ void bf16fp32__smallm_stamp(int point) {
  unsigned long long *rec = bf16fp32__smallm_trace_record(point == 0);
  if (!rec) return;
  unsigned long long t, clk;
  unsigned sm;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(clk)::"memory");
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  rec[point] = t;
  rec[8 + point] = clk;
  if (point == 0) rec[7] = sm, rec[15] = 0;
}
/* slot 15 += cycles (the block picked its set at point 0) */
static __device__ __forceinline__ void bf16fp32__smallm_stamp_wait(unsigned long long cycles) {
  unsigned long long *rec = bf16fp32__smallm_trace_record(false);
  if (rec) rec[15] += cycles;
}
#define BF16FP32__SMALLM_STAMP(point) bf16fp32__smallm_stamp(point)
#define BF16FP32__SMALLM_WAIT_BEGIN() const unsigned long long bf16fp32__smallm_wait0 = clock64()
#define BF16FP32__SMALLM_WAIT_END() bf16fp32__smallm_stamp_wait(clock64() - bf16fp32__smallm_wait0)
#else
#define BF16FP32__SMALLM_STAMP(point) ((void)0)
#define BF16FP32__SMALLM_WAIT_BEGIN() ((void)0)
#define BF16FP32__SMALLM_WAIT_END() ((void)0)
#define BF16FP32__SMALLM_TRACE_SMEM 0
#endif

/* Spins in the share kernel, for bench/smallm-probe.cu --delay only (build with
 * -DBF16FP32_SMALLM_DELAY): every thread waits the cycles of its launch's argument (set by
 * bf16fp32__smallm_set_delay; a kernel argument, so that no other read joins the kernel) at
 * point 0, its entry (the weights' copies start later), point 1, right after
 * griddepcontrol.wait and the next call's trigger (the span after the wait grows, the trigger
 * does not move), and point 2, after the block's last store (its exit moves), so that the probe
 * can tell which of them a PDL chain's period follows. The library is never built with it, and
 * then each is nothing (its argument is not even compiled). */
#ifdef BF16FP32_SMALLM_DELAY
static __device__ __forceinline__ void bf16fp32__smallm_spin(long long cycles) {
  if (cycles <= 0) return;
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}
#define BF16FP32__SMALLM_DELAY(cycles) bf16fp32__smallm_spin(cycles)
#else
#define BF16FP32__SMALLM_DELAY(cycles) ((void)0)
#endif

#endif
