// bigtile: a wgmma kernel for M > 64 in smallm's fixed summation order, as a probe for the
// tile kernel that M = 128-256 would need (docs/smallm-notes.md, sessions 27-29). It answers:
//   1. bits: with x written once per call in the k-permuted order (x'), does wgmma m64nNk16
//      (A = the weight fragments of the other kernels, from registers; B = x' by descriptor) give,
//      once the chains are added in the split's order, the library's bits?
//   2. time: how long do the main loop (one chain per block, 64 WG rows x BT tokens), x', and the
//      sum of the chains take, against cuBLAS and the issue's targets?
// MODE 0: the chains' partial sums to global memory, added by reduce_kernel; 1: loads only (the
// fragments read, no MMA); 2: MMAs only (the ring filled once, then read again without copies);
// 3: the loop alone (a checksum per thread instead of the partial sums); 4: one cluster per tile
// holds every chain (rank = chain) and adds them over DSMEM into the outputs, optionally with the
// weights of the first stages requested before griddepcontrol.wait (x' launched before it);
// 5: as 4 with the library's pull (every peer's piece requested before any is added, the block's
// release restricted to its shared memory) and 3 blocks per SM; 6: mode 5's cluster sum with no
// loop in front of it (the sums of zeros: what the cluster launch and the sum cost alone; Args::cut
// stops it early); 7: as 5 with the pieces exchanged through L2 (each chain's sums stored, a
// cluster barrier, each rank's share loaded from L2) instead of the peers' shared memory; 8: mode
// 7's sum with no loop; 9: the sum with no loop and no exchange (each rank loads its own pieces).
// PROD: the producer warpgroup above; RPW 2: two 64-row tiles per warpgroup; CPB 2: two chains
// per block.
// Placement (--place): mode 3 launched in the clusters of modes 4-9 (no sum), and the clusters
// with the spread scheduling policy; every variant reports the SMs its blocks ran on.
// Variant sets (any of them, in order): --diag (modes 0-2), --loop (modes 0 and 3), --pull
// (modes 3-5), --prod (the producer), --rows (two row tiles), --pairs (two chains per block),
// --place (where the clusters' blocks run), --sum (the sum alone and with the loop, by where its
// pieces come from); none: modes 3 and 4.
// Timed: graphs of 200 calls over rotated weight copies (cold L2), median of 7 replays.
//
// Build (from the repository root):
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude bench/bigtile.cu
//     src/backends/smallm/smallm-{kernel,decode,wide,stream,share,fold,wgmma-sm90a}.cu
//     src/backends/smallm/smallm-{config,prefer}.c -lcublas -o bigtile
// Run: bigtile [--diag] [--loop] [--pull] [--prod] [--rows] [--pairs] [--place] [--sum] [N K M ...]   (default: the DSV4 shapes at M = 128, 256)
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "backends/smallm/smallm-config.h"
#include "backends/smallm/smallm-launch.h"
#include "backends/smallm/smallm-tiles.cuh"
#include "backends/smallm/smallm-wgmma.cuh"
#include "bench-cublas.cuh"
#include "bench-cuda.cuh"
#include "measure-floor.h"

namespace {

constexpr int NQ = 2;  // sub-chunks (32 k) per stage

uint32_t __device__ __forceinline__ smem_u32(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
uint4 __device__ __forceinline__ lds16(uint32_t a) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(a));
  return v;
}
// K-major operand, 64-byte swizzle: rows of 64 bytes (one sub-chunk), 8-row groups 512 bytes
// apart; the k16 step h starts 32 h bytes into the row.
uint64_t __device__ __forceinline__ desc_sw64(uint32_t addr) {
  return static_cast<uint64_t>((addr >> 4) & 0x3fff) | (1ull << 16) | (32ull << 32) | (2ull << 62);
}
void __device__ __forceinline__ cluster_sync_all() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
float4 __device__ __forceinline__ ld_peer(uint32_t local, uint32_t rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0,%1,%2,%3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(remote)
               : "memory");
  return v;
}

// x' (rows padded to mp, columns to kp = 32 * subs, zeros there): within each sub-chunk the
// MMA order of the other kernels' fragments: MMA 1's k16 positions 0-15 are k = 0, 1, 8, 9, 16,
// 17, 24, 25, 2, 3, 10, 11, 18, 19, 26, 27, MMA 2's the same plus 4. In 32-bit words, x' word
// 4 j + t of a sub-chunk is x word 4 t + j: a 4 x 4 transpose of 16-byte pieces (K and ldx
// multiples of 8). One thread per (row, sub-chunk).
__global__ void xperm_kernel(const uint16_t *x, int64_t ldx, int m, int k, uint16_t *xp, int mp, int kp) {
  const int subs = kp / 32;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<int64_t>(mp) * subs) return;
  const int row = static_cast<int>(i / subs), sc = static_cast<int>(i % subs);
  uint4 v[4];
#pragma unroll
  for (int t = 0; t < 4; t++) {
    const int kk = 32 * sc + 8 * t;
    v[t] = row < m && kk < k ? *reinterpret_cast<const uint4 *>(x + row * ldx + kk) : make_uint4(0, 0, 0, 0);
  }
  uint4 *o = reinterpret_cast<uint4 *>(xp + static_cast<int64_t>(row) * kp + 32 * sc);
  o[0] = make_uint4(v[0].x, v[1].x, v[2].x, v[3].x);
  o[1] = make_uint4(v[0].y, v[1].y, v[2].y, v[3].y);
  o[2] = make_uint4(v[0].z, v[1].z, v[2].z, v[3].z);
  o[3] = make_uint4(v[0].w, v[1].w, v[2].w, v[3].w);
}

struct Args {
  float *part;  // MODE 0: [chains][mp][n] partial sums; 3: a checksum per thread
  int m, n, mp;
  int kwarps;   // chains per slice
  int ksplit;   // slices
  int pdl;      // MODE 4-9: weights of the first stages before griddepcontrol.wait, x' after
  float *out;   // MODE 4-9: the outputs
  int64_t ldo;
  bf16fp32__smallm_slices slices;
  const uint16_t *x;  // PROD: x itself, read by the producer warpgroup (no x' pass)
  int64_t ldx;
  int k;
  int *where;  // when set (the checked launch only): each block's SM, by linear block index
  int cut;     // MODE 6: 0 the whole sum; 2 nothing after the setup; 5 nothing after the sums'
               // stores to shared memory; 7 as 5, then griddepcontrol.wait
};

// Block: WG warpgroups of 64 RPW weight rows each (blockIdx.x: BR = 64 WG RPW rows), BT tokens
// (blockIdx.y), one chain (blockIdx.z = slice * kwarps + group). Stages of NQ sub-chunks, NS of
// them in flight; thread 0 issues the copies. Weights: a box of 32 k x BR rows per sub-chunk (rows of
// 64 bytes: the fragment reads of rows g and g + 1 share a 128-byte line, no bank conflict);
// x': a box of 32 k x BT tokens per sub-chunk, 64-byte swizzle (wgmma's B by descriptor).
// DEPTH 0: a stage's MMAs complete before its slot is released; 1: they stay in flight while the
// next stage's are issued, and the slot before is released then.
// PROD 1: a fifth warpgroup produces the stages: one thread issues the weight boxes, and all 128
// read x itself (16-byte loads), permute it (the 4 x 4 word transpose of xperm_kernel) and store
// it in the 64-byte-swizzled layout the x' boxes land in, so that no x' pass runs before the
// kernel (with MODE 3 or 5).
// RPW 2: each warpgroup takes two 64-row tiles (two accumulator sets, their MMAs interleaved:
// two independent chains on the tensor cores instead of one), so blocks hold 128 WG rows.
// CPB 2: each block takes two consecutive chains of a slice (blockIdx.z = chain / 2), each into its
// own accumulator set, so that the clusters are half as large: the first pair of a slice is added
// in the block (c0 + c1, the library's first step), the others' two chain sums are kept apart for
// the pull (MODE 3 or 5).
template <int WG, int BT, int NS, int DEPTH, int MODE, int PROD = 0, int RPW = 1, int CPB = 1>
__global__ void __launch_bounds__(128 * WG + 128 * PROD, 1)
    bigtile_kernel(const __grid_constant__ CUtensorMap tw, const __grid_constant__ CUtensorMap tx,
                   const __grid_constant__ Args a) {
  constexpr int BR = 64 * WG * RPW;
  static_assert(RPW == 1 || MODE == 3 || MODE == 5, "two row tiles: the loop alone or the cluster sum");
  static_assert(MODE < 6 || (CPB == 1 && !PROD), "modes 6-9: one chain per block, no producer");
  constexpr int WQ = BR * 64, XQ = BT * 64;  // bytes of one sub-chunk's boxes
  constexpr int STAGE = NQ * (WQ + XQ);
  extern __shared__ __align__(1024) unsigned char smem[];
  const uint32_t base = (smem_u32(smem) + 1023) & ~1023u;  // stages 1024-aligned (swizzle atoms)
  const uint32_t bars = base + NS * STAGE;                 // full[NS], empty[NS]
  static_assert(CPB == 1 || ((MODE == 3 || MODE == 5) && RPW == 1), "chain pairs: the loop or the cluster sum");
  const int c = blockIdx.z * CPB, slice = c / a.kwarps, wk = c % a.kwarps;
  const int k0 = a.slices.k[slice], k1 = a.slices.k[slice + 1];
  int j0, j1;
  bf16fp32__smallm_chain((k1 - k0 + 31) / 32, wk, a.kwarps, &j0, &j1);
  int jend = j1;  // CPB 2: the second chain's end (the chains of a slice are contiguous)
  if constexpr (CPB == 2) {
    int jx;
    bf16fp32__smallm_chain((k1 - k0 + 31) / 32, wk + 1, a.kwarps, &jx, &jend);
  }
  const int boundary = j1 - j0;  // CPB 2: the sub-chunk where the second chain starts
  constexpr bool NOLOOP = MODE == 6 || MODE == 8 || MODE == 9;  // the sums of zeros, no loop
  const int sub0 = k0 / 32 + j0, subs = NOLOOP ? 0 : jend - j0;  // the block's sub-chunks of K (slices start at multiples of 32)
  const int stages = (subs + NQ - 1) / NQ;
  const int row0 = blockIdx.x * BR, tok0 = blockIdx.y * BT;
  if (threadIdx.x == 0 && a.where) {
    uint32_t sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    a.where[(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x] = static_cast<int>(sm);
  }
  if (threadIdx.x == 0) {
    for (int i = 0; i < NS; i++) {
      // full: the copies' arrival, and with PROD the producer's four warps after their x stores
      bf16fp32__bar_init(bars + 8 * i, PROD ? 5 : 1);
      bf16fp32__bar_init(bars + 8 * (NS + i), 4 * WG);
    }
    bf16fp32__bar_init_fence();
  }
  __syncthreads();
  if (MODE == 6 && a.cut == 2) return;
  auto issue = [&](int s) {
    const int slot = s % NS, nq = min(NQ, subs - s * NQ);
    const uint32_t st = base + slot * STAGE, full = bars + 8 * slot;
    bf16fp32__bar_expect(full, nq * (WQ + XQ));
    for (int q = 0; q < nq; q++) {
      const int kk = 32 * (sub0 + s * NQ + q);
      bf16fp32__tma_box(st + q * WQ, &tw, kk, row0, full);
      bf16fp32__tma_box(st + NQ * WQ + q * XQ, &tx, kk, tok0, full);
    }
  };
  if (!PROD && threadIdx.x == 0) {
    if (MODE >= 4 && a.pdl) {  // the weights need nothing from the previous kernel; x' does
      for (int s = 0; s < NS && s < stages; s++) {
        const int slot = s % NS, nq = min(NQ, subs - s * NQ);
        const uint32_t st = base + slot * STAGE, full = bars + 8 * slot;
        bf16fp32__bar_expect(full, nq * (WQ + XQ));
        for (int q = 0; q < nq; q++) bf16fp32__tma_box(st + q * WQ, &tw, 32 * (sub0 + s * NQ + q), row0, full);
      }
      asm volatile("griddepcontrol.wait;" ::: "memory");
      for (int s = 0; s < NS && s < stages; s++) {
        const int slot = s % NS, nq = min(NQ, subs - s * NQ);
        const uint32_t st = base + slot * STAGE, full = bars + 8 * slot;
        for (int q = 0; q < nq; q++)
          bf16fp32__tma_box(st + NQ * WQ + q * XQ, &tx, 32 * (sub0 + s * NQ + q), tok0, full);
      }
    } else {
      for (int s = 0; s < NS && s < stages; s++) issue(s);
    }
  }

  const int wg = threadIdx.x / 128, w = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const int rw = 64 * RPW * wg + 16 * w + g;  // the lane's weight row in the block (and rw + 8)
  float acc[BT / 2];                           // with PROD zeroed on the consumers' path only
  float acc2[RPW == 2 ? BT / 2 : 1];           // RPW 2: rows rw + 64 and rw + 72
  float first[CPB == 2 ? BT / 2 : 1];          // CPB 2: the first chain's sums (acc: the second's)
  if (!PROD)
#pragma unroll
    for (int i = 0; i < BT / 2; i++) acc[i] = 0.0f;
  if constexpr (!PROD && RPW == 2)
#pragma unroll
    for (int i = 0; i < BT / 2; i++) acc2[i] = 0.0f;
  if constexpr (!PROD && CPB == 2)
#pragma unroll
    for (int i = 0; i < BT / 2; i++) first[i] = 0.0f;
  // one sub-chunk's two MMAs; q a compile-time index, so that no wgmma sits on a path the
  // compiler takes for divergent
  auto sub = [&](uint32_t st, int q) {
    const uint4 r0 = lds16(st + q * WQ + rw * 64 + 16 * t);
    const uint4 r8 = lds16(st + q * WQ + (rw + 8) * 64 + 16 * t);
    const uint32_t xq = st + NQ * WQ + q * XQ;
    if (MODE == 1) {
      acc[0] += __int_as_float((r0.x ^ r8.x ^ r0.y ^ r8.y ^ r0.z ^ r8.z ^ r0.w ^ r8.w) & 0x7fffff);
      return;
    }
    if constexpr (RPW == 2) {  // each set keeps its own k order; the two chains alternate
      const uint4 s0 = lds16(st + q * WQ + (rw + 64) * 64 + 16 * t);
      const uint4 s8 = lds16(st + q * WQ + (rw + 72) * 64 + 16 * t);
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
      bf16fp32__wgmma<BT>::run(acc, r0.x, r8.x, r0.y, r8.y, desc_sw64(xq));
      bf16fp32__wgmma<BT>::run(acc2, s0.x, s8.x, s0.y, s8.y, desc_sw64(xq));
      bf16fp32__wgmma<BT>::run(acc, r0.z, r8.z, r0.w, r8.w, desc_sw64(xq + 32));
      bf16fp32__wgmma<BT>::run(acc2, s0.z, s8.z, s0.w, s8.w, desc_sw64(xq + 32));
      return;
    }
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    bf16fp32__wgmma<BT>::run(acc, r0.x, r8.x, r0.y, r8.y, desc_sw64(xq));
    bf16fp32__wgmma<BT>::run(acc, r0.z, r8.z, r0.w, r8.w, desc_sw64(xq + 32));
  };
  // CPB 2: a sub-chunk of the first chain, into its own set (two sets zeroed up front: no
  // accumulator is redefined between wgmmas, which would make ptxas serialise them)
  auto sub_first = [&](uint32_t st, int q) {
    if constexpr (CPB == 2) {
      const uint4 r0 = lds16(st + q * WQ + rw * 64 + 16 * t);
      const uint4 r8 = lds16(st + q * WQ + (rw + 8) * 64 + 16 * t);
      const uint32_t xq = st + NQ * WQ + q * XQ;
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
      bf16fp32__wgmma<BT>::run(first, r0.x, r8.x, r0.y, r8.y, desc_sw64(xq));
      bf16fp32__wgmma<BT>::run(first, r0.z, r8.z, r0.w, r8.w, desc_sw64(xq + 32));
    }
  };
  // stage j's slot is free again: each warp arrives; thread 0 refills it with stage j + NS
  auto release = [&](int j) {
    const int slot = j % NS;
    __syncwarp();
    if (lane == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bars + 8 * (NS + slot)) : "memory");
    if (MODE != 2 && !PROD && threadIdx.x == 0 && j + NS < stages) {
      bf16fp32__bar_wait(bars + 8 * (NS + slot), (j / NS) & 1);
      issue(j + NS);
    }
    __syncwarp();
  };
  auto stage = [&](int s, int nq) {
    const int slot = s % NS;
    const uint32_t st = base + slot * STAGE;
    if (MODE != 2 || s < NS) bf16fp32__bar_wait(bars + 8 * slot, (s / NS) & 1);
    if (nq == NQ) {
#pragma unroll
      for (int q = 0; q < NQ; q++) {
        if (CPB == 2 && s * NQ + q < boundary) sub_first(st, q);
        else sub(st, q);
      }
    } else if (CPB == 2 && s * NQ < boundary) {
      sub_first(st, 0);
    } else {
      sub(st, 0);  // the one sub-chunk left (NQ = 2)
    }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    if (DEPTH == 0) {
      asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
      release(s);
    } else {
      asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
      if (s > 0) release(s - 1);
    }
  };
  static_assert(NQ == 2, "the tail stage holds one sub-chunk");
  static_assert(!PROD || MODE == 3 || MODE == 5, "the producer serves the loop alone or the cluster sum");
  // the role by warpgroup, in a form the compiler sees as warp-uniform (the wgmmas stay unserialised)
  const bool producer = PROD && __shfl_sync(0xffffffffu, threadIdx.x / 128, 0) == WG;
  if (producer) {
    const int pt = threadIdx.x - 128 * WG;
    asm volatile("griddepcontrol.wait;" ::: "memory");  // x may come from the previous kernel
    for (int s = 0; s < stages; s++) {
      const int slot = s % NS, nq = min(NQ, subs - s * NQ);
      const uint32_t st = base + slot * STAGE, fullb = bars + 8 * slot;
      if (s >= NS) bf16fp32__bar_wait(bars + 8 * (NS + slot), (s / NS - 1) & 1);
      if (pt == 0) {
        bf16fp32__bar_expect(fullb, nq * WQ);
        for (int q = 0; q < nq; q++) bf16fp32__tma_box(st + q * WQ, &tw, 32 * (sub0 + s * NQ + q), row0, fullb);
      }
      constexpr int RP = BT / 128;  // token rows per producer thread
      uint4 v[NQ][RP][4];           // every load of the stage in flight before the first store
#pragma unroll
      for (int q = 0; q < NQ; q++)
#pragma unroll
        for (int i = 0; i < RP; i++) {
          const int tok = tok0 + pt + 128 * i;
#pragma unroll
          for (int c = 0; c < 4; c++) {
            const int kk = 32 * (sub0 + s * NQ + q) + 8 * c;
            v[q][i][c] = q < nq && tok < a.m && kk < a.k
                             ? __ldg(reinterpret_cast<const uint4 *>(a.x + tok * a.ldx + kk))
                             : make_uint4(0, 0, 0, 0);
          }
        }
#pragma unroll
      for (int q = 0; q < NQ; q++)
#pragma unroll
        for (int i = 0; i < RP; i++) {
          const int r = pt + 128 * i;  // row r's 16-byte piece j sits at piece j ^ ((r / 2) % 4)
          unsigned char *row = smem + (st - smem_u32(smem)) + NQ * WQ + q * XQ + r * 64;
          const int sw = (r >> 1) & 3;
          const uint4(&u)[4] = v[q][i];
          if (q < nq) {
            *reinterpret_cast<uint4 *>(row + 16 * (0 ^ sw)) = make_uint4(u[0].x, u[1].x, u[2].x, u[3].x);
            *reinterpret_cast<uint4 *>(row + 16 * (1 ^ sw)) = make_uint4(u[0].y, u[1].y, u[2].y, u[3].y);
            *reinterpret_cast<uint4 *>(row + 16 * (2 ^ sw)) = make_uint4(u[0].z, u[1].z, u[2].z, u[3].z);
            *reinterpret_cast<uint4 *>(row + 16 * (3 ^ sw)) = make_uint4(u[0].w, u[1].w, u[2].w, u[3].w);
          }
        }
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the stores, seen by wgmma
      __syncwarp();
      if ((pt & 31) == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(fullb) : "memory");
    }
  } else {
    if (PROD) {  // the zeros in place before the first wgmma (else ptxas sinks them into its pipeline)
#pragma unroll
      for (int i = 0; i < BT / 2; i++) acc[i] = 0.0f;
#pragma unroll
      for (int i = 0; i < BT / 2; i++) asm volatile("" : "+f"(acc[i])::"memory");
      if constexpr (RPW == 2) {
#pragma unroll
        for (int i = 0; i < BT / 2; i++) acc2[i] = 0.0f;
#pragma unroll
        for (int i = 0; i < BT / 2; i++) asm volatile("" : "+f"(acc2[i])::"memory");
      }
      if constexpr (CPB == 2) {
#pragma unroll
        for (int i = 0; i < BT / 2; i++) first[i] = 0.0f;
#pragma unroll
        for (int i = 0; i < BT / 2; i++) asm volatile("" : "+f"(first[i])::"memory");
      }
    }
    const int full = subs / NQ;
    for (int s = 0; s < full; s++) stage(s, NQ);
    if (subs % NQ) stage(full, subs % NQ);
    if (DEPTH) asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    if constexpr (CPB == 2)
      if (wk == 0)  // a slice's first pair, added as the library adds it: c0 + c1
#pragma unroll
        for (int i = 0; i < BT / 2; i++) first[i] += acc[i];
  }
  if (MODE >= 4) {  // the chains of a tile form one cluster (rank = chain): sums in the library's tree
    constexpr int P = BR + 4;  // row pitch in floats: the lanes' stores hit 32 different banks
    __syncthreads();           // every warp's MMAs are done with the ring
    float *ps = reinterpret_cast<float *>(smem + (base - smem_u32(smem)));
#pragma unroll
    for (int i = 0; i < BT / 8 && !producer; i++) {
      const int tk = 8 * i + 2 * t, r = rw;
      if constexpr (CPB == 2) {  // set 0: the first chain (or the pair's sum), set 1: the second
        ps[tk * P + r] = first[4 * i];
        ps[(tk + 1) * P + r] = first[4 * i + 1];
        ps[tk * P + r + 8] = first[4 * i + 2];
        ps[(tk + 1) * P + r + 8] = first[4 * i + 3];
        float *p1 = ps + BT * P;
        p1[tk * P + r] = acc[4 * i];
        p1[(tk + 1) * P + r] = acc[4 * i + 1];
        p1[tk * P + r + 8] = acc[4 * i + 2];
        p1[(tk + 1) * P + r + 8] = acc[4 * i + 3];
        continue;
      }
      ps[tk * P + r] = acc[4 * i];
      ps[(tk + 1) * P + r] = acc[4 * i + 1];
      ps[tk * P + r + 8] = acc[4 * i + 2];
      ps[(tk + 1) * P + r + 8] = acc[4 * i + 3];
      if constexpr (RPW == 2) {
        ps[tk * P + r + 64] = acc2[4 * i];
        ps[(tk + 1) * P + r + 64] = acc2[4 * i + 1];
        ps[tk * P + r + 72] = acc2[4 * i + 2];
        ps[(tk + 1) * P + r + 72] = acc2[4 * i + 3];
      }
    }
    // where a rank's pieces come from: 0 the peers' shared memory; 1 L2 (MODE 7, 8: each chain's
    // sums stored to its plane of part in 16-byte stores, then a cluster barrier, whose release
    // and acquire at cluster scope cover global memory); 2 the block's own shared memory (MODE 9:
    // no exchange and no cluster barrier, the loads, adds and stores alone)
    constexpr int SRC = MODE == 7 || MODE == 8 ? 1 : MODE == 9 ? 2 : 0;
    if (SRC == 1) {
      __syncthreads();
      float *plane = a.part + static_cast<int64_t>(c) * a.mp * a.n;
      for (int it = threadIdx.x; it < BT * (BR / 4); it += blockDim.x) {
        const int tl = it / (BR / 4), r4 = 4 * (it % (BR / 4));
        const uint4 u = lds16(base + 4u * static_cast<uint32_t>(tl * P + r4));
        *reinterpret_cast<uint4 *>(plane + static_cast<int64_t>(tok0 + tl) * a.n + row0 + r4) = u;
      }
    }
    if (MODE == 6 && (a.cut == 5 || a.cut == 7)) {
      __syncthreads();
      if (a.cut == 7) asm volatile("griddepcontrol.wait;" ::: "memory");
      return;
    }
    if (MODE == 4 || SRC == 1) {
      cluster_sync_all();
    } else if (SRC == 2) {
      __syncthreads();
    } else {  // as the library's pull: a release of this block's shared memory only (no GPU-wide barrier)
      bf16fp32__smallm_cluster_share();
    }
    uint32_t rank, ranks;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(ranks));
    const int per = BT / static_cast<int>(ranks), items = per * (BR / 4);
    asm volatile("griddepcontrol.wait;" ::: "memory");  // the previous call may still read out
    for (int it = threadIdx.x; it < items; it += blockDim.x) {
      const int tl = static_cast<int>(rank) * per + it / (BR / 4), r4 = 4 * (it % (BR / 4));
      const uint32_t at = base + 4u * static_cast<uint32_t>(tl * P + r4);
      float4 o = make_float4(0, 0, 0, 0);
      if constexpr (CPB == 2) {  // per slice: its first rank's pair sum, then the others' chains in order
        const int rps = a.kwarps / 2, per_slice = 2 * rps - 1, total = a.ksplit * per_slice;
        constexpr int MAXL = 24;  // the host runs no split with more
        float4 v[MAXL];
#pragma unroll
        for (int j = 0; j < MAXL; j++)
          if (j < total) {
            const int sl = j / per_slice, jj = j % per_slice;
            const int rk = sl * rps + (jj == 0 ? 0 : 1 + (jj - 1) / 2), set = jj == 0 ? 0 : (jj - 1) % 2;
            v[j] = ld_peer(at + static_cast<uint32_t>(set * BT * P * 4), rk);
          }
        float4 b = v[0];
        o = v[0];
#pragma unroll
        for (int j = 1; j < MAXL; j++) {
          if (j >= total) break;
          const int jj = j % per_slice;
          if (jj == 0) b = v[j];
          else bf16fp32__smallm_add4(b, v[j]);
          if (jj == per_slice - 1) {
            if (j == jj) o = b;
            else bf16fp32__smallm_add4(o, b);
          }
        }
      } else if (MODE == 4) {  // each peer's piece added as it arrives
        for (int sl = 0; sl < a.ksplit; sl++) {
          float4 b = ld_peer(at, sl * a.kwarps);
          for (int j = 1; j < a.kwarps; j++) bf16fp32__smallm_add4(b, ld_peer(at, sl * a.kwarps + j));
          if (sl == 0) o = b;
          else bf16fp32__smallm_add4(o, b);
        }
      } else {  // every peer's piece requested before any is added (the round trips overlap)
        float4 v[16];
#pragma unroll
        for (int j = 0; j < 16; j++)
          if (j < static_cast<int>(ranks)) {
            if constexpr (SRC == 1) {
              v[j] = __ldcg(reinterpret_cast<const float4 *>(
                  a.part + (static_cast<int64_t>(j) * a.mp + tok0 + tl) * a.n + row0 + r4));
            } else if constexpr (SRC == 2) {
              const uint4 u = lds16(at);
              v[j] = make_float4(__uint_as_float(u.x), __uint_as_float(u.y), __uint_as_float(u.z), __uint_as_float(u.w));
            } else {
              v[j] = ld_peer(at, j);
            }
          }
        float4 b = v[0];  // the slice in progress; a slice's last chain folds it into o
        o = v[0];
#pragma unroll
        for (int j = 1; j < 16; j++) {
          if (j >= static_cast<int>(ranks)) break;
          const int jw = j % a.kwarps;
          if (jw == 0) b = v[j];
          else bf16fp32__smallm_add4(b, v[j]);
          if (jw == a.kwarps - 1) {
            if (j == jw) o = b;
            else bf16fp32__smallm_add4(o, b);
          }
        }
      }
      const int tok = tok0 + tl;
      if (tok < a.m) *reinterpret_cast<float4 *>(a.out + tok * a.ldo + row0 + r4) = o;
    }
    if (MODE == 4) cluster_sync_all();  // peers' reads done before any block leaves
    else if (SRC == 0) bf16fp32__smallm_cluster_exit();
    return;
  }
  if (MODE == 3) {  // the loop alone: one checksum per thread instead of the partial sums
    if (producer) return;
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < BT / 2; i++) sum += acc[i];
    if constexpr (CPB == 2)
#pragma unroll
      for (int i = 0; i < BT / 2; i++) sum += first[i];
    if constexpr (RPW == 2)
#pragma unroll
      for (int i = 0; i < BT / 2; i++) sum += acc2[i];
    const int64_t b = (static_cast<int64_t>(blockIdx.z) * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    a.part[b * blockDim.x + threadIdx.x] = sum;
    return;
  }
  // d[4i + 0, 1]: row g, tokens 8i + 2t, + 1; d[4i + 2, 3]: row g + 8, the same tokens
  float *p = a.part + static_cast<int64_t>(c) * a.mp * a.n;
  const int n0 = row0 + 64 * wg + 16 * w + g;
#pragma unroll
  for (int i = 0; i < BT / 8; i++) {
    const int tk = tok0 + 8 * i + 2 * t;
    p[static_cast<int64_t>(tk) * a.n + n0] = acc[4 * i];
    p[static_cast<int64_t>(tk + 1) * a.n + n0] = acc[4 * i + 1];
    p[static_cast<int64_t>(tk) * a.n + n0 + 8] = acc[4 * i + 2];
    p[static_cast<int64_t>(tk + 1) * a.n + n0 + 8] = acc[4 * i + 3];
  }
}

// MODE 0's sum, the library's tree: ((c0 + c1) + c2) ... over a slice's chains, then
// ((b0 + b1) + b2) ... over the slices.
__global__ void reduce_kernel(const float *part, int m, int n, int mp, int ksplit, int kwarps, float *out,
                              int64_t ldo) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<int64_t>(m) * n) return;
  const int row = static_cast<int>(i / n), col = static_cast<int>(i % n);
  const int64_t plane = static_cast<int64_t>(mp) * n, at = static_cast<int64_t>(row) * n + col;
  float o = 0.0f;
  for (int s = 0; s < ksplit; s++) {
    float b = part[(s * kwarps) * plane + at];
    for (int j = 1; j < kwarps; j++) b += part[(s * kwarps + j) * plane + at];
    o = s == 0 ? b : o + b;
  }
  out[row * ldo + col] = o;
}

struct Variant {
  int wg, bt, ns, depth, mode, prod, rpw, cpb;  // rpw, cpb 0 or 1: one row tile, one chain
  int clu, spread;  // mode 3 in clusters; the clusters under the spread scheduling policy
  int cut, cz;      // mode 6: Args::cut; modes 6, 8, 9: clusters of cz blocks, not the chains (times only)
};
bool clustered(const Variant &v) { return v.mode >= 4 || v.clu; }
using Kern = void (*)(CUtensorMap, CUtensorMap, Args);
#define BIGTILE_PICK(WG, BT, NS, D, MODE)                                                   \
  if (v.wg == WG && v.bt == BT && v.ns == NS && v.depth == D && v.mode == MODE && !v.prod && v.rpw < 2 && \
      v.cpb < 2)                                                                                       \
    return bigtile_kernel<WG, BT, NS, D, MODE>;
#define BIGTILE_PICK_PROD(WG, BT, NS, MODE)                                                               \
  if (v.wg == WG && v.bt == BT && v.ns == NS && v.depth == 1 && v.mode == MODE && v.prod && v.rpw < 2 && \
      v.cpb < 2)                                                                                         \
    return bigtile_kernel<WG, BT, NS, 1, MODE, 1>;
#define BIGTILE_PICK_PAIRS(WG, BT, NS, MODE, PROD)                                                   \
  if (v.wg == WG && v.bt == BT && v.ns == NS && v.depth == 1 && v.mode == MODE && v.prod == PROD && \
      v.cpb == 2)                                                                                   \
    return bigtile_kernel<WG, BT, NS, 1, MODE, PROD, 1, 2>;
#define BIGTILE_PICK_ROWS(WG, BT, NS, MODE, PROD)                                                   \
  if (v.wg == WG && v.bt == BT && v.ns == NS && v.depth == 1 && v.mode == MODE && v.prod == PROD && \
      v.rpw == 2)                                                                                   \
    return bigtile_kernel<WG, BT, NS, 1, MODE, PROD, 2>;
Kern kernel_of(const Variant &v) {
  BIGTILE_PICK(2, 128, 4, 1, 0) BIGTILE_PICK(2, 128, 6, 1, 0) BIGTILE_PICK(2, 128, 4, 1, 1)
  BIGTILE_PICK(2, 128, 4, 1, 2) BIGTILE_PICK(1, 128, 6, 1, 0) BIGTILE_PICK(1, 128, 4, 1, 1)
  BIGTILE_PICK(1, 128, 4, 1, 2) BIGTILE_PICK(2, 256, 4, 1, 0) BIGTILE_PICK(2, 256, 4, 1, 1)
  BIGTILE_PICK(2, 256, 4, 1, 2) BIGTILE_PICK(2, 128, 4, 1, 3) BIGTILE_PICK(2, 128, 6, 1, 3)
  BIGTILE_PICK(1, 128, 4, 1, 3) BIGTILE_PICK(1, 128, 6, 1, 3) BIGTILE_PICK(2, 256, 4, 1, 3)
  BIGTILE_PICK(1, 256, 4, 1, 3) BIGTILE_PICK(2, 128, 4, 1, 4) BIGTILE_PICK(1, 128, 4, 1, 4)
  BIGTILE_PICK(1, 128, 6, 1, 4) BIGTILE_PICK(2, 256, 4, 1, 4) BIGTILE_PICK(1, 256, 4, 1, 4)
  BIGTILE_PICK(1, 128, 3, 1, 3) BIGTILE_PICK(1, 128, 3, 1, 5) BIGTILE_PICK(1, 128, 4, 1, 5)
  BIGTILE_PICK(2, 128, 4, 1, 5) BIGTILE_PICK(2, 256, 4, 1, 5) BIGTILE_PICK(1, 128, 3, 1, 6)
  BIGTILE_PICK(2, 128, 4, 1, 6) BIGTILE_PICK(1, 128, 3, 1, 7) BIGTILE_PICK(2, 128, 4, 1, 7)
  BIGTILE_PICK(1, 128, 3, 1, 8) BIGTILE_PICK(1, 128, 3, 1, 9) BIGTILE_PICK(2, 128, 4, 1, 9)
  BIGTILE_PICK_PROD(1, 128, 4, 3) BIGTILE_PICK_PROD(2, 128, 4, 3) BIGTILE_PICK_PROD(1, 256, 4, 3)
  BIGTILE_PICK_PROD(1, 128, 3, 5) BIGTILE_PICK_PROD(1, 128, 4, 5) BIGTILE_PICK_PROD(2, 128, 4, 5)
  BIGTILE_PICK_PROD(1, 256, 4, 5)
  BIGTILE_PICK_ROWS(1, 128, 3, 3, 0) BIGTILE_PICK_ROWS(1, 128, 4, 3, 0) BIGTILE_PICK_ROWS(2, 128, 4, 3, 0)
  BIGTILE_PICK_ROWS(1, 128, 3, 5, 0) BIGTILE_PICK_ROWS(1, 128, 4, 3, 1) BIGTILE_PICK_ROWS(1, 128, 4, 5, 1)
  BIGTILE_PICK_PAIRS(1, 128, 4, 3, 1) BIGTILE_PICK_PAIRS(1, 128, 3, 5, 1) BIGTILE_PICK_PAIRS(1, 128, 4, 5, 1)
  return nullptr;
}
int rows_of(const Variant &v) { return 64 * v.wg * (v.rpw == 2 ? 2 : 1); }  // weight rows per block
size_t smem_of(const Variant &v) { return 1024 + static_cast<size_t>(v.ns) * NQ * (rows_of(v) + v.bt) * 64 + 16 * v.ns; }

const std::vector<Variant> kDiag = {{2, 128, 4, 1, 0}, {2, 128, 6, 1, 0}, {2, 128, 4, 1, 1}, {2, 128, 4, 1, 2},
                                    {1, 128, 6, 1, 0}, {1, 128, 4, 1, 1}, {1, 128, 4, 1, 2}, {2, 256, 4, 1, 0},
                                    {2, 256, 4, 1, 1}, {2, 256, 4, 1, 2}};
const std::vector<Variant> kLoop = {{2, 128, 4, 1, 0}, {2, 128, 4, 1, 3}, {2, 128, 6, 1, 3}, {1, 128, 4, 1, 3},
                                    {1, 128, 6, 1, 3}, {2, 256, 4, 1, 0}, {2, 256, 4, 1, 3}, {1, 256, 4, 1, 3}};
const std::vector<Variant> kPull = {{1, 128, 3, 1, 3}, {1, 128, 4, 1, 4}, {1, 128, 3, 1, 5}, {1, 128, 4, 1, 5},
                                    {2, 128, 4, 1, 5}, {2, 256, 4, 1, 5}};
const std::vector<Variant> kProd = {{1, 128, 4, 1, 3, 0}, {1, 128, 4, 1, 3, 1}, {2, 128, 4, 1, 3, 1},
                                    {1, 256, 4, 1, 3, 1}, {1, 128, 3, 1, 5, 1}, {1, 128, 4, 1, 5, 1},
                                    {2, 128, 4, 1, 5, 1}, {1, 256, 4, 1, 5, 1}};
const std::vector<Variant> kRows = {{2, 128, 4, 1, 3, 0, 1}, {1, 128, 3, 1, 3, 0, 2}, {1, 128, 4, 1, 3, 0, 2},
                                    {2, 128, 4, 1, 3, 0, 2}, {1, 128, 3, 1, 5, 0, 2}, {1, 128, 4, 1, 3, 1, 2},
                                    {1, 128, 4, 1, 5, 1, 2}};
// (with the producer only: without it ptxas serialises the wgmmas of the two sets (C7520), and
// with two consumer warpgroups it runs short of registers (C7512))
const std::vector<Variant> kPairs = {{1, 128, 4, 1, 3, 1, 1, 1}, {1, 128, 4, 1, 3, 1, 1, 2},
                                     {1, 128, 3, 1, 5, 1, 1, 2}, {1, 128, 4, 1, 5, 1, 1, 2}};
// the loop plain, in clusters, in spread clusters; the sum after it, plainly and spread; the sum alone
const std::vector<Variant> kPlace = {
    {1, 128, 3, 1, 3}, {1, 128, 3, 1, 3, 0, 0, 0, 1}, {1, 128, 3, 1, 3, 0, 0, 0, 1, 1}, {1, 128, 3, 1, 5},
    {1, 128, 3, 1, 5, 0, 0, 0, 0, 1}, {1, 128, 3, 1, 6}, {1, 128, 3, 1, 6, 0, 0, 0, 0, 1}, {2, 128, 4, 1, 3},
    {2, 128, 4, 1, 3, 0, 0, 0, 1}, {2, 128, 4, 1, 5}, {2, 128, 4, 1, 6}};
// the sum with no loop: setup only, the stores to shared memory, the block's own pieces, L2,
// DSMEM (also in clusters of 2); then with the loop: in clusters without a sum, DSMEM, L2
const std::vector<Variant> kSum = {{1, 128, 3, 1, 6, 0, 0, 0, 0, 0, 2}, {1, 128, 3, 1, 6, 0, 0, 0, 0, 0, 5},
                                   {1, 128, 3, 1, 9},  {1, 128, 3, 1, 8},
                                   {1, 128, 3, 1, 6},  {1, 128, 3, 1, 9, 0, 0, 0, 0, 0, 0, 2},
                                   {1, 128, 3, 1, 6, 0, 0, 0, 0, 0, 0, 2}, {1, 128, 3, 1, 3, 0, 0, 0, 1},
                                   {1, 128, 3, 1, 5},  {1, 128, 3, 1, 7},
                                   {2, 128, 4, 1, 9},  {2, 128, 4, 1, 6}};
const std::vector<Variant> kCluster = {{2, 128, 4, 1, 3}, {1, 128, 4, 1, 3}, {2, 256, 4, 1, 3},
                                       {2, 128, 4, 1, 4}, {1, 128, 4, 1, 4}, {1, 128, 6, 1, 4},
                                       {2, 256, 4, 1, 4}, {1, 256, 4, 1, 4}};

float bf2f(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
uint16_t f2bf(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return static_cast<uint16_t>((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

// The operands of one shape: NB weight copies rotated (cold L2), x, the library's result.
struct Shape {
  int n, k, m, chains;
  bf16fp32__smallm_split sp;
  bf16fp32__smallm_slices sl;
  int nb;
  std::vector<uint16_t> hx, hw;
  std::vector<float> href;
  std::vector<uint16_t *> dw;
  uint16_t *dx = nullptr;
  float *out = nullptr;
};

// Where the checked launch's blocks ran: SMs used, the most blocks on one SM, and for clusters
// (cz blocks along z at each x, y: the chains) the groups of SMs that clusters shared (each cluster runs
// in one GPC, so a group is at most a GPC; fewer groups than GPCs = GPCs left idle).
std::string placement(const int *where, dim3 grid, bool clusters, int cz) {
  const int nblocks = static_cast<int>(grid.x * grid.y * grid.z);
  std::vector<int> sm(nblocks);
  CK(cudaMemcpy(sm.data(), where, nblocks * sizeof(int), cudaMemcpyDeviceToHost));
  std::vector<int> per(1024, 0), parent(1024);
  for (int i = 0; i < 1024; i++) parent[i] = i;
  auto root = [&](int i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  int used = 0, most = 0;
  for (int b = 0; b < nblocks; b++) {
    const int id = sm[b] & 1023;
    used += per[id]++ == 0;
    most = std::max(most, per[id]);
    const int plane = static_cast<int>(grid.x * grid.y), z = b / plane;
    const int first = sm[(z - z % cz) * plane + b % plane] & 1023;  // the cluster's first block
    if (clusters) parent[root(id)] = root(first);
  }
  int groups = 0;
  for (int i = 0; i < 1024; i++) groups += per[i] > 0 && root(i) == i;
  char buf[96];
  snprintf(buf, sizeof buf, "SMs %d, at most %d blocks on one, SM groups %d", used, most, clusters ? groups : 0);
  return buf;
}

// One variant: the first call's outputs against the library's bits (modes 0, 4, 5 and 7) and row 0
// against fp64, then the times.
void run_variant(Shape &sh, const Variant &v, double t_cublas, cudaStream_t s, size_t smem_limit) {
  const int n = sh.n, k = sh.k, m = sh.m, chains = sh.chains, br = rows_of(v);
  const Kern kern = kernel_of(v);
  const int cpb = v.cpb == 2 ? 2 : 1, blocks_z = chains / cpb;  // blocks along K, one cluster in modes 4-9
  const std::string label = std::string(v.prod ? " +producer" : "") + (cpb == 2 ? " +pairs" : "") +
                            (v.clu ? " +clusters" : "") + (v.spread ? " +spread" : "") +
                            (v.cut ? " cut " + std::to_string(v.cut) : "") + (v.cz ? " cz " + std::to_string(v.cz) : "");
  if (!kern || n % br || (v.bt == 256 && m <= 128) || sh.sp.kwarps % cpb || (clustered(v) && blocks_z > 16)) return;
  // CPB 2: the pull's loads (at most 24) and the two sets of sums in the ring
  if (cpb == 2 && (sh.sp.ksplit * (sh.sp.kwarps - 1) > 24 ||
                   2 * v.bt * (br + 4) * 4 > v.ns * NQ * (br + v.bt) * 64))
    return;
  const size_t smem = smem_of(v);
  if (smem > smem_limit ||
      cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)) != cudaSuccess) {
    printf("      wg %d bt %d: %zu bytes of shared memory do not fit\n", v.wg, v.bt, smem);
    return;
  }
  if (clustered(v) && blocks_z > 8) CK(cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  const int mp = (m + v.bt - 1) / v.bt * v.bt, kp = (k + 31) / 32 * 32;
  uint16_t *xp;
  float *part;
  CK(cudaMalloc(&xp, static_cast<size_t>(mp) * kp * 2));
  CK(cudaMalloc(&part, static_cast<size_t>(chains) * mp * n * 4));
  std::vector<CUtensorMap> tw(sh.nb);
  CUtensorMap tx;
  bool maps = bf16fp32__smallm_encode_map_swizzled(&tx, xp, mp, kp, kp, 32, v.bt, CU_TENSOR_MAP_SWIZZLE_64B);
  for (int b = 0; b < sh.nb; b++) maps = maps && bf16fp32__smallm_encode_map(&tw[b], sh.dw[b], n, k, k, 32, br);
  if (!maps) {
    printf("      tensor maps refused\n");
    exit(1);
  }
  Args a = {};
  a.part = part, a.m = m, a.n = n, a.mp = mp, a.kwarps = sh.sp.kwarps, a.ksplit = sh.sp.ksplit, a.pdl = 0;
  a.out = sh.out, a.ldo = n, a.slices = sh.sl;
  a.x = sh.dx, a.ldx = k, a.k = k, a.cut = v.cut;
  const int threads = 128 * v.wg + 128 * v.prod;
  const dim3 grid(n / br, mp / v.bt, blocks_z);
  const int64_t pieces = static_cast<int64_t>(mp) * (kp / 32);
  auto xperm = [&]() {
    xperm_kernel<<<static_cast<unsigned>((pieces + 127) / 128), 128, 0, s>>>(sh.dx, k, m, k, xp, mp, kp);
  };
  auto reduce = [&]() {
    reduce_kernel<<<static_cast<unsigned>((static_cast<int64_t>(m) * n + 255) / 256), 256, 0, s>>>(
        part, m, n, mp, sh.sp.ksplit, sh.sp.kwarps, sh.out, n);
  };
  cudaLaunchAttribute cluster_attr;
  cluster_attr.id = cudaLaunchAttributeClusterDimension;
  cluster_attr.val.clusterDim.x = 1, cluster_attr.val.clusterDim.y = 1;
  cluster_attr.val.clusterDim.z = v.cz && v.mode >= 6 && v.mode != 7 ? v.cz : blocks_z;
  auto launch_status = [&](int b, int pdl) {
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[3];
    int na = 0;
    cfg.gridDim = grid, cfg.blockDim = dim3(threads), cfg.dynamicSmemBytes = smem, cfg.stream = s;
    if (clustered(v)) at[na++] = cluster_attr;
    if (v.spread) {
      at[na].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
      at[na++].val.clusterSchedulingPolicyPreference = cudaClusterSchedulingPolicySpread;
    }
    if (pdl) {
      at[na].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      at[na++].val.programmaticStreamSerializationAllowed = 1;
    }
    cfg.attrs = at, cfg.numAttrs = na;
    Args ab = a;
    ab.pdl = pdl;
    return cudaLaunchKernelEx(&cfg, kern, tw[b], tx, ab);
  };
  auto launch = [&](int b, int pdl) { CK(launch_status(b, pdl)); };
  int clusters = 0;
  if (clustered(v)) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid, cfg.blockDim = dim3(threads), cfg.dynamicSmemBytes = smem;
    cfg.attrs = &cluster_attr, cfg.numAttrs = 1;
    CK(cudaOccupancyMaxActiveClusters(&clusters, kern, &cfg));
  }
  CK(cudaMemsetAsync(sh.out, 0xff, static_cast<size_t>(m) * n * 4, s));  // poison
  xperm();
  // a variant that cannot launch (no cluster of its size fits, too many registers for its
  // threads) is reported and skipped, and the set goes on
  int *where;
  CK(cudaMalloc(&where, static_cast<size_t>(grid.x) * grid.y * grid.z * sizeof(int)));
  a.where = where;  // the checked launch only
  const cudaError_t launched = clustered(v) && clusters == 0 ? cudaErrorLaunchOutOfResources : launch_status(0, 0);
  a.where = nullptr;
  if (launched != cudaSuccess) {
    printf("      mode %d%s ns %d: %d x %d rows x %d tokens does not launch: %s\n", v.mode, label.c_str(),
           v.ns, v.wg, 64 * (v.rpw == 2 ? 2 : 1), v.bt, cudaGetErrorString(launched));
    CK(cudaFree(xp));
    CK(cudaFree(part));
    CK(cudaFree(where));
    return;
  }
  if (v.mode < 4) reduce();
  CK(cudaStreamSynchronize(s));
  const std::string placed = placement(where, grid, clustered(v), static_cast<int>(cluster_attr.val.clusterDim.z));
  CK(cudaFree(where));
  std::vector<float> hout(static_cast<size_t>(m) * n);
  CK(cudaMemcpy(hout.data(), sh.out, hout.size() * 4, cudaMemcpyDeviceToHost));
  const bool checked = v.mode == 0 || v.mode == 4 || v.mode == 5 || v.mode == 7;  // modes 6, 8, 9 add zeros
  long bad = 0;
  double err0 = 0;  // row 0 against fp64 (the bound is the library's business; this catches layout bugs)
  for (size_t i = 0; checked && i < hout.size(); i++) bad += memcmp(&hout[i], &sh.href[i], 4) != 0;
  for (int j = 0; checked && j < n; j++) {
    double d = 0;
    for (int kk = 0; kk < k; kk++) d += static_cast<double>(bf2f(sh.hx[kk])) * bf2f(sh.hw[static_cast<size_t>(j) * k + kk]);
    err0 = std::max(err0, fabs(d - hout[j]));
  }
  const double t_main = bench_time_graph(s, 200, [&](int i) { launch(i % sh.nb, 0); });
  const double t_x = bench_time_graph(s, 200, [&](int) { xperm(); });
  double t_pair = 0, t_pdl = 0, t_red = 0;
  if (v.mode >= 4 && !v.prod) {  // with the producer the kernel is the whole call
    t_pair = bench_time_graph(s, 200, [&](int i) { xperm(); launch(i % sh.nb, 0); });
    t_pdl = bench_time_graph(s, 200, [&](int i) { xperm(); launch(i % sh.nb, 1); });
  } else {
    t_red = bench_time_graph(s, 200, [&](int) { reduce(); });
  }
  const double target = bf16fp32__target_us(m, n, k, t_cublas);
  printf("      mode %d%s ns %d depth %d: %d x %d rows x %3d tokens, %4d blocks, %6.1f KB, clusters %d | bits %s (%ld "
         "differ, row 0 vs fp64 %.3g) | main %.2f us, x' %.2f, reduce %.2f, x'+main %.2f, PDL %.2f | target %.2f | "
         "best / cuBLAS %.2f | %s\n",
         v.mode, label.c_str(), v.ns, v.depth, v.wg, 64 * (v.rpw == 2 ? 2 : 1), v.bt, grid.x * grid.y * grid.z, smem / 1024.0, clusters,
         checked ? (bad ? "DIFFER" : "same") : "unchecked", bad, err0, t_main, t_x, t_red, t_pair, t_pdl, target,
         (v.mode >= 4 && !v.prod ? std::min(t_pair, t_pdl) : t_main) / t_cublas, placed.c_str());
  CK(cudaFree(xp));
  CK(cudaFree(part));
}

void run_shape(int n, int k, int m, const std::vector<Variant> &vars, cublasHandle_t hb, cudaStream_t s, int sms,
               size_t smem_limit) {
  Shape sh;
  sh.n = n, sh.k = k, sh.m = m;
  if (bf16fp32__smallm_choose_split(n, k, sms, &sh.sp) != 0) {
    printf("%5d %5d %4d | no split\n", n, k, m);
    return;
  }
  bf16fp32__smallm_fill_slices(k, sh.sp.ksplit, &sh.sl);
  for (int r = 0; r < sh.sp.ksplit; r++)
    if (sh.sl.k[r] % 32) {
      printf("%5d %5d %4d | a slice starts off a sub-chunk\n", n, k, m);
      return;
    }
  sh.chains = sh.sp.ksplit * sh.sp.kwarps;
  const int64_t wbytes = static_cast<int64_t>(n) * k * 2;
  sh.nb = static_cast<int>(std::max<int64_t>(2, (512ll << 20) / (wbytes + 1) + 1));
  sh.hx.resize(static_cast<size_t>(m) * k), sh.hw.resize(static_cast<size_t>(n) * k);
  uint64_t st = 12345 + n + k + m;
  auto rnd = [&]() {
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>((st >> 40) & 0xffff) / 65536.0f - 0.5f;
  };
  for (auto &x : sh.hx) x = f2bf(rnd());
  for (auto &x : sh.hw) x = f2bf(rnd());
  sh.dw.resize(sh.nb);
  for (auto &p : sh.dw) {
    CK(cudaMalloc(&p, wbytes));
    CK(cudaMemcpy(p, sh.hw.data(), wbytes, cudaMemcpyHostToDevice));
  }
  CK(cudaMalloc(&sh.dx, sh.hx.size() * 2));
  CK(cudaMemcpy(sh.dx, sh.hx.data(), sh.hx.size() * 2, cudaMemcpyHostToDevice));
  float *ref;
  CK(cudaMalloc(&ref, static_cast<size_t>(m) * n * 4));
  CK(cudaMalloc(&sh.out, static_cast<size_t>(m) * n * 4));

  // the library's bits (batch-invariant: any M gives them), chosen as for plain launches
  bf16fp32__smallm_config c;
  if (bf16fp32__smallm_choose_for(m, n, k, sms, 0, smem_limit, &c) != 0) {
    printf("%5d %5d %4d | smallm declined\n", n, k, m);
    return;
  }
  if (bf16fp32__smallm_launch(&c, m, n, k, sh.dx, k, sh.dw[0], k, ref, n, s, 0) != 0) {
    printf("%5d %5d %4d | smallm declined\n", n, k, m);
    return;
  }
  CK(cudaStreamSynchronize(s));
  sh.href.resize(static_cast<size_t>(m) * n);
  CK(cudaMemcpy(sh.href.data(), ref, sh.href.size() * 4, cudaMemcpyDeviceToHost));
  const double t_smallm = bench_time_graph(s, 200, [&](int i) {
    bf16fp32__smallm_launch(&c, m, n, k, sh.dx, k, sh.dw[i % sh.nb], k, sh.out, n, s, 0);
  });
  const double t_cublas =
      bench_time_graph(s, 200, [&](int i) { bench_cublas_gemm(hb, n, m, k, sh.dw[i % sh.nb], sh.dx, sh.out); });
  printf("%5d %5d %4d | split %d/%d, %d chains | smallm %.2f us, cuBLAS %.2f us\n", n, k, m, sh.sp.rows,
         sh.sp.ksplit, sh.chains, t_smallm, t_cublas);
  for (const Variant &v : vars) run_variant(sh, v, t_cublas, s, smem_limit);
  for (auto p : sh.dw) CK(cudaFree(p));
  CK(cudaFree(sh.dx));
  CK(cudaFree(ref));
  CK(cudaFree(sh.out));
}

}  // namespace

int main(int argc, char **argv) {
  int dev = 0, sms = 0, optin = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  if (bf16fp32__smallm_load(static_cast<size_t>(optin)) != 0) {
    printf("smallm module load failed\n");
    return 1;
  }
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cublasHandle_t hb = bench_cublas_on(s);
  std::vector<Variant> vars;  // the sets named, in order (default: the cluster set)
  std::vector<int> args;
  for (int i = 1; i < argc; i++) {
    const std::string arg = argv[i];
    const std::vector<Variant> *set = arg == "--diag"   ? &kDiag
                                      : arg == "--loop" ? &kLoop
                                      : arg == "--pull" ? &kPull
                                      : arg == "--prod" ? &kProd
                                      : arg == "--rows" ? &kRows
                                      : arg == "--pairs" ? &kPairs
                                      : arg == "--place" ? &kPlace
                                      : arg == "--sum" ? &kSum
                                                        : nullptr;
    if (set) vars.insert(vars.end(), set->begin(), set->end());
    else args.push_back(atoi(argv[i]));
  }
  if (vars.empty()) vars = kCluster;
  if (args.empty()) {
    const int shapes[][2] = {{2048, 7168}, {1024, 7168}, {512, 7168}, {384, 7168}, {256, 7168},
                             {2048, 4096}, {1024, 4096}, {512, 4096}, {256, 4096}};
    for (auto &shp : shapes)
      for (int m : {128, 256}) args.insert(args.end(), {shp[0], shp[1], m});
  }
  printf("device %d: %d SMs, shared memory opt-in %d\n", dev, sms, optin);
  for (size_t i = 0; i + 2 < args.size(); i += 3)
    run_shape(args[i], args[i + 1], args[i + 2], vars, hb, s, sms, static_cast<size_t>(optin));
  cublasDestroy(hb);
  return 0;
}
