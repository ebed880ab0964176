// wgmma-bits: do the two tensor-core instructions of sm_90 add alike? The same bf16 operands,
// accumulated over the same k16 chunks in the same order, once with mma.sync.m16n8k16 (what the
// smallm kernels use) and once with wgmma.mma_async m64nNk16 (A from registers, B from shared
// memory): the outputs are compared bit for bit. If they agree, a wgmma kernel can join the
// smallm kernels without breaking batch invariance. Also checks both against an fp64 sum, which
// settles the shared-memory layout the descriptor describes.
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc bench/wgmma-bits.cu -o wgmma-bits
// (the wgmma wrapper is the kernel's own, src/backends/smallm/smallm-wgmma.cuh)
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backends/smallm/smallm-wgmma.cuh"
#include "bench-cuda.cuh"


constexpr int ROWS = 64;  // A rows (one warpgroup's m64)

__device__ __forceinline__ uint32_t pair(const uint16_t *p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 16);
}

// Row-fragment of A for k chunk c: the m16n8k16 / wgmma register layout.
__device__ __forceinline__ void a_frag(const uint16_t *A, int K, int row0, int c, uint32_t (&a)[4]) {
  const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
  const uint16_t *r0 = A + static_cast<size_t>(row0 + g) * K + 16 * c + 2 * q;
  const uint16_t *r1 = r0 + 8 * K;
  a[0] = pair(r0), a[1] = pair(r1), a[2] = pair(r0 + 8), a[3] = pair(r1 + 8);
}

// D[row][tok] of ROWS x N by mma.sync: warp w owns rows 16w..16w+15.
__global__ void by_mma(const uint16_t *A, const uint16_t *B, float *D, int N, int K) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
  for (int j = 0; j < N / 8; j++) {
    float d[4] = {0, 0, 0, 0};
    for (int c = 0; c < K / 16; c++) {
      uint32_t a[4];
      a_frag(A, K, 16 * warp, c, a);
      const uint16_t *b = B + static_cast<size_t>(8 * j + g) * K + 16 * c + 2 * q;
      const uint32_t b0 = pair(b), b1 = pair(b + 8);
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
          "{%8,%9}, {%0,%1,%2,%3};"
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
    const int r = 16 * warp + g, t = 8 * j + 2 * q;
    D[r * N + t] = d[0], D[r * N + t + 1] = d[1];
    D[(r + 8) * N + t] = d[2], D[(r + 8) * N + t + 1] = d[3];
  }
}

// D by wgmma: one warpgroup, B (N tokens x K) copied into shared memory as core matrices,
// chunk c's matrix (token block nb, k half h) at c * N * 32 + nb * 256 + h * 128 bytes. swap:
// exchange the two offsets in the descriptor (to find which one the hardware reads as K).
template <int N>
__global__ void by_wgmma(const uint16_t *A, const uint16_t *B, float *D, int K, int swap) {
  extern __shared__ __align__(128) uint16_t sb[];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, q = lane & 3;
  for (int i = tid; i < N * K; i += blockDim.x) {
    const int tok = i / K, k = i % K, c = k >> 4, h = (k >> 3) & 1, e = k & 7;
    sb[(c * N * 32 + (tok >> 3) * 256 + h * 128 + (tok & 7) * 16) / 2 + e] = B[i];
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(sb));
  float d[N / 2];
  for (int i = 0; i < N / 2; i++) d[i] = 0.0f;
  for (int c = 0; c < K / 16; c++) {
    uint32_t a[4];
    a_frag(A, K, 16 * warp, c, a);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    const uint32_t at = base + c * N * 32;
    const uint64_t db = swap ? bf16fp32__wgmma_desc(at, 256, 128) : bf16fp32__wgmma_desc(at, 128, 256);
    bf16fp32__wgmma<N>::run(d, a[0], a[1], a[2], a[3], db);
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  }
  const int r = 16 * warp + g;
  for (int j = 0; j < N / 8; j++) {
    const int t = 8 * j + 2 * q;
    D[r * N + t] = d[4 * j], D[r * N + t + 1] = d[4 * j + 1];
    D[(r + 8) * N + t] = d[4 * j + 2], D[(r + 8) * N + t + 1] = d[4 * j + 3];
  }
}

static uint64_t rng = 0x1234567887654321ull;
static uint64_t next() {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}
static uint16_t to_bf(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  b += 0x7fffu + ((b >> 16) & 1u);
  return static_cast<uint16_t>(b >> 16);
}
static double of_bf(uint16_t h) {
  uint32_t b = static_cast<uint32_t>(h) << 16;
  float f;
  memcpy(&f, &b, 4);
  return f;
}
// Distributions: 0 uniform [-0.5, 0.5]; 1 random exponents over 2^-40..2^40; 2 mostly small with
// one in 16 values 2^20 larger (alignment shifts inside a chunk); 3 with bf16 subnormals mixed in;
// 4 cancelling pairs (many exact zeros and ties).
static uint16_t draw(int dist) {
  const uint64_t z = next();
  const float u = static_cast<float>(z >> 40) / 16777216.0f - 0.5f;
  switch (dist) {
    case 0: return to_bf(u);
    case 1: return to_bf(ldexpf(u, static_cast<int>((z >> 8) % 81) - 40));
    case 2: return to_bf(((z >> 4) & 15) == 0 ? ldexpf(u, 20) : u);
    case 3: return ((z >> 4) & 7) == 0 ? static_cast<uint16_t>((z >> 16) & 0x807f) : to_bf(u);
    default: return to_bf(static_cast<float>(static_cast<int>((z >> 8) % 5) - 2) * (((z >> 4) & 1) ? 1.0f : 1.0f / 3.0f));
  }
}

template <int N>
static void run(int dist, int K, int trials, long *mism, long *total, double *worst_rel, int swap) {
  std::vector<uint16_t> hA(ROWS * K), hB(N * K);
  std::vector<float> d1(ROWS * N), d2(ROWS * N);
  uint16_t *A, *B;
  float *D1, *D2;
  CK(cudaMalloc(&A, hA.size() * 2));
  CK(cudaMalloc(&B, hB.size() * 2));
  CK(cudaMalloc(&D1, d1.size() * 4));
  CK(cudaMalloc(&D2, d2.size() * 4));
  const int smem = N * K * 2;
  CK(cudaFuncSetAttribute(by_wgmma<N>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  for (int tr = 0; tr < trials; tr++) {
    for (auto &v : hA) v = draw(dist);
    for (auto &v : hB) v = draw(dist);
    CK(cudaMemcpy(A, hA.data(), hA.size() * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(B, hB.data(), hB.size() * 2, cudaMemcpyHostToDevice));
    by_mma<<<1, 128>>>(A, B, D1, N, K);
    by_wgmma<N><<<1, 128, smem>>>(A, B, D2, K, swap);
    CK(cudaGetLastError());
    CK(cudaMemcpy(d1.data(), D1, d1.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(d2.data(), D2, d2.size() * 4, cudaMemcpyDeviceToHost));
    for (int r = 0; r < ROWS; r++)
      for (int t = 0; t < N; t++) {
        uint32_t b1, b2;
        memcpy(&b1, &d1[r * N + t], 4);
        memcpy(&b2, &d2[r * N + t], 4);
        *mism += b1 != b2;
        ++*total;
        if (dist == 0) {  // layout check against fp64
          double s = 0, sa = 0;
          for (int k = 0; k < K; k++) {
            const double p = of_bf(hA[r * K + k]) * of_bf(hB[t * K + k]);
            s += p, sa += fabs(p);
          }
          const double e1 = fabs(d1[r * N + t] - s) / (sa + 1e-30);
          const double e2 = fabs(d2[r * N + t] - s) / (sa + 1e-30);
          if (e1 > worst_rel[0]) worst_rel[0] = e1;
          if (e2 > worst_rel[1]) worst_rel[1] = e2;
        }
      }
  }
  cudaFree(A), cudaFree(B), cudaFree(D1), cudaFree(D2);
}

int main() {
  const int ks[] = {16, 64, 1024};
  int bad = 0;
  for (int swap = 0; swap < 2; swap++) {
    double wr[2] = {0, 0};
    long m = 0, tot = 0;
    run<64>(0, 64, 2, &m, &tot, wr, swap);
    printf("layout swap=%d (n64, K=64): worst |err|/sum|p| mma %.2e wgmma %.2e, mismatches %ld/%ld\n",
           swap, wr[0], wr[1], m, tot);
  }
  for (int n = 0; n < 2; n++)
    for (int dist = 0; dist < 5; dist++)
      for (int ki = 0; ki < 3; ki++) {
        const int K = ks[ki];
        long m = 0, tot = 0;
        double wr[2] = {0, 0};
        const int trials = K == 1024 ? 8 : 40;
        if (n == 0) run<8>(dist, K, trials, &m, &tot, wr, 0);
        else run<64>(dist, K > 512 ? 512 : K, trials, &m, &tot, wr, 0);
        printf("n%-2d dist %d K %4d: %ld of %ld outputs differ%s", n ? 64 : 8, dist, K > 512 && n ? 512 : K,
               m, tot, dist == 0 ? "" : "\n");
        if (dist == 0) printf(" (worst rel err mma %.2e wgmma %.2e)\n", wr[0], wr[1]);
        bad += m != 0;
      }
  printf("%s\n", bad ? "DIFFERENT: the instructions do not add alike" : "IDENTICAL in every case");
  return 0;
}
