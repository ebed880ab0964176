// smallm-probe: the smallm kernel alone (no library): fp64-oracle check, determinism, batch
// invariance, then MEASURING.md timings (graph replay, cold L2, median) against cuBLAS.
// --reads: the read floors of the kernels' grids (loads only: register loads in the kernels'
// fragment pattern and contiguous, bulk copies); --frag-reads: the fragment-pattern part only;
// --frag-vec: the fragment pattern with 16, 32 or 64 contiguous bytes per lane and row, and the
//        natural sets' two 8-byte loads;
// --wide: the wide and wgmma kernels' block shapes at M = 64, 128, 256 (with --no-table: only those);
// --ncu-wide: single wide- and wgmma-kernel calls for a profiler.
// --trace: global-timer stamps inside the kernels (smallm-probe-trace.cuh; build with
//        -DBF16FP32_SMALLM_TRACE -rdc=true); --trace-stream: the same at a few cells of the stream kernel.
// --stream-sweep: the stream kernel's stage sizes and counts at M <= 64 (plain and PDL).
// --chosen: the library's choice alone, plain and under PDL (two builds compared).
// --split-stream: other (N, K) splits with the stream and share kernels, plain and under PDL
//        (M <= 64; above that the wide kernel); --splits 16/2,32/4 limits them to those.
// --ms 1,2,4,8,16: the timing table (and --wide, --stream-sweep) at these M only.
// --stream-kind 3,3,2: --trace-stream with --ms traces the stream kernel in that staging (sub-chunks,
//   stages, blocks per tile).
// --trace-call T (before --trace or --trace-stream; 1 to 199): the stamps of the T-th call of the
//   last replay of the chain of 200 and of the one after it, with the hand-over between them, in
//   place of the last call's.
// --tile-subs 4|5|7: the library's choice with the wide kernel's stages set to this size.
// --stream-tokens: the stream kernel in blocks of 64 tokens above M = 64, against the choice
//        (plain and under PDL, several stagings, each checked bit for bit against the choice).
// --early: under PDL the stream kernel lets the next call launch at block entry.
// --wl2: under PDL the stream kernel (the choice, and the sweep's variants) also requests its
//   weight boxes past the first ring fill into L2 before griddepcontrol.wait.
// --share / --share-xreg: the share kernel wherever it fits, up to M = 64 (--share-xreg: x's
//   fragments read into registers, up to M = 16); --no-share: the stream kernel's table alone.
// --share-late L: where the share kernel runs, its last L warp groups' weight columns are copied
//   after griddepcontrol.wait (bf16fp32__smallm_share_late; where L does not apply, as chosen).
// --late-l2: under PDL, the share kernel's late columns without and with L2 requests before the
//   wait, L = 1-4 and all groups, against the choice (timing_late_l2).
// --delay: the share kernel with a spin at its entry, after its wait or after its last store,
//   plain and under PDL (timing_delay; build with -DBF16FP32_SMALLM_DELAY).
// --share-tiles: under PDL, the share kernel with one and two row blocks per block
//   (bf16fp32__smallm_share_tiles), against the choice (timing_share_tiles).
// --fold: the split's K slices folded into one block of 16 rows, no cluster (smallm-probe-fold.cuh),
//   against the choice, plain and under PDL.
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude
//        bench/smallm-probe.cu src/backends/smallm/smallm-kernel.cu
//        src/backends/smallm/smallm-decode.cu src/backends/smallm/smallm-wide.cu
//        src/backends/smallm/smallm-stream.cu src/backends/smallm/smallm-share.cu
//        src/backends/smallm/smallm-fold.cu src/backends/smallm/smallm-wgmma-sm90a.cu
//        src/backends/smallm/smallm-{config,prefer}.c -lcublas
//        (with -gencode=arch=compute_90a,code=sm_90a: the wgmma kernel needs it)
//        -o smallm-probe
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <unistd.h>
#include <vector>

#include "backends/smallm/smallm-config.h"
#include "backends/smallm/smallm-fragments.cuh"
#include "backends/smallm/smallm-launch.h"
#include "measure-floor.h"
#include "backends/smallm/smallm-trace.cuh"
#include "bench-cublas.cuh"
#include "bench-cuda.cuh"


static int g_sms;
static size_t g_smem;
static int g_fail;
static std::vector<int> g_mlist; /* --ms: the timing table's M values */
static bool g_quick; // timing table at M = 1, 16, 64 only
static bool g_wl2 = false; /* --wl2: the stream kernel (the choice and the sweep's variants) also
                             requests its later weight boxes into L2 under PDL */
static bool g_stream; // --stream: the stream kernel wherever M <= 16 (5-sub-chunk stages, up to 3)
static int g_tile_subs; // --tile-subs: the wide kernel's stage size where the library chooses it
static bool g_early; // --early: the stream kernel lets the next call launch at block entry under PDL
static int g_share;  // --share (1), --share-xreg (2): the share kernel where it fits
static bool g_no_share; // --no-share: not where the table picks it
static int g_share_late = -1; // --share-late L: the last L warp groups' weights after the wait
static int g_rounds = 3; // --rounds: interleaved rounds of --late-l2
static std::vector<std::pair<int, int>> g_splits; // --splits 16/2,32/4: --split-stream's splits

__global__ void fill_bf16(uint16_t *p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint64_t z = i * 0x9e3779b97f4a7c15ull + seed;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    float u = (float)(z >> 40) * (1.0f / 16777216.0f) - 0.5f;
    uint32_t b = __float_as_uint(u);
    b += 0x7fffu + ((b >> 16) & 1u);
    p[i] = (uint16_t)(b >> 16);
  }
}
__global__ void fill_u32(uint32_t *p, size_t n, uint32_t v) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = v;
}
static const uint32_t POISON = 0x7fbadbadu;

static void sync_or_die(const char *what) {
  auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    cudaError_t e = cudaStreamQuery(0);
    if (e == cudaSuccess) break;
    if (e != cudaErrorNotReady) {
      printf("FAIL %s: %s\n", what, cudaGetErrorName(e));
      exit(2);
    }
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(10)) {
      printf("HANG in %s\n", what);
      fflush(stdout);
      _exit(3);
    }
  }
}

static float bf(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static int run_smallm(int64_t m, int64_t n, int64_t k, const uint16_t *x, int64_t ldx, const uint16_t *w,
                      int64_t ldw, float *out, int64_t ldo, cudaStream_t s, int pdl,
                      const bf16fp32__smallm_config *force = nullptr) {
  bf16fp32__smallm_config c;
  if (force) c = *force;
  else if (bf16fp32__smallm_choose(m, n, k, g_sms, g_smem, &c) != 0) return -1;
  else if (g_tile_subs && c.wide && bf16fp32__smallm_use_tile_subs(&c, g_tile_subs, g_smem) != 0)
    return -1;
  else if (g_stream && m <= 16 && bf16fp32__smallm_use_stream(&c, m, 5, 3, 1, g_smem) != 0) return -1;
  else if (!g_stream) {
    bf16fp32__smallm_prefer_stream(&c, m, n, k, g_sms, pdl, g_smem);
    if (!g_no_share) bf16fp32__smallm_prefer_share(&c, m, n, k, g_sms, pdl, g_smem);
  }
  if (g_early) c.stream_early = 1;
  if (g_wl2 && c.stream) c.stream_wl2 = 1;
  if (g_share) bf16fp32__smallm_use_share(&c, m, n, k, g_share == 2, 0, g_smem);
  if (g_share_late >= 0) bf16fp32__smallm_share_late(&c, g_share_late, 0);
  return bf16fp32__smallm_launch(&c, m, n, k, x, ldx, w, ldw, out, ldo, s, pdl);
}

// fp64 oracle of rows [0, m) with the error bound of src/oracle.c; returns worst err/bound and
// counts violations, unwritten (poison) and overwritten padding.
struct Check { double worst; long viol, unwritten, over; };
static Check oracle_check(int64_t m, int64_t n, int64_t k, const std::vector<uint16_t> &hx, int64_t ldx,
                          const std::vector<uint16_t> &hw, int64_t ldw, const std::vector<float> &out, int64_t ldo) {
  std::vector<float> fx(m * k), fw(n * k);
  for (int64_t i = 0; i < m; i++) for (int64_t j = 0; j < k; j++) fx[i * k + j] = bf(hx[i * ldx + j]);
  for (int64_t i = 0; i < n; i++) for (int64_t j = 0; j < k; j++) fw[i * k + j] = bf(hw[i * ldw + j]);
  int T = std::max(1u, std::thread::hardware_concurrency());
  std::vector<Check> part(T, Check{0, 0, 0, 0});
  std::vector<std::thread> th;
  const double u = ldexp(1.0, -24);
  const double ku = (double)(k + 1) * u, gamma = ku / (1 - ku);
  for (int ti = 0; ti < T; ti++)
    th.emplace_back([&, ti] {
      Check c{0, 0, 0, 0};
      for (int64_t i = ti; i < m; i += T) {
        for (int64_t j = 0; j < n; j++) {
          const float *a = &fx[i * k], *b = &fw[j * k];
          double s = 0, sa = 0;
          for (int64_t q = 0; q < k; q++) { double p = (double)a[q] * (double)b[q]; s += p; sa += fabs(p); }
          float got = out[i * ldo + j];
          uint32_t bits; memcpy(&bits, &got, 4);
          if (bits == POISON) { c.unwritten++; continue; }
          double bound = gamma * sa + (double)(k + 1) * FLT_MIN;
          bool ok;
          if (std::isnan(s)) ok = std::isnan(got);
          else if (std::isinf(s)) ok = std::isinf(got) && (got > 0) == (s > 0);
          else if (std::isnan(got) || std::isinf(got)) ok = false;
          else { double r = fabs((double)got - s) / bound; c.worst = std::max(c.worst, r); ok = r <= 1.0; }
          if (!ok) c.viol++;
        }
        for (int64_t j = n; j < ldo; j++) { uint32_t bits; memcpy(&bits, &out[i * ldo + j], 4); if (bits != POISON) c.over++; }
      }
      part[ti] = c;
    });
  for (auto &t : th) t.join();
  Check r{0, 0, 0, 0};
  for (auto &c : part) { r.worst = std::max(r.worst, c.worst); r.viol += c.viol; r.unwritten += c.unwritten; r.over += c.over; }
  return r;
}

// One operand set on the GPU with host copies.
struct Ops {
  int64_t m, n, k, ldx, ldw, ldo;
  uint16_t *dx = nullptr, *dw = nullptr;
  float *dout = nullptr;
  std::vector<uint16_t> hx, hw;
  Ops(int64_t m_, int64_t n_, int64_t k_, int64_t px, int64_t pw, int64_t po, uint64_t seed)
      : m(m_), n(n_), k(k_), ldx(k_ + px), ldw(k_ + pw), ldo(n_ + po) {
    CK(cudaMalloc(&dx, m * ldx * 2));
    CK(cudaMalloc(&dw, n * ldw * 2));
    CK(cudaMalloc(&dout, m * ldo * 4));
    fill_bf16<<<256, 256>>>(dx, m * ldx, seed);
    fill_bf16<<<256, 256>>>(dw, n * ldw, seed * 7 + 1);
    CK(cudaDeviceSynchronize());
    hx.resize(m * ldx), hw.resize(n * ldw);
    CK(cudaMemcpy(hx.data(), dx, m * ldx * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hw.data(), dw, n * ldw * 2, cudaMemcpyDeviceToHost));
  }
  void upload() {
    CK(cudaMemcpy(dx, hx.data(), m * ldx * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dw, hw.data(), n * ldw * 2, cudaMemcpyHostToDevice));
  }
  // Runs rows [0, mm) (x rows from row0), returns out (mm x ldo) after poisoning.
  std::vector<float> run(int64_t mm, int64_t row0 = 0, int pdl = 0, const char *what = "run") {
    fill_u32<<<256, 256>>>((uint32_t *)dout, m * ldo, POISON);
    int e = run_smallm(mm, n, k, dx + row0 * ldx, ldx, dw, ldw, dout, ldo, 0, pdl);
    if (e != 0) { printf("FAIL %s: launch error %d (%s)\n", what, e, cudaGetErrorName((cudaError_t)e)); g_fail++; return {}; }
    sync_or_die(what);
    std::vector<float> o(mm * ldo);
    CK(cudaMemcpy(o.data(), dout, mm * ldo * 4, cudaMemcpyDeviceToHost));
    return o;
  }
  ~Ops() { cudaFree(dx); cudaFree(dw); cudaFree(dout); }
};

static void report(const char *what, const Check &c) {
  bool ok = c.viol == 0 && c.unwritten == 0 && c.over == 0;
  if (!ok) g_fail++;
  printf("%-44s %s worst=%.3f viol=%ld unwritten=%ld over=%ld\n", what, ok ? "ok  " : "FAIL", c.worst, c.viol,
         c.unwritten, c.over);
}

static bool rows_equal(const std::vector<float> &a, const std::vector<float> &b, int64_t rows, int64_t n,
                       int64_t lda, int64_t ldb, int64_t a0 = 0) {
  for (int64_t i = 0; i < rows; i++)
    if (memcmp(&a[(a0 + i) * lda], &b[i * ldb], n * 4) != 0) return false;
  return true;
}

static void correctness() {
  const int shapes[][2] = {{256, 4096}, {2048, 4096}, {1024, 4096}, {512, 4096}, {384, 7168},
                           {2048, 7168}, {1024, 7168}, {512, 7168}, {256, 7168}};
  for (auto &sh : shapes) {
    int64_t n = sh[0], k = sh[1];
    Ops o(256, n, k, 0, 0, 0, 1000 + n + k);
    auto full = o.run(256, 0, 0, "M=256");
    char buf[128];
    snprintf(buf, sizeof buf, "oracle %lldx%lld M=256", (long long)n, (long long)k);
    report(buf, oracle_check(256, n, k, o.hx, o.ldx, o.hw, o.ldw, full, o.ldo));
    // determinism and PDL launch give the same bits
    auto again = o.run(256, 0, 0, "M=256 again");
    auto pdl = o.run(256, 0, 1, "M=256 pdl");
    bool det = rows_equal(full, again, 256, n, o.ldo, o.ldo) && rows_equal(full, pdl, 256, n, o.ldo, o.ldo);
    // batch invariance: every M in 1..64, samples above, rows equal to the M=256 call
    int bad = 0;
    std::vector<int> ms;
    for (int mm = 1; mm <= 64; mm++) ms.push_back(mm);
    for (int mm : {65, 100, 128, 129, 200, 255}) ms.push_back(mm);
    for (int mm : ms) {
      auto r = o.run(mm, 0, 0, "M prefix");
      if (r.empty() || !rows_equal(full, r, mm, n, o.ldo, o.ldo)) { bad++; if (bad < 4) printf("  mismatch at M=%d\n", mm); }
    }
    // each row alone (M=1 at an offset row)
    for (int row : {1, 63, 64, 200, 255}) {
      auto r = o.run(1, row, 0, "row alone");
      if (r.empty() || !rows_equal(full, r, 1, n, o.ldo, o.ldo, row)) { bad++; printf("  row %d alone differs\n", row); }
    }
    if (!det || bad) g_fail++;
    printf("%-44s %s (deterministic %s, invariant over %zu M + 5 rows: %d bad)\n", "", (!det || bad) ? "FAIL" : "ok  ",
           det ? "yes" : "NO", ms.size(), bad);
  }
  // padded leading dimensions, K tails, tiny and odd shapes
  struct C { int64_t m, n, k, px, pw, po; } cases[] = {
      {13, 384, 7168, 8, 24, 8}, {100, 384, 7168, 8, 24, 8}, {5, 256, 4104, 0, 0, 0}, {3, 48, 8, 0, 8, 8},
      {70, 64, 40, 8, 0, 0},     {256, 1040, 72, 0, 0, 0},  {33, 2048, 4096, 16, 8, 16}, {1, 16, 4096, 0, 0, 0},
      {256, 256, 4096, 8, 8, 8}, {17, 4096, 4096, 0, 0, 0}};
  for (auto &c : cases) {
    Ops o(c.m, c.n, c.k, c.px, c.pw, c.po, 77 + c.m + c.k);
    auto r = o.run(c.m, 0, 0, "case");
    char buf[128];
    snprintf(buf, sizeof buf, "oracle m=%lld n=%lld k=%lld ld+(%lld,%lld,%lld)", (long long)c.m, (long long)c.n,
             (long long)c.k, (long long)c.px, (long long)c.pw, (long long)c.po);
    report(buf, oracle_check(c.m, c.n, c.k, o.hx, o.ldx, o.hw, o.ldw, r, o.ldo));
  }
  // NaN / Inf propagation
  {
    Ops o(9, 256, 4096, 0, 0, 0, 4242);
    o.hx[0 * o.ldx + 1] = 0x7fc0;   // row 0 all NaN
    o.hx[1 * o.ldx + 2] = 0x7f80;   // row 1 +-Inf
    o.hw[2 * o.ldw + 2] = 0;        // Inf * 0 = NaN at (1, 2)
    o.hx[2 * o.ldx + 0] = 0x3f80;
    o.hw[3 * o.ldw + 0] = 0xff80;   // (2, 3) = -Inf
    o.upload();
    auto r = o.run(9, 0, 0, "nan/inf");
    report("oracle NaN/Inf 9x256x4096", oracle_check(9, 256, 4096, o.hx, o.ldx, o.hw, o.ldw, r, o.ldo));
  }
}

// ---- timing ----
struct Pool {
  uint16_t *p = nullptr;
  size_t elems = 0;
  float *out = nullptr;
  size_t out_elems = 0;
};
static Pool g_pool;
static cudaStream_t g_s;
static cublasHandle_t g_h;

// Operand copy c of shape (m, n, k): w, x, out rotate over enough copies for >= 420 MB.
struct Rot {
  int64_t m, n, k;
  size_t per, outper;
  int copies;
  Rot(int64_t m_, int64_t n_, int64_t k_) : m(m_), n(n_), k(k_) {
    per = ((size_t)n * k + (size_t)m * k + 127) & ~(size_t)127;
    copies = (int)std::min<size_t>(200, std::max<size_t>(2, ((size_t)420 << 20) / (per * 2) + 1));
    copies = (int)std::min<size_t>(copies, g_pool.elems / per);
    outper = ((size_t)m * n + 63) & ~(size_t)63;
    copies = (int)std::min<size_t>(copies, g_pool.out_elems / outper);
  }
  const uint16_t *w(int i) const { return g_pool.p + (size_t)(i % copies) * per; }
  uint16_t *x(int i) const { return g_pool.p + (size_t)(i % copies) * per + (size_t)n * k; }
  float *out(int i) const { return g_pool.out + (size_t)(i % copies) * outper; }
};

// Graph of calls of rec(i) on the probe's stream: median microseconds per call (bench-cuda.cuh).
template <class F>
static double time_calls(int calls, F rec) {
  return bench_time_graph(g_s, calls, rec);
}

static void launch_or_die(int e) {
  if (e) { printf("launch error %d (%s)\n", e, cudaGetErrorName((cudaError_t)e)); exit(2); }
}

static double time_smallm(const Rot &r, int pdl, const bf16fp32__smallm_config *cfg = nullptr) {
  return time_calls(200, [&](int i) {
    launch_or_die(run_smallm(r.m, r.n, r.k, r.x(i), r.k, r.w(i), r.k, r.out(i), r.n, g_s, pdl, cfg));
  });
}

static double time_cublas(const Rot &r) {
  return time_calls(200, [&](int i) {
    bench_cublas_gemm(g_h, (int)r.n, (int)r.m, (int)r.k, r.w(i), r.x(i), r.out(i));
  });
}

__global__ void empty_kernel() {}
// The producer of x in the pair measurement; trigger: let a PDL-launched consumer start now.
__global__ void produce(uint16_t *x, const uint16_t *src, size_t n, int trigger) {
  if (trigger) asm volatile("griddepcontrol.launch_dependents;");
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    x[i] = src[i];
}

static const int g_shapes[][2] = {{256, 4096}, {512, 4096}, {1024, 4096}, {2048, 4096}, {256, 7168},
                                  {384, 7168}, {512, 7168}, {1024, 7168}, {2048, 7168}};
static int g_only_n = 0; /* --n: the table and sweeps at this N only */
static int g_kind[3] = {0, 0, 1}; /* --stream-kind subs,stages,groups: --trace-stream's staging */
/* --trace-call T: the traces take call T of a chain and T + 1 */
[[maybe_unused]] static unsigned g_trace_call = 0;

static void timing_setup() {
  g_pool.elems = (size_t)640 << 20;  // 1.25 GB of bf16
  CK(cudaMalloc(&g_pool.p, g_pool.elems * 2));
  fill_bf16<<<1024, 256>>>(g_pool.p, g_pool.elems, 99);
  g_pool.out_elems = (size_t)64 << 20;
  CK(cudaMalloc(&g_pool.out, g_pool.out_elems * 4));
  CK(cudaDeviceSynchronize());
  CK(cudaStreamCreateWithFlags(&g_s, cudaStreamNonBlocking));
  g_h = bench_cublas_on(g_s);
  double e = time_calls(200, [&](int) { empty_kernel<<<1, 32, 0, g_s>>>(); });
  printf("\nempty kernel node in graph replay: %.2f us\n", e);
}

// Variant of the chosen configuration: v = 0 as chosen, 1 the decode kernel with the other
// weight ring (deep where the choice is not, and back), 2 the tiled kernel (smallm-kernel.cu)
// at any M, 3 the decode kernel at M <= 64, 4 the stream kernel at M <= 64 (else unchanged) with
// stages of `subs` sub-chunks, up to `stages` of them, `groups` blocks per tile.
static bf16fp32__smallm_config variant(bf16fp32__smallm_config c, int v, int64_t m = 0,
                                       int subs = 5, int stages = 3, int groups = 1) {
  if (v == 1 || v == 3) c.decode = c.mpad <= BF16FP32__SMALLM_DECODE_MAX_M;
  if (v == 1) c.deep = !c.deep && c.mt <= 2;
  if (v == 2 || v == 3) c.wide = c.wgmma = 0, c.wide_groups = 1;
  if (v == 2) c.decode = 0;
  if (v == 4 && bf16fp32__smallm_use_stream(&c, m, subs, stages, groups, g_smem) == 0) c.stream_wl2 = g_wl2;
  return c;
}

static void timing_table(const std::vector<int> &mlist) {
  printf("\n%5s %5s %4s | %6s | %7s %5s | %7s | %7s | %7s | %7s %7s | %7s %5s | cfg R/S/WK mt dec(+2 deep) smemKB\n", "N", "K",
         "M", "F", "smallm", "/F", "pdl", "decode", "tiled", "dec/ring", "+pdl", "cublas", "cb/sm");
  printf("(then the stream kernel at M <= 16: plain, pdl)\n");
  for (auto &sh : g_shapes) {
    for (int m : mlist) {
      if (g_only_n && sh[0] != g_only_n) continue;
      Rot r(m, sh[0], sh[1]);
      bf16fp32__smallm_config cfg;
      if (bf16fp32__smallm_choose(m, r.n, r.k, g_sms, g_smem, &cfg) != 0) { printf("no config\n"); continue; }
      bf16fp32__smallm_config c1 = variant(cfg, 1), c2 = variant(cfg, 2), c3 = variant(cfg, 3);
      double a = time_smallm(r, 0, &cfg), b = time_smallm(r, 1, &cfg);
      double t3 = c3.decode ? time_smallm(r, 0, &c3) : 0, t2 = time_smallm(r, 0, &c2);
      double t1 = c1.decode ? time_smallm(r, 0, &c1) : 0, c = time_cublas(r);
      double t1p = c1.decode ? time_smallm(r, 1, &c1) : 0;
      bf16fp32__smallm_config c4 = variant(cfg, 4, m);
      double t4 = c4.stream ? time_smallm(r, 0, &c4) : 0, t4p = c4.stream ? time_smallm(r, 1, &c4) : 0;
      double F = bf16fp32__floor_us(m, r.n, r.k);
      printf("%5lld %5lld %4d | %6.2f | %7.2f %5.2f | %7.2f | %7.2f | %7.2f | %7.2f %7.2f | %7.2f %5.2f | %d/%d/%d %d %d %zu | %7.2f %7.2f\n",
             (long long)r.n, (long long)r.k, m, F, a, a / F, b, t3, t2, t1, t1p, c, c / a, cfg.split.rows,
             cfg.split.ksplit, cfg.split.kwarps, cfg.mt, cfg.decode + 2 * cfg.deep,
             (cfg.decode ? cfg.decode_smem : cfg.smem_bytes) / 1024, t4, t4p);
      fflush(stdout);
    }
  }
}

// The stream kernel's stage size and count (--stream-sweep): per shape and M <= 64, the chosen
// kernel, then each (sub-chunks, stages, groups) of the stream kernel, plain and under PDL (us per
// call; groups = 2 only where the split allows it).
static void timing_stream_sweep(const std::vector<int> &mlist) {
  static const int kinds[][3] = {{1, 3, 1}, {1, 5, 1}, {1, 8, 1}, {3, 2, 1}, {3, 3, 1}, {3, 6, 1}, {3, 8, 1},
                                 {4, 2, 1}, {4, 4, 1}, {5, 2, 1}, {5, 3, 1}, {5, 4, 1},
                                 {5, 5, 1}, {7, 2, 1}, {7, 3, 1}, {1, 4, 2}, {1, 6, 2},
                                 {3, 2, 2}, {3, 3, 2}, {5, 2, 2}, {5, 3, 2},
                                 {7, 2, 2}, {7, 3, 2}};
  printf("\nstream kernel stages (us per call, plain / pdl): N K M | chosen |");
  for (auto &kd : kinds) printf(" %d x %d g%d |", kd[0], kd[1], kd[2]);
  printf(" (sub-chunks x stages, groups; the stages that fit)\n");
  for (auto &sh : g_shapes) {
    for (int m : mlist) {
      if (m > 64 || (g_only_n && sh[0] != g_only_n)) continue;
      Rot r(m, sh[0], sh[1]);
      bf16fp32__smallm_config cfg;
      if (bf16fp32__smallm_choose(m, r.n, r.k, g_sms, g_smem, &cfg) != 0) continue;
      printf("%5lld %5lld %3d | %6.2f %6.2f |", (long long)r.n, (long long)r.k, m,
             time_smallm(r, 0), time_smallm(r, 1)); /* as the library chooses, per launch kind */
      for (auto &kd : kinds) {
        bf16fp32__smallm_config c = variant(cfg, 4, m, kd[0], kd[1], kd[2]);
        if (!c.stream) {
          if (kd[2] == 1) printf("   -      -   |");
          continue;
        }
        printf(" %6.2f %6.2f %d |", time_smallm(r, 0, &c), time_smallm(r, 1, &c), c.stream_stages);
      }
      printf("\n");
      fflush(stdout);
    }
  }
}

// f(r) for each shape of g_shapes (--n: that N only) and each M of mlist, r the cell's operands.
template <class F>
static void for_cells(const std::vector<int> &mlist, F f) {
  for (auto &sh : g_shapes)
    for (int m : mlist) {
      if (g_only_n && sh[0] != g_only_n) continue;
      Rot r(m, sh[0], sh[1]);
      f(r);
    }
}

// The library's choice alone (--chosen), plain and under PDL, per shape and M: two builds of the
// probe compared cell by cell.
static void timing_chosen(const std::vector<int> &mlist) {
  printf("\nchosen kernel (us per call, plain / pdl): N K M\n");
  for_cells(mlist, [&](Rot &r) {
    const int m = (int)r.m;
    printf("%5lld %5lld %3d | %6.2f %6.2f\n", (long long)r.n, (long long)r.k, m, time_smallm(r, 0),
           time_smallm(r, 1));
    fflush(stdout);
  });
}

// ncu targets: a few single calls (the decode and tiled kernels, then the stream kernel where the
// table picks it).
static void ncu_calls() {
  const int cases[][3] = {{256, 4096, 1}, {2048, 7168, 1}, {2048, 7168, 8}, {2048, 7168, 32},
                          {2048, 7168, 64}};
  for (auto &cs : cases) {
    Rot r(cs[2], cs[0], cs[1]);
    bf16fp32__smallm_config cfg;
    if (bf16fp32__smallm_choose(cs[2], r.n, r.k, g_sms, g_smem, &cfg) != 0) continue;
    for (int v : {3, 2, 5}) { /* 5: the stream kernel where the table picks it (plain launch) */
      bf16fp32__smallm_config c = variant(cfg, v == 5 ? 0 : v);
      if (v == 5) bf16fp32__smallm_prefer_stream(&c, cs[2], r.n, r.k, g_sms, 0, g_smem);
      if (v == 5 && !c.stream) continue;
      launch_or_die(run_smallm(r.m, r.n, r.k, r.x(v), r.k, r.w(v), r.k, r.out(v), r.n, g_s, 0, &c));
      CK(cudaStreamSynchronize(g_s));
    }
  }
}

// ncu targets for the wide kernel: single calls at a given block shape.
static void ncu_wide_calls() {
  /* N, K, M, rows, tokens, tokens per warpgroup (0: the wide kernel) */
  const int cases[][6] = {{256, 4096, 256, 64, 64, 0}, {256, 4096, 256, 128, 64, 64},
                          {256, 4096, 64, 64, 64, 0}, {512, 7168, 256, 128, 64, 64}};
  for (auto &cs : cases) {
    Rot r(cs[2], cs[0], cs[1]);
    bf16fp32__smallm_config c;
    if (bf16fp32__smallm_choose(cs[2], r.n, r.k, g_sms, g_smem, &c) != 0) continue;
    if (cs[5] ? bf16fp32__smallm_use_wgmma(&c, r.n, cs[3], cs[4], cs[5], g_smem) != 0
              : bf16fp32__smallm_use_wide(&c, r.n, cs[3], cs[4], g_smem) != 0)
      continue;
    launch_or_die(run_smallm(r.m, r.n, r.k, r.x(1), r.k, r.w(1), r.k, r.out(1), r.n, g_s, 0, &c));
    CK(cudaStreamSynchronize(g_s));
  }
}

// One poisoned call of cfg (nullptr: the library's choice) on copy 0, under PDL where pdl is set:
// its first `rows` rows.
static std::vector<float> output_of(const Rot &r, const bf16fp32__smallm_config *cfg, int64_t rows,
                                    int pdl = 0) {
  const int64_t m = r.m, n = r.n, k = r.k;
  fill_u32<<<256, 256, 0, g_s>>>((uint32_t *)r.out(0), (size_t)m * n, POISON);
  launch_or_die(run_smallm(m, n, k, r.x(0), k, r.w(0), k, r.out(0), n, g_s, pdl, cfg));
  CK(cudaStreamSynchronize(g_s));
  std::vector<float> o((size_t)(rows * n));
  CK(cudaMemcpy(o.data(), r.out(0), o.size() * 4, cudaMemcpyDeviceToHost));
  return o;
}

// cfg's whole output bit for bit equal to ref, another kernel's of the same split (every kernel
// sums alike); counts failures.
static bool same_output(const Rot &r, const bf16fp32__smallm_config &cfg,
                        const std::vector<float> &ref, int pdl = 0) {
  const std::vector<float> o = output_of(r, &cfg, r.m, pdl);
  const bool same = memcmp(o.data(), ref.data(), o.size() * 4) == 0;
  if (!same) g_fail++;
  return same;
}

// One poisoned call of cfg, its first `rows` rows checked against the fp64 oracle (another split
// sums in another order, so only the oracle can judge it); counts failures.
static bool oracle_rows(const Rot &r, int64_t rows, const bf16fp32__smallm_config &cfg,
                        const std::vector<uint16_t> &hx, const std::vector<uint16_t> &hw) {
  const int64_t n = r.n, k = r.k;
  const std::vector<float> o = output_of(r, &cfg, rows);
  const Check c = oracle_check(rows, n, k, hx, k, hw, k, o, n);
  const bool ok = c.viol == 0 && c.unwritten == 0;
  if (!ok) g_fail++;
  return ok;
}

// Other splits: timed (no PDL) and each checked against the fp64 oracle on rows 0..1 (a split
// other than the chosen one sums in another order, so it is compared with the oracle only).
static void timing_sweep() {
  printf("\nsplit sweep (us per call, no PDL; '!' = oracle check failed): N K M | R/S:decode/tiled ...\n");
  for (auto &sh : g_shapes)
    for (int m : {1, 16, 64}) {
      Rot r(m, sh[0], sh[1]);
      const int64_t n = r.n, k = r.k, rows = std::min(2, m);
      std::vector<uint16_t> hw(n * k), hx(rows * k);
      CK(cudaMemcpy(hw.data(), r.w(0), n * k * 2, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(hx.data(), r.x(0), rows * k * 2, cudaMemcpyDeviceToHost));
      printf("%5d %5d %3d |", sh[0], sh[1], m);
      for (int R : {16, 32, 64, 128})
        for (int S : {1, 2, 4, 8}) {
          int64_t blocks = sh[0] / R * S;
          if (sh[0] % R || blocks < 32 || blocks > 528) continue;
          bf16fp32__smallm_split sp{R, S, 128 / R, 0xf};
          bf16fp32__smallm_config cfg;
          if (bf16fp32__smallm_choose_with(m, n, k, &sp, g_smem, &cfg) != 0) continue;
          double t = cfg.decode ? time_smallm(r, 0, &cfg) : 0;
          bf16fp32__smallm_config ct = variant(cfg, 2);
          double tt = time_smallm(r, 0, &ct);
          const bool ok = oracle_rows(r, rows, cfg, hx, hw);
          printf(" %d/%d:%.2f/%.2f%s", R, S, t, tt, ok ? "" : "!");
        }
      printf("\n");
      fflush(stdout);
    }
}

// Other splits with the stream kernel (--split-stream): per shape, M and split (blocks 64-264,
// from 16 at N <= 512, or the --splits list), the best of a few stream stagings (subs x stages /
// groups; under PDL each also with the next call launched at block entry, 'e') and of the share
// kernel's forms (x's rows or registers 'r', weight fragments ahead 'w1'/'w2', two row blocks per
// block 't2'), plain and under PDL, beside the split's decode or tiled kernel; above M = 64 the
// best wide-kernel block instead. Each split's best output is checked against the fp64 oracle on
// rows 0..1.
static void timing_split_stream(const std::vector<int> &mlist) {
  static const int kinds[][3] = {{1, 3, 1}, {3, 2, 1}, {3, 3, 1}, {4, 2, 1}, {5, 2, 1},
                                 {5, 3, 1}, {7, 2, 1}, {7, 3, 1}, {3, 2, 2}, {3, 3, 2},
                                 {5, 2, 2}, {7, 2, 2}};
  static const int tiles[][2] = {{32, 32}, {32, 64}, {64, 32}, {64, 64}};
  printf("\nsplit sweep, stream kernel (us per call; best staging subs x stages; '!' = oracle "
         "check failed): N K M | R/S: kernel plain pdl | stream plain (kind) pdl (kind)\n");
  for_cells(mlist, [&](Rot &r) {
    const int m = (int)r.m;
    const int64_t n = r.n, k = r.k, rows = std::min(2, m);
    std::vector<uint16_t> hw(n * k), hx(rows * k);
    CK(cudaMemcpy(hw.data(), r.w(0), n * k * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hx.data(), r.x(0), rows * k * 2, cudaMemcpyDeviceToHost));
    bf16fp32__smallm_split shipped;
    if (bf16fp32__smallm_choose_split(n, k, g_sms, &shipped) != 0) return;
    printf("%5d %5d %3d | shipped %d/%d: %.2f %.2f\n", (int)r.n, (int)r.k, m, shipped.rows,
           shipped.ksplit, time_smallm(r, 0), time_smallm(r, 1));
    for (int R : {16, 32, 64})
      for (int S : {1, 2, 4, 8}) {
        const int64_t blocks = r.n / R * S;
        if (r.n % R || blocks < (r.n <= 512 ? 16 : 64) || blocks > 264) continue;
        if (!g_splits.empty() &&
            std::find(g_splits.begin(), g_splits.end(), std::make_pair(R, S)) == g_splits.end())
          continue;
        bf16fp32__smallm_split sp{R, S, 128 / R, 0xf};
        bf16fp32__smallm_config cfg;
        if (bf16fp32__smallm_choose_with(m, n, k, &sp, g_smem, &cfg) != 0) continue;
        printf("      %d/%d: %6.2f %6.2f |", R, S, time_smallm(r, 0, &cfg), time_smallm(r, 1, &cfg));
        double best[2] = {1e9, 1e9};
        int bk[2] = {-1, -1};
        const bool wide = m > BF16FP32__SMALLM_DECODE_MAX_M;
        const int nstream = wide ? 0 : (int)(sizeof kinds / sizeof kinds[0]);
        /* candidates: the stream stagings, then (M <= 64) the share forms xreg x wpre x tiles */
        const int nk = wide ? (int)(sizeof tiles / sizeof tiles[0]) : nstream + 12;
        auto kind = [&](int i) {
          bf16fp32__smallm_config c = cfg;
          if (wide) {
            if (bf16fp32__smallm_use_wide(&c, n, tiles[i][0], tiles[i][1], g_smem) != 0) c.wide = 0;
          } else if (i < nstream) {
            c = variant(cfg, 4, m, kinds[i][0], kinds[i][1], kinds[i][2]);
          } else {
            const int j = i - nstream, xreg = j / 6, wpre = j / 2 % 3, tl = 1 + j % 2;
            c.stream = 0;
            if (bf16fp32__smallm_use_share(&c, m, n, k, xreg, wpre, g_smem) != 0 ||
                bf16fp32__smallm_share_tiles(&c, m, tl, g_smem) != 0)
              c.share = 0;
          }
          return c;
        };
        bool early_best = false;
        for (int i = 0; i < nk; i++) {
          bf16fp32__smallm_config c = kind(i);
          if (!c.stream && !c.wide && !c.share) continue;
          for (int pdl = 0; pdl < 2; pdl++) {
            const double t = time_smallm(r, pdl, &c);
            if (t < best[pdl]) {
              best[pdl] = t, bk[pdl] = i;
              if (pdl) early_best = false;
            }
          }
          if (c.stream) { /* under PDL, the next call launched at block entry */
            c.stream_early = 1;
            const double t = time_smallm(r, 1, &c);
            if (t < best[1]) best[1] = t, bk[1] = i, early_best = true;
          }
        }
        if (bk[0] < 0) { printf(" none\n"); continue; }
        bf16fp32__smallm_config cbest = kind(bk[1]);
        cbest.stream_early = early_best && cbest.stream;
        const bool ok = oracle_rows(r, rows, cbest, hx, hw);
        auto show = [&](double t, int i, bool e) {
          if (wide) printf(" %6.2f (%dx%d)", t, tiles[i][0], tiles[i][1]);
          else if (i < nstream) printf(" %6.2f (%dx%d/%d%s)", t, kinds[i][0], kinds[i][1], kinds[i][2], e ? "e" : "");
          else {
            const int j = i - nstream;
            printf(" %6.2f (share%s w%d t%d)", t, j / 6 ? " r" : "", j / 2 % 3, 1 + j % 2);
          }
        };
        show(best[0], bk[0], false);
        show(best[1], bk[1], early_best);
        printf("%s\n", ok ? "" : " !");
        fflush(stdout);
      }
  });
}

// The wide kernel's block shapes (rows x tokens) against the tiled kernel and cuBLAS, each
// compared bit for bit with the tiled kernel over all M rows ('!' = differs).
static void timing_wide() {
  const int blocks[][2] = {{32, 32}, {32, 64}, {64, 32}, {64, 64}, {32, 128}, {64, 128}};
  printf("\nwide kernel (us per call, no PDL): N K M | tiled cublas | rows x tokens:us ...\n");
  for_cells(g_mlist.empty() ? std::vector<int>{64, 128, 256} : g_mlist, [&](Rot &r) {
    const int m = (int)r.m;
    const int64_t n = r.n, k = r.k;
    bf16fp32__smallm_split sp;
    bf16fp32__smallm_config base;
    if (bf16fp32__smallm_choose_split(n, k, g_sms, &sp) != 0 ||
        bf16fp32__smallm_choose_with(m, n, k, &sp, g_smem, &base) != 0)
      return;
    base = variant(base, 2);
    const std::vector<float> ref = output_of(r, &base, m);
    printf("%5d %5d %3d | %6.2f %6.2f |", (int)r.n, (int)r.k, m, time_smallm(r, 0, &base),
           time_cublas(r));
    /* times c and compares its output bit for bit with the tiled kernel's */
    auto timed = [&](const bf16fp32__smallm_config &c) {
      double t = time_smallm(r, 0, &c);
      printf(":%.2f%s", t, same_output(r, c, ref) ? "" : "!");
    };
    for (auto &b : blocks) {
      bf16fp32__smallm_config c = base;
      if (bf16fp32__smallm_use_wide(&c, n, b[0], b[1], g_smem) != 0) continue;
      printf(" %dx%d", b[0], b[1]);
      timed(c);
      /* one K slice: the tile shared by 2 or 4 blocks, each summing its group's chains */
      for (int groups : {2, 4}) {
        bf16fp32__smallm_config cg = c;
        if (bf16fp32__smallm_use_groups(&cg, groups, g_smem) != 0) continue;
        printf(" %dx%d/g%d", b[0], b[1], groups);
        timed(cg);
      }
    }
    /* the wgmma kernel: rows x tokens / tokens per warpgroup */
    const int gblocks[][3] = {{64, 32, 32}, {64, 64, 32}, {64, 64, 64}, {128, 32, 32}, {128, 64, 64}, {64, 128, 64}};
    printf(" |");
    for (auto &b : gblocks) {
      bf16fp32__smallm_config c = base;
      if (bf16fp32__smallm_use_wgmma(&c, n, b[0], b[1], b[2], g_smem) != 0) continue;
      printf(" g%dx%d/%d", b[0], b[1], b[2]);
      timed(c);
    }
    printf("\n");
    fflush(stdout);
  });
}

// The stream kernel in token blocks above M = 64 (--stream-tokens): per shape and M, the chosen
// kernel's time and each staging's (sub-chunks x stages / blocks per tile), plain and PDL; a
// staging whose output is not the chosen kernel's, bit for bit, counts as a failure.
static void timing_stream_tokens(const std::vector<int> &mlist) {
  const int kinds[][3] = {{1, 2, 1}, {1, 3, 1}, {1, 4, 1}, {3, 2, 1}, {3, 3, 1},
                          {1, 3, 2}, {3, 2, 2}, {3, 3, 2}};
  printf("\nstream kernel in token blocks (us per call, plain / pdl): N K M | chosen | subs x stages / "
         "groups: plain pdl ... | best plain, best pdl\n");
  for_cells(mlist, [&](Rot &r) {
    const int m = (int)r.m;
    const int64_t n = r.n, k = r.k;
    const std::vector<float> ref = output_of(r, nullptr, m);
    const double cp = time_smallm(r, 0), cq = time_smallm(r, 1);
    printf("%5lld %5lld %3d | %6.2f %6.2f |", (long long)n, (long long)k, m, cp, cq);
    double bp = 1e9, bq = 1e9;
    for (auto &kd : kinds) {
      bf16fp32__smallm_config c;
      if (bf16fp32__smallm_choose(m, n, k, g_sms, g_smem, &c) != 0 ||
          bf16fp32__smallm_use_stream_tokens(&c, m, n, k, kd[0], kd[1], kd[2], g_smem) != 0)
        continue;
      const bool same = same_output(r, c, ref);
      const double tp = time_smallm(r, 0, &c), tq = time_smallm(r, 1, &c);
      bp = std::min(bp, tp), bq = std::min(bq, tq);
      printf(" %dx%d/%d:%.2f %.2f%s", kd[0], c.stream_stages, kd[2], tp, tq, same ? "" : "!");
    }
    printf(" | %.2f %.2f\n", bp, bq);
    fflush(stdout);
  });
}

// The choice and the variants vs timed under PDL in g_rounds interleaved rounds (a variant only
// where timed says so): the median of each (the choice's first, 0 where not timed), and whether
// each variant's bits under PDL are the choice's.
struct PdlRounds {
  std::vector<double> med;
  std::vector<char> same;
};
static PdlRounds pdl_rounds(const Rot &r, const std::vector<bf16fp32__smallm_config> &vs,
                            const std::vector<char> &timed) {
  PdlRounds out;
  const std::vector<float> ref = output_of(r, nullptr, r.m);
  for (const auto &v : vs) out.same.push_back(same_output(r, v, ref, 1));
  std::vector<std::vector<double>> t(vs.size() + 1);
  for (int round = 0; round < g_rounds; round++) {
    t[0].push_back(time_smallm(r, 1));
    for (size_t v = 0; v < vs.size(); v++)
      if (timed[v]) t[v + 1].push_back(time_smallm(r, 1, &vs[v]));
  }
  for (auto &a : t) {
    std::sort(a.begin(), a.end());
    out.med.push_back(a.empty() ? 0.0 : a[a.size() / 2]);
  }
  return out;
}

// --late-l2: under PDL, the share kernel with its last L warp groups' weight columns copied after
// the wait (L = 1 to all of them), each without and with those columns requested into L2 before
// the wait, x's rows and (M <= 16) x in registers, against the choice; --rounds interleaved
// rounds (3), the median of each (us per call); "!" marks a variant whose bits differ from the
// choice's.
static void timing_late_l2(const std::vector<int> &mlist) {
  printf("\nshare kernel, late columns without / with L2 requests (us per call, pdl, median of the "
         "rounds): N K M | chosen | x L:plain l2 ...\n");
  for_cells(mlist, [&](Rot &r) {
    const int64_t n = r.n, k = r.k;
    const int m = (int)r.m;
    std::vector<bf16fp32__smallm_config> vs;
    std::vector<const char *> xs;
    std::vector<int> ls;
    for (int xreg = 0; xreg < 2; xreg++) {
      bf16fp32__smallm_config c;
      if (bf16fp32__smallm_choose(m, n, k, g_sms, g_smem, &c) != 0 ||
          bf16fp32__smallm_use_share(&c, m, n, k, xreg, 0, g_smem) != 0)
        continue;
      const int wk = c.split.kwarps;
      for (int l = 1; l <= wk; l++) {
        for (int l2 = 0; l2 < 2; l2++) {
          bf16fp32__smallm_config t = c;
          t.share_late = l; /* all wk groups late: past the library's setter, for this sweep */
          t.share_late_l2 = l2;
          vs.push_back(t);
          xs.push_back(xreg ? "xr" : "xs");
          ls.push_back(l);
        }
      }
    }
    const PdlRounds pr = pdl_rounds(r, vs, std::vector<char>(vs.size(), 1));
    const auto &med = pr.med;
    const auto &same = pr.same;
    printf("%5lld %5lld %3d | %6.2f |", (long long)n, (long long)k, m, med[0]);
    for (size_t v = 0; v < vs.size(); v += 2)
      printf(" %s %d:%.2f %.2f%s%s", xs[v], ls[v], med[v + 1], med[v + 2], same[v] ? "" : "!",
             same[v + 1] ? "" : "!");
    printf("\n");
    fflush(stdout);
  });
}

// --share-tiles: under PDL, the share kernel with one and with two row blocks per block
// (bf16fp32__smallm_share_tiles), x's rows and (M <= 16) x in registers, with no late group and
// with L = 2 and 4 late groups requested into L2, against the choice; --rounds interleaved rounds
// (3), the median of each (us per call); "!" marks a variant whose bits differ from the choice's,
// "-" one whose rows do not fit.
static void timing_share_tiles(const std::vector<int> &mlist) {
  printf("\nshare kernel, one / two row blocks per block (us per call, pdl, median of the rounds): "
         "N K M | chosen | x L:one two ...\n");
  for_cells(mlist, [&](Rot &r) {
    const int64_t n = r.n, k = r.k;
    const int m = (int)r.m;
    std::vector<bf16fp32__smallm_config> vs; /* pairs: one, two row blocks */
    std::vector<char> fits;
    std::vector<const char *> xs;
    std::vector<int> ls;
    for (int xreg = 0; xreg < 2; xreg++)
      for (int late : {0, 2, 4}) {
        bf16fp32__smallm_config c;
        if (bf16fp32__smallm_choose(m, n, k, g_sms, g_smem, &c) != 0 ||
            bf16fp32__smallm_use_share(&c, m, n, k, xreg, 0, g_smem) != 0 ||
            bf16fp32__smallm_share_late(&c, late, late > 0) != 0)
          continue;
        bf16fp32__smallm_config two = c;
        fits.push_back(bf16fp32__smallm_share_tiles(&two, m, 2, g_smem) == 0);
        vs.push_back(c);
        vs.push_back(fits.back() ? two : c);
        xs.push_back(xreg ? "xr" : "xs");
        ls.push_back(late);
      }
    std::vector<char> timed;
    for (size_t v = 0; v < vs.size(); v++) timed.push_back(v % 2 == 0 || fits[v / 2]);
    const PdlRounds pr = pdl_rounds(r, vs, timed);
    printf("%5lld %5lld %3d | %6.2f |", (long long)n, (long long)k, m, pr.med[0]);
    for (size_t v = 0; v < vs.size(); v += 2) {
      printf(" %s %d:%.2f%s", xs[v / 2], ls[v / 2], pr.med[v + 1], pr.same[v] ? "" : "!");
      if (fits[v / 2]) printf(" %.2f%s", pr.med[v + 2], pr.same[v + 1] ? "" : "!");
      else printf(" -");
    }
    printf("\n");
    fflush(stdout);
  });
}

// --share-alone: under PDL, the share kernel (one and two row blocks, x's rows and x in registers,
// no late group) as chosen and with its shared memory padded past half an SM's, so that no two of
// its blocks (this call's or the next's) share an SM, against the choice; --rounds interleaved
// rounds (3), medians (us per call); "!" marks bits that differ from the choice's, "-" a variant
// that does not fit.
static void timing_share_alone(const std::vector<int> &mlist) {
  const size_t alone = 116 * 1024; /* two blocks of this do not fit one SM's 228 KB */
  printf("\nshare kernel alone on its SM (us per call, pdl, median of the rounds): N K M | chosen | "
         "x tiles:as-is alone ...\n");
  for_cells(mlist, [&](Rot &r) {
    const int64_t n = r.n, k = r.k;
    const int m = (int)r.m;
    std::vector<bf16fp32__smallm_config> vs;
    std::vector<char> fits;
    std::vector<const char *> xs;
    std::vector<int> ts;
    for (int xreg = 0; xreg < 2; xreg++)
      for (int tiles : {1, 2}) {
        bf16fp32__smallm_config c;
        const bool ok = bf16fp32__smallm_choose(m, n, k, g_sms, g_smem, &c) == 0 &&
                        bf16fp32__smallm_use_share(&c, m, n, k, xreg, 0, g_smem) == 0 &&
                        bf16fp32__smallm_share_tiles(&c, m, tiles, g_smem) == 0;
        bf16fp32__smallm_config a = c;
        a.share_smem = std::max(a.share_smem, alone);
        vs.push_back(c), vs.push_back(a);
        fits.push_back(ok), fits.push_back(ok);
        xs.push_back(xreg ? "xr" : "xs"), ts.push_back(tiles);
      }
    const PdlRounds pr = pdl_rounds(r, vs, fits);
    printf("%5lld %5lld %3d | %6.2f |", (long long)n, (long long)k, m, pr.med[0]);
    for (size_t v = 0; v < vs.size(); v += 2) {
      printf(" %s %d:", xs[v / 2], ts[v / 2]);
      if (!fits[v]) { printf("-"); continue; }
      printf("%.2f%s %.2f%s", pr.med[v + 1], pr.same[v] ? "" : "!", pr.med[v + 2],
             pr.same[v + 1] ? "" : "!");
    }
    printf("\n");
    fflush(stdout);
  });
}

#ifdef BF16FP32_SMALLM_DELAY
cudaError_t bf16fp32__smallm_set_delay(const long long cycles[3]); /* smallm-share.cu */
// --delay (build with -DBF16FP32_SMALLM_DELAY): the share kernel with a spin of d ns (at
// 1.98 GHz) at one point (src/backends/smallm/smallm-trace.cuh): 0 its entry, before the
// weights' copies; 1 right after griddepcontrol.wait and the next call's trigger (the span after
// the wait grows); 2 after its last store (its exit moves); at the cells that miss their PDL
// targets by 0.2-0.7 us, plain and under PDL, --rounds interleaved rounds, medians (us per call).
// Where a PDL chain's period grows by less than d, the path through that point has that much
// slack; where it grows by d, the point is on the period's path.
static void timing_delay() {
  static const int cells[][3] = {{256, 4096, 1}, {512, 4096, 1}, {256, 7168, 1},
                                 {384, 7168, 1}, {384, 7168, 4}, {1024, 4096, 2}};
  static const int ns[] = {0, 100, 200, 400, 800};
  const int nd = (int)(sizeof ns / sizeof ns[0]);
  printf("\nshare kernel with a spin (us per call, plain / pdl, median of %d rounds): N K M point "
         "share(plain,pdl) | delay ns: plain pdl ...\n", g_rounds);
  for (auto &cl : cells) {
    Rot r(cl[2], cl[0], cl[1]);
    int share[2] = {0, 0};
    for (int pdl = 0; pdl < 2; pdl++) {
      bf16fp32__smallm_config c;
      if (bf16fp32__smallm_choose_for(r.m, r.n, r.k, g_sms, pdl, g_smem, &c) != 0) continue;
      share[pdl] = c.share;
    }
    for (int p = 0; p < 3; p++) {
      std::vector<double> t[2][5];
      for (int round = 0; round < g_rounds; round++)
        for (int d = 0; d < nd; d++) {
          long long v[3] = {0, 0, 0};
          v[p] = (long long)(ns[d] * 1.98);
          CK(bf16fp32__smallm_set_delay(v));
          for (int pdl = 0; pdl < 2; pdl++) t[pdl][d].push_back(time_smallm(r, pdl));
        }
      printf("%5lld %5lld %3lld %d %d,%d |", (long long)r.n, (long long)r.k, (long long)r.m, p,
             share[0], share[1]);
      for (int d = 0; d < nd; d++) {
        double med[2];
        for (int pdl = 0; pdl < 2; pdl++) {
          std::sort(t[pdl][d].begin(), t[pdl][d].end());
          med[pdl] = t[pdl][d][t[pdl][d].size() / 2];
        }
        printf(" %d: %.2f %.2f |", ns[d], med[0], med[1]);
      }
      printf("\n");
      fflush(stdout);
    }
  }
  const long long none[3] = {0, 0, 0};
  CK(bf16fp32__smallm_set_delay(none));
}
#endif

// A producer kernel writing x, then the GEMM: plain, PDL, PDL with the producer triggering early.
static void timing_pairs() {
  printf("\nproducer->gemm pairs (us per pair): N K M | producer alone | plain | pdl | pdl+trigger\n");
  for (int si : {0, 8})
    for (int m : {1, 16, 64}) {
      Rot r(m, g_shapes[si][0], g_shapes[si][1]);
      const uint16_t *src = g_pool.p + (size_t)r.copies * r.per;  // beyond the copies in use
      size_t nx = (size_t)m * r.k;
      double prod = time_calls(200, [&](int i) { produce<<<16, 256, 0, g_s>>>(r.x(i), src, nx, 0); });
      double t[3];
      for (int v = 0; v < 3; v++)
        t[v] = time_calls(200, [&](int i) {
          produce<<<16, 256, 0, g_s>>>(r.x(i), src, nx, v == 2);
          launch_or_die(run_smallm(r.m, r.n, r.k, r.x(i), r.k, r.w(i), r.k, r.out(i), r.n, g_s, v >= 1));
        });
      printf("%5lld %5lld %3d | %6.2f | %6.2f | %6.2f | %6.2f\n", (long long)r.n, (long long)r.k, m, prod, t[0],
             t[1], t[2]);
      fflush(stdout);
    }
}

// ---- read floors: how fast a grid can read the weight bytes, by register loads or bulk copies ----

// Reads exactly the weight bytes a smallm block reads (rows n0.., its K slice), contiguous
// 16-byte loads, L per thread in flight, and keeps nothing: the floor of "this grid reads this".
template <int L>
__global__ void read_slice(const uint16_t *w, int64_t ldw, int k, int rows, int ksplit, unsigned *sink) {
  int64_t kb, ke;
  bf16fp32__smallm_slice(k, ksplit, blockIdx.x, &kb, &ke);
  const int per_row = (int)((ke - kb) / 8), units = per_row * rows; // 16-byte units
  const uint16_t *w0 = w + (int64_t)blockIdx.y * rows * ldw + kb;
  unsigned acc = 0;
  for (int i0 = threadIdx.x; i0 < units; i0 += blockDim.x * L) {
    uint4 v[L];
#pragma unroll
    for (int j = 0; j < L; j++) {
      const int i = i0 + j * blockDim.x;
      v[j] = make_uint4(0, 0, 0, 0);
      if (i < units) {
        const int r = i / per_row, u = i - r * per_row;
        asm volatile("ld.global.L1::no_allocate.L2::128B.v4.u32 {%0,%1,%2,%3}, [%4];"
                     : "=r"(v[j].x), "=r"(v[j].y), "=r"(v[j].z), "=r"(v[j].w) : "l"(w0 + r * ldw + 8 * u));
      }
    }
#pragma unroll
    for (int j = 0; j < L; j++) acc ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
  }
  if (acc == 0x12345679u) sink[blockIdx.y] = acc;
}

static double time_read(const Rot &r, int rows, int ksplit, bool cluster) {
  static unsigned *sink = nullptr;
  if (!sink) CK(cudaMalloc(&sink, 1 << 20));
  return time_calls(200, [&](int i) {
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1];
    cfg.gridDim = dim3(ksplit, (unsigned)(r.n / rows), 1);
    cfg.blockDim = dim3(256, 1, 1);
    cfg.stream = g_s;
    if (cluster) {
      at[0].id = cudaLaunchAttributeClusterDimension;
      at[0].val.clusterDim.x = ksplit, at[0].val.clusterDim.y = 1, at[0].val.clusterDim.z = 1;
      cfg.attrs = at, cfg.numAttrs = 1;
    }
    launch_or_die((int)cudaLaunchKernelEx(&cfg, read_slice<8>, r.w(i), (int64_t)r.k, (int)r.k, rows, ksplit, sink));
  });
}

// A grid-stride read of the whole matrix at full occupancy (MEASURING.md's plain read).
__global__ void read_all(const uint4 *w, size_t n16, unsigned *sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n16; i += (size_t)gridDim.x * blockDim.x) {
    uint4 v;
    asm volatile("ld.global.L1::no_allocate.L2::128B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(w + i));
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345679u) sink[0] = acc;
}

static double time_read_all(const Rot &r) {
  static unsigned *sink = nullptr;
  if (!sink) CK(cudaMalloc(&sink, 1 << 20));
  return time_calls(200, [&](int i) {
    read_all<<<g_sms * 8, 256, 0, g_s>>>((const uint4 *)r.w(i), (size_t)r.n * r.k / 8, sink);
  });
}

// Loads only, by bulk copies: block (rank, y) copies its R rows of the K slice into shared memory
// (one cp.async.bulk per row, lane r issues row r, one mbarrier), waits, and folds a word per row.
__global__ void read_bulk(const uint16_t *w, int64_t ldw, int k, int rows, int ksplit, unsigned *sink) {
  extern __shared__ __align__(128) unsigned char sm[];
  uint64_t *bar = reinterpret_cast<uint64_t *>(sm);
  unsigned char *buf = sm + 128;
  int64_t kb, ke;
  bf16fp32__smallm_slice(k, ksplit, blockIdx.x, &kb, &ke);
  const unsigned bytes = (unsigned)((ke - kb) * 2), pitch = bytes + 16;
  const uint32_t bar_s = (uint32_t)__cvta_generic_to_shared(bar);
  if (threadIdx.x == 0) {
    bf16fp32__bar_init(bar_s);
    bf16fp32__bar_init_fence();
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    if (threadIdx.x == 0)
      bf16fp32__bar_expect(bar_s, static_cast<int>(bytes * rows));
    __syncwarp();
    for (int r = threadIdx.x; r < rows; r += 32) {
      const uint16_t *src = w + ((int64_t)blockIdx.y * rows + r) * ldw + kb;
      uint32_t dst = (uint32_t)__cvta_generic_to_shared(buf + r * pitch);
      bf16fp32__bulk_copy(dst, src, static_cast<int>(bytes), bar_s);
    }
  }
  bf16fp32__bar_wait(bar_s, 0);
  unsigned acc = 0;
  for (int r = threadIdx.x; r < rows; r += blockDim.x) acc ^= *reinterpret_cast<const unsigned *>(buf + r * pitch + 4 * (r & 7));
  if (acc == 0x12345679u) sink[blockIdx.y] = acc;
}

static double time_read_bulk(const Rot &r, int rows, int ksplit, int threads) {
  static unsigned *sink = nullptr;
  if (!sink) {
    CK(cudaMalloc(&sink, 1 << 20));
    CK(cudaFuncSetAttribute(read_bulk, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)g_smem));
  }
  int64_t kb, ke;
  bf16fp32__smallm_slice(r.k, ksplit, 0, &kb, &ke);
  size_t smem = 128 + (size_t)rows * ((ke - kb) * 2 + 16);
  if (smem > g_smem) return -1;
  return time_calls(200, [&](int i) {
    read_bulk<<<dim3(ksplit, (unsigned)(r.n / rows)), threads, smem, g_s>>>(r.w(i), (int64_t)r.k, (int)r.k, rows,
                                                                            ksplit, sink);
  });
}

// The same with more threads per block (4 loads each).
static double time_read_t(const Rot &r, int rows, int ksplit, int threads) {
  static unsigned *sink = nullptr;
  if (!sink) CK(cudaMalloc(&sink, 1 << 20));
  return time_calls(200, [&](int i) {
    read_slice<4><<<dim3(ksplit, (unsigned)(r.n / rows)), threads, 0, g_s>>>(r.w(i), (int64_t)r.k, (int)r.k, rows,
                                                                             ksplit, sink);
  });
}

// Loads only, in the decode kernel's fragment pattern: warp (wk, wn) of WK = 128 / R groups,
// lane (g, t) reads V adjacent 16-byte loads at k = 32 V (j0 + q) + 8 V t of rows g and g + 8 of
// its 16-row tile, [j0, j0 + nq) its group's range, 16 loads in flight per lane. V = 1 is the
// kernels' pattern (64 bytes of a row per instruction); V = 2 and 4 give each lane 32 or 64
// contiguous bytes, which would be another k permutation (another summation order): timing
// only. halves = 2: 16 warps, each reading one of the two rows.
// Where a fragment-read warp of 8 per block (warp w of a 512-thread block is warp w % 8) reads:
// lane (g, t), its 16-row tile wn, block x's K slice [kb, ke) and its group's sub-chunks [j0, j1).
struct FragPlace {
  int g, t, wn, j0, j1;
  int64_t kb, ke;
};
__device__ FragPlace frag_place(int k, int rows, int ksplit) {
  FragPlace p;
  const int lane = threadIdx.x & 31, warp = (threadIdx.x >> 5) % 8, wk_n = 128 / rows;
  p.g = lane >> 2, p.t = lane & 3, p.wn = warp / wk_n;
  bf16fp32__smallm_slice(k, ksplit, blockIdx.x, &p.kb, &p.ke);
  bf16fp32__smallm_chain((int)((p.ke - p.kb + 31) >> 5), warp % wk_n, wk_n, &p.j0, &p.j1);
  return p;
}

template <int V>
__global__ void read_frag(const uint16_t *w, int64_t ldw, int k, int rows, int ksplit, int halves, unsigned *sink) {
  BF16FP32__SMALLM_STAMP(0);
  const FragPlace p = frag_place(k, rows, ksplit);
  const int t = p.t, half = threadIdx.x / 256;
  const int nv = (p.j1 - p.j0 + V - 1) / V; /* groups of V sub-chunks */
  const uint16_t *r0 =
      w + ((int64_t)blockIdx.y * rows + 16 * p.wn + p.g + 8 * half) * ldw + p.kb + 32 * p.j0 + 8 * V * t;
  const int64_t r8 = 8 * ldw, kend = p.ke - p.kb - 32 * p.j0;
  unsigned acc = 0;
  for (int q0 = 0; q0 < nv; q0 += 8 / V) {
    uint4 v[8 / V][2][V];
#pragma unroll
    for (int i = 0; i < 8 / V; i++)
#pragma unroll
      for (int h = 0; h < 2; h++)
#pragma unroll
        for (int u = 0; u < V; u++) {
          v[i][h][u] = make_uint4(0, 0, 0, 0);
          const int64_t kk = (int64_t)(q0 + i) * 32 * V + 8 * V * t + 8 * u;
          if (q0 + i < nv && (h == 0 || halves == 1) && kk < kend)
            asm volatile("ld.global.nc.L1::no_allocate.L2::128B.v4.u32 {%0,%1,%2,%3}, [%4];"
                         : "=r"(v[i][h][u].x), "=r"(v[i][h][u].y), "=r"(v[i][h][u].z), "=r"(v[i][h][u].w)
                         : "l"(r0 + h * r8 + (int64_t)(q0 + i) * 32 * V + 8 * u));
        }
    /* Every word of every load: ptxas narrows a load whose words go unused (until session 72
     * this used two of each load's four, and the loads ran as 4-byte ones of half the bytes). */
#pragma unroll
    for (int i = 0; i < 8 / V; i++)
#pragma unroll
      for (int h = 0; h < 2; h++)
#pragma unroll
        for (int u = 0; u < V; u++) acc ^= v[i][h][u].x ^ v[i][h][u].y ^ v[i][h][u].z ^ v[i][h][u].w;
  }
  BF16FP32__SMALLM_STAMP(5);
  if (acc == 0x12345679u) sink[blockIdx.y] = acc;
}

// The natural sets' pattern (MMA 1 of a sub-chunk adds k = 0-15, MMA 2 k = 16-31; what ldmatrix,
// wgmma and tensor-map copies move): lane (g, t) reads 8 bytes at k = 32 q + 4 t and 8 at
// 32 q + 16 + 4 t of rows g and g + 8, the same 8 sub-chunks in flight per lane as V = 1. Each
// instruction takes one whole 32-byte sector of each of its 8 rows (V = 1: two), so the sectors
// are the same and the instructions twice as many. Timing only.
__global__ void read_frag_natural(const uint16_t *w, int64_t ldw, int k, int rows, int ksplit, unsigned *sink) {
  const FragPlace p = frag_place(k, rows, ksplit);
  const int t = p.t, nq = p.j1 - p.j0;
  const uint16_t *r0 = w + ((int64_t)blockIdx.y * rows + 16 * p.wn + p.g) * ldw + p.kb + 32 * p.j0 + 4 * t;
  const int64_t r8 = 8 * ldw, kend = p.ke - p.kb - 32 * p.j0;
  unsigned acc = 0;
  for (int q0 = 0; q0 < nq; q0 += 8) {
    uint2 v[8][2][2];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
      for (int h = 0; h < 2; h++)
#pragma unroll
        for (int u = 0; u < 2; u++) {
          v[i][h][u] = make_uint2(0, 0);
          const int64_t kk = (int64_t)(q0 + i) * 32 + 16 * u + 4 * t;
          if (q0 + i < nq && kk < kend)
            asm volatile("ld.global.nc.L1::no_allocate.L2::128B.v2.u32 {%0,%1}, [%2];"
                         : "=r"(v[i][h][u].x), "=r"(v[i][h][u].y)
                         : "l"(r0 + h * r8 + (int64_t)(q0 + i) * 32 + 16 * u));
        }
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
      for (int h = 0; h < 2; h++) acc ^= v[i][h][0].x ^ v[i][h][0].y ^ v[i][h][1].x ^ v[i][h][1].y;
  }
  if (acc == 0x12345679u) sink[blockIdx.y] = acc;
}

static double time_read_frag_natural(const Rot &r, int rows, int ksplit) {
  static unsigned *sink = nullptr;
  if (!sink) CK(cudaMalloc(&sink, 1 << 20));
  return time_calls(200, [&](int i) {
    read_frag_natural<<<dim3(ksplit, (unsigned)(r.n / rows)), 256, 0, g_s>>>(r.w(i), (int64_t)r.k, (int)r.k, rows,
                                                                            ksplit, sink);
  });
}

template <int V = 1>
static double time_read_frag(const Rot &r, int rows, int ksplit, int halves) {
  static unsigned *sink = nullptr;
  if (!sink) CK(cudaMalloc(&sink, 1 << 20));
  return time_calls(200, [&](int i) {
    read_frag<V><<<dim3(ksplit, (unsigned)(r.n / rows)), 256 * halves, 0, g_s>>>(r.w(i), (int64_t)r.k, (int)r.k,
                                                                                rows, ksplit, halves, sink);
  });
}

// widths: the fragment pattern with 16, 32 and 64 contiguous bytes per lane and row instead.
static void exp_frag_reads(bool widths) {
  if (widths)
    printf("\nfragment-pattern read floors by bytes per lane and row (us per call, loads only, chosen split): "
           "N K R/S | plain read | 16 B (the kernels) | 32 B | 64 B | 2 x 8 B (natural sets)\n");
  else
    printf("\nfragment-pattern read floors (us per call, loads only) at the chosen split: N K R/S | contiguous 256 "
           "thr, 512 thr | fragment pattern 256 thr (2 rows per lane), 512 thr (1 row per lane)\n");
  for (auto &sh : g_shapes) {
    Rot r(1, sh[0], sh[1]);
    bf16fp32__smallm_config cfg;
    if (bf16fp32__smallm_choose(1, r.n, r.k, g_sms, g_smem, &cfg) != 0) continue;
    const int R = cfg.split.rows, S = cfg.split.ksplit;
    if (widths) {
      printf("%5lld %5lld %d/%d | %.2f | %.2f %.2f %.2f %.2f | again %.2f %.2f %.2f %.2f\n", (long long)r.n,
             (long long)r.k, R, S, time_read_all(r), time_read_frag<1>(r, R, S, 1), time_read_frag<2>(r, R, S, 1),
             time_read_frag<4>(r, R, S, 1), time_read_frag_natural(r, R, S), time_read_frag<1>(r, R, S, 1),
             time_read_frag<2>(r, R, S, 1), time_read_frag<4>(r, R, S, 1), time_read_frag_natural(r, R, S));
      fflush(stdout);
      continue;
    }
    printf("%5lld %5lld %d/%d | %.2f %.2f | %.2f %.2f |", (long long)r.n, (long long)r.k, R, S, time_read(r, R, S, false),
           time_read_t(r, R, S, 512), time_read_frag(r, R, S, 1), time_read_frag(r, R, S, 2));
    /* the fragment pattern over other splits (R/S:us; S = 16 as a grid only: no cluster) */
    for (int R2 : {16, 32, 64})
      for (int S2 : {1, 2, 4, 8, 16}) {
        const int64_t blocks = r.n / R2 * S2;
        if (r.n % R2 || blocks < 32 || blocks > 528) continue;
        printf(" %d/%d:%.2f", R2, S2, time_read_frag(r, R2, S2, 1));
      }
    printf("\n");
    fflush(stdout);
  }
}

static void exp_reads() {
  printf("\nread floors (us per call, loads only, graph of 200, cold): R/S grid -> ldg256 ldg256+cluster(S) "
         "ldg512 ldg1024 bulk128\n");
  for (auto &sh : g_shapes) {
    Rot r(1, sh[0], sh[1]);
    printf("%5lld %5lld rd-all %.2f |", (long long)r.n, (long long)r.k, time_read_all(r));
    for (int R : {16, 32, 64})
      for (int S : {1, 2, 4, 8}) {
        int64_t blocks = r.n / R * S;
        if (r.n % R || blocks < 64 || blocks > 1100) continue;
        printf(" %d/%d:%.2f/%.2f/%.2f/%.2f/%.2f", R, S, time_read(r, R, S, false),
               S > 1 ? time_read(r, R, S, true) : 0.0, time_read_t(r, R, S, 512), time_read_t(r, R, S, 1024),
               time_read_bulk(r, R, S, 128));
      }
    printf("\n");
    fflush(stdout);
  }
}

#include "smallm-probe-fold.cuh"
#include "smallm-probe-trace.cuh"

int main(int argc, char **argv) {
  int dev = 0;
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, dev));
  int optin = 0;
  CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  g_sms = p.multiProcessorCount;
  g_smem = (size_t)optin;
#ifdef BF16FP32_SMALLM_TRACE
  g_smem -= BF16FP32__SMALLM_TRACE_SMEM; /* the stamps' word after each launch's own room */
#endif
  printf("device %s, %d SMs, cc %d.%d, smem optin %d, L2 %d MB\n", p.name, g_sms, p.major, p.minor, optin,
         p.l2CacheSize >> 20);
  /* the kernels' limit stays the device's: each launch adds the stamps' room */
  int e = bf16fp32__smallm_load(g_smem + BF16FP32__SMALLM_TRACE_SMEM);
  if (e) { printf("load failed %d\n", e); return 2; }
  bool do_check = true, do_time = true, do_ncu = false, do_sweep = true, do_pairs = true, do_wide = false, do_table = true;
  bool do_stream_sweep = false, do_chosen = false, do_split_stream = false, do_stream_tokens = false;
  bool do_late_l2 = false, do_share_tiles = false, do_share_alone = false, do_fold = false;
  [[maybe_unused]] bool do_delay = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--no-check")) do_check = false;
    if (!strcmp(argv[i], "--no-time")) do_time = false;
    if (!strcmp(argv[i], "--no-sweep")) do_sweep = false;
    if (!strcmp(argv[i], "--no-pairs")) do_pairs = false;
    if (!strcmp(argv[i], "--quick")) g_quick = true;
    if (!strcmp(argv[i], "--stream")) g_stream = true;
    if (!strcmp(argv[i], "--stream-sweep")) do_stream_sweep = true;
    if (!strcmp(argv[i], "--chosen")) do_chosen = true;
    if (!strcmp(argv[i], "--split-stream")) do_split_stream = true;
    if (!strcmp(argv[i], "--wl2")) g_wl2 = true;
    if (!strcmp(argv[i], "--tile-subs") && i + 1 < argc) g_tile_subs = atoi(argv[++i]);
    if (!strcmp(argv[i], "--n") && i + 1 < argc) g_only_n = atoi(argv[++i]); /* sweep one N */
    if (!strcmp(argv[i], "--stream-kind") && i + 1 < argc &&
        sscanf(argv[++i], "%d,%d,%d", &g_kind[0], &g_kind[1], &g_kind[2]) != 3)
      g_kind[0] = 0;
    if (!strcmp(argv[i], "--trace-call") && i + 1 < argc) {
      const int t = atoi(argv[++i]);
      if (t < 1 || t > 199) {
        printf("--trace-call: 1 to 199 (a chain has 200 calls)\n");
        return 2;
      }
      g_trace_call = (unsigned)t;
    }
    if (!strcmp(argv[i], "--wide")) do_wide = true;
    if (!strcmp(argv[i], "--stream-tokens")) do_stream_tokens = true;
    if (!strcmp(argv[i], "--early")) g_early = true;
    if (!strcmp(argv[i], "--share")) g_share = 1;
    if (!strcmp(argv[i], "--no-share")) g_no_share = true;
    if (!strcmp(argv[i], "--share-xreg")) g_share = 2;
    if (!strcmp(argv[i], "--share-late") && i + 1 < argc) g_share_late = atoi(argv[++i]);
    if (!strcmp(argv[i], "--late-l2")) do_late_l2 = true;
    if (!strcmp(argv[i], "--share-tiles")) do_share_tiles = true;
    if (!strcmp(argv[i], "--share-alone")) do_share_alone = true;
    if (!strcmp(argv[i], "--fold")) do_fold = true;
#ifdef BF16FP32_SMALLM_DELAY
    if (!strcmp(argv[i], "--delay")) do_delay = true;
#endif
    if (!strcmp(argv[i], "--rounds") && i + 1 < argc) g_rounds = std::max(1, atoi(argv[++i]));
    if (!strcmp(argv[i], "--no-table")) do_table = false;
    if (!strcmp(argv[i], "--splits") && i + 1 < argc) { /* R/S pairs, e.g. 16/2,32/4 */
      for (char *p = argv[++i]; *p;) {
        const int R = (int)strtol(p, &p, 10), S = *p == '/' ? (int)strtol(p + 1, &p, 10) : 0;
        if (S < 1 || (*p && *p != ',')) { printf("bad --splits list\n"); return 2; }
        g_splits.push_back({R, S});
        if (*p == ',') p++;
      }
    }
    if (!strcmp(argv[i], "--ms") && i + 1 < argc) { /* the table's M list, e.g. 1,2,4,8,16 */
      g_mlist.clear();
      for (char *p = argv[++i]; *p;) {
        g_mlist.push_back((int)strtol(p, &p, 10));
        if (*p == ',') p++;
        else if (*p) { printf("bad --ms list\n"); return 2; }
      }
    }
    if (!strcmp(argv[i], "--reads") || !strcmp(argv[i], "--frag-reads") || !strcmp(argv[i], "--frag-vec")) {
      timing_setup();
      exp_frag_reads(!strcmp(argv[i], "--frag-vec"));
      if (!strcmp(argv[i], "--frag-vec")) return 0;
      if (!strcmp(argv[i], "--reads")) exp_reads();
      return 0;
    }
    if (!strcmp(argv[i], "--trace-stream")) {
      timing_setup();
      exp_trace_stream();
      return 0;
    }
    if (!strcmp(argv[i], "--trace")) {
      timing_setup();
      exp_trace();
      return 0;
    }
    if (!strcmp(argv[i], "--ncu")) do_ncu = true, do_check = false, do_time = false;
    if (!strcmp(argv[i], "--ncu-wide")) {
      timing_setup();
      ncu_wide_calls();
      return 0;
    }
  }
  if (do_ncu) {
    timing_setup();
    ncu_calls();
    return 0;
  }
  if (do_check) correctness();
  printf("correctness failures: %d\n", g_fail);
  if (do_time) {
    timing_setup();
    if (!do_table) {
    } else if (!g_mlist.empty()) {
      timing_table(g_mlist);
    } else if (g_quick) {
      timing_table({1, 16, 64});
    } else {
      timing_table({1, 4, 16, 32, 64, 128, 256});
    }
    if (do_chosen) timing_chosen(g_mlist.empty() ? std::vector<int>{1, 4, 8, 16} : g_mlist);
    if (do_split_stream) timing_split_stream(g_mlist.empty() ? std::vector<int>{1, 8, 16} : g_mlist);
    if (do_stream_sweep) timing_stream_sweep(g_mlist.empty() ? std::vector<int>{1, 4, 8, 16} : g_mlist);
    if (do_wide) timing_wide();
    if (do_late_l2) timing_late_l2(g_mlist.empty() ? std::vector<int>{1, 2, 4, 8, 16} : g_mlist);
    if (do_share_tiles)
      timing_share_tiles(g_mlist.empty() ? std::vector<int>{1, 4, 8, 16} : g_mlist);
    if (do_share_alone)
      timing_share_alone(g_mlist.empty() ? std::vector<int>{1, 4, 8, 16} : g_mlist);
    if (do_fold) fold::timing(g_mlist.empty() ? std::vector<int>{1, 2, 4, 8, 16} : g_mlist);
#ifdef BF16FP32_SMALLM_DELAY
    if (do_delay) timing_delay();
#endif
    if (do_stream_tokens)
      timing_stream_tokens(g_mlist.empty() ? std::vector<int>{96, 128, 192, 256} : g_mlist);
    if (do_pairs) timing_pairs();
    if (do_sweep) timing_sweep();
    printf("failures after sweep: %d\n", g_fail);
  }
  return g_fail ? 1 : 0;
}
