// bulk-issue: how long a block takes to issue 1-D bulk copies (cp.async.bulk, global -> shared,
// counted on one mbarrier) of R rows of B bytes, as the smallm share kernel copies its weight and
// token rows, and how long until they have all landed, for three ways of issuing them:
//   lanes: lane r of warp 0 copies row r (one instruction, up to 32 active lanes, as the share
//          kernel did before session 24),
//   loop:  lane 0 of warp 0 copies every row, one after another,
//   warps: row r by lane r / 8 of warp r % 8 (the share kernel since session 24).
// Cycles on the SM clock from a __syncthreads to the issuing thread's last copy (the slowest
// issuing warp) and to the mbarrier's completion, medians over the blocks of the last of five
// launches (the rows then in L2), one block and one per SM; the SM clock against the global
// timer. docs/smallm-notes.md, session 24.
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc bench/bulk-issue.cu
//        -o bulk-issue
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "backends/smallm/smallm-tiles.cuh" /* the share kernel's copy and barrier helpers */
#include "bench-cuda.cuh"

enum Mode { LANES = 0, LOOP = 1, WARPS = 2 };
static const char *const mode_name[] = {"lanes", "loop", "warps"};

// Block b copies rows b * rows .. of src (stride bytes apart); out[b * 16 + warp * 2] gets the
// warp's issue cycles (0 where it issued nothing), + 1 the cycles until all rows landed.
__global__ void issue(const char *src, long long stride, int rows, int bytes, int mode,
                      long long *out) {
  extern __shared__ __align__(128) unsigned char sm[];
  const uint32_t bar = static_cast<uint32_t>(__cvta_generic_to_shared(sm)), data = bar + 128;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (threadIdx.x == 0) {
    bf16fp32__bar_init(bar);
    bf16fp32__bar_init_fence();
    bf16fp32__bar_expect(bar, rows * bytes);
  }
  __syncthreads();
  const char *s = src + static_cast<long long>(blockIdx.x) * rows * stride;
  bool issued = false;
  const long long t0 = clock64();
  /* the rows this thread copies: r0, r0 + step, ... (none where r0 >= rows) */
  int r0 = rows, step = 1;
  if (mode == LANES && warp == 0) r0 = lane, step = 32;
  if (mode == LOOP && threadIdx.x == 0) r0 = 0, step = 1;
  if (mode == WARPS) r0 = warp + 8 * lane, step = 256;
  for (int r = r0; r < rows; r += step) {
    bf16fp32__bulk_copy(data + r * bytes, s + r * stride, bytes, bar);
    issued = true;
  }
  const long long t1 = clock64();
  issued = __any_sync(0xffffffffu, issued);
  bf16fp32__bar_wait(bar, 0);
  const long long t2 = clock64();
  if (lane == 0) {
    out[blockIdx.x * 16 + warp * 2] = issued ? t1 - t0 : 0;
    out[blockIdx.x * 16 + warp * 2 + 1] = t2 - t0;
  }
}

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const long long stride = 8192; /* one row per 8 KB, as the share kernel's rows of a K slice */
  const int max_rows = 64, max_bytes = 3584;
  char *src;
  long long *out;
  CK(cudaMalloc(&src, static_cast<size_t>(sms) * max_rows * stride));
  CK(cudaMemset(src, 1, static_cast<size_t>(sms) * max_rows * stride));
  CK(cudaMalloc(&out, static_cast<size_t>(sms) * 16 * sizeof(long long)));
  CK(cudaFuncSetAttribute(issue, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          128 + max_rows * max_bytes));
  const double ghz = bench_sm_ghz();
  std::printf("SM clock %.2f GHz (clock64 against the global timer)\n", ghz);
  std::printf("%5s %6s %6s %6s | %12s %12s %12s\n", "rows", "bytes", "blocks", "mode", "issue cyc",
              "per copy", "landed cyc");
  const int shapes[][2] = {{32, 1024}, {32, 3584}, {64, 1024}};
  for (auto sh : shapes)
    for (int blocks : {1, sms})
      for (int mode = 0; mode < 3; mode++) {
        std::vector<long long> h(static_cast<size_t>(blocks) * 16);
        std::vector<long long> iss, land;
        for (int rep = 0; rep < 5; rep++) { /* the last of five launches, the others warm-up */
          issue<<<blocks, 256, 128 + sh[0] * sh[1]>>>(src, stride, sh[0], sh[1], mode, out);
          CK(cudaGetLastError());
          CK(cudaDeviceSynchronize());
        }
        CK(cudaMemcpy(h.data(), out, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
        for (int b = 0; b < blocks; b++) {
          long long worst = 0;
          for (int w = 0; w < 8; w++) worst = std::max(worst, h[b * 16 + w * 2]);
          iss.push_back(worst);
          land.push_back(h[b * 16 + 1]);
        }
        const long long mi = bench_median(iss);
        std::printf("%5d %6d %6d %6s | %12lld %12.1f %12lld\n", sh[0], sh[1], blocks,
                    mode_name[mode], mi, static_cast<double>(mi) / sh[0], bench_median(land));
      }
  return 0;
}
