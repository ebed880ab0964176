// exit-barrier: does compute-sanitizer's racecheck finish on kernels whose extra warps leave at
// entry and whose other warps then meet at block or cluster barriers, as smallm's paired launches
// do (smallm-stream.cu: the register footprint, 512 threads of which 256 exit at once)?
// Session 60's racecheck of gpu-smallm-variants' paired part did not finish in 330 s on the
// H200, while its memcheck took seconds; this probe isolates the pattern. PTX defines it: an
// exiting thread counts as arrived at a barrier for all threads of the CTA or the cluster.
// Each mode launches 128 blocks once; 256 threads per block write a shared slot, meet at a
// barrier and read another warp's slot (with a cluster: the peer block's, through DSMEM), and the
// host checks every output. Modes (one per run, so that a hang names its mode):
//   sync-full     256 threads, __syncthreads (control)
//   sync-exit     512 threads, warps 8-15 exit, __syncthreads
//   named-exit    512 threads, warps 8-15 exit, bar.sync 1, 256
//   cluster-full  clusters of 2, 256 threads, barrier.cluster (control)
//   cluster-exit  clusters of 2, 512 threads, warps 8-15 exit, barrier.cluster
//   pdl-exit      cluster-exit launched with programmatic serialization behind a kernel of its
//                 own kind, griddepcontrol.wait after the exit
//   big-exit      cluster-exit with 115840 bytes of dynamic shared memory (one block per SM)
// Session 61 on the H200 (compute-sanitizer 2025.3.1): every mode ran correctly plainly and
// under racecheck (0 hazards, 1.2-1.7 s each), so none of these patterns alone stops the tool; in
// the paired kernel it reported a deadlock at the __syncthreads of its end (now a named barrier
// there, bf16fp32__smallm_workers_sync).
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a bench/exit-barrier.cu -o eb
// Run:   for m in sync-full ...; do timeout 60 compute-sanitizer --tool racecheck ./eb $m; done
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "bench-cuda.cuh"

namespace cg = cooperative_groups;

enum Barrier { BLOCK_SYNC, NAMED, CLUSTER };

constexpr int kWorkers = 256, kBlocks = 128;

template <Barrier B, bool EXIT, bool PDL>
__global__ void exchange(float *out) {
  __shared__ float slot[kWorkers];
  if (EXIT && threadIdx.x >= kWorkers) return;
  if (PDL) asm volatile("griddepcontrol.wait;" ::: "memory");
  const int i = static_cast<int>(threadIdx.x);
  slot[i] = static_cast<float>(i + 1000 * static_cast<int>(blockIdx.x));
  const float *from = slot;
  if (B == BLOCK_SYNC) __syncthreads();
  if (B == NAMED) asm volatile("bar.sync 1, %0;" ::"n"(kWorkers) : "memory");
  if (B == CLUSTER) {
    asm volatile("barrier.cluster.arrive.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
    cg::cluster_group cl = cg::this_cluster();
    from = cl.map_shared_rank(slot, cl.block_rank() ^ 1u);
  }
  const float v = from[kWorkers - 1 - i];
  if (PDL && i == 0) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (B == CLUSTER) /* the peer's slots stay until both have read */
    asm volatile("barrier.cluster.arrive.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
  out[blockIdx.x * kWorkers + i] = v;
}

static cudaError_t launch(void (*k)(float *), float *out, int threads, int cluster, bool pdl,
                          size_t smem, cudaStream_t s) {
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute at[2];
  int n = 0;
  cfg.gridDim = dim3(kBlocks);
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  if (cluster > 1) {
    at[n].id = cudaLaunchAttributeClusterDimension;
    at[n].val.clusterDim.x = cluster, at[n].val.clusterDim.y = 1, at[n].val.clusterDim.z = 1;
    n++;
  }
  if (pdl) {
    at[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[n].val.programmaticStreamSerializationAllowed = 1;
    n++;
  }
  cfg.attrs = at;
  cfg.numAttrs = n;
  return cudaLaunchKernelEx(&cfg, k, out);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  void (*k)(float *) = nullptr;
  int threads = 2 * kWorkers, cluster = 1;
  bool pdl = false;
  size_t smem = 0;
  if (!strcmp(mode, "sync-full")) k = exchange<BLOCK_SYNC, false, false>, threads = kWorkers;
  else if (!strcmp(mode, "sync-exit")) k = exchange<BLOCK_SYNC, true, false>;
  else if (!strcmp(mode, "named-exit")) k = exchange<NAMED, true, false>;
  else if (!strcmp(mode, "cluster-full"))
    k = exchange<CLUSTER, false, false>, threads = kWorkers, cluster = 2;
  else if (!strcmp(mode, "cluster-exit")) k = exchange<CLUSTER, true, false>, cluster = 2;
  else if (!strcmp(mode, "pdl-exit")) k = exchange<CLUSTER, true, true>, cluster = 2, pdl = true;
  else if (!strcmp(mode, "big-exit"))
    k = exchange<CLUSTER, true, false>, cluster = 2, smem = 115840;
  if (!k) {
    printf("usage: exit-barrier sync-full|sync-exit|named-exit|cluster-full|cluster-exit|"
           "pdl-exit|big-exit\n");
    return 2;
  }
  if (smem) CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  float *out;
  const size_t count = (size_t)kBlocks * kWorkers;
  CK(cudaMalloc(&out, count * sizeof(float)));
  CK(cudaMemset(out, 0xff, count * sizeof(float)));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  /* under PDL, behind a launch of its own kind, as a paired call follows the previous call */
  if (pdl) CK(launch(k, out, threads, cluster, false, smem, s));
  CK(launch(k, out, threads, cluster, pdl, smem, s));
  CK(cudaStreamSynchronize(s));
  std::vector<float> h(count);
  CK(cudaMemcpy(h.data(), out, count * sizeof(float), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int b = 0; b < kBlocks; b++)
    for (int i = 0; i < kWorkers; i++) {
      const int from = cluster > 1 ? b ^ 1 : b;
      bad += h[(size_t)b * kWorkers + i] != (float)(kWorkers - 1 - i + 1000 * from);
    }
  printf("%s: %d threads, cluster %d%s, %zu B shared: %s (%d wrong)\n", mode, threads, cluster,
         pdl ? ", PDL" : "", smem, bad ? "FAILED" : "ok", bad);
  cudaFree(out);
  return bad ? 1 : 0;
}
