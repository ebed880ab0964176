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
// Session 55's forms: x's fragments all loaded right after the wait (one trip to L2, not one per
// few sub-chunks), one copy per row where the slices' segments lie as in global memory, and
// blocks of 8 or 4 rows (the MMA's other rows zeros). Under PDL the first two take 512x4096
// M = 1 from 2.83 to 2.20 us, under the choice's 2.58; nowhere else faster than the choice.
// The library's fold kernel (src/backends/smallm/smallm-fold.cu) is the x-up-front form with one
// copy per row, 16 rows and the trigger after the wait; the probe keeps the others to compare.
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
  int whole; /* the segments lie back to back as in global memory: one copy per row */
};

constexpr int BARS = 64; /* the mbarrier, then the rows (16-byte aligned copies) */
constexpr int RS = 16 + 4; /* a token's 16 rows of chain sums, padded as the library pads them */

/* XN > 0: every x fragment of the warp's chains (at most XN sub-chunks each) loaded right after
 * the wait, before the weights' barrier, in one trip to L2 (XN = 0: each PF sub-chunks' with
 * their weights, one trip per PF) */
template <int MT, int CPW, bool EARLY, int XN, int ROWS>
__global__ void __launch_bounds__(256, 1) kernel(const __grid_constant__ Args a) {
  extern __shared__ __align__(128) unsigned char smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int n0 = static_cast<int>(blockIdx.x) * ROWS;
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem)), bar = base;
  const int k = a.slices.k[a.ksplit];
  if (EARLY) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (threadIdx.x == 0) {
    bf16fp32__bar_init(bar);
    bf16fp32__bar_init_fence();
    bf16fp32__bar_expect(bar, ROWS * 2 * k);
  }
  /* a slice that ends inside a sub-chunk: the rest of it reads as zeros */
  for (int s = 0; s < a.ksplit; s++) {
    const int len = a.slices.k[s + 1] - a.slices.k[s], end = a.seg[s + 1];
    for (int r = threadIdx.x; r < ROWS; r += blockDim.x)
      for (int b = a.seg[s] + 2 * len; b < end; b += 16)
        *reinterpret_cast<uint4 *>(smem + BARS + r * a.pitch + b) = make_uint4(0u, 0u, 0u, 0u);
  }
  __syncthreads();
  if (a.whole) {
    for (int r = warp + 8 * lane; r < ROWS; r += 256)
      bf16fp32__bulk_copy(base + BARS + r * a.pitch, a.w + (n0 + r) * a.ldw, 2 * k, bar);
  } else
  for (int i = warp + 8 * lane; i < ROWS * a.ksplit; i += 256) {
    const int r = i % ROWS, s = i / ROWS, kb = a.slices.k[s];
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
  /* the lane's rows g and g + 8: weights where below ROWS, else zeros (row g read from a row in
   * range and dropped, so that no load waits on a branch) */
  const unsigned char *wr = smem + BARS + (ROWS >= 8 ? g : g % ROWS) * a.pitch + 16 * t;
  const bool lo = ROWS >= 8 || g < ROWS;
  constexpr bool HI = ROWS == 16;
  const uint4 zero4 = make_uint4(0u, 0u, 0u, 0u);
  if constexpr (XN > 0) {
    uint4 xa[CPW][XN][MT];
#pragma unroll
    for (int i = 0; i < CPW; i++)
#pragma unroll
      for (int q = 0; q < XN; q++)
#pragma unroll
        for (int j = 0; j < MT; j++) {
          const int sub = j0[i] + q, tok = min(8 * j + g, a.m - 1), col = 32 * sub + 8 * t;
          xa[i][q][j] = sub < j1[i] && col < len[i]
                            ? *reinterpret_cast<const uint4 *>(a.x + tok * a.ldx + kb[i] + col)
                            : make_uint4(0u, 0u, 0u, 0u);
        }
    bf16fp32__bar_wait(bar, 0);
#pragma unroll
    for (int q = 0; q < XN; q++)
#pragma unroll
      for (int i = 0; i < CPW; i++)
        if (j0[i] + q < j1[i]) {
          const unsigned char *p = wr + seg[i] + 64 * (j0[i] + q);
          uint4 r0 = bf16fp32__lds16(p);
          if (!lo) r0 = zero4;
          const uint4 r8 = HI ? bf16fp32__lds16(p + 8 * a.pitch) : zero4;
#pragma unroll
          for (int j = 0; j < MT; j++) bf16fp32__smallm_mma_sub(acc[i][j], r0, r8, xa[i][q][j]);
        }
  } else {
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
          r0[q][i] = on && lo ? bf16fp32__lds16(p) : zero4;
          r8[q][i] = on && HI ? bf16fp32__lds16(p + 8 * a.pitch) : zero4;
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
            for (int j = 0; j < MT; j++)
              bf16fp32__smallm_mma_sub(acc[i][j], r0[q][i], r8[q][i], xf[q][i][j]);
    }
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
  constexpr int r4n = ROWS / 4; /* units of four rows per token */
  for (int u = threadIdx.x; u < r4n * a.m; u += blockDim.x) {
    const int tok = u / r4n, r4 = u % r4n;
    const float *p = part + tok * RS + 4 * r4;
    float4 sum = bf16fp32__smallm_unit_sum<BF16FP32__SMALLM_WARPS>(p, gstride, a.kwarps);
    for (int s = 1; s < a.ksplit; s++)
      bf16fp32__smallm_add4(sum, bf16fp32__smallm_unit_sum<BF16FP32__SMALLM_WARPS>(
                                     p + s * a.kwarps * gstride, gstride, a.kwarps));
    *reinterpret_cast<float4 *>(a.out + tok * a.ldo + n0 + 4 * r4) = sum;
  }
}

using Kern = void (*)(Args);
template <bool EARLY, int XN, int ROWS>
Kern pick(int mt, int cpw) {
  return mt == 1 ? (cpw == 2 ? kernel<1, 2, EARLY, XN, ROWS> : kernel<1, 4, EARLY, XN, ROWS>)
                 : (cpw == 2 ? kernel<2, 2, EARLY, XN, ROWS> : kernel<2, 4, EARLY, XN, ROWS>);
}
template <int ROWS>
Kern pick_rows(int mt, int cpw, bool early, int xn) {
  if (xn == 4) return early ? pick<true, 4, ROWS>(mt, cpw) : pick<false, 4, ROWS>(mt, cpw);
  if (xn == 16) /* mt 1, cpw 2 */
    return early ? kernel<1, 2, true, 16, ROWS> : kernel<1, 2, false, 16, ROWS>;
  return early ? pick<true, 8, ROWS>(mt, cpw) : pick<false, 8, ROWS>(mt, cpw);
}
/* the forms timed: 0 session 42's, 1 x up front, 2 x up front and one copy per row */
enum Form { FOLD = 0, FOLD_X = 1, FOLD_XR = 2 };
/* xn 0 (session 42's form) with 16 rows only */
Kern pick_form(int mt, int cpw, bool early, int xn, int rows) {
  if (xn == 0) return early ? pick<true, 0, 16>(mt, cpw) : pick<false, 0, 16>(mt, cpw);
  return rows == 16 ? pick_rows<16>(mt, cpw, early, xn)
         : rows == 8 ? pick_rows<8>(mt, cpw, early, xn)
                     : pick_rows<4>(mt, cpw, early, xn);
}

// Launches the fold of the library's split for (m, n, k) in `form` with blocks of `rows` weight
// rows; -1 where it does not apply (M > 16, chains not 2 or 4 per warp, a chain over 16
// sub-chunks with x up front, segments apart with one copy per row, rows over the shared memory).
static int launch(const Rot &r, int i, int pdl, bool early, size_t *smem_out = nullptr,
                  int form = FOLD, int rows = 16) {
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
  a.whole = form == FOLD_XR;
  for (int s = 0; s < sp.ksplit; s++) a.whole &= a.seg[s] == 2 * a.slices.k[s];
  if (form == FOLD_XR && !a.whole) return -1;
  int most = 0; /* the longest chain, in sub-chunks */
  for (int s = 0; s < sp.ksplit; s++)
    for (int h = 0; h < sp.kwarps; h++) {
      int j0, j1;
      bf16fp32__smallm_chain((a.slices.k[s + 1] - a.slices.k[s] + 31) / 32, h, sp.kwarps, &j0, &j1);
      most = std::max(most, j1 - j0);
    }
  const int xn = form == FOLD ? 0 : most <= 4 ? 4 : most <= 8 ? 8 : 16;
  if (form != FOLD && (most > 16 || (xn == 16 && (mt != 1 || cpw != 2)))) return -1;
  if (r.n % rows || (form == FOLD && rows != 16)) return -1;
  const size_t parts = (size_t)sp.ksplit * sp.kwarps * 8 * mt * RS * 4;
  const size_t smem = BARS + std::max(rows * (size_t)a.pitch, parts);
  if (smem > g_smem) return -1;
  if (smem_out) *smem_out = smem;
  const Kern kern = pick_form(mt, cpw, early, xn, rows);
  static bool loaded = false;
  if (!loaded) {
    for (int e = 0; e < 2; e++)
      for (int x = 0; x <= 16; x += 4)
        for (int m1 = 1; m1 <= 2; m1++)
          for (int c = 2; c <= 4; c += 2)
            for (int rw = 4; rw <= 16; rw *= 2)
              if (x != 12 && (x != 16 || (m1 == 1 && c == 2)) && (x != 0 || rw == 16))
                CK(cudaFuncSetAttribute(pick_form(m1, c, e, x, rw),
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)g_smem));
    loaded = true;
  }
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute at[1];
  cfg.gridDim = dim3((unsigned)(r.n / rows)), cfg.blockDim = dim3(256);
  cfg.dynamicSmemBytes = smem, cfg.stream = g_s;
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at, cfg.numAttrs = pdl ? 1 : 0;
  return (int)cudaLaunchKernelEx(&cfg, kern, a);
}

static double time_fold(const Rot &r, int pdl, bool early, int form, int rows) {
  return time_calls(200,
                    [&](int i) { launch_or_die(launch(r, i, pdl, early, nullptr, form, rows)); });
}

// The fold's whole output of copy 0 (poisoned first) against the library's choice, bit for bit.
static bool same_as_choice(const Rot &r, int pdl, bool early, int form, int rows) {
  const std::vector<float> ref = output_of(r, nullptr, r.m, pdl);
  fill_u32<<<256, 256, 0, g_s>>>((uint32_t *)r.out(0), (size_t)r.m * r.n, POISON);
  launch_or_die(launch(r, 0, pdl, early, nullptr, form, rows));
  CK(cudaStreamSynchronize(g_s));
  std::vector<float> o((size_t)(r.m * r.n));
  CK(cudaMemcpy(o.data(), r.out(0), o.size() * 4, cudaMemcpyDeviceToHost));
  const bool same = memcmp(o.data(), ref.data(), o.size() * 4) == 0;
  if (!same) g_fail++;
  return same;
}

// --fold: per shape and M (<= 16), the choice and the fold's forms (session 42's; x up front;
// x up front and one copy per row; blocks of 16, 8 or 4 weight rows; the trigger after the wait
// or at entry), plain and under PDL, --rounds interleaved rounds, medians (us per call); "!"
// marks a fold whose bits differ from the choice's, "-" a form that does not apply.
static void timing(const std::vector<int> &mlist) {
  struct Col {
    const char *name;
    int pdl;
    int form; /* -1: the library's choice */
    bool early;
    int rows;
  };
  const Col cols[] = {{"choice", 0, -1, false, 0},       {"xr16", 0, FOLD_XR, false, 16},
                      {"xr8", 0, FOLD_XR, false, 8},      {"choice", 1, -1, false, 0},
                      {"fold16", 1, FOLD, false, 16},     {"xr16e", 1, FOLD_XR, true, 16},
                      {"xr8", 1, FOLD_XR, false, 8},      {"xr8e", 1, FOLD_XR, true, 8},
                      {"xr4e", 1, FOLD_XR, true, 4},      {"x8e", 1, FOLD_X, true, 8}};
  constexpr int NC = sizeof cols / sizeof cols[0];
  printf("\nfold: all K slices in one block (us per call, median of %d rounds): N K M | plain",
         g_rounds);
  for (int c = 0; c < NC; c++) printf("%s %6s", c == 3 ? " | pdl" : "", cols[c].name);
  printf("\n");
  for_cells(mlist, [&](Rot &r) {
    bool on[NC], same = true, any = false;
    for (int c = 0; c < NC; c++) {
      const Col &k = cols[c];
      on[c] = k.form < 0 || launch(r, 0, k.pdl, k.early, nullptr, k.form, k.rows) != -1;
      CK(cudaStreamSynchronize(g_s));
      if (on[c] && cols[c].form >= 0) {
        any = true;
        same &= same_as_choice(r, cols[c].pdl, cols[c].early, cols[c].form, cols[c].rows);
      }
    }
    if (!any) return; /* the fold does not apply here */
    std::vector<double> t[NC];
    for (int round = 0; round < g_rounds; round++)
      for (int c = 0; c < NC; c++)
        if (on[c])
          t[c].push_back(cols[c].form < 0 ? time_smallm(r, cols[c].pdl)
                                          : time_fold(r, cols[c].pdl, cols[c].early, cols[c].form,
                                                      cols[c].rows));
    printf("%5lld %5lld %3d |", (long long)r.n, (long long)r.k, (int)r.m);
    for (int c = 0; c < NC; c++) {
      if (c == 3) printf(" |");
      if (!on[c]) {
        printf("      -");
        continue;
      }
      std::sort(t[c].begin(), t[c].end());
      printf(" %6.2f", t[c][t[c].size() / 2]);
    }
    printf("%s\n", same ? "" : " !");
    fflush(stdout);
  });
}

}  // namespace fold
