/* smallm wide kernel (sm_90, M > 64): the same sums as smallm-kernel.cu and smallm-decode.cu
 * (same split, k permutation, MMA order and reduction tree), computed by output tiles. A block
 * owns `br` weight rows times `bt` tokens over the K slice of its cluster rank; one thread streams
 * weight and x tiles into a ring of shared-memory buffers with tensor-map bulk copies (TMA, rows
 * of 320 bytes, zeros past the matrix edges), and each warp keeps the partial sums of all WK
 * warp-group chains of its 32-row tile in registers, so that the block sum is formed there; the
 * S block sums are then added over distributed shared memory in rank order. */
#include <cooperative_groups.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "smallm-fragments.cuh"
#include "smallm-launch-config.cuh"
#include "smallm-launch.h"

namespace cg = cooperative_groups;

namespace {

/* Ring of NST buffers; buffer s holds G consecutive 32-wide sub-chunks of the block's weight
 * rows and tokens, each row padded by one more sub-chunk (the box is (G + 1) * 32 wide and the
 * pad is never used): a row pitch of 64 (G + 1) = 320 bytes, 64 mod 128, keeps the 16-byte
 * fragment reads of rows g and g + 1 in different banks. */
constexpr int NST = BF16FP32__SMALLM_WIDE_STAGES;
constexpr int G = BF16FP32__SMALLM_WIDE_SUBS;
constexpr int PITCH = 64 * (G + 1);

struct WArgs {
  CUtensorMap tw; /* w as K x N bf16, boxes of 32 (G + 1) x br */
  CUtensorMap tx; /* x as K x M bf16, boxes of 32 (G + 1) x bt */
  float *out;
  long long ldo;
  int m, k;
  int ksplit;         /* S of the split (WK is the template parameter) */
  int br, bt;         /* block rows (multiple of 32) and tokens (multiple of 8 TT) */
  int wt;             /* warps along tokens: bt / (8 TT) */
  int stage_bytes;    /* one ring buffer: (br + bt) * PITCH */
};

/* One box of a 2-D tensor map into shared memory, counted on mbarrier bar. */
__device__ __forceinline__ void tma_box(uint32_t dst, const CUtensorMap *map, int c0, int c1,
                                        uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}
__device__ __forceinline__ void bar_wait(uint32_t bar, uint32_t phase) {
  asm volatile(
      "{\n\t.reg .pred p;\n\tWAIT_%=:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t"
      "@!p bra WAIT_%=;\n\t}" ::"r"(bar), "r"(phase)
      : "memory");
}
__device__ __forceinline__ uint4 lds16(const unsigned char *p) {
  return *reinterpret_cast<const uint4 *>(p);
}

/* Token tiles (8 tokens) per warp: WK chains of 2 x TT accumulator tiles stay in registers. */
template <int WK>
struct Tiles {
  static constexpr int TT = BF16FP32__SMALLM_WIDE_WARP_TOKENS(WK) / 8;
};

/* Block (rank, token block, row block). The slice's sub-chunks arrive in k order; sub-chunk j
 * goes to chain j % WK, whose sum is built exactly as one warp group of the other kernels
 * builds it (zero start, increasing j, two MMAs per sub-chunk). The block sum adds chains
 * 0..WK-1 in that order, empty ones included (zeros), as their block sum does. */
template <int WK>
__global__ void __launch_bounds__(256, 1) smallm_wide_kernel(const __grid_constant__ WArgs a) {
  constexpr int TT = Tiles<WK>::TT;
  extern __shared__ __align__(128) unsigned char smem[];
  const int tid = threadIdx.x, nthr = blockDim.x;
  const int lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int wr = warp / a.wt, wc = warp - wr * a.wt; /* the warp's 32 rows and 8 TT tokens */
  const bool clustered = a.ksplit > 1;
  const int rank = clustered ? static_cast<int>(cg::this_cluster().block_rank()) : 0;
  const int tb = static_cast<int>(blockIdx.x) / a.ksplit;
  const long long n0 = static_cast<long long>(blockIdx.y) * a.br;
  const long long t0 = static_cast<long long>(tb) * a.bt;
  const int m = min(static_cast<long long>(a.bt), a.m - t0);
  int64_t kb, ke;
  bf16fp32__smallm_slice(a.k, a.ksplit, rank, &kb, &ke);
  const int nsubs = static_cast<int>((ke - kb + 31) >> 5);
  const int nstages = (nsubs + G - 1) / G;
  /* NST mbarriers (ring buffer s is full) in the first 128 bytes, then the ring */
  const uint32_t bars = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const uint32_t ring = bars + 128;

  /* Stage q: sub-chunks G q .. G q + G - 1 of the slice (the box may run past the slice: those
   * columns are never used; past K they are zeros). Thread 0 issues it: the weight box
   * (load_w, which also sets the bytes the stage's barrier expects) and the x box (load_x). */
  auto load_w = [&](int q) {
    const uint32_t bar = bars + 8 * (q % NST);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
                 "r"(a.stage_bytes)
                 : "memory");
    tma_box(ring + (q % NST) * a.stage_bytes, &a.tw, static_cast<int>(kb) + 32 * G * q,
            static_cast<int>(n0), bar);
  };
  auto load_x = [&](int q) {
    tma_box(ring + (q % NST) * a.stage_bytes + a.br * PITCH, &a.tx,
            static_cast<int>(kb) + 32 * G * q, static_cast<int>(t0), bars + 8 * (q % NST));
  };

  if (tid == 0) {
    for (int s = 0; s < NST; s++)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bars + 8 * s));
    asm volatile("fence.mbarrier_init.release.cluster;\n\tfence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  /* The weights do not depend on the previous kernel: under programmatic dependent launch the
   * first stage's weights are on their way while it finishes; x only after it is done. The
   * other stages follow in stage order (w, x), so that stage 0 is complete first: issuing the
   * second weight box before x of stage 0 cost up to 9 % without PDL (a box takes ~0.8 us of
   * one SM's share of the bandwidth; docs/smallm-notes.md, session 4). */
  if (tid == 0 && nstages > 0) load_w(0);
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (tid == 0 && nstages > 0) {
    load_x(0);
    for (int s = 1; s < NST && s < nstages; s++) load_w(s), load_x(s);
  }

  float acc[WK][2][TT][4];
#pragma unroll
  for (int c = 0; c < WK; c++)
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
      for (int j = 0; j < TT; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[c][i][j][e] = 0.0f;

  const int arow = (32 * wr + g) * PITCH + 16 * t;                 /* rows g (+8, +16, +24) */
  const int brow = (a.br + 8 * TT * wc + g) * PITCH + 16 * t;      /* tokens g (+8, ...) */
  /* sub-chunk p of the stage into chain c's accumulators */
  auto mma_sub = [&](const unsigned char *st, int p, float (&d)[2][TT][4]) {
    const unsigned char *sc = st + 64 * p;
    uint4 av[2][2], bv[TT];
#pragma unroll
    for (int i = 0; i < 2; i++) {
      av[i][0] = lds16(sc + arow + i * 16 * PITCH);
      av[i][1] = lds16(sc + arow + (i * 16 + 8) * PITCH);
    }
#pragma unroll
    for (int j = 0; j < TT; j++) bv[j] = lds16(sc + brow + j * 8 * PITCH);
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
      for (int j = 0; j < TT; j++) {
        mma16816(d[i][j], av[i][0].x, av[i][1].x, av[i][0].y, av[i][1].y, bv[j].x, bv[j].y);
        mma16816(d[i][j], av[i][0].z, av[i][1].z, av[i][0].w, av[i][1].w, bv[j].z, bv[j].w);
      }
  };
  for (int s = 0; s < nstages; s++) {
    bar_wait(bars + 8 * (s % NST), (s / NST) & 1);
    const unsigned char *st = smem + 128 + (s % NST) * a.stage_bytes;
    const int left = nsubs - G * s; /* sub-chunks of the slice in this stage (G or fewer) */
    /* sub-chunk j = G s + p is in chain j % WK: p % WK when WK divides G, else G (s % (WK / G))
     * + p, one of WK / G groups of G chains */
    const int c0 = WK <= G ? 0 : G * (s % (WK / G));
#pragma unroll
    for (int h = 0; h < (WK <= G ? 1 : WK / G); h++)
      if (c0 == G * h) {
#pragma unroll
        for (int p = 0; p < G; p++)
          if (p < left) mma_sub(st, p, acc[(G * h + p) % WK]);
      }
    __syncthreads(); /* everyone is done with buffer s % NST: refill it */
    if (tid == 0 && s + NST < nstages) load_w(s + NST), load_x(s + NST);
  }
  /* The next kernel's blocks may start now, not earlier: started at the top they held shared
   * memory and warps through this whole loop (2048x7168 M = 128: 30.1 -> 41.8 us under PDL;
   * docs/smallm-notes.md, session 4). */
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  /* every copy has landed (each stage was waited for); the ring becomes the block sums */

  /* Block sums ((chain 0 + chain 1) + chain 2) + ..., part[token][row] (rows padded by 4 floats
   * against bank conflicts). */
  float *part = reinterpret_cast<float *>(smem + 128);
  const int rs = a.br + 4;
#pragma unroll
  for (int i = 0; i < 2; i++)
#pragma unroll
    for (int j = 0; j < TT; j++) {
      float v[4] = {acc[0][i][j][0], acc[0][i][j][1], acc[0][i][j][2], acc[0][i][j][3]};
#pragma unroll
      for (int c = 1; c < WK; c++)
#pragma unroll
        for (int e = 0; e < 4; e++) v[e] += acc[c][i][j][e];
      float *p = part + (8 * TT * wc + 8 * j + 2 * t) * rs + 32 * wr + 16 * i + g;
      p[0] = v[0];
      p[rs] = v[1];
      p[8] = v[2];
      p[rs + 8] = v[3];
    }
  const int r4n = a.br >> 2;
  const int nunits = m * r4n;
  if (!clustered) {
    __syncthreads();
    for (int u = tid; u < nunits; u += nthr) {
      const int tok = u / r4n, r4 = u - tok * r4n;
      *reinterpret_cast<float4 *>(a.out + (t0 + tok) * a.ldo + n0 + 4 * r4) =
          *reinterpret_cast<const float4 *>(part + tok * rs + 4 * r4);
    }
    return;
  }
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync(); /* release / acquire: block sums visible to the whole cluster */
  /* Rank r finishes its share of the outputs: ranks 0..S-1 added in that order. */
  const int u0 = nunits * rank / a.ksplit, u1 = nunits * (rank + 1) / a.ksplit;
  for (int u = u0 + tid; u < u1; u += nthr) {
    const int tok = u / r4n, r4 = u - tok * r4n;
    *reinterpret_cast<float4 *>(a.out + (t0 + tok) * a.ldo + n0 + 4 * r4) =
        rank_sum(cluster, part, tok * rs + 4 * r4, a.ksplit);
  }
  /* No block leaves while another may still read its shared memory. */
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
}

/* The driver's tensor-map encoder, looked up once through the runtime (no link to libcuda);
 * a process-wide constant after the first call. */
using encode_fn = CUresult (*)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                               const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                               const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                               CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
encode_fn tensor_map_encoder() {
  static const encode_fn fn = [] {
    void *p = nullptr;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                         &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      p = nullptr;
    return reinterpret_cast<encode_fn>(p);
  }();
  return fn;
}

/* rows x cols bf16, row stride ld elements, boxes of 32 (G + 1) columns x box_rows; zeros
 * outside. */
bool encode_map(CUtensorMap *map, const uint16_t *base, int64_t rows, int64_t cols, int64_t ld,
                int box_rows) {
  const encode_fn fn = tensor_map_encoder();
  if (!fn) return false;
  const cuuint64_t dim[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t stride[1] = {static_cast<cuuint64_t>(ld) * 2};
  const cuuint32_t box[2] = {32 * (G + 1), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t estride[2] = {1, 1};
  return fn(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<uint16_t *>(base), dim, stride,
            box, estride, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
            CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

template <int WK>
cudaError_t launch_t(const WArgs &a, const cudaLaunchConfig_t &cfg) {
  return cudaLaunchKernelEx(&cfg, smallm_wide_kernel<WK>, a);
}

}  // namespace

extern "C" int bf16fp32__smallm_wide_load(size_t smem_limit) {
  if (!tensor_map_encoder()) return static_cast<int>(cudaErrorSymbolNotFound);
  return static_cast<int>(bf16fp32__smallm_allow_smem(smem_limit, smallm_wide_kernel<1>,
                                                       smallm_wide_kernel<2>, smallm_wide_kernel<4>,
                                                       smallm_wide_kernel<8>));
}

extern "C" int bf16fp32__smallm_wide_launch(const bf16fp32__smallm_config *c, int64_t m,
                                            int64_t n, int64_t k, const uint16_t *x, int64_t ldx,
                                            const uint16_t *w, int64_t ldw, float *out, int64_t ldo,
                                            void *stream, int use_pdl) {
  WArgs a;
  a.br = c->wide_rows, a.bt = c->wide_tokens;
  if (!encode_map(&a.tw, w, n, k, ldw, a.br) || !encode_map(&a.tx, x, m, k, ldx, a.bt))
    return static_cast<int>(cudaErrorInvalidValue);
  a.out = out;
  a.ldo = ldo;
  a.m = static_cast<int>(m), a.k = static_cast<int>(k);
  a.ksplit = c->split.ksplit;
  a.wt = a.bt / BF16FP32__SMALLM_WIDE_WARP_TOKENS(c->split.kwarps);
  a.stage_bytes = (a.br + a.bt) * PITCH;
  /* its own block and grid: one cluster of S blocks per (token block, row block) */
  bf16fp32__smallm_config gc = *c;
  gc.threads = 32 * (a.br / 32) * a.wt;
  gc.grid_x = a.ksplit * static_cast<int>((m + a.bt - 1) / a.bt);
  gc.grid_y = static_cast<int>(n / a.br);
  cudaLaunchAttribute attr[2];
  const cudaLaunchConfig_t cfg = bf16fp32__smallm_launch_config(
      &gc, c->wide_smem, static_cast<cudaStream_t>(stream), c->split.ksplit > 1, use_pdl, attr);
  switch (c->split.kwarps) {
    case 1: return static_cast<int>(launch_t<1>(a, cfg));
    case 2: return static_cast<int>(launch_t<2>(a, cfg));
    case 4: return static_cast<int>(launch_t<4>(a, cfg));
    default: return static_cast<int>(launch_t<8>(a, cfg));
  }
}
