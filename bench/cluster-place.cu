// cluster-place: where a grid of 128 blocks of 256 threads lands on the SMs, for clusters of
// 1, 2 and 4 blocks and for dynamic shared memory that lets 1, 2 or more blocks share an SM:
// the most clusters resident at once (cudaOccupancyMaxActiveClusters), and for one launch
// whose blocks stay resident together (each spins until all 128 have entered, or gives up
// after a time limit), how many distinct SMs its blocks ran on, the most on one SM, and
// whether all entered within the limit (if not, the grid ran in more than one wave).
// The smallm stream kernel with four blocks per tile (session 43) runs 32 clusters of 4 at
// N = 2048: this says whether those fit one wave and spread over the SMs.
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a bench/cluster-place.cu -o cluster-place
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "bench-cuda.cuh"

// Block b records its SM in sm[b], counts itself in, then spins until all have come in (or
// `limit` cycles have passed): while it spins it holds its SM, so the grid's blocks are resident
// together iff every one of them saw the full count.
__global__ void place_kernel(int *sm, int *arrived, int *saw_all, long long limit) {
  extern __shared__ unsigned char smem[];
  const int b = blockIdx.x + gridDim.x * blockIdx.y;
  const int total = gridDim.x * gridDim.y;
  if (threadIdx.x == 0) {
    int id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    sm[b] = id;
    smem[0] = 1;
    atomicAdd(arrived, 1);
    const long long t0 = clock64();
    int seen = 0;
    while ((seen = atomicAdd(arrived, 0)) < total && clock64() - t0 < limit) {
    }
    saw_all[b] = seen >= total;
  }
}

int main() {
  int dev = 0, sms = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaFuncSetAttribute(place_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
  const int blocks = 128;
  int *sm, *arrived, *saw;
  CK(cudaMalloc(&sm, blocks * sizeof(int)));
  CK(cudaMalloc(&arrived, sizeof(int)));
  CK(cudaMalloc(&saw, blocks * sizeof(int)));
  printf("%d SMs; grid of %d blocks x 256 threads\n", sms, blocks);
  printf("cluster smemKB | max active clusters | distinct SMs, most blocks on one SM, one wave\n");
  for (int cl : {1, 2, 4})
    for (int kb : {48, 96, 144, 216}) {
      cudaLaunchConfig_t cfg = {};
      cudaLaunchAttribute attr[1];
      cfg.gridDim = dim3(cl, blocks / cl, 1);
      cfg.blockDim = dim3(256, 1, 1);
      cfg.dynamicSmemBytes = static_cast<size_t>(kb) * 1024;
      attr[0].id = cudaLaunchAttributeClusterDimension;
      attr[0].val.clusterDim.x = cl, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
      cfg.attrs = attr, cfg.numAttrs = 1;
      int active = 0;
      CK(cudaOccupancyMaxActiveClusters(&active, place_kernel, &cfg));
      CK(cudaMemset(arrived, 0, sizeof(int)));
      CK(cudaLaunchKernelEx(&cfg, place_kernel, sm, arrived, saw, 20000000LL)); /* ~10 ms */
      CK(cudaDeviceSynchronize());
      std::vector<int> h(blocks), s(blocks);
      CK(cudaMemcpy(h.data(), sm, blocks * sizeof(int), cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(s.data(), saw, blocks * sizeof(int), cudaMemcpyDeviceToHost));
      std::vector<int> per(1024, 0);
      int distinct = 0, most = 0, all = 1;
      for (int b = 0; b < blocks; b++) {
        if (per[h[b]]++ == 0) distinct++;
        most = per[h[b]] > most ? per[h[b]] : most;
        all &= s[b];
      }
      printf("%7d %6d | %19d | %12d %5d %8s\n", cl, kb, active, distinct, most, all ? "yes" : "no");
    }
  return 0;
}
