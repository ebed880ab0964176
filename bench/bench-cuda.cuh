// What the GPU probes in bench/ share: a CUDA error check that stops the program, and the
// MEASURING.md timing of a graph of back-to-back calls.
#ifndef BF16FP32_BENCH_CUDA_CUH
#define BF16FP32_BENCH_CUDA_CUH

#include <cuda_runtime.h>

#include <algorithm>
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

#endif
