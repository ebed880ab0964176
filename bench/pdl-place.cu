// pdl-place: where a kernel's blocks land when it is launched early (programmatic dependent
// launch) behind a kernel of another size, as smallm's calls are in a decode step. Every kernel
// here is the same stand-in for a smallm call: each block records its SM and its entry time,
// triggers its dependents, reads its share of a cold buffer (the weights, which need not wait),
// waits for its predecessor (griddepcontrol.wait) and records its exit time. A sequence of
// launches runs in one stream, each with the programmatic-serialization attribute, and for the
// last round's call of interest the probe prints how many distinct SMs its blocks ran on, the
// most on one SM, and the time per round of the sequence (a rough figure for these stand-ins: the
// placement is the measure). The call of interest is also launched with a cluster scheduling
// policy (spread, load-balancing), with a preferred shared-memory carveout of 58 % (132 KB, room
// for one of its blocks), and in two footprints that fit an SM together but neither twice: more
// than half the shared memory, or more than half the registers through 256 extra threads that
// leave at entry (whether a block keeps an exited warp's registers). These run without a carveout
// preference, so the driver may give the first the smallest carveout that holds it, and the
// alternating rows show the placement, not that the two share an SM (the library's paired
// launches ask for the largest carveout: smallm-stream.cu).
// The question (docs/smallm-notes.md, session 59): a smallm staging whose block takes at most
// half an SM's shared memory is faster alone (same-shape chain: each call's blocks sit beside
// the previous call's) but slower in the decode step after a call whose blocks take more than
// half. Does the early launch put two of its blocks on each SM that the predecessor frees first?
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a bench/pdl-place.cu -o pdl-place
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "bench-cuda.cuh"

struct Rec {
  int sm;
  unsigned long long t_in, t_out;
};

static __device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Block b reads `per_block` bytes at src + b * per_block with 16-byte loads by its first 256
// threads, 16 loads in flight each (about 72 registers a thread); threads past 256 (a launch of
// 512) leave at once: they only make the block's register footprint larger.
constexpr int kWorkers = 256, kInFlight = 16;
__global__ void __launch_bounds__(512, 1)
    call_kernel(const uint4 *src, long long per_block, Rec *rec, unsigned *sink) {
  extern __shared__ unsigned char room[];
  if (threadIdx.x >= kWorkers) return;
  const int b = blockIdx.x + gridDim.x * blockIdx.y;
  if (threadIdx.x == 0) {
    int id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    rec[b].sm = id;
    rec[b].t_in = now_ns();
    room[0] = 1;
  }
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const uint4 *p = src + static_cast<long long>(b) * (per_block / 16);
  const long long n = per_block / 16;
  unsigned acc = 0;
  for (long long i = threadIdx.x; i < n; i += kWorkers * kInFlight) {
    uint4 v[kInFlight];
#pragma unroll
    for (int j = 0; j < kInFlight; j++)
      v[j] = i + kWorkers * j < n ? __ldcs(p + i + kWorkers * j) : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int j = 0; j < kInFlight; j++) acc ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
  }
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (acc == 0x9e3779b9u) atomicAdd(sink, 1u); /* keeps the loads */
  __syncthreads();
  if (threadIdx.x == 0) rec[b].t_out = now_ns();
}

struct Call {
  int blocks, cluster, smem_kb, threads;
  long long per_block; /* bytes each block reads */
  int policy;          /* cudaClusterSchedulingPolicy of the launch */
  int carveout;        /* preferred shared-memory carveout in percent, or -1 for none */
};

static void launch(const Call &c, const uint4 *src, Rec *rec, unsigned *sink, cudaStream_t s) {
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[4];
  cfg.gridDim = dim3(c.cluster, c.blocks / c.cluster, 1);
  cfg.blockDim = dim3(c.threads, 1, 1);
  cfg.dynamicSmemBytes = static_cast<size_t>(c.smem_kb) * 1024;
  cfg.stream = s;
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = c.cluster, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
  attr[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[1].val.programmaticStreamSerializationAllowed = 1;
  attr[2].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
  attr[2].val.clusterSchedulingPolicyPreference = static_cast<cudaClusterSchedulingPolicy>(c.policy);
  attr[3].id = cudaLaunchAttributePreferredSharedMemoryCarveout;
  attr[3].val.sharedMemCarveout = static_cast<unsigned>(c.carveout);
  cfg.attrs = attr, cfg.numAttrs = c.carveout >= 0 ? 4 : 3;
  CK(cudaLaunchKernelEx(&cfg, call_kernel, src, c.per_block, rec, sink));
}

// Runs `rounds` rounds of `seq` (each call reading fresh bytes of a 1 GiB buffer) and prints
// the placement of seq[watch] in the last round and the time per round after the first four.
static void run(const char *name, const std::vector<Call> &seq, int watch, const uint4 *buf,
                size_t buf_bytes, Rec *rec, unsigned *sink, cudaStream_t s) {
  const int rounds = 20, lead = 4;
  size_t off = 0;
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int r = 0; r < rounds; r++) {
    if (r == lead) CK(cudaEventRecord(e0, s));
    for (size_t i = 0; i < seq.size(); i++) {
      const size_t bytes = static_cast<size_t>(seq[i].blocks) * seq[i].per_block;
      if (off + bytes > buf_bytes) off = 0;
      const bool rec_this = r == rounds - 1 && static_cast<int>(i) == watch;
      launch(seq[i], buf + off / 16, rec_this ? rec : rec + 4096, sink, s);
      off += bytes;
    }
  }
  CK(cudaEventRecord(e1, s));
  CK(cudaStreamSynchronize(s));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  const int n = seq[watch].blocks;
  std::vector<Rec> h(n);
  CK(cudaMemcpy(h.data(), rec, n * sizeof(Rec), cudaMemcpyDeviceToHost));
  std::vector<int> per(1024, 0);
  int distinct = 0, most = 0;
  for (const Rec &x : h) {
    if (per[x.sm]++ == 0) distinct++;
    most = per[x.sm] > most ? per[x.sm] : most;
  }
  int doubled = 0;
  for (int v : per) doubled += v >= 2;
  printf("%-56s %4d blocks on %3d SMs (%3d with 2+, most %d), %6.2f us per round\n", name, n,
         distinct, doubled, most, 1000.0 * ms / (rounds - lead));
}

int main() {
  CK(cudaFuncSetAttribute(call_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
  CK(cudaFuncSetAttribute(call_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  const size_t buf_bytes = 1ull << 30;
  uint4 *buf;
  Rec *rec;
  unsigned *sink;
  CK(cudaMalloc(&buf, buf_bytes));
  CK(cudaMemset(buf, 1, buf_bytes));
  CK(cudaMalloc(&rec, 8192 * sizeof(Rec)));
  CK(cudaMalloc(&sink, sizeof(unsigned)));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // The pro step's c4-main, c128-main and c4-indexer at M = 4-8 (their grids, clusters and
  // weight bytes per block), with the c128-main call in a block of 105 KB (two per SM) or of
  // 145 KB (one per SM, the built-in staging).
  const Call main2048 = {128, 1, 145, 256, 229376, 0, -1};
  const Call index512 = {64, 4, 145, 256, 114688, 0, -1};
  const Call small1024 = {128, 2, 105, 256, 114688, 0, -1};
  const Call big1024 = {128, 2, 145, 256, 114688, 0, -1};
  const Call spread1024 = {128, 2, 105, 256, 114688, 1, -1};
  const Call balance1024 = {128, 2, 105, 256, 114688, 2, -1};
  const Call carve1024 = {128, 2, 105, 256, 114688, 0, 58};
  // Two footprints that fit one SM together but neither twice: more than half the shared memory
  // (X), or more than half the registers through 256 threads that leave at entry (Y).
  const Call x1024 = {128, 2, 117, 256, 114688, 0, -1};
  const Call y1024 = {128, 2, 105, 512, 114688, 0, -1};
  printf("1 GiB buffer, 20 rounds per sequence, the last round's watched call:\n");
  for (int rep = 0; rep < 2; rep++) {
    run("step: 2048 (145 KB) -> 1024 (105 KB) -> 512", {main2048, small1024, index512}, 1, buf,
        buf_bytes, rec, sink, s);
    run("step: 2048 (145 KB) -> 1024 (145 KB) -> 512", {main2048, big1024, index512}, 1, buf,
        buf_bytes, rec, sink, s);
    run("chain: 1024 (105 KB) -> 1024 (105 KB)", {small1024, small1024}, 1, buf, buf_bytes, rec,
        sink, s);
    run("chain: 1024 (145 KB) -> 1024 (145 KB)", {big1024, big1024}, 1, buf, buf_bytes, rec, sink,
        s);
    run("step, 1024 (105 KB) spread policy", {main2048, spread1024, index512}, 1, buf, buf_bytes,
        rec, sink, s);
    run("chain, 1024 (105 KB) spread policy", {spread1024, spread1024}, 1, buf, buf_bytes, rec,
        sink, s);
    run("step, 1024 (105 KB) load-balancing policy", {main2048, balance1024, index512}, 1, buf,
        buf_bytes, rec, sink, s);
    run("step, 1024 (105 KB) carveout 58 %", {main2048, carve1024, index512}, 1, buf, buf_bytes,
        rec, sink, s);
    run("chain, 1024 (105 KB) carveout 58 %", {carve1024, carve1024}, 1, buf, buf_bytes, rec,
        sink, s);
    run("step, 1024 (105 KB, 512 threads)", {main2048, y1024, index512}, 1, buf, buf_bytes, rec,
        sink, s);
    run("step, 1024 (117 KB)", {main2048, x1024, index512}, 1, buf, buf_bytes, rec, sink, s);
    run("chain, 1024 (105 KB, 512 threads)", {y1024, y1024}, 1, buf, buf_bytes, rec, sink, s);
    run("chain, 1024 (117 KB)", {x1024, x1024}, 1, buf, buf_bytes, rec, sink, s);
    run("chain, 1024 alternating 117 KB / 105 KB x 512, watch 117", {x1024, y1024}, 0, buf,
        buf_bytes, rec, sink, s);
    run("chain, 1024 alternating 117 KB / 105 KB x 512, watch 105", {x1024, y1024}, 1, buf,
        buf_bytes, rec, sink, s);
  }
  return 0;
}
