/* The decode step's filler kernel (bench-filler.h). */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bench-filler.h"

namespace {

constexpr int kFillerThreads = 256;
constexpr int kFillerBlocksPerSm = 4;

/* Reads n 16-byte words with the whole grid and folds them into one word per block, so that no
 * read can be dropped. griddepcontrol is a no-op when the launch has no PDL attribute. */
__global__ void __launch_bounds__(kFillerThreads) filler_read(const uint4 *src, size_t n,
                                                             unsigned *sink, int trigger_at_entry) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (trigger_at_entry) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  unsigned acc = 0;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) { /* four loads in flight per thread */
    const uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^
           d.z ^ d.w;
  }
  for (; i < n; i += stride) {
    const uint4 a = src[i];
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (!trigger_at_entry) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  for (int off = 16; off > 0; off >>= 1) acc ^= __shfl_xor_sync(0xffffffffu, acc, off);
  __shared__ unsigned warp_acc[kFillerThreads / 32];
  if ((threadIdx.x & 31) == 0) warp_acc[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kFillerThreads / 32; w++) acc ^= warp_acc[w]; /* acc is warp 0's */
    sink[blockIdx.x] = acc;
  }
}

int fail(char *why, size_t len, const char *what, cudaError_t e) {
  (void)cudaGetLastError();
  snprintf(why, len, "filler: %s: %s", what, cudaGetErrorString(e));
  return -1;
}

}  // namespace

extern "C" int bench_filler_create(bench_filler *f, size_t kb, int count, int trigger, char *why,
                                   size_t len) {
  memset(f, 0, sizeof *f);
  f->trigger = trigger;
  int dev = 0, sms = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  if (e != cudaSuccess) return fail(why, len, "device", e);
  f->bytes_each = kb * 1024;
  f->count = count;
  f->blocks = sms * kFillerBlocksPerSm;
  e = cudaMalloc(reinterpret_cast<void **>(&f->buf), f->bytes_each * static_cast<size_t>(count));
  if (e == cudaSuccess)
    e = cudaMalloc(reinterpret_cast<void **>(&f->sink), sizeof(unsigned) * f->blocks);
  if (e == cudaSuccess) e = cudaMemset(f->buf, 0x5a, f->bytes_each * static_cast<size_t>(count));
  if (e == cudaSuccess) e = cudaDeviceSynchronize(); /* the capture stream does not wait for it */
  if (e != cudaSuccess) {
    bench_filler_free(f);
    return fail(why, len, "device memory", e);
  }
  return 0;
}

extern "C" void bench_filler_free(bench_filler *f) {
  if (f->buf) cudaFree(f->buf);
  if (f->sink) cudaFree(f->sink);
  memset(f, 0, sizeof *f);
}

extern "C" int bench_filler_launch(const bench_filler *f, int i, bool pdl, void *stream, char *why,
                                   size_t len) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(f->blocks));
  cfg.blockDim = dim3(kFillerThreads);
  cfg.stream = static_cast<cudaStream_t>(stream);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = pdl && f->trigger != BENCH_FILLER_PLAIN ? 1 : 0;
  const uint4 *src = reinterpret_cast<const uint4 *>(f->buf + f->bytes_each * static_cast<size_t>(i));
  cudaError_t e = cudaLaunchKernelEx(&cfg, filler_read, src, f->bytes_each / 16, f->sink,
                                     f->trigger == BENCH_FILLER_ENTRY ? 1 : 0);
  return e == cudaSuccess ? 0 : fail(why, len, "launch", e);
}
