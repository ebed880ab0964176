// smallm-probe --fold: the split's K slices folded into one block. A block holds 16 weight rows
// over all of K (every slice of the split, each a segment of the row in shared memory, copied at
// entry by one bulk copy per row and slice) and its 8 warps sum all ksplit x kwarps chains of
// those rows, CPW chains per warp interleaved; the chains' sums meet in shared memory and are
// added in the library's tree (((p0 + p1) + ...) per slice, then the slices in rank order), so
// the outputs are the library's bit for bit, with no cluster, no DSMEM and N / 16 blocks.
// Question: under PDL at the small shapes, does dropping the cluster sum (about 0.3-0.9 us of a
// call, docs/smallm-notes.md) pay for 4x the MMAs per SM after the wait? Answer (session 42, H200):
// no; 0.5-9.5 us slower at every cell, more so as M grows (every block reads all of x after the
// wait), docs/smallm-notes.md.
// Included by smallm-probe.cu after its timing helpers.

#include "backends/smallm/smallm-tiles.cuh" /* bf16fp32__lds16 */

namespace fold {

struct Args {
  const uint16_t *x, *w;
  float *out;
  long long ldx, ldw, ldo;
  int m, ksplit, kwarps, pitch;
  bf16fp32__smallm_slices slices;
  int seg[BF16FP32__SMALLM_MAX_SPLIT + 1]; /* byte offset of slice s's segment in a row */
  int pdl;
};

constexpr int BARS = 64; /* the mbarrier, then the rows (16-byte aligned copies) */
constexpr int RS = 16 + 4; /* a token's 16 rows of chain sums, padded as the library pads them */

template <int MT, int CPW, bool EARLY>
__global__ void __launch_bounds__(256, 1) kernel(const __grid_constant__ Args a) {
  extern __shared__ __align__(128) unsigned char smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int n0 = static_cast<int>(blockIdx.x) * 16;
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem)), bar = base;
  const int k = a.slices.k[a.ksplit];
  if (EARLY) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (threadIdx.x == 0) {
    bf16fp32__bar_init(bar);
    bf16fp32__bar_init_fence();
    bf16fp32__bar_expect(bar, 16 * 2 * k);
  }
  /* a slice that ends inside a sub-chunk: the rest of it reads as zeros */
  for (int s = 0; s < a.ksplit; s++) {
    const int len = a.slices.k[s + 1] - a.slices.k[s], end = a.seg[s + 1];
    for (int r = threadIdx.x; r < 16; r += blockDim.x)
      for (int b = a.seg[s] + 2 * len; b < end; b += 16)
        *reinterpret_cast<uint4 *>(smem + BARS + r * a.pitch + b) = make_uint4(0u, 0u, 0u, 0u);
  }
  __syncthreads();
  for (int i = warp + 8 * lane; i < 16 * a.ksplit; i += 256) {
    const int r = i & 15, s = i >> 4, kb = a.slices.k[s];
    bf16fp32__bulk_copy(base + BARS + r * a.pitch + a.seg[s], a.w + (n0 + r) * a.ldw + kb,
                        2 * (a.slices.k[s + 1] - kb), bar);
  }
  if (warp == 1 && a.pdl)
    for (int r = lane; r < a.m; r += 32)
      if (r % gridDim.x == blockIdx.x) bf16fp32__bulk_to_l2(a.x + r * a.ldx, 2 * k);
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (!EARLY) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");

  /* the warp's chains: c = warp * CPW + i is group c % kwarps of slice c / kwarps */
  const int lg = bf16fp32__smallm_kwarps_log2(a.kwarps);
  int j0[CPW], j1[CPW], kb[CPW], len[CPW], seg[CPW], most = 0;
#pragma unroll
  for (int i = 0; i < CPW; i++) {
    const int c = warp * CPW + i, s = c >> lg;
    kb[i] = a.slices.k[s], len[i] = a.slices.k[s + 1] - kb[i], seg[i] = a.seg[s];
    bf16fp32__smallm_chain((len[i] + 31) >> 5, c & (a.kwarps - 1), a.kwarps, &j0[i], &j1[i]);
    most = max(most, j1[i] - j0[i]);
  }
  float acc[CPW][MT][4];
#pragma unroll
  for (int i = 0; i < CPW; i++)
#pragma unroll
    for (int j = 0; j < MT; j++) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.0f;
  const unsigned char *wr = smem + BARS + g * a.pitch + 16 * t;
  bf16fp32__bar_wait(bar, 0);
  /* PF sub-chunks of every chain: all their loads first, then their MMAs */
  constexpr int PF = CPW >= 8 ? 1 : 8 / CPW;
  for (int q0 = 0; q0 < most; q0 += PF) {
    uint4 r0[PF][CPW], r8[PF][CPW], xf[PF][CPW][MT];
#pragma unroll
    for (int q = 0; q < PF; q++)
#pragma unroll
      for (int i = 0; i < CPW; i++) {
        const int sub = j0[i] + q0 + q;
        const bool on = sub < j1[i];
        const unsigned char *p = wr + seg[i] + 64 * sub;
        r0[q][i] = on ? bf16fp32__lds16(p) : make_uint4(0u, 0u, 0u, 0u);
        r8[q][i] = on ? bf16fp32__lds16(p + 8 * a.pitch) : make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
        for (int j = 0; j < MT; j++) {
          const int tok = min(8 * j + g, a.m - 1), col = 32 * sub + 8 * t;
          xf[q][i][j] = on && col < len[i]
                            ? *reinterpret_cast<const uint4 *>(a.x + tok * a.ldx + kb[i] + col)
                            : make_uint4(0u, 0u, 0u, 0u);
        }
      }
#pragma unroll
    for (int q = 0; q < PF; q++)
#pragma unroll
      for (int i = 0; i < CPW; i++)
        if (j0[i] + q0 + q < j1[i])
#pragma unroll
          for (int j = 0; j < MT; j++) bf16fp32__smallm_mma_sub(acc[i][j], r0[q][i], r8[q][i], xf[q][i][j]);
  }
  /* the chains' sums over the rows, chain c as the library's warp group c
   * (bf16fp32__smallm_store_warp: part[c][token][row], rows padded to RS) */
  __syncthreads();
  float *part = reinterpret_cast<float *>(smem + BARS);
#pragma unroll
  for (int i = 0; i < CPW; i++)
    bf16fp32__smallm_store_warp<MT>(acc[i], part, warp * CPW + i, 0, a.m, 8 * MT, RS);
  __syncthreads();
  /* each unit (4 rows of one token) in the library's tree: a slice's groups by its block sum,
   * then the slices in rank order as its cluster sum adds them */
  const int gstride = 8 * MT * RS;
  for (int u = threadIdx.x; u < 4 * a.m; u += blockDim.x) {
    const float *p = part + (u >> 2) * RS + 4 * (u & 3);
    float4 sum = bf16fp32__smallm_unit_sum<BF16FP32__SMALLM_WARPS>(p, gstride, a.kwarps);
    for (int s = 1; s < a.ksplit; s++)
      bf16fp32__smallm_add4(sum, bf16fp32__smallm_unit_sum<BF16FP32__SMALLM_WARPS>(
                                     p + s * a.kwarps * gstride, gstride, a.kwarps));
    *reinterpret_cast<float4 *>(a.out + (u >> 2) * a.ldo + n0 + 4 * (u & 3)) = sum;
  }
}

using Kern = void (*)(Args);
template <bool EARLY>
Kern pick(int mt, int cpw) {
  return mt == 1 ? (cpw == 2 ? kernel<1, 2, EARLY> : kernel<1, 4, EARLY>)
                 : (cpw == 2 ? kernel<2, 2, EARLY> : kernel<2, 4, EARLY>);
}

// Launches the fold of the library's split for (m, n, k); -1 where it does not apply (M > 16,
// chains not 2 or 4 per warp, rows over the shared memory).
static int launch(const Rot &r, int i, int pdl, bool early, size_t *smem_out = nullptr) {
  bf16fp32__smallm_split sp;
  if (r.m > 16 || bf16fp32__smallm_choose_split(r.n, r.k, g_sms, &sp) != 0) return -1;
  const int cpw = sp.ksplit * sp.kwarps / 8, mt = r.m <= 8 ? 1 : 2;
  if (cpw != 2 && cpw != 4) return -1;
  Args a;
  a.x = r.x(i), a.w = r.w(i), a.out = r.out(i);
  a.ldx = r.k, a.ldw = r.k, a.ldo = r.n;
  a.m = (int)r.m, a.ksplit = sp.ksplit, a.kwarps = sp.kwarps;
  bf16fp32__smallm_fill_slices(r.k, sp.ksplit, &a.slices);
  a.seg[0] = 0;
  for (int s = 0; s < sp.ksplit; s++)
    a.seg[s + 1] = a.seg[s] + 64 * ((a.slices.k[s + 1] - a.slices.k[s] + 31) / 32);
  a.pitch = 64 * (a.seg[sp.ksplit] / 64 | 1); /* odd sub-chunks per row, as the share kernel's */
  a.pdl = pdl;
  const size_t smem = BARS + 16 * (size_t)a.pitch;
  const size_t parts = (size_t)sp.ksplit * sp.kwarps * 8 * mt * RS * 4;
  if (smem > g_smem || parts > 16 * (size_t)a.pitch) return -1;
  if (smem_out) *smem_out = smem;
  const Kern kern = early ? pick<true>(mt, cpw) : pick<false>(mt, cpw);
  static bool loaded = false;
  if (!loaded) {
    for (int e = 0; e < 2; e++)
      for (int m1 = 1; m1 <= 2; m1++)
        for (int c = 2; c <= 4; c += 2)
          CK(cudaFuncSetAttribute(e ? pick<true>(m1, c) : pick<false>(m1, c),
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, (int)g_smem));
    loaded = true;
  }
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute at[1];
  cfg.gridDim = dim3((unsigned)(r.n / 16)), cfg.blockDim = dim3(256);
  cfg.dynamicSmemBytes = smem, cfg.stream = g_s;
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at, cfg.numAttrs = pdl ? 1 : 0;
  return (int)cudaLaunchKernelEx(&cfg, kern, a);
}

static double time_fold(const Rot &r, int pdl, bool early) {
  return time_calls(200, [&](int i) { launch_or_die(launch(r, i, pdl, early)); });
}

// The fold's whole output of copy 0 (poisoned first) against the library's choice, bit for bit.
static bool same_as_choice(const Rot &r, int pdl, bool early) {
  const std::vector<float> ref = output_of(r, nullptr, r.m, pdl);
  fill_u32<<<256, 256, 0, g_s>>>((uint32_t *)r.out(0), (size_t)r.m * r.n, POISON);
  launch_or_die(launch(r, 0, pdl, early));
  CK(cudaStreamSynchronize(g_s));
  std::vector<float> o((size_t)(r.m * r.n));
  CK(cudaMemcpy(o.data(), r.out(0), o.size() * 4, cudaMemcpyDeviceToHost));
  const bool same = memcmp(o.data(), ref.data(), o.size() * 4) == 0;
  if (!same) g_fail++;
  return same;
}

// --fold: per shape and M (<= 16), the choice and the fold (trigger after the wait, and at
// entry), plain and under PDL, --rounds interleaved rounds, medians (us per call); "!" marks a
// fold whose bits differ from the choice's.
static void timing(const std::vector<int> &mlist) {
  printf("\nfold: all K slices in one block of 16 rows (us per call, median of %d rounds): N K M | "
         "plain choice fold | pdl choice fold fold-early | smem KB\n", g_rounds);
  for_cells(mlist, [&](Rot &r) {
    size_t smem = 0;
    const int e = launch(r, 0, 0, false, &smem);
    if (e == -1) return; /* the fold does not apply here */
    launch_or_die(e);
    CK(cudaStreamSynchronize(g_s));
    const bool same = same_as_choice(r, 0, false) && same_as_choice(r, 1, false) &&
                      same_as_choice(r, 1, true);
    std::vector<double> t[5];
    for (int round = 0; round < g_rounds; round++) {
      t[0].push_back(time_smallm(r, 0));
      t[1].push_back(time_fold(r, 0, false));
      t[2].push_back(time_smallm(r, 1));
      t[3].push_back(time_fold(r, 1, false));
      t[4].push_back(time_fold(r, 1, true));
    }
    double med[5];
    for (int v = 0; v < 5; v++) {
      std::sort(t[v].begin(), t[v].end());
      med[v] = t[v][t[v].size() / 2];
    }
    printf("%5lld %5lld %3d | %6.2f %6.2f%s | %6.2f %6.2f %6.2f | %.1f\n", (long long)r.n,
           (long long)r.k, (int)r.m, med[0], med[1], same ? "" : "!", med[2], med[3], med[4],
           smem / 1024.0);
    fflush(stdout);
  });
}

}  // namespace fold
