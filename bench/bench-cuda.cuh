// What the GPU probes in bench/ share: a CUDA error check that stops the program, the
// MEASURING.md timing of a graph of back-to-back calls, the SM clock's rate, a median and the
// hash behind their random operands.
#ifndef BF16FP32_BENCH_CUDA_CUH
#define BF16FP32_BENCH_CUDA_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                                \
  do {                                                                                       \
    cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) {                                                                 \
      printf("CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, __LINE__, #x); \
      exit(2);                                                                               \
    }                                                                                        \
  } while (0)

// Captures rec(0) .. rec(calls - 1) on stream s into one graph, replays it twice untimed, then
// returns the median over 7 timed replays of the microseconds per call.
template <class F>
static double bench_time_graph(cudaStream_t s, int calls, F rec) {
  cudaGraph_t gr;
  cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < calls; i++) rec(i);
  CK(cudaStreamEndCapture(s, &gr));
  CK(cudaGraphInstantiate(&ge, gr, 0));
  CK(cudaGraphLaunch(ge, s));
  CK(cudaGraphLaunch(ge, s));
  CK(cudaStreamSynchronize(s));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int r = 0; r < 7; r++) {
    CK(cudaEventRecord(a, s));
    CK(cudaGraphLaunch(ge, s));
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(gr);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2] * 1000.0 / calls;
}

// 32 well-mixed bits from element index i and a seed: the probes' random operands (each maps
// them to bf16 in its own range).
static __device__ __forceinline__ uint32_t bench_hash(size_t i, uint32_t seed) {
  uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed ^ static_cast<uint32_t>(i >> 32);
  h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
  return h;
}

// The SM clock in GHz: clock64 against the global timer over about 2 ms of one thread's spin.
static __global__ void bench_clock_spin(long long *cyc, unsigned long long *ns) {
  unsigned long long g0, g1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
  const long long c0 = clock64();
  while (clock64() - c0 < 4000000) {
  }
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
  *cyc = clock64() - c0;
  *ns = g1 - g0;
}
inline double bench_sm_ghz() {
  long long *cyc;
  unsigned long long *ns;
  CK(cudaMallocManaged(&cyc, sizeof(long long)));
  CK(cudaMallocManaged(&ns, sizeof(unsigned long long)));
  bench_clock_spin<<<1, 1>>>(cyc, ns);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  const double ghz = static_cast<double>(*cyc) / static_cast<double>(*ns);
  CK(cudaFree(cyc));
  CK(cudaFree(ns));
  return ghz;
}

// The median of v (0 when v is empty).
inline long long bench_median(std::vector<long long> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

#endif
