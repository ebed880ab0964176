// pdl-handover: does a cuBLAS call let the next kernel start early? Under programmatic dependent
// launch a kernel may start while its predecessor runs only once the predecessor triggers
// (griddepcontrol.launch_dependents); one that never triggers hands over at its end, as a plain
// launch does. The library's smallm kernels trigger; if cuBLAS's do not, then a smallm call
// after a cuBLAS call gets none of PDL's early start, and a decode step gains more from each
// cuBLAS call swapped for smallm than that call's own time (docs/smallm-notes.md, session 81).
//
// Pairs: for a predecessor shape A and a follower shape B at one M, graphs of 100 calls of A
// alone and of B alone, and of 100 pairs (A then B), each call by one of: cuBLAS (cublasGemmEx as
// MEASURING.md), the library's smallm under PDL, the library's smallm launched plainly; timed as
// the library's bench times (bench-cuda.cuh: median of 7 replays), operands rotated over about
// 400 MB per shape (cold L2). A pair's excess is its time less A's and B's alone (each alone in a
// chain of its own kind): what the hand-overs between them cost beyond the one-shape figures.
//
// Entry: a 100 us spin (so that the host's launch time does not decide), A's call, then a stamp
// kernel launched with PDL (132 blocks of 32 threads; each block records the global timer at
// entry, then after griddepcontrol.wait). The lead is the time from the first block's entry to
// the first block past its wait, the median of 21 eager rounds: about the predecessor's whole
// time if it triggers at its start, near zero if it never triggers. Measured on an H100 SXM
// (session 82): cuBLAS 0.7-1.1 us behind calls of 6-15 us, smallm 2.5-14 us.
// Build (after the library, in build-device): nvcc -O3 -std=c++17 -Iinclude
//   -gencode=arch=compute_90a,code=sm_90a bench/pdl-handover.cu -Lbuild-device -lbf16fp32
//   -lcublas -Xlinker -rpath,$PWD/build-device -o pdl-handover
// Usage: pdl-handover [NA KA NB KB M ...] (default: the list in main)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench-cublas.cuh"
#include "bench-cuda.cuh"
#include "bf16fp32.h"

namespace {

constexpr int CALLS = 100;           /* calls, or pairs, per graph */
constexpr double ROTATE_MB = 400.0;  /* operand bytes each shape rotates over */

enum Who { CUBLAS, SMALLM_PDL, SMALLM_PLAIN, WHO_COUNT };
const char *const who_name[WHO_COUNT] = {"cublas", "smallm-pdl", "smallm-plain"};

// One weight shape's rotated operands at one M.
struct Operands {
  int n, k, m, copies;
  uint16_t *w, *x;
  float *out;
  const uint16_t *w_at(int i) const { return w + (size_t)(i % copies) * n * k; }
  const uint16_t *x_at(int i) const { return x + (size_t)(i % copies) * m * k; }
  float *out_at(int i) const { return out + (size_t)(i % copies) * m * n; }
};

Operands operands(int n, int k, int m) {
  Operands o{n, k, m, 0, nullptr, nullptr, nullptr};
  const double bytes = 2.0 * n * k + 2.0 * m * k + 4.0 * m * n;
  o.copies = (int)(ROTATE_MB * 1e6 / bytes) + 1;
  CK(cudaMalloc(&o.w, (size_t)o.copies * n * k * 2));
  CK(cudaMalloc(&o.x, (size_t)o.copies * m * k * 2));
  CK(cudaMalloc(&o.out, (size_t)o.copies * m * n * 4));
  /* 0x3c3c: bf16 0.0115 everywhere, finite sums (the values do not change the timing) */
  CK(cudaMemset(o.w, 0x3c, (size_t)o.copies * n * k * 2));
  CK(cudaMemset(o.x, 0x3c, (size_t)o.copies * m * k * 2));
  return o;
}

void release(Operands &o) {
  CK(cudaFree(o.w));
  CK(cudaFree(o.x));
  CK(cudaFree(o.out));
}

struct Runner {
  cudaStream_t s;
  cublasHandle_t h;
  bf16fp32_context *ctx[WHO_COUNT]; /* [SMALLM_PDL], [SMALLM_PLAIN] */
  long long issued[WHO_COUNT];
  int failed;

  void call(Who who, const Operands &o, int i) {
    issued[who]++;
    if (who == CUBLAS) {
      if (bench_cublas_gemm(h, o.n, o.m, o.k, o.w_at(i), o.x_at(i), o.out_at(i)) !=
          CUBLAS_STATUS_SUCCESS)
        failed++;
      return;
    }
    if (bf16fp32_linear(ctx[who], BF16FP32_DEVICE, o.m, o.n, o.k, o.x_at(i), o.k, o.w_at(i), o.k,
                        o.out_at(i), o.n, s) != BF16FP32_OK)
      failed++;
  }
};

constexpr int STAMP_BLOCKS = 132, ROUNDS = 21;

__global__ void stamp(unsigned long long *entry, unsigned long long *passed) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  if (threadIdx.x == 0) entry[blockIdx.x] = t;
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  if (threadIdx.x == 0) passed[blockIdx.x] = t;
}

// One thread spinning for `ns` of global time: holds the stream while the host queues the
// predecessor and the stamp behind it, so that the host's launch time does not decide the lead.
__global__ void hold(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  while (t - t0 < ns);
}

// The stamp kernel's lead behind one call of `who` on A (us, median of ROUNDS eager rounds).
double entry_lead(Runner &r, Who who, const Operands &a) {
  unsigned long long *t, host[2 * STAMP_BLOCKS];
  /* device memory: a managed buffer that the host read last round faults on the stamp's first
   * store, which holds the block tens of microseconds between its two stamps */
  CK(cudaMalloc(&t, sizeof host));
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(STAMP_BLOCKS);
  cfg.blockDim = dim3(32);
  cfg.stream = r.s;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  std::vector<long long> lead;
  for (int i = 0; i < ROUNDS; i++) {
    hold<<<1, 1, 0, r.s>>>(100000);
    r.call(who, a, i);
    CK(cudaLaunchKernelEx(&cfg, stamp, t, t + STAMP_BLOCKS));
    CK(cudaMemcpyAsync(host, t, sizeof host, cudaMemcpyDeviceToHost, r.s));
    CK(cudaStreamSynchronize(r.s));
    const unsigned long long first_entry = *std::min_element(host, host + STAMP_BLOCKS);
    const unsigned long long first_passed =
        *std::min_element(host + STAMP_BLOCKS, host + 2 * STAMP_BLOCKS);
    lead.push_back((long long)(first_passed - first_entry));
  }
  CK(cudaFree(t));
  return bench_median(lead) / 1e3;
}

bf16fp32_context *smallm_context(int pdl) {
  bf16fp32_options opt;
  bf16fp32_options_init(&opt);
  opt.algo = "smallm";
  opt.use_pdl = pdl;
  bf16fp32_context *c = nullptr;
  if (bf16fp32_create(&c, &opt) != BF16FP32_OK) {
    printf("bf16fp32_create: %s\n", bf16fp32_last_error());
    exit(2);
  }
  return c;
}

// smallm's completed calls in ctx (the forced backend falls back where it declines).
uint64_t smallm_calls(bf16fp32_context *ctx) {
  for (int i = 0; i < bf16fp32_backend_count(); i++) {
    bf16fp32_backend_info bi;
    if (bf16fp32_backend_info_get(ctx, i, &bi) == BF16FP32_OK &&
        std::string(bi.name) == "smallm")
      return bi.calls;
  }
  return 0;
}

void measure(Runner &r, int na, int ka, int nb, int kb, int m) {
  Operands a = operands(na, ka, m), b = operands(nb, kb, m);
  for (int w = SMALLM_PDL; w < WHO_COUNT; w++) {
    const int64_t mm = m;
    if (bf16fp32_prewarm(r.ctx[w], BF16FP32_DEVICE, na, ka, &mm, 1, r.s) != BF16FP32_OK ||
        bf16fp32_prewarm(r.ctx[w], BF16FP32_DEVICE, nb, kb, &mm, 1, r.s) != BF16FP32_OK) {
      printf("prewarm: %s\n", bf16fp32_last_error());
      exit(2);
    }
  }
  for (int w = 0; w < WHO_COUNT; w++) { /* eager calls first: module loads, plans */
    r.call((Who)w, a, 0);
    r.call((Who)w, b, 0);
  }
  CK(cudaStreamSynchronize(r.s));
  double alone_a[WHO_COUNT], alone_b[WHO_COUNT], pair[WHO_COUNT][WHO_COUNT];
  for (int w = 0; w < WHO_COUNT; w++) {
    alone_a[w] = bench_time_graph(r.s, CALLS, [&](int i) { r.call((Who)w, a, i); });
    alone_b[w] = bench_time_graph(r.s, CALLS, [&](int i) { r.call((Who)w, b, i); });
  }
  for (int p = 0; p < WHO_COUNT; p++)
    for (int f = 0; f < WHO_COUNT; f++)
      pair[p][f] = bench_time_graph(r.s, CALLS, [&](int i) {
        r.call((Who)p, a, i);
        r.call((Who)f, b, i);
      });
  printf("\nA = %dx%d, B = %dx%d, M = %d; us per call or pair; rows: who runs A; pair and"
         " excess (pair less A alone less B alone) by who runs B\n", na, ka, nb, kb, m);
  printf("%-13s %8s %8s %9s", "", "A alone", "B alone", "lead");
  for (int f = 0; f < WHO_COUNT; f++) printf(" %21s", (std::string("B=") + who_name[f]).c_str());
  printf("\n");
  for (int p = 0; p < WHO_COUNT; p++) {
    const double lead = entry_lead(r, (Who)p, a);
    printf("%-13s %8.2f %8.2f %9.2f", who_name[p], alone_a[p], alone_b[p], lead);
    for (int f = 0; f < WHO_COUNT; f++)
      printf(" %11.2f / %+7.2f", pair[p][f], pair[p][f] - alone_a[p] - alone_b[f]);
    printf("\n");
  }
  release(a);
  release(b);
}

}  // namespace

int main(int argc, char **argv) {
  Runner r{};
  CK(cudaStreamCreateWithFlags(&r.s, cudaStreamNonBlocking));
  r.h = bench_cublas_on(r.s);
  r.ctx[SMALLM_PDL] = smallm_context(1);
  r.ctx[SMALLM_PLAIN] = smallm_context(0);
  std::vector<int> list = {2048, 7168, 256, 4096, 1,  2048, 7168, 256, 4096, 48,
                           256,  4096, 2048, 7168, 1, 256,  4096, 2048, 7168, 48,
                           1024, 7168, 512, 7168, 16};
  if (argc > 1) {
    list.clear();
    for (int i = 1; i < argc; i++) list.push_back(atoi(argv[i]));
  }
  if (list.size() % 5 != 0) {
    printf("usage: pdl-handover [NA KA NB KB M ...]\n");
    return 2;
  }
  printf("pdl-handover: a follower's cost after a predecessor, by who runs each\n");
  for (size_t i = 0; i < list.size(); i += 5)
    measure(r, list[i], list[i + 1], list[i + 2], list[i + 3], list[i + 4]);
  printf("\nsmallm calls completed / issued: pdl context %llu / %lld, plain context %llu / %lld;"
         " failed calls %d\n",
         (unsigned long long)smallm_calls(r.ctx[SMALLM_PDL]), r.issued[SMALLM_PDL],
         (unsigned long long)smallm_calls(r.ctx[SMALLM_PLAIN]), r.issued[SMALLM_PLAIN], r.failed);
  bf16fp32_destroy(r.ctx[SMALLM_PDL]);
  bf16fp32_destroy(r.ctx[SMALLM_PLAIN]);
  return r.failed ? 1 : 0;
}
