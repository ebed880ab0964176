/* smallm wgmma kernel (sm_90a, M > 64): the wide kernel's tiles (smallm-wide.cu: the same ring of
 * bulk copies, chains and reduction) multiplied by warpgroup MMAs instead of mma.sync. On the
 * H200 the two instructions add alike, bit for bit, given the same operands in the same order
 * (bench/wgmma-bits.cu: 2.2 million outputs over five value distributions), so this kernel
 * keeps every output's sum and with it the backend's batch invariance.
 *
 * The weights are the A operand, from registers: each warp reads its 16 rows' fragments from
 * the ring exactly as the other kernels do (lane t: 16 bytes at k = 8t of rows g and g + 8,
 * words 0-1 for one k16 step, words 2-3 for the next). The tokens are the B operand, from
 * shared memory through a descriptor, and must follow the same k permutation: within a 64-byte
 * sub-chunk, 32-bit word 4q + r of a token goes to step r / 2, k-half r % 2, position q. So
 * each stage's x tile is rewritten from the ring into core matrices (8 tokens x 16 bytes) with
 * that 4 x 4 word transpose before the warpgroups read it. */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "smallm-launch-config.cuh"
#include "smallm-launch.h"
#include "smallm-tiles.cuh"
#include "smallm-wgmma.cuh"

namespace {

constexpr int NST = BF16FP32__SMALLM_WG_STAGES;

using GArgs = bf16fp32__smallm_tile_args;

/* Descriptor of x's core matrices: leading = k-half to k-half, stride 128 (the 8-token blocks
 * are adjacent). */
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr, uint32_t lead) {
  return bf16fp32__wgmma_desc(addr, lead, 128);
}

/* The accumulators are written by the tensor cores behind the compiler's back until the wait:
 * this keeps it from moving them across the fences. */
template <int N>
__device__ __forceinline__ void hold(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; i++) asm volatile("" : "+f"(d[i])::"memory");
}

/* Block (rank, token block, row block), as in the wide kernel: each sub-chunk of the slice goes
 * to the chain whose range holds it (bf16fp32__smallm_chain; zero start, increasing order, two
 * k16 steps each), the block sum adds chains 0..WK-1 in that order as they close (two sets of
 * accumulators) and the ranks are added 0..S-1. Warpgroup (wr, wc) owns rows
 * 64 wr .. + 63 and tokens TW wc .. + TW - 1; its warp w owns rows 16 w .. + 15 of those.
 * G: sub-chunks per stage (4, 5 or 7). */
template <int WK, int TW, int G>
__global__ void __launch_bounds__(256, 1) smallm_wgmma_kernel(const __grid_constant__ GArgs a) {
  constexpr int NA = TW / 2; /* accumulators of one chain per thread */
  constexpr int PITCH = BF16FP32__SMALLM_TILE_PITCH(G);
  extern __shared__ __align__(128) unsigned char smem[];
  const int tid = threadIdx.x, nthr = blockDim.x;
  const int lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int wgi = warp >> 2, w4 = warp & 3;
  const int wr = wgi / a.wt, wc = wgi - wr * a.wt;
  const bf16fp32__smallm_tile_block<NST, G> blk(&a, smem);
  unsigned char *xcm = smem + 128 + NST * a.stage_bytes; /* x of one stage as core matrices */
  const uint32_t xcm_s = blk.ring + NST * a.stage_bytes;
  blk.start();

  /* cur: the chain in progress (the tensor cores' accumulators); sum: the block sum of the
   * chains closed before it. cur is read only after the MMAs writing it have completed. */
  float cur[NA], sum[NA];
#pragma unroll
  for (int e = 0; e < NA; e++) cur[e] = 0.0f, sum[e] = BF16FP32__SMALLM_SUM_START;
  int closed = 0;
  auto close_chain = [&]() { bf16fp32__smallm_close_chain<NA>(cur, sum, closed); };

  const int arow = (64 * wr + 16 * w4 + g) * PITCH + 16 * t; /* rows g and g + 8 */
  const int tbk = 1 << a.tbk_log;
  const uint32_t lead = static_cast<uint32_t>(tbk) * 128; /* k-half to k-half: all token blocks */
  const uint32_t bcol = xcm_s + (wc * TW / 8) * 128;      /* this warpgroup's first token block */
  const int pieces = a.bt * G * 4;                         /* 16-byte pieces of x per stage */
  /* the chain of the next sub-chunk, and where its range ends (bf16fp32__smallm_chain) */
  const int per = bf16fp32__smallm_chain_len(blk.slice_subs, WK);
  int chain_end = per;
  for (int s = 0; s < blk.nstages; s++) {
    const unsigned char *st = blk.wait(s);
    /* x tile -> core matrices: piece (sub-chunk p, token 8 tb + r8, lane quarter q) holds words
     * 4q .. 4q + 3; word 4q + r goes to matrix (p, r) at token row r8, position q. */
    const unsigned char *xs = st + a.br * PITCH;
    for (int i = tid; i < pieces; i += nthr) {
      const int q = i & 3, r8 = (i >> 2) & 7, rest = i >> 5;
      const int tbi = rest & (tbk - 1), p = rest >> a.tbk_log;
      const uint4 v = bf16fp32__lds16(xs + (8 * tbi + r8) * PITCH + 64 * p + 16 * q);
      unsigned char *d = xcm + 4 * p * lead + tbi * 128 + r8 * 16 + q * 4;
      *reinterpret_cast<uint32_t *>(d) = v.x;
      *reinterpret_cast<uint32_t *>(d + lead) = v.y;
      *reinterpret_cast<uint32_t *>(d + 2 * lead) = v.z;
      *reinterpret_cast<uint32_t *>(d + 3 * lead) = v.w;
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); /* visible to the tensor cores */
    __syncthreads();
    const int left = blk.nsubs - G * s; /* sub-chunks of the slice in this stage (G or fewer) */
    uint4 av[G][2];
#pragma unroll
    for (int p = 0; p < G; p++)
      if (p < left) {
        av[p][0] = bf16fp32__lds16(st + arow + 64 * p);
        av[p][1] = bf16fp32__lds16(st + arow + 8 * PITCH + 64 * p);
      }
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int p = 0; p < G; p++)
      if (p < left) {
        if (G * s + p == chain_end) { /* a chain ends inside the stage: finish its MMAs */
          asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
          asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
          hold(cur);
          close_chain(), chain_end += per;
          asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        }
        const uint32_t b = bcol + 4 * p * lead; /* matrix (p, r = 0) */
        bf16fp32__wgmma<TW>::run(cur, av[p][0].x, av[p][1].x, av[p][0].y, av[p][1].y, smem_desc(b, lead));
        bf16fp32__wgmma<TW>::run(cur, av[p][0].z, av[p][1].z, av[p][0].w, av[p][1].w,
                       smem_desc(b + 2 * lead, lead));
      }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    hold(cur);
    __syncthreads(); /* buffer s % NST and the core matrices are free */
    blk.refill(s);
  }
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");

  /* The last chain with sub-chunks, then the empty ones (zeros), close; the block sums go to
   * part[token][row] over the ring. Element e: 8-token block e / 4, row g (+ 8 when e & 2),
   * token 2t (+ 1 when e & 1). */
  while (closed < WK) close_chain();
  float *part = blk.sums();
  const int rs = blk.sums_pitch();
#pragma unroll
  for (int e = 0; e < NA; e++) {
    const float v = sum[e];
    const int row = 64 * wr + 16 * w4 + g + 8 * ((e >> 1) & 1);
    const int tok = TW * wc + 8 * (e >> 2) + 2 * t + (e & 1);
    part[tok * rs + row] = v;
  }
  blk.finish();
}

template <int WK, int TW>
cudaError_t launch_t(const GArgs &a, const cudaLaunchConfig_t &cfg, int subs) {
  return bf16fp32__smallm_tile_subs_call(subs, [&](auto g) {
    return cudaLaunchKernelEx(&cfg, smallm_wgmma_kernel<WK, TW, decltype(g)::value>, a);
  });
}

}  // namespace

extern "C" int bf16fp32__smallm_wgmma_load(size_t smem_limit) {
  return static_cast<int>(bf16fp32__smallm_tile_subs_each([&](auto g) {
    constexpr int G = decltype(g)::value;
    return bf16fp32__smallm_allow_smem(smem_limit, smallm_wgmma_kernel<4, 32, G>,
                                       smallm_wgmma_kernel<4, 64, G>, smallm_wgmma_kernel<8, 32, G>);
  }));
}

extern "C" int bf16fp32__smallm_wgmma_launch(const bf16fp32__smallm_config *c, int64_t m,
                                             int64_t n, int64_t k, const uint16_t *x, int64_t ldx,
                                             const uint16_t *w, int64_t ldw, float *out,
                                             int64_t ldo, void *stream, int use_pdl) {
  GArgs a;
  bf16fp32__smallm_config gc = *c;
  if (!bf16fp32__smallm_tile_setup(&a, &gc, m, n, k, x, ldx, w, ldw, out, ldo, c->wg_tokens))
    return static_cast<int>(cudaErrorInvalidValue);
  gc.threads = 128 * (a.br / 64) * a.wt; /* a warpgroup per 64 x TW tile */
  cudaLaunchAttribute attr[2];
  const cudaLaunchConfig_t cfg = bf16fp32__smallm_launch_config(
      &gc, c->wide_smem, static_cast<cudaStream_t>(stream), use_pdl, attr);
  if (c->split.kwarps == 8) return static_cast<int>(launch_t<8, 32>(a, cfg, c->wide_subs));
  if (c->wg_tokens == 64) return static_cast<int>(launch_t<4, 64>(a, cfg, c->wide_subs));
  return static_cast<int>(launch_t<4, 32>(a, cfg, c->wide_subs));
}
