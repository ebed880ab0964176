// smallm-probe --trace: where a call's time goes, from the global timer stamped inside the
// kernels (src/backends/smallm/smallm-trace.cuh) in the last call of a graph of 200, next to the
// per-call time of the same graph. Included by smallm-probe.cu after its read floors; needs the
// probe built with -DBF16FP32_SMALLM_TRACE -rdc=true (the library never is).
#ifndef BF16FP32_SMALLM_PROBE_TRACE_CUH
#define BF16FP32_SMALLM_PROBE_TRACE_CUH

#ifdef BF16FP32_SMALLM_TRACE
#include <cooperative_groups.h>

#include "backends/smallm/smallm-cluster-sum.cuh" /* the pull's cluster barriers */

__device__ unsigned long long
    bf16fp32__smallm_trace[2 * BF16FP32__SMALLM_TRACE_BLOCKS * BF16FP32__SMALLM_TRACE_WORDS];
__device__ unsigned bf16fp32__smallm_trace_calls[BF16FP32__SMALLM_TRACE_BLOCKS];
__device__ unsigned bf16fp32__smallm_trace_target, bf16fp32__smallm_trace_calls_per_graph;
constexpr unsigned TRACE_CALLS = 200; /* calls per graph in every trace below */

// The timer's step: the smallest non-zero difference between consecutive reads.
__global__ void timer_step(unsigned long long *out) {
  unsigned long long prev, t, step = ~0ull;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(prev));
  for (int i = 0; i < 20000; i++) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (t != prev && t - prev < step) step = t - prev;
    prev = t;
  }
  *out = step;
}

// Block b of the grid reads the b-th contiguous chunk of the matrix (16-byte loads, L in flight
// per thread): the plain read's addresses in another grid.
template <int L>
__global__ void read_chunks(const uint4 *w, size_t n16, unsigned *sink) {
  BF16FP32__SMALLM_STAMP(0);
  const size_t per = (n16 + gridDim.x - 1) / gridDim.x, u0 = blockIdx.x * per;
  const size_t u1 = u0 + per < n16 ? u0 + per : n16;
  unsigned acc = 0;
  for (size_t i0 = u0 + threadIdx.x; i0 < u1; i0 += (size_t)blockDim.x * L) {
    uint4 v[L];
#pragma unroll
    for (int j = 0; j < L; j++) {
      const size_t i = i0 + (size_t)j * blockDim.x;
      v[j] = make_uint4(0, 0, 0, 0);
      if (i < u1)
        asm volatile("ld.global.nc.L1::no_allocate.L2::128B.v4.u32 {%0,%1,%2,%3}, [%4];"
                     : "=r"(v[j].x), "=r"(v[j].y), "=r"(v[j].z), "=r"(v[j].w) : "l"(w + i));
    }
#pragma unroll
    for (int j = 0; j < L; j++) acc ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
  }
  BF16FP32__SMALLM_STAMP(5);
  if (acc == 0x12345679u) sink[blockIdx.x] = acc;
}

// The plain read's grid-stride loop (one load in flight per thread), stamped.
__global__ void read_stride(const uint4 *w, size_t n16, unsigned *sink) {
  BF16FP32__SMALLM_STAMP(0);
  unsigned acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n16; i += (size_t)gridDim.x * blockDim.x) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::128B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(w + i));
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  BF16FP32__SMALLM_STAMP(5);
  if (acc == 0x12345679u) sink[0] = acc;
}

// What a cluster's barriers and one DSMEM read cost: p1, p2 after a cluster.sync each, p3 after
// the cluster sum's fences (restricted to shared memory) around a relaxed arrive, p4 after
// reading a word of the next rank, p5 after a last sync.
__global__ void cluster_barriers(unsigned *sink) {
  __shared__ unsigned word[256];
  BF16FP32__SMALLM_STAMP(0);
  cooperative_groups::cluster_group cl = cooperative_groups::this_cluster();
  word[threadIdx.x] = threadIdx.x ^ blockIdx.x;
  cl.sync();
  BF16FP32__SMALLM_STAMP(1);
  cl.sync();
  BF16FP32__SMALLM_STAMP(2);
  bf16fp32__smallm_cluster_share();
  BF16FP32__SMALLM_STAMP(3);
  const unsigned v = *cl.map_shared_rank(word + threadIdx.x, (cl.block_rank() + 1) % cl.num_blocks());
  if (v == 0x12345679u) sink[blockIdx.x] = v;
  BF16FP32__SMALLM_STAMP(4);
  cl.sync();
  BF16FP32__SMALLM_STAMP(5);
}

// One line: per-call time, then from a call's stamps (us after its first block's entry): when
// blocks entered (median, max), each point's median and max over blocks, the last stamp (the
// span), block durations, and how blocks sat on SMs; then the steps within a block from its SM's
// cycle counter (medians over blocks, at the device's clock rate): entry to the wait, the wait
// to the main loop's end, to the block sums, to the cluster barrier's passing, to the end. The
// call is the chain's last, or with --trace-call T its T-th; then a second line gives call
// T + 1's points on the same clock, the hand-over (from call T's last block end to call T + 1's
// first and median wait passing) and how many of call T + 1's blocks entered an SM on which a
// block of call T ran.
static void trace_report(const char *what, double per_call, int blocks) {
  constexpr int W = BF16FP32__SMALLM_TRACE_WORDS;
  blocks = std::min(blocks, BF16FP32__SMALLM_TRACE_BLOCKS);
  const size_t per_set = (size_t)BF16FP32__SMALLM_TRACE_BLOCKS * W;
  std::vector<unsigned long long> all(2 * per_set);
  CK(cudaMemcpyFromSymbol(all.data(), bf16fp32__smallm_trace, all.size() * 8));
  static double ghz = 0;
  if (ghz == 0) {
    int khz = 0;
    CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    ghz = khz * 1e-6;
  }
  unsigned long long t0 = ~0ull;
  for (int b = 0; b < blocks; b++)
    if (all[W * b]) t0 = std::min(t0, all[W * b]);
  if (t0 == ~0ull) {
    printf("%-34s %6.2f | no stamps\n", what, per_call);
    return;
  }
  double end0 = 0; /* call T's last block end */
  std::vector<char> sm0(1024, 0); /* the SMs call T's blocks ran on */
  for (int set = 0; set < (g_trace_call ? 2 : 1); set++) {
    const unsigned long long *h = all.data() + set * per_set;
    bool any = false;
    for (int b = 0; b < blocks && !any; b++) any = h[W * b] != 0;
    if (!any) { /* the probe's own kernels keep set 0 only */
      printf("%-34s   next | no stamps\n", "");
      continue;
    }
    auto stats = [&](int p, double *med, double *mx, double *mn) {
      std::vector<double> v;
      for (int b = 0; b < blocks; b++)
        if (h[W * b + p]) v.push_back(((double)h[W * b + p] - (double)t0) * 1e-3);
      if (v.empty()) return false;
      std::sort(v.begin(), v.end());
      *med = v[v.size() / 2], *mx = v.back(), *mn = v.front();
      return true;
    };
    auto step = [&](int p, int q) { /* median over blocks of the cycles from p to q, in us */
      std::vector<double> v;
      for (int b = 0; b < blocks; b++)
        if (h[W * b + p] && h[W * b + q])
          v.push_back((double)(long long)(h[W * b + 8 + q] - h[W * b + 8 + p]) / (ghz * 1e3));
      if (v.empty()) return -1.0;
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    if (set == 0) printf("%-34s %6.2f |", what, per_call);
    else printf("%-34s   next |", "");
    double span = 0, med, mx, mn, w_mn = 0, w_med = 0;
    for (int p = 0; p < 7; p++)
      if (stats(p, &med, &mx, &mn)) {
        printf(" p%d %5.2f %5.2f", p, med, mx), span = std::max(span, mx);
        if (p == 1) w_mn = mn, w_med = med;
      }
    if (set == 0) end0 = span;
    std::vector<double> dur;
    std::vector<int> per_sm(1024, 0);
    for (int b = 0; b < blocks; b++) {
      int last = 5;
      while (last > 0 && !h[W * b + last]) last--;
      if (last > 0) dur.push_back((h[W * b + last] - h[W * b]) * 1e-3);
      if (h[W * b]) per_sm[h[W * b + 7] & 1023]++;
    }
    std::sort(dur.begin(), dur.end());
    int sms = 0, most = 0;
    for (int c : per_sm) sms += c > 0, most = std::max(most, c);
    printf(" | span %5.2f | block %5.2f %5.2f | %d blocks on %d SMs, <= %d per SM", span,
           dur.empty() ? 0 : dur[dur.size() / 2], dur.empty() ? 0 : dur.back(), blocks, sms, most);
    printf(" | cycles: 0-1 %.2f 1-2 %.2f 1-3 %.2f 3-4 %.2f 4-6 %.2f 6-5 %.2f 1-5 %.2f", step(0, 1),
           step(1, 2), step(1, 3), step(3, 4), step(4, 6), step(6, 5), step(1, 5));
    { /* the stream kernel: thread 0's waits for its ring's stages (slot 15), median over blocks,
       * in us and as a share of its main loop (p1 to p3) */
      std::vector<double> wus, wshare;
      for (int b = 0; b < blocks; b++)
        if (h[W * b + 15] && h[W * b + 1] && h[W * b + 3]) {
          wus.push_back((double)h[W * b + 15] / (ghz * 1e3));
          wshare.push_back((double)h[W * b + 15] / (double)(long long)(h[W * b + 11] - h[W * b + 9]));
        }
      if (!wus.empty()) {
        std::sort(wus.begin(), wus.end());
        std::sort(wshare.begin(), wshare.end());
        printf(" | ring waits %.2f us, %.0f %% of p1-3", wus[wus.size() / 2], 100 * wshare[wshare.size() / 2]);
      }
    }
    if (set == 0)
      for (int i = 0; i < 1024; i++) sm0[i] = per_sm[i] > 0;
    if (set == 1) {
      int shared = 0;
      for (int b = 0; b < blocks; b++) shared += h[W * b] && sm0[h[W * b + 7] & 1023];
      printf(" | hand-over %5.2f first, %5.2f median | %d blocks on SMs of call T", w_mn - end0,
             w_med - end0, shared);
    }
    printf("\n");
  }
  fflush(stdout);
}

// Clears the records and the blocks' call counters, and sets the traced call (--trace-call, of
// each replay of a graph of TRACE_CALLS calls: the last replay's stays).
static void trace_clear() {
  static std::vector<unsigned long long> zero(
      (size_t)2 * BF16FP32__SMALLM_TRACE_BLOCKS * BF16FP32__SMALLM_TRACE_WORDS, 0);
  CK(cudaMemcpyToSymbol(bf16fp32__smallm_trace, zero.data(), zero.size() * 8));
  CK(cudaMemcpyToSymbol(bf16fp32__smallm_trace_calls, zero.data(),
                        BF16FP32__SMALLM_TRACE_BLOCKS * 4));
  CK(cudaMemcpyToSymbol(bf16fp32__smallm_trace_target, &g_trace_call, 4));
  CK(cudaMemcpyToSymbol(bf16fp32__smallm_trace_calls_per_graph, &TRACE_CALLS, 4));
}

static void exp_trace() {
  {
    unsigned long long *d, step;
    CK(cudaMalloc(&d, 8));
    timer_step<<<1, 1>>>(d);
    CK(cudaMemcpy(&step, d, 8, cudaMemcpyDeviceToHost));
    CK(cudaFree(d));
    printf("\nglobal timer step: %llu ns\n", step);
  }
  char name[96];
  printf("trace (us; p0 entry, p1 after griddepcontrol.wait, p2 first stage landed (tile kernels) or barriers set up (stream kernel), p3 main "
         "loop done, p4 block sum ready, p5 end, p6 after the cluster sum's first barrier; median and max over "
         "blocks, from the first entry)\n");
  {
    static unsigned *sk = nullptr;
    if (!sk) CK(cudaMalloc(&sk, 1 << 20));
    for (int cs : {1, 2, 4, 8}) {
      trace_clear();
      double t = time_calls(TRACE_CALLS, [&](int) {
        cudaLaunchConfig_t cfg = {};
        cudaLaunchAttribute at[1];
        cfg.gridDim = dim3(64), cfg.blockDim = dim3(256), cfg.stream = g_s;
        at[0].id = cudaLaunchAttributeClusterDimension;
        at[0].val.clusterDim.x = cs, at[0].val.clusterDim.y = 1, at[0].val.clusterDim.z = 1;
        cfg.attrs = at, cfg.numAttrs = 1;
        launch_or_die((int)cudaLaunchKernelEx(&cfg, cluster_barriers, sk));
      });
      snprintf(name, sizeof name, "cluster barriers, clusters of %d", cs);
      trace_report(name, t, 64);
    }
  }
  static unsigned *sink = nullptr;
  if (!sink) CK(cudaMalloc(&sink, 1 << 20));
  for (int si : {0, 8}) {
    Rot r(1, g_shapes[si][0], g_shapes[si][1]);
    const size_t n16 = (size_t)r.n * r.k / 8;
    for (int per_sm : {1, 2, 4, 8}) {
      trace_clear();
      double t = time_calls(TRACE_CALLS, [&](int i) {
        read_stride<<<g_sms * per_sm, 256, 0, g_s>>>((const uint4 *)r.w(i), n16, sink);
      });
      snprintf(name, sizeof name, "%lldx%lld stride %dx256", (long long)r.n, (long long)r.k, g_sms * per_sm);
      trace_report(name, t, g_sms * per_sm);
    }
    if (si == 8) /* loads in flight per thread against threads per SM, one block per SM */
      for (int th : {256, 512, 1024})
        for (int L : {4, 8, 16, 32}) {
          if (L * th > 8192) continue; /* registers */
          trace_clear();
          double t = time_calls(TRACE_CALLS, [&](int i) {
            const uint4 *w = (const uint4 *)r.w(i);
            if (L == 4) read_chunks<4><<<g_sms, th, 0, g_s>>>(w, n16, sink);
            if (L == 8) read_chunks<8><<<g_sms, th, 0, g_s>>>(w, n16, sink);
            if (L == 16) read_chunks<16><<<g_sms, th, 0, g_s>>>(w, n16, sink);
            if (L == 32) read_chunks<32><<<g_sms, th, 0, g_s>>>(w, n16, sink);
          });
          snprintf(name, sizeof name, "%lldx%lld chunks %dx%d L=%d", (long long)r.n, (long long)r.k, g_sms, th, L);
          trace_report(name, t, g_sms);
        }
    struct { int blocks, threads; } grids[] = {{g_sms, 1024}, {128, 256}, {64, 256}, {128, 512}};
    for (auto gd : grids) {
      trace_clear();
      double t = time_calls(TRACE_CALLS, [&](int i) {
        read_chunks<8><<<gd.blocks, gd.threads, 0, g_s>>>((const uint4 *)r.w(i), n16, sink);
      });
      snprintf(name, sizeof name, "%lldx%lld chunks %dx%d", (long long)r.n, (long long)r.k, gd.blocks, gd.threads);
      trace_report(name, t, gd.blocks);
    }
    bf16fp32__smallm_config cfg;
    if (bf16fp32__smallm_choose(1, r.n, r.k, g_sms, g_smem, &cfg) != 0) continue;
    const int R = cfg.split.rows, S = cfg.split.ksplit;
    trace_clear();
    double t = time_read_frag(r, R, S, 1);
    snprintf(name, sizeof name, "%lldx%lld frag read %d/%d", (long long)r.n, (long long)r.k, R, S);
    trace_report(name, t, (int)(r.n / R * S));
    trace_clear();
    t = time_read_frag(r, R, S, 2);
    snprintf(name, sizeof name, "%lldx%lld frag read %d/%d 512 thr", (long long)r.n, (long long)r.k, R, S);
    trace_report(name, t, (int)(r.n / R * S));
  }
  const struct { int si, m; } runs[] = {{0, 1}, {0, 16}, {0, 64}, {0, 256}, {6, 1}, {3, 1},
                                        {8, 1}, {8, 16}, {8, 64}, {8, 128}, {8, 256}};
  for (auto ru : runs) {
    Rot r(ru.m, g_shapes[ru.si][0], g_shapes[ru.si][1]);
    bf16fp32__smallm_config cfg;
    if (bf16fp32__smallm_choose(r.m, r.n, r.k, g_sms, g_smem, &cfg) != 0) continue;
    int blocks = cfg.grid_x * cfg.grid_y;
    if (cfg.wide) /* the tile kernels' grid (bf16fp32__smallm_tile_setup) */
      blocks = cfg.split.ksplit * cfg.wide_groups * (int)((r.m + cfg.wide_tokens - 1) / cfg.wide_tokens) *
               (int)(r.n / cfg.wide_rows);
    const char *kern = cfg.wide ? (cfg.wgmma ? "wgmma" : "wide") : cfg.decode ? (cfg.deep ? "decode deep" : "decode") : "tiled";
    for (int pdl = 0; pdl < 4; pdl++) {
      bf16fp32__smallm_config c = cfg;
      if (pdl >= 2 && (ru.m > 16 || bf16fp32__smallm_use_stream(&c, ru.m, 5, 3, 1, g_smem) != 0)) break;
      if (pdl >= 2) kern = "stream";
      trace_clear();
      double t = time_smallm(r, pdl & 1, &c);
      snprintf(name, sizeof name, "%lldx%lld M=%d %s%s", (long long)r.n, (long long)r.k, ru.m, kern, pdl & 1 ? " pdl" : "");
      trace_report(name, t, blocks);
    }
  }
}

// --trace-stream: the library's choice (the stream kernel where its table picks it; with --share
// the share kernel wherever it fits) at a few cells, plain and under PDL, and at 1024x4096 M = 1
// two other stagings: where the start and the end of a stream call go. With --ms (and --n), those
// cells instead, the choice only, or with --stream-kind the stream kernel in that staging.
static void exp_trace_stream() {
  printf("trace of the chosen kernel (us; p0 entry, p2 barriers set up (share kernel: weights and x landed), p1 "
         "after griddepcontrol.wait (first weight copies issued), p3 main loop done, p4 block sum ready, p6 "
         "cluster barrier passed, p5 end)\n");
  /* shape, M, and a staging (sub-chunks x stages) in place of the table's, or 0 */
  struct Run { int si, m, subs, stages, groups; };
  std::vector<Run> runs = {{2, 1, 0, 0, 1}, {2, 1, 4, 2, 1}, {2, 1, 3, 3, 1}, {2, 8, 0, 0, 1},
                           {1, 1, 0, 0, 1}, {6, 1, 0, 0, 1}, {8, 1, 0, 0, 1}, {3, 1, 0, 0, 1},
                           {2, 16, 0, 0, 1}, {5, 1, 0, 0, 1}, {4, 1, 0, 0, 1}, {0, 1, 0, 0, 1}};
  if (!g_mlist.empty()) {
    runs.clear();
    for (int si = 0; si < 9; si++)
      if (!g_only_n || g_shapes[si][0] == g_only_n)
        for (int m : g_mlist) runs.push_back({si, m, g_kind[0], g_kind[1], g_kind[2]});
  }
  for (auto ru : runs)
    for (int pdl = 0; pdl < 2; pdl++) {
      Rot r(ru.m, g_shapes[ru.si][0], g_shapes[ru.si][1]);
      bf16fp32__smallm_config c;
      if (bf16fp32__smallm_choose(r.m, r.n, r.k, g_sms, g_smem, &c) != 0) continue;
      if (ru.subs == 0) {
        bf16fp32__smallm_prefer_stream(&c, r.m, r.n, r.k, g_sms, pdl, g_smem);
        bf16fp32__smallm_prefer_share(&c, r.m, r.n, r.k, g_sms, pdl, g_smem);
        if (g_share) bf16fp32__smallm_use_share(&c, r.m, r.n, r.k, g_share == 2, 0, g_smem);
      }
      else if (bf16fp32__smallm_use_stream(&c, r.m, ru.subs, ru.stages, ru.groups, g_smem) != 0)
        continue;
      char name[96];
      trace_clear();
      double t = time_smallm(r, pdl, &c);
      const char *kind = c.wide ? "tile" : c.stream ? "stream" : c.share ? "share" : "other";
      snprintf(name, sizeof name, "%lldx%lld M=%d %s %dx%d g%d%s%s", (long long)r.n, (long long)r.k,
               ru.m, kind, c.stream_subs, c.stream_stages, c.stream_groups,
               c.share && c.share_tiles == 2 ? " t2" : "", pdl ? " pdl" : "");
      const int tb = c.stream && c.stream_tblocks > 1 ? c.stream_tblocks : 1;
      trace_report(name, t, c.wide ? 4096 : c.grid_x * c.grid_y * tb);
    }
}
#else
static void exp_trace_stream() { printf("--trace-stream needs a build with -DBF16FP32_SMALLM_TRACE -rdc=true\n"); }
static void exp_trace() { printf("--trace needs a build with -DBF16FP32_SMALLM_TRACE -rdc=true\n"); }
#endif

#endif
