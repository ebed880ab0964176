// stream-loop-cycles: the smallm stream kernel's stage loop alone (MT = 1: 16 weight rows and one
// token per warp, 192-byte rows, three-sub-chunk stages, 8 warps x 132 blocks), its data already
// in shared memory, timed per warp with clock64 for 8 and 2 sub-chunks. Forms: fully unrolled
// (the floor of the fragment reads and MMAs); the kernel's loop of session 18 (loop_rt: the
// sub-chunks of a stage unrolled to 7 under predicates on the run-time stage size); the stage
// size at compile time (loop_tg, FULL: full stages without predicates); a run-time loop over
// the sub-chunks with the next one's fragments read ahead (loop_f). docs/smallm-notes.md,
// session 19, has the figures. Each variant repeats the same set-up around its timed loop: the file
// is kept as it ran for those figures.
// Build: nvcc -O3 -std=c++17 -Isrc -gencode=arch=compute_90a,code=sm_90a bench/stream-loop-cycles.cu -o stream-loop-cycles
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
#include "backends/smallm/smallm-fragments.cuh"
// The stream kernel's inner loop alone (MT = 1, 16 rows + 1 token of 8 sub-chunks per warp,
// 192-byte pitch), data already in shared memory; cycles per warp.
template <int NSUB, int PITCH>
__global__ void loop(float *out, long long *cyc) {
  extern __shared__ __align__(128) unsigned char smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  for (int i = threadIdx.x; i < 8 * 17 * PITCH * 3 / 4; i += blockDim.x)
    reinterpret_cast<uint32_t *>(smem)[i] = 0x3f803f80u ^ (i * 2654435761u & 0x00ff00ffu);
  __syncthreads();
  const unsigned char *st = smem + warp * 17 * PITCH * 3;
  const int arow = g * PITCH + 16 * t, arow8 = arow + 8 * PITCH, brow = 16 * PITCH + 16 * t;
  float acc[4] = {0, 0, 0, 0};
  long long t0 = clock64();
#pragma unroll
  for (int q = 0; q < NSUB; q++) {
    const unsigned char *s = st + (q / 3) * 17 * PITCH + 64 * (q % 3);
    const uint4 r0 = *reinterpret_cast<const uint4 *>(s + arow);
    const uint4 r8 = *reinterpret_cast<const uint4 *>(s + arow8);
    const uint4 b = *reinterpret_cast<const uint4 *>(s + brow);
    bf16fp32__smallm_mma_sub(acc, r0, r8, b);
  }
  asm volatile("" : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]));
  long long t1 = clock64();
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc[0] + acc[1] + acc[2] + acc[3];
  if (lane == 0) cyc[blockIdx.x * 8 + warp] = t1 - t0;
}

template <int PITCH>
__global__ void loop_rt(float *out, long long *cyc, int G, int nq, int stages) {
  extern __shared__ __align__(128) unsigned char smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  for (int i = threadIdx.x; i < 8 * 17 * PITCH * 3 / 4; i += blockDim.x)
    reinterpret_cast<uint32_t *>(smem)[i] = 0x3f803f80u ^ (i * 2654435761u & 0x00ff00ffu);
  __syncthreads();
  const int stage_bytes = 17 * PITCH;
  const unsigned char *ring = smem + warp * stage_bytes * stages;
  const int arow = g * PITCH + 16 * t, arow8 = arow + 8 * PITCH, brow = 16 * PITCH + 16 * t;
  float acc[4] = {0, 0, 0, 0};
  const int nst = (nq + G - 1) / G;
  long long t0 = clock64();
  int slot = 0;
  for (int q = 0; q < nst; q++) {
    const unsigned char *st = ring + slot * stage_bytes;
#pragma unroll
    for (int p = 0; p < 7; p++)
      if (p < G && G * q + p < nq) {
        const uint4 r0 = *reinterpret_cast<const uint4 *>(st + arow + 64 * p);
        const uint4 r8 = *reinterpret_cast<const uint4 *>(st + arow8 + 64 * p);
        const uint4 b = *reinterpret_cast<const uint4 *>(st + brow + 64 * p);
        bf16fp32__smallm_mma_sub(acc, r0, r8, b);
      }
    __syncwarp();
    if (++slot == stages) slot = 0;
  }
  asm volatile("" : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]));
  long long t1 = clock64();
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc[0] + acc[1] + acc[2] + acc[3];
  if (lane == 0) cyc[blockIdx.x * 8 + warp] = t1 - t0;
}

// C/D: G a template argument; FULL: full stages take a path without predicates
template <int PITCH, int G, bool FULL>
__global__ void loop_tg(float *out, long long *cyc, int nq, int stages) {
  extern __shared__ __align__(128) unsigned char smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  for (int i = threadIdx.x; i < 8 * 17 * PITCH * 3 / 4; i += blockDim.x)
    reinterpret_cast<uint32_t *>(smem)[i] = 0x3f803f80u ^ (i * 2654435761u & 0x00ff00ffu);
  __syncthreads();
  const int stage_bytes = 17 * PITCH;
  const unsigned char *ring = smem + warp * stage_bytes * stages;
  const int arow = g * PITCH + 16 * t, arow8 = arow + 8 * PITCH, brow = 16 * PITCH + 16 * t;
  float acc[4] = {0, 0, 0, 0};
  const int nst = (nq + G - 1) / G;
  long long t0 = clock64();
  int slot = 0;
  for (int q = 0; q < nst; q++) {
    const unsigned char *st = ring + slot * stage_bytes;
    if (FULL && G * q + G <= nq) {
#pragma unroll
      for (int p = 0; p < G; p++) {
        const uint4 r0 = *reinterpret_cast<const uint4 *>(st + arow + 64 * p);
        const uint4 r8 = *reinterpret_cast<const uint4 *>(st + arow8 + 64 * p);
        const uint4 b = *reinterpret_cast<const uint4 *>(st + brow + 64 * p);
        bf16fp32__smallm_mma_sub(acc, r0, r8, b);
      }
    } else {
#pragma unroll
      for (int p = 0; p < G; p++)
        if (G * q + p < nq) {
          const uint4 r0 = *reinterpret_cast<const uint4 *>(st + arow + 64 * p);
          const uint4 r8 = *reinterpret_cast<const uint4 *>(st + arow8 + 64 * p);
          const uint4 b = *reinterpret_cast<const uint4 *>(st + brow + 64 * p);
          bf16fp32__smallm_mma_sub(acc, r0, r8, b);
        }
    }
    __syncwarp();
    if (++slot == stages) slot = 0;
  }
  asm volatile("" : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]));
  long long t1 = clock64();
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc[0] + acc[1] + acc[2] + acc[3];
  if (lane == 0) cyc[blockIdx.x * 8 + warp] = t1 - t0;
}
// F: a runtime loop over the warp's sub-chunks, the next one's fragments loaded ahead
template <int PITCH>
__global__ void loop_f(float *out, long long *cyc, int G, int nq, int stages) {
  extern __shared__ __align__(128) unsigned char smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  for (int i = threadIdx.x; i < 8 * 17 * PITCH * 3 / 4; i += blockDim.x)
    reinterpret_cast<uint32_t *>(smem)[i] = 0x3f803f80u ^ (i * 2654435761u & 0x00ff00ffu);
  __syncthreads();
  const int stage_bytes = 17 * PITCH;
  const unsigned char *ring = smem + warp * stage_bytes * stages;
  const int arow = g * PITCH + 16 * t, arow8 = arow + 8 * PITCH, brow = 16 * PITCH + 16 * t;
  float acc[4] = {0, 0, 0, 0};
  long long t0 = clock64();
  int slot = 0, p = 0;
  const unsigned char *sc = ring;
  uint4 r0 = *reinterpret_cast<const uint4 *>(sc + arow);
  uint4 r8 = *reinterpret_cast<const uint4 *>(sc + arow8);
  uint4 b = *reinterpret_cast<const uint4 *>(sc + brow);
  for (int j = 0; j < nq; j++) {
    if (++p == G) { p = 0; if (++slot == stages) slot = 0; sc = ring + slot * stage_bytes; } else sc += 64;
    uint4 n0 = r0, n8 = r8, nb = b;
    if (j + 1 < nq) {
      n0 = *reinterpret_cast<const uint4 *>(sc + arow);
      n8 = *reinterpret_cast<const uint4 *>(sc + arow8);
      nb = *reinterpret_cast<const uint4 *>(sc + brow);
    }
    bf16fp32__smallm_mma_sub(acc, r0, r8, b);
    r0 = n0, r8 = n8, b = nb;
  }
  asm volatile("" : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]));
  long long t1 = clock64();
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc[0] + acc[1] + acc[2] + acc[3];
  if (lane == 0) cyc[blockIdx.x * 8 + warp] = t1 - t0;
}
template <class F>
static long long run1(F f) { f(); cudaDeviceSynchronize(); extern long long *gc; long long s = 0; for (int i = 0; i < 132 * 8; i++) s += gc[i]; return s / 1056; }
long long *gc;
int main() {
  float *o; long long *c;
  cudaMalloc(&o, 132 * 256 * 4); cudaMallocManaged(&c, 132 * 8 * 8);
  const int sm = 8 * 17 * 192 * 3;
  cudaFuncSetAttribute(loop<8, 192>, cudaFuncAttributeMaxDynamicSharedMemorySize, sm);
  cudaFuncSetAttribute(loop<2, 192>, cudaFuncAttributeMaxDynamicSharedMemorySize, sm);
  for (int r = 0; r < 3; r++) {
    loop<8, 192><<<132, 256, sm>>>(o, c); cudaDeviceSynchronize();
    long long s8 = 0; for (int i = 0; i < 132 * 8; i++) s8 += c[i];
    loop<2, 192><<<132, 256, sm>>>(o, c); cudaDeviceSynchronize();
    long long s2 = 0; for (int i = 0; i < 132 * 8; i++) s2 += c[i];
    printf("8 subs %lld cycles, 2 subs %lld -> %.1f cycles per sub (mean over warps)\n", s8 / 1056, s2 / 1056, (s8 - s2) / 1056.0 / 6);
  }
  gc = c;
  cudaFuncSetAttribute(loop_tg<192, 3, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, sm);
  cudaFuncSetAttribute(loop_tg<192, 3, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, sm);
  cudaFuncSetAttribute(loop_f<192>, cudaFuncAttributeMaxDynamicSharedMemorySize, sm);
  for (int r = 0; r < 2; r++) {
    long long c8 = run1([&] { loop_tg<192, 3, false><<<132, 256, sm>>>(o, c, 8, 3); });
    long long c2 = run1([&] { loop_tg<192, 3, false><<<132, 256, sm>>>(o, c, 2, 3); });
    long long d8 = run1([&] { loop_tg<192, 3, true><<<132, 256, sm>>>(o, c, 8, 3); });
    long long d2 = run1([&] { loop_tg<192, 3, true><<<132, 256, sm>>>(o, c, 2, 3); });
    long long f8 = run1([&] { loop_f<192><<<132, 256, sm>>>(o, c, 3, 8, 3); });
    long long f2 = run1([&] { loop_f<192><<<132, 256, sm>>>(o, c, 3, 2, 3); });
    long long f14 = run1([&] { loop_f<192><<<132, 256, sm>>>(o, c, 3, 9, 3); });
    printf("C (G template): %lld / %lld -> %.1f per sub; D (+ full path): %lld / %lld -> %.1f; F (runtime loop): %lld / %lld -> %.1f (9 subs %lld)\n",
           c8, c2, (c8 - c2) / 6.0, d8, d2, (d8 - d2) / 6.0, f8, f2, (f8 - f2) / 6.0, f14);
  }
  cudaFuncSetAttribute(loop_rt<192>, cudaFuncAttributeMaxDynamicSharedMemorySize, sm);
  for (int r = 0; r < 2; r++) {
    long long v[2];
    int nqs[2] = {8, 2};
    for (int i2 = 0; i2 < 2; i2++) {
      loop_rt<192><<<132, 256, sm>>>(o, c, 3, nqs[i2], 3); cudaDeviceSynchronize();
      long long s = 0; for (int i = 0; i < 132 * 8; i++) s += c[i];
      v[i2] = s / 1056;
    }
    printf("runtime loop (G 3): 8 subs %lld cycles, 2 subs %lld -> %.1f per sub\n", v[0], v[1], (v[0] - v[1]) / 6.0);
  }
  return 0;
}
