// cluster-cost: what the pieces of a smallm cluster sum cost an SM, in SM cycles, for clusters
// of S = 2, 4 and 8 blocks of 256 threads (a grid of `blocks`, one block per SM):
//   bar:   one cluster barrier (arrive.relaxed + wait), the mean of 16 in a row;
//   share: one barrier with the library's fences (bf16fp32__smallm_cluster_share), of 16;
//   pull:  one round of the pull's remote loads: each of `units` threads loads a float4 from
//          every rank (all issued first) and adds them, until the sum is in registers;
//   pull+exit: that round, then the exit barrier (the pull's end, without its first barrier);
//   bulk:  the session-35 push: thread q of every rank bulk-copies `bytes` of its shared memory
//          to rank q (cp.async.bulk shared::cluster, counted on q's mbarrier), until the S - 1
//          copies into this rank have landed;
//   bulk1: one copy only (rank 1 to rank 0), until it has landed at rank 0;
//   push:  the session-35 push's whole end without its adds: a proxy fence by every thread and
//          a __syncthreads, the copies (as bulk), the wait for those into this rank, the exit
//          barrier;
//   pull-all: the pull's whole end without its adds: the barrier with the library's fences
//          (share), one round of loads as in pull (4, 64, 256 threads), the exit barrier;
//   signal: thread q of every rank arrives (release, cluster scope) on rank q's mbarrier, which
//          expects the S - 1 other ranks, until this rank's has completed: a one-way handshake
//          that could stand for a cluster barrier where only one side must wait;
//   store: the other way round from the pull, with one barrier: each of `units` threads stores a
//          float4 into every other rank's receive area (plain remote stores), then a cluster
//          barrier with release and acquire at cluster scope (the barrier's default semantics),
//          then reads what the others stored into its own area and adds, until the sum is in
//          registers (the slowest thread of the block); no exit barrier is needed after it;
//   store+exit: that, then an exit barrier all the same (as a kernel's end would not need).
//   spush: the push by asynchronous remote stores from registers: each of `units` threads reads
//          a float4 of its own rank's shared memory and stores it into every other rank's
//          receive area by st.async, counted on that rank's mbarrier (armed at entry), then waits
//          on its own mbarrier and adds what the others stored, until the sum is in registers
//          (the slowest thread of the block); no barrier and no exit barrier: a rank's shared
//          memory is written only until its own mbarrier completes.
//   spush-x: spush, and the block leaves without the final cluster barrier that every other
//          mode keeps (what leaving with remote stores in flight costs would show in the last
//          column, to its resolution).
//   spush-c: spush with the wait of session 36's kernel build of the push (acquire at cluster
//          scope) on the mbarrier.
// Every measure starts right after a cluster barrier that all ranks pass together (within that
// barrier's skew); medians over the blocks (bulk1: over rank 0 of each cluster) of the last of
// five launches. Each mode also runs with the cluster's last rank late by 4000 cycles (late
// column), as in a kernel whose ranks do not finish their loops together (the median then
// spans early and late ranks alike). The last column: a launch's whole time in us (events around
// 20 plain launches, a mean; launch overhead included, so it resolves about 1 us, not less).
// docs/smallm-notes.md, sessions 35 and 36.
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc bench/cluster-cost.cu
//        -o cluster-cost
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "backends/smallm/smallm-cluster-sum.cuh" /* the library's cluster barriers and, through
                                                     smallm-fragments.cuh, its mbarrier helpers */
#include "bench-cuda.cuh"

enum Mode {
  BAR, SHARE, PULL, PULL_EXIT, BULK, BULK1, SIGNAL, STORE, STORE_EXIT, PUSH, PULL_ALL,
  SPUSH, SPUSH_X, SPUSH_C, MODES
};
static const char *const mode_name[] = {"bar",   "share",  "pull",  "pull+exit",
                                        "bulk",  "bulk1",  "signal", "store",
                                        "store+exit", "push", "pull-all", "spush",
                                        "spush-x", "spush-c"};
constexpr int SLOT = 4096; /* bytes of one rank's slot in the send and receive areas */

__device__ __forceinline__ void cluster_barrier() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;" ::
                   : "memory");
}

// The shared::cluster address of rank q's copy of this rank's shared-memory address a.
__device__ __forceinline__ uint32_t cluster_addr(uint32_t a, int q) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(q));
  return r;
}

// What the other ranks stored into this rank's receive area (their slots, this thread's float4),
// added, so that the loads have landed before the clock; the slowest thread's time kept.
__device__ __forceinline__ void add_received(const float *recv, int rank, int ranks, float *sink,
                                             long long t0, long long *slowest) {
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < 8; i++)
    if (i < ranks && i != rank) {
      const float4 v = reinterpret_cast<const float4 *>(recv + i * SLOT / 4)[threadIdx.x];
      sum += v.x + v.y + v.z + v.w;
    }
  if (sum == -1.0f) sink[threadIdx.x] = sum;
  atomicMax(slowest, clock64() - t0);
}

// out[block]: the cycles of the mode's measure in this block (thread 0's view; for pull, the
// slowest thread of the block).
__global__ void __launch_bounds__(256, 1) probe(int mode, int units, int bytes, long long *out,
                                                float *sink, int late) {
  extern __shared__ __align__(128) unsigned char sm[];
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int ranks = static_cast<int>(cluster.num_blocks());
  const uint32_t bar = static_cast<uint32_t>(__cvta_generic_to_shared(sm));
  float *send = reinterpret_cast<float *>(sm + 128);
  float *recv = reinterpret_cast<float *>(sm + 128 + 8 * SLOT);
  __shared__ long long slowest;
  for (int i = threadIdx.x; i < 8 * SLOT / 4; i += blockDim.x) send[i] = static_cast<float>(i + rank);
  if (threadIdx.x == 0) {
    slowest = 0;
    bf16fp32__bar_init(bar, mode == SIGNAL ? ranks - 1 : 1);
    bf16fp32__bar_init_fence();
    const bool spush = mode == SPUSH || mode == SPUSH_X || mode == SPUSH_C;
    const int in = mode == BULK || mode == PUSH ? (ranks - 1) * bytes
                   : mode == BULK1 && rank == 0 ? bytes
                   : spush                      ? (ranks - 1) * 16 * units
                                                : 0;
    if (mode != SIGNAL) bf16fp32__bar_expect(bar, in);
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  cluster_barrier();
  cluster_barrier(); /* every rank here together, its barrier armed */
  const long long t0 = clock64();
  long long t1 = t0;
  if (late && rank == ranks - 1) /* the late rank: a spin before its part */
    while (clock64() - t0 < late) {
    }
  float sum = 0.0f;
  if (mode == BAR || mode == SHARE) {
    for (int i = 0; i < 16; i++) {
      if (mode == BAR) cluster_barrier();
      else bf16fp32__smallm_cluster_share();
    }
    t1 = t0 + (clock64() - t0) / 16;
  } else if (mode == PULL || mode == PULL_EXIT || mode == PULL_ALL) {
    if (mode == PULL_ALL) bf16fp32__smallm_cluster_share();
    if (static_cast<int>(threadIdx.x) < units) {
      float4 v[8];
#pragma unroll
      for (int i = 0; i < 8; i++)
        if (i < ranks)
          v[i] = *reinterpret_cast<const float4 *>(cluster.map_shared_rank(send, i) +
                                                   4 * threadIdx.x);
#pragma unroll
      for (int i = 0; i < 8; i++)
        if (i < ranks) sum += v[i].x + v[i].y + v[i].z + v[i].w;
      if (sum == -1.0f) sink[threadIdx.x] = sum; /* the loads have landed before the clock */
      atomicMax(&slowest, clock64() - t0);
    }
    if (mode != PULL) cluster_barrier();
    __syncthreads();
    t1 = mode == PULL ? t0 + slowest : clock64();
  } else if (mode == STORE || mode == STORE_EXIT) {
    const bool mine = static_cast<int>(threadIdx.x) < units;
    if (mine) {
      const float4 v = reinterpret_cast<const float4 *>(send)[threadIdx.x];
#pragma unroll
      for (int i = 0; i < 8; i++) /* into rank i's slot of this rank */
        if (i < ranks && i != rank)
          reinterpret_cast<float4 *>(cluster.map_shared_rank(recv, i) + rank * SLOT / 4)[threadIdx.x] = v;
    }
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" :::
                     "memory");
    if (mine) add_received(recv, rank, ranks, sink, t0, &slowest);
    if (mode == STORE_EXIT) cluster_barrier();
    __syncthreads();
    t1 = mode == STORE ? t0 + slowest : clock64();
  } else if (mode == SPUSH || mode == SPUSH_X || mode == SPUSH_C) {
    const bool mine = static_cast<int>(threadIdx.x) < units;
    if (mine) {
      const float4 v = reinterpret_cast<const float4 *>(send)[threadIdx.x];
      const uint32_t dst = static_cast<uint32_t>(
          __cvta_generic_to_shared(recv + rank * SLOT / 4 + 4 * threadIdx.x));
#pragma unroll
      for (int i = 0; i < 8; i++) /* into rank i's slot of this rank */
        if (i < ranks && i != rank) {
          asm volatile(
              "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, "
              "%4}, [%5];" ::"r"(cluster_addr(dst, i)),
              "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "r"(cluster_addr(bar, i))
              : "memory");
        }
    }
    if (mode == SPUSH_C)
      bf16fp32__bar_wait<true>(bar, 0);
    else
      bf16fp32__bar_wait(bar, 0);
    if (mine) add_received(recv, rank, ranks, sink, t0, &slowest);
    __syncthreads();
    t1 = t0 + slowest;
  } else if (mode == SIGNAL) {
    const int q = static_cast<int>(threadIdx.x);
    if (q < ranks && q != rank) {
      asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(
                       cluster_addr(bar, q))
                   : "memory");
    }
    bf16fp32__bar_wait(bar, 0);
    t1 = clock64();
  } else {
    if (mode == PUSH) {
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      __syncthreads();
    }
    const int q = static_cast<int>(threadIdx.x);
    const bool send_it = mode != BULK1 ? q < ranks && q != rank : rank == 1 && q == 0;
    if (send_it) {
      const uint32_t src = static_cast<uint32_t>(__cvta_generic_to_shared(send + q * SLOT / 4));
      const uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(recv + rank * SLOT / 4));
      asm volatile(
          "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], "
          "%2, [%3];" ::"r"(cluster_addr(dst, q)),
          "r"(src), "r"(bytes), "r"(cluster_addr(bar, q))
          : "memory");
    }
    bf16fp32__bar_wait(bar, 0);
    if (mode == PUSH) cluster_barrier();
    t1 = clock64();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = t1 - t0;
  if (mode != SPUSH_X) cluster_barrier(); /* no block leaves while another may read its memory */
}

int main() {
  long long *out;
  float *sink;
  const int max_blocks = 128;
  const size_t smem = 128 + 16 * SLOT;
  CK(cudaMalloc(&out, max_blocks * sizeof(long long)));
  CK(cudaMalloc(&sink, 256 * sizeof(float)));
  CK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          static_cast<int>(smem)));
  CK(cudaFuncSetAttribute(probe, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  const double ghz = bench_sm_ghz();
  std::printf("SM clock %.2f GHz (clock64 against the global timer)\n", ghz);
  std::printf("%3s %6s %10s %6s %6s %5s | %8s %8s %8s\n", "S", "blocks", "mode", "units",
              "bytes", "late", "cycles", "us", "launch");
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int s : {2, 4, 8})
    for (int blocks : {64, 128})
      for (int mode = 0; mode < MODES; mode++)
        for (int late : {0, 4000})
          for (int size : {1, 2, 3}) {
            /* pull: 4, 64 and 256 threads' units; bulk: 80 B, 1 KB, 4 KB; the barriers once */
            if ((mode == BAR || mode == SHARE || mode == SIGNAL) && size > 1) continue;
            const int units = size == 1 ? 4 : size == 2 ? 64 : 256;
            const int bytes = size == 1 ? 80 : size == 2 ? 1024 : 4096;
            cudaLaunchConfig_t cfg = {};
            cudaLaunchAttribute attr[1];
            attr[0].id = cudaLaunchAttributeClusterDimension;
            attr[0].val.clusterDim.x = static_cast<unsigned>(s);
            attr[0].val.clusterDim.y = 1;
            attr[0].val.clusterDim.z = 1;
            cfg.gridDim = dim3(static_cast<unsigned>(blocks));
            cfg.blockDim = dim3(256);
            cfg.dynamicSmemBytes = smem;
            cfg.attrs = attr;
            cfg.numAttrs = 1;
            std::vector<long long> h(blocks), v;
            for (int rep = 0; rep < 5; rep++) /* the last of five launches */
              CK(cudaLaunchKernelEx(&cfg, probe, mode, units, bytes, out, sink, late));
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(h.data(), out, blocks * sizeof(long long), cudaMemcpyDeviceToHost));
            CK(cudaEventRecord(e0));
            for (int rep = 0; rep < 20; rep++)
              CK(cudaLaunchKernelEx(&cfg, probe, mode, units, bytes, out, sink, late));
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float ms = 0.0f;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            for (int b = 0; b < blocks; b++)
              if (mode != BULK1 || b % s == 0) v.push_back(h[b]);
            const long long c = bench_median(v);
            const bool pull = mode == PULL || mode == PULL_EXIT || mode == STORE ||
                              mode == STORE_EXIT || mode == PULL_ALL || mode == SPUSH ||
                              mode == SPUSH_X || mode == SPUSH_C,
                       bulk = mode == BULK || mode == BULK1 || mode == PUSH;
            std::printf("%3d %6d %10s %6s %6s %5d | %8lld %8.3f %8.3f\n", s, blocks,
                        mode_name[mode], pull ? std::to_string(units).c_str() : "-",
                        bulk ? std::to_string(bytes).c_str() : "-", late, c, c / ghz / 1000.0,
                        ms * 1000.0 / 20);
          }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return 0;
}
