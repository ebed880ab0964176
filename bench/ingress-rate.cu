// ingress-rate: how many bytes per second one SM takes in from L2 (data that every block reads,
// as smallm's blocks all read x). One block per SM; rate per SM = bytes x (S2 - S1) / (t2 - t1)
// for two stage counts, which takes the launch out. Timing: a graph of 200 calls, median of 7
// replays (bench-cuda.cuh).
// 1. tensor-map copies through one ring (16 KB stages, 128 rows x 64 bf16, one thread issuing,
//    four warps reading each stage, a named barrier), a copy per block or shared by a cluster of C
//    blocks (.multicast::cluster: rank s mod C issues stage s for all C ranks); reads > 0: the
//    block also reads every byte of each stage that many times by 16-byte loads;
// 2. the lanes' own 16-byte loads (into registers, or cp.async into shared memory);
// 3. both at once in one block: the ring of part 1 on four warps, as many bytes by four warps'
//    lane loads;
// 4. part 1's ring with boxes 32 to 256 wide (rows of 64 to 512 bytes), no swizzle;
// 5. a ring per warp, as the stream kernel has (lane 0 issues, the warp reads, __syncwarp);
// 6. part 5 with more shared memory taken (less L1); 7. part 5 in cluster launches;
// 8. one ring read by every warp of the block, with every warp or one polling its barrier.
// Question (docs/smallm-notes.md, session 33): is what the stream kernel's blocks take in at
// N = 2048, M = 16-64 (50-60 GB/s per SM) a ceiling of one SM's copies? Parts 5-8 reach 137-164
// GB/s per SM; part 1's form stays at about 50 for a reason not found (neither swizzle, box width,
// shared memory size, cluster launch nor the polling warps).
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a bench/ingress-rate.cu -o ingress-rate
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "../src/backends/smallm/smallm-tiles.cuh" /* the library's bf16fp32__tma_box,
                                                      bf16fp32__bar_expect and bf16fp32__bar_wait */
#include "bench-tma.cuh"

constexpr int ROWS = 128, COLS = 64, STAGE = ROWS * COLS * 2; /* one box, 16 KB */
constexpr int KSTEPS = 64;                                     /* the data: 128 x 4096 bf16, 1 MB */
constexpr int MAXNST = 12;

struct Args {
  CUtensorMap map;
  int stages, nst, mcast; /* mcast: the cluster's ranks share each stage's copy */
  int cols;               /* the box's width in bf16 (its rows: 16 KB / (2 cols)) */
  int width;              /* the tensor's width in bf16 (the same 1 MB in all) */
  int reads;              /* times the block reads each stage's 16 KB (16-byte loads) */
  int ldg_kind;           /* lane loads: 0 ld.global, 1 ld.global.nc.L1::no_allocate, 2 cp.async.cg */
  const uint16_t *data;
  unsigned *sink;
};

__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t cluster_size() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

/* A ring's nst barriers of one arrival each (at full, 8 bytes apart), made visible to the
 * cluster. */
__device__ __forceinline__ void init_ring(uint32_t full, int nst) {
  for (int s = 0; s < nst; s++) bf16fp32__bar_init(full + 8 * s);
  bf16fp32__bar_init_fence();
}

/* Bytes of the 1 MB data set by the lanes' own loads: `bytes` in steps of 8 loads of 16 bytes per
 * thread (nthr threads, thread t), all of them in flight before any is used; kind as Args. */
__device__ __forceinline__ unsigned lane_loads(const Args &a, int t, int nthr, long long bytes,
                                               uint32_t scratch) {
  constexpr int U = 8;
  constexpr long long MASK = (long long)ROWS * COLS * KSTEPS * 2 - 1;
  const unsigned char *d = reinterpret_cast<const unsigned char *>(a.data);
  unsigned acc = 0;
  const long long steps = bytes / (16LL * U * nthr);
  for (long long i = 0; i < steps; i++) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
      const long long off = ((i * U + u) * nthr + t) * 16 & MASK;
      if (a.ldg_kind == 0) {
        v[u] = *reinterpret_cast<const uint4 *>(d + off);
      } else if (a.ldg_kind == 1) {
        asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                     : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w)
                     : "l"(d + off));
      } else {
        const uint32_t dst = scratch + ((i & 1) * U * nthr + u * nthr + t) * 16;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(d + off) : "memory");
        v[u] = make_uint4(0u, 0u, 0u, 0u);
      }
    }
    if (a.ldg_kind == 2) {
      asm volatile("cp.async.commit_group;\n\tcp.async.wait_group 1;" ::: "memory");
    }
#pragma unroll
    for (int u = 0; u < U; u++) acc += v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  if (a.ldg_kind == 2) asm volatile("cp.async.wait_all;" ::: "memory");
  return acc;
}

/* Lane loads alone: every thread of the block (blockDim.x of them), stages x 16 KB per block. */
__global__ void __launch_bounds__(512, 1) lanes_only(const __grid_constant__ Args a) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const unsigned acc = lane_loads(a, threadIdx.x, blockDim.x, (long long)a.stages * STAGE, base);
  if (acc == 0x12345678u) a.sink[0] = acc;
}

/* The ring (warps 0-3); in blocks of 256 threads warps 4-7 load as many bytes again by lane
 * loads (kind a.ldg_kind). */
__global__ void __launch_bounds__(256, 1) ingress(const __grid_constant__ Args a) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const uint32_t full = base, empty = base + 8 * MAXNST, ring = base + 1024;
  const uint32_t rank = cluster_rank(), nc = cluster_size();
  const bool mc = a.mcast && nc > 1;
  /* stage s goes into slot s mod nst; with multicast its issuer is rank s mod nc, the same for
   * every stage of a slot because nst is a multiple of nc */
  auto issue = [&](int s) {
    const uint32_t slot = s % a.nst, bar = full + 8 * slot, dst = ring + slot * STAGE;
    const int k0 = (s * a.cols) & (a.width - 1); /* powers of two */
    if (mc)
      asm volatile(
          "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
          "[%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
          "l"(reinterpret_cast<uint64_t>(&a.map)), "r"(k0), "r"(0), "r"(bar),
          "h"(static_cast<uint16_t>((1u << nc) - 1))
          : "memory");
    else
      bf16fp32__tma_box(dst, &a.map, k0, 0, bar);
  };
  auto arm = [&](int s) { bf16fp32__bar_expect(full + 8 * (s % a.nst), STAGE); };
  if (threadIdx.x == 0) {
    for (int s = 0; s < a.nst; s++) {
      bf16fp32__bar_init(full + 8 * s);
      bf16fp32__bar_init(empty + 8 * s, nc);
    }
    bf16fp32__bar_init_fence();
  }
  cluster_sync(); /* every rank's barriers exist before any copy or arrival reaches them */
  if (threadIdx.x >= 128) { /* the lane loads beside the ring */
    const unsigned acc = lane_loads(a, threadIdx.x - 128, 128, (long long)a.stages * STAGE, 0);
    cluster_sync();
    if (acc == 0x12345678u) a.sink[0] = acc;
    return;
  }
  if (threadIdx.x == 0)
    for (int s = 0; s < a.nst && s < a.stages; s++) {
      arm(s);
      if (!mc || s % nc == rank) issue(s);
    }
  unsigned acc = 0;
  for (int s = 0; s < a.stages; s++) {
    const int slot = s % a.nst;
    bf16fp32__bar_wait<true>(full + 8 * slot, (s / a.nst) & 1);
    const unsigned char *stage = smem + 1024 + slot * STAGE;
    acc += *reinterpret_cast<const unsigned *>(stage + threadIdx.x * 4);
    for (int r = 0; r < a.reads; r++) /* as fragment reads would: every byte, 16 per lane */
      for (int o = 16 * threadIdx.x; o < STAGE; o += 16 * 128) {
        const uint4 v = *reinterpret_cast<const uint4 *>(stage + (o ^ (r << 4)));
        acc += v.x ^ v.y ^ v.z ^ v.w;
      }
    asm volatile("bar.sync 1, 128;" ::: "memory"); /* the ring's four warps are done with it */
    const int next = s + a.nst;
    if (threadIdx.x == 0 && next < a.stages) {
      arm(next);
      if (!mc) {
        issue(next);
      } else {
        /* our copy of the slot is free: tell its issuer, which waits for all nc ranks */
        const uint32_t owner = next % nc;
        uint32_t remote;
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(empty + 8 * slot), "r"(owner));
        asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
        if (owner == rank) {
          bf16fp32__bar_wait<true>(empty + 8 * slot, (s / a.nst) & 1);
          issue(next);
        }
      }
    }
  }
  cluster_sync(); /* no rank leaves while a peer may still arrive on its barriers */
  if (acc == 0x12345678u) a.sink[0] = acc;
}

/* Rings per block (part 5): warp r keeps its own ring of a.nst stages of `bytes` (boxes a.cols x
 * rows), issued by its lane 0 and handed back after a __syncwarp, as the stream kernel's warps do;
 * a.stages stages per warp. */
template <bool CS = false> /* CS: a cluster barrier at entry and exit, as the ring of part 1 has */
__global__ void __launch_bounds__(256, 1) rings(const __grid_constant__ Args a, int bytes, int rows) {
  extern __shared__ __align__(1024) unsigned char smem[];
  if (CS) cluster_sync();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const uint32_t full = base + 64 * warp, ring = base + 1024 + warp * a.nst * bytes;
  auto issue = [&](int s) {
    const uint32_t slot = s % a.nst, bar = full + 8 * slot;
    bf16fp32__bar_expect(bar, bytes);
    bf16fp32__tma_box(ring + slot * bytes, &a.map, (s * a.cols) & (a.width - 1), (warp * rows) & 511, bar);
  };
  if (lane == 0) {
    init_ring(full, a.nst);
    for (int s = 0; s < a.nst && s < a.stages; s++) issue(s);
  }
  __syncwarp();
  unsigned acc = 0;
  for (int s = 0; s < a.stages; s++) {
    const int slot = s % a.nst;
    bf16fp32__bar_wait<true>(full + 8 * slot, (s / a.nst) & 1);
    acc += *reinterpret_cast<const unsigned *>(smem + 1024 + (warp * a.nst + slot) * bytes + lane * 4);
    __syncwarp();
    if (lane == 0 && s + a.nst < a.stages) issue(s + a.nst);
  }
  if (CS) cluster_sync();
  if (acc == 0x12345678u) a.sink[0] = acc;
}

/* One ring shared by the block's warps (part 8): lane 0 of warp 0 issues stages of `bytes`;
 * poll 0: every warp waits on the stage's barrier, then a block barrier and the reissue; poll 1:
 * warp 0 alone waits, a block barrier lets the others read, a second one hands the slot back. */
__global__ void __launch_bounds__(256, 1) shared_ring(const __grid_constant__ Args a, int bytes, int rows,
                                                      int poll) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const int warp = threadIdx.x >> 5;
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const uint32_t full = base, ring = base + 1024;
  auto issue = [&](int s) {
    const uint32_t slot = s % a.nst, bar = full + 8 * slot;
    bf16fp32__bar_expect(bar, bytes);
    bf16fp32__tma_box(ring + slot * bytes, &a.map, (s * a.cols) & (a.width - 1), 0, bar);
  };
  if (threadIdx.x == 0) {
    init_ring(full, a.nst);
    for (int s = 0; s < a.nst && s < a.stages; s++) issue(s);
  }
  __syncthreads();
  unsigned acc = 0;
  for (int s = 0; s < a.stages; s++) {
    const int slot = s % a.nst;
    if (poll == 0 || warp == 0) bf16fp32__bar_wait<true>(full + 8 * slot, (s / a.nst) & 1);
    if (poll == 1) __syncthreads();
    acc += *reinterpret_cast<const unsigned *>(smem + 1024 + slot * bytes + threadIdx.x * 4);
    __syncthreads();
    if (threadIdx.x == 0 && s + a.nst < a.stages) issue(s + a.nst);
  }
  if (acc == 0x12345678u) a.sink[0] = acc;
  (void)rows;
}

int main() {
  const bench_encode_fn enc = bench_map_encoder();
  uint16_t *data;
  unsigned *sink;
  CK(cudaMalloc(&data, (size_t)ROWS * COLS * KSTEPS * 2));
  CK(cudaMalloc(&sink, 4));
  CK(cudaMemset(data, 0x3c, (size_t)ROWS * COLS * KSTEPS * 2));
  Args a{};
  const cuuint64_t dim[2] = {(cuuint64_t)COLS * KSTEPS, ROWS};
  const cuuint64_t stride[1] = {(cuuint64_t)COLS * KSTEPS * 2};
  const cuuint32_t box[2] = {COLS, ROWS}, es[2] = {1, 1};
  if (enc(&a.map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, data, dim, stride, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
          CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
    printf("encode failed\n");
    return 2;
  }
  a.sink = sink;
  a.cols = COLS, a.width = COLS * KSTEPS;
  a.data = data;
  const int smem = 1024 + MAXNST * STAGE;
  CK(cudaFuncSetAttribute(ingress, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CK(cudaFuncSetAttribute(ingress, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int s1 = 32, s2 = 128;
  /* us per call at S = s1 and s2 stages of a launch, and GB/s per block from the difference */
  auto rate = [&](auto kern, cudaLaunchConfig_t &cfg, Args &a, double per_stage_bytes, double *us) {
    for (int i = 0; i < 2; i++) {
      a.stages = i ? s2 : s1;
      for (int w = 0; w < 5; w++) CK(cudaLaunchKernelEx(&cfg, kern, a));
      CK(cudaStreamSynchronize(st));
      us[i] = bench_time_graph(st, 200, [&](int) { CK(cudaLaunchKernelEx(&cfg, kern, a)); });
    }
    return per_stage_bytes * (s2 - s1) / ((us[1] - us[0]) * 1e3);
  };
  printf("ingress-rate: 16 KB stages from L2 (1 MB that every block reads), one block per SM; "
         "per SM = GB/s taken in per SM (from S = %d and %d stages), all = per SM x blocks, L2 = GB/s "
         "read from L2\n", s1, s2);
  printf("\n1. tensor-map copies: reads cluster mcast nst blocks | us(S=%d) us(S=%d) | per SM | all | L2\n", s1, s2);
  for (int reads : {0, 1, 2})
    for (int c : {1, 2, 4})
      for (int mcast = 0; mcast <= (c > 1); mcast++)
        for (int nst : {4, 12}) {
          cudaLaunchConfig_t cfg{};
          cudaLaunchAttribute attr[1];
          attr[0].id = cudaLaunchAttributeClusterDimension;
          attr[0].val.clusterDim.x = c, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
          cfg.blockDim = dim3(128), cfg.dynamicSmemBytes = smem, cfg.stream = st;
          cfg.attrs = attr, cfg.numAttrs = 1;
          cfg.gridDim = dim3(sms / c * c);
          int clusters = 0;
          CK(cudaOccupancyMaxActiveClusters(&clusters, ingress, &cfg));
          const int blocks = std::min(sms / c, clusters) * c; /* one wave */
          cfg.gridDim = dim3(blocks);
          Args b = a;
          b.nst = nst, b.mcast = mcast, b.reads = reads;
          double us[2];
          const double per_sm = rate(ingress, cfg, b, STAGE, us);
          printf("%5d %7d %5d %3d %6d | %7.2f %8.2f | %6.1f | %6.0f | %5.0f\n", reads, c, mcast, nst, blocks,
                 us[0], us[1], per_sm, per_sm * blocks, per_sm * blocks / (mcast ? c : 1));
          fflush(stdout);
        }
  printf("\n2. the lanes' own loads alone (kind: 0 ld.global, 1 ld.global.nc.L1::no_allocate, 2 cp.async.cg "
         "16 B into shared; 8 loads of 16 B in flight per thread): kind threads | us us | per SM | all\n");
  CK(cudaFuncSetAttribute(lanes_only, cudaFuncAttributeMaxDynamicSharedMemorySize, 128 * 1024));
  for (int kind : {0, 1, 2})
    for (int threads : {128, 256, 512}) {
      cudaLaunchConfig_t cfg{};
      cfg.blockDim = dim3(threads), cfg.gridDim = dim3(sms), cfg.stream = st;
      cfg.dynamicSmemBytes = kind == 2 ? 2 * 8 * threads * 16 : 0;
      Args b = a;
      b.ldg_kind = kind;
      double us[2];
      const double per_sm = rate(lanes_only, cfg, b, STAGE, us);
      printf("%4d %7d | %7.2f %8.2f | %6.1f | %6.0f\n", kind, threads, us[0], us[1], per_sm, per_sm * sms);
      fflush(stdout);
    }
  printf("\n3. both at once: the ring (4 warps, no multicast) and as many bytes again by 4 warps' lane "
         "loads: kind nst | us us | per SM (both together) | all\n");
  for (int kind : {0, 1})
    for (int nst : {4, 8}) {
      cudaLaunchConfig_t cfg{};
      cfg.blockDim = dim3(256), cfg.gridDim = dim3(sms), cfg.stream = st;
      cfg.dynamicSmemBytes = smem;
      Args b = a;
      b.nst = nst, b.mcast = 0, b.reads = 0, b.ldg_kind = kind;
      double us[2];
      const double per_sm = rate(ingress, cfg, b, 2.0 * STAGE, us);
      printf("%4d %3d | %7.2f %8.2f | %6.1f | %6.0f\n", kind, nst, us[0], us[1], per_sm, per_sm * sms);
      fflush(stdout);
    }
  printf("\n4. the ring with boxes of other widths (no swizzle, 16 KB stages, nst 8): width rows | us us | "
         "per SM | cycles per row at 1.98 GHz\n");
  for (int cols : {32, 64, 128, 256}) {
    Args b = a;
    const cuuint32_t wbox[2] = {(cuuint32_t)cols, (cuuint32_t)(STAGE / (2 * cols))};
    const cuuint64_t wdim[2] = {1024, 512}, wstride[1] = {2048}; /* 512 rows: no box past them */
    b.width = 1024;
    if (enc(&b.map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, data, wdim, wstride, wbox, es,
            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
      printf("encode failed\n");
      return 2;
    }
    b.cols = cols, b.nst = 8, b.mcast = 0, b.reads = 0;
    cudaLaunchConfig_t cfg{};
    cfg.blockDim = dim3(128), cfg.gridDim = dim3(sms), cfg.stream = st, cfg.dynamicSmemBytes = smem;
    double us[2];
    const double per_sm = rate(ingress, cfg, b, STAGE, us);
    const int rows = STAGE / (2 * cols);
    printf("%5d %4d | %7.2f %8.2f | %6.1f | %5.2f\n", cols, rows, us[0], us[1], per_sm,
           1.98e9 * STAGE / (per_sm * 1e9) / rows);
    fflush(stdout);
  }
  /* Parts 5-8: kern over the 512 x 1024 tensor in boxes 64 wide of `bytes` (swizzled or not),
   * nrings rings per block, so many stages per ring that an SM takes in as many bytes as s1 and s2
   * stages of 16 KB; kern's arguments after (Args, bytes, rows): extra. GB/s per SM. */
  auto ring_rate = [&](auto kern, int warps, int nrings, int bytes, int swz, int smem_bytes, int cluster,
                       auto... extra) {
    const int rows = bytes / 128;
    Args b = a;
    const cuuint32_t rbox[2] = {64, (cuuint32_t)rows};
    const cuuint64_t wdim[2] = {1024, 512}, wstride[1] = {2048};
    b.width = 1024, b.cols = 64, b.nst = 4;
    if (enc(&b.map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, data, wdim, wstride, rbox, es,
            CU_TENSOR_MAP_INTERLEAVE_NONE, swz ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
            CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
      printf("encode failed\n");
      exit(2);
    }
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
    cudaLaunchConfig_t cfg{};
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = cluster, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
    cfg.blockDim = dim3(32 * warps), cfg.gridDim = dim3(sms), cfg.stream = st;
    cfg.dynamicSmemBytes = smem_bytes;
    cfg.attrs = attr, cfg.numAttrs = cluster > 0; /* 0: no cluster attribute */
    double t[2];
    for (int i = 0; i < 2; i++) {
      b.stages = (i ? s2 : s1) * STAGE / (bytes * nrings);
      for (int w = 0; w < 5; w++) CK(cudaLaunchKernelEx(&cfg, kern, b, bytes, rows, extra...));
      CK(cudaStreamSynchronize(st));
      t[i] = bench_time_graph(st, 200, [&](int) { CK(cudaLaunchKernelEx(&cfg, kern, b, bytes, rows, extra...)); });
    }
    printf(" | %7.2f %8.2f | %6.1f\n", t[0], t[1], (double)STAGE * (s2 - s1) / ((t[1] - t[0]) * 1e3));
    fflush(stdout);
  };
  const int in_flight = 128 * 1024; /* per SM, in 4 stages per ring */
  printf("\n5. rings per block, as the stream kernel's warps (box 64 wide, 128 KB in flight per SM, "
         "the 512 x 1024 tensor): swizzle warps nst rows | us us | per SM\n");
  for (int swz = 0; swz < 2; swz++)
    for (int warps : {1, 2, 4, 8}) {
      printf("%7d %5d %3d %4d", swz, warps, 4, in_flight / (4 * warps) / 128);
      ring_rate(rings<false>, warps, warps, in_flight / (4 * warps), swz, 1024 + in_flight, 0);
    }
  printf("\n6. part 5's rings with more shared memory taken by the block (the rest is L1): warps KB | us us | "
         "per SM\n");
  for (int warps : {2, 8})
    for (int kb : {129, 160, 197, 227}) {
      printf("%5d %4d", warps, kb);
      ring_rate(rings<false>, warps, warps, in_flight / (4 * warps), 0, kb * 1024, 0);
    }
  printf("\n7. part 5's rings (2 warps, 16 KB boxes) in cluster launches: cluster barriers, cluster size | us us "
         "| per SM\n");
  for (int cs = 0; cs < 2; cs++)
    for (int c : {0, 1, 2}) {
      printf("%4d %4d", cs, c);
      ring_rate(cs ? rings<true> : rings<false>, 2, 2, in_flight / 8, 0, 1024 + in_flight, c);
    }
  printf("\n8. one ring read by every warp of the block (box 64 x 256, 32 KB, nst 4, the 512 x 1024 tensor): "
         "poll warps | us us | per SM (poll 0: every warp waits on the barrier; 1: warp 0 waits, then a "
         "block barrier)\n");
  for (int poll = 0; poll < 2; poll++)
    for (int warps : {1, 2, 4, 8}) {
      printf("%4d %5d", poll, warps);
      ring_rate(shared_ring, warps, 1, 32 * 1024, 1, 1024 + in_flight, 0, poll);
    }
  return 0;
}
