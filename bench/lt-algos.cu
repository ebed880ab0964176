// lt-algos: is cuBLASLt's first heuristic choice, or cublasGemmEx, the fastest cuBLAS kernel at
// the DeepSeek-V4 shapes? For each (N, K, M) it times cublasGemmEx and each of the first
// --count algorithms that cublasLtMatmulAlgoGetHeuristic returns, the way the library's bench
// times (a graph of 200 calls over >= 400 MB of rotating operands, cold L2, random data),
// interleaved: 7 rounds, each candidate's timed replay after an untimed one of itself, the
// candidates' order rotated per round; median per candidate. Every algorithm's output is first
// compared with cublasGemmEx's (relative to the output's largest magnitude).
//
// --carry: the algorithm that was fastest at a bucket's top M (the library's tune buckets above
// 64 are powers of two) is also timed at M inside the bucket (M / 2 + 1, 3M / 4), beside
// cublasGemmEx and the heuristic's first choice for that M, since a tuned choice would be
// stored per bucket.
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 bench/lt-algos.cu -lcublasLt -lcublas -o lt-algos
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "bench-cublas.cuh"
#include "bench-cuda.cuh"

#define CB(x)                                                                 \
  do {                                                                        \
    cublasStatus_t b_ = (x);                                                  \
    if (b_ != CUBLAS_STATUS_SUCCESS) {                                        \
      printf("cuBLAS status %d at %s:%d: %s\n", (int)b_, __FILE__, __LINE__, #x); \
      exit(2);                                                                \
    }                                                                         \
  } while (0)

namespace {

const size_t kWorkspace = 32u << 20;
const int kCalls = 200;

struct Shape {
  int n, k;
};

// Random bf16 in [-0.5, 0.5] from a hash of the index (never zeros, as MEASURING.md asks).
__global__ void fill_random(__nv_bfloat16 *p, size_t count, uint32_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
    const uint32_t h = bench_hash(i, seed); /* counts below 2^32: i >> 32 adds nothing */
    p[i] = __float2bfloat16((float)(h & 0xffffff) / 16777216.0f - 0.5f);
  }
}

// One call's operands: copy c of the rotation.
struct Rotation {
  unsigned char *pool;
  size_t w_bytes, x_bytes, o_bytes, stride;
  int copies;
  const __nv_bfloat16 *w(int c) const { return (const __nv_bfloat16 *)(pool + (size_t)c * stride); }
  const __nv_bfloat16 *x(int c) const { return (const __nv_bfloat16 *)(pool + (size_t)c * stride + w_bytes); }
  float *o(int c) const { return (float *)(pool + (size_t)c * stride + w_bytes + x_bytes); }
};

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

Rotation make_rotation(unsigned char *pool, size_t pool_bytes, int m, const Shape &s) {
  Rotation r;
  r.pool = pool;
  r.w_bytes = round_up((size_t)s.n * s.k * 2, 256);
  r.x_bytes = round_up((size_t)m * s.k * 2, 256);
  r.o_bytes = round_up((size_t)m * s.n * 4, 256);
  r.stride = r.w_bytes + r.x_bytes + r.o_bytes;
  const size_t want = (size_t)420 << 20;  // >= 400 MB touched per graph
  int copies = (int)((want + r.stride - 1) / r.stride);
  if (copies < 2) copies = 2;
  if (copies > kCalls) copies = kCalls;
  if ((size_t)copies * r.stride > pool_bytes) copies = (int)(pool_bytes / r.stride);
  r.copies = copies;
  return r;
}

// The descriptors of out^T[N, M] = w^T . x^T in column-major terms, as the library's plans.
struct LtDesc {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  LtDesc(int m, const Shape &s) {
    const int32_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    CB(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CB(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CB(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    CB(cublasLtMatrixLayoutCreate(&a, CUDA_R_16BF, s.k, s.n, s.k));
    CB(cublasLtMatrixLayoutCreate(&b, CUDA_R_16BF, s.k, m, s.k));
    CB(cublasLtMatrixLayoutCreate(&c, CUDA_R_32F, s.n, m, s.n));
  }
  ~LtDesc() {
    cublasLtMatrixLayoutDestroy(c);
    cublasLtMatrixLayoutDestroy(b);
    cublasLtMatrixLayoutDestroy(a);
    cublasLtMatmulDescDestroy(op);
  }
};

std::vector<cublasLtMatmulAlgo_t> heuristic(cublasLtHandle_t lt, const LtDesc &d, int count) {
  cublasLtMatmulPreference_t pref;
  CB(cublasLtMatmulPreferenceCreate(&pref));
  const uint64_t ws = kWorkspace;
  CB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  std::vector<cublasLtMatmulHeuristicResult_t> res(count);
  int found = 0;
  CB(cublasLtMatmulAlgoGetHeuristic(lt, d.op, d.a, d.b, d.c, d.c, pref, count, res.data(), &found));
  cublasLtMatmulPreferenceDestroy(pref);
  std::vector<cublasLtMatmulAlgo_t> out;
  for (int i = 0; i < found; i++)
    if (res[i].state == CUBLAS_STATUS_SUCCESS && res[i].workspaceSize <= kWorkspace) out.push_back(res[i].algo);
  return out;
}

// "id tile stages splitk reduction swizzle custom cluster" of an algorithm (-1: not readable).
std::string describe(const cublasLtMatmulAlgo_t &a) {
  auto get32 = [&](cublasLtMatmulAlgoConfigAttributes_t attr) {
    uint32_t v = 0;
    size_t got = 0;
    return cublasLtMatmulAlgoConfigGetAttribute(&a, attr, &v, sizeof v, &got) == CUBLAS_STATUS_SUCCESS ? (long)v : -1L;
  };
  auto get16 = [&](cublasLtMatmulAlgoConfigAttributes_t attr) {
    uint16_t v = 0;
    size_t got = 0;
    return cublasLtMatmulAlgoConfigGetAttribute(&a, attr, &v, sizeof v, &got) == CUBLAS_STATUS_SUCCESS ? (long)v : -1L;
  };
  char buf[160];
  snprintf(buf, sizeof buf, "id%ld tile%ld st%ld sk%ld red%ld sw%ld cu%ld in%ld cl%ld", get32(CUBLASLT_ALGO_CONFIG_ID),
           get32(CUBLASLT_ALGO_CONFIG_TILE_ID), get32(CUBLASLT_ALGO_CONFIG_STAGES_ID),
           get32(CUBLASLT_ALGO_CONFIG_SPLITK_NUM), get32(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME),
           get32(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING), get32(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION),
           get16(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID), get16(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID));
  return buf;
}

struct Bench {
  cudaStream_t s;
  cublasHandle_t h;
  cublasLtHandle_t lt;
  void *ws;
  unsigned char *pool;
  size_t pool_bytes;
};

void run_gemmex(Bench &b, int m, const Shape &s, const Rotation &r, int c) {
  CB(bench_cublas_gemm(b.h, s.n, m, s.k, r.w(c), r.x(c), r.o(c)));
}

void run_lt(Bench &b, const LtDesc &d, const cublasLtMatmulAlgo_t &a, const Rotation &r, int c) {
  const float one = 1.0f, zero = 0.0f;
  CB(cublasLtMatmul(b.lt, d.op, &one, r.w(c), d.a, r.x(c), d.b, &zero, r.o(c), d.c, r.o(c), d.c, &a, b.ws,
                    kWorkspace, b.s));
}

// A candidate: a graph of kCalls calls over the rotation.
struct Graph {
  cudaGraphExec_t exec = nullptr;
  template <class F>
  Graph(cudaStream_t s, F rec) {
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < kCalls; i++) rec(i);
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&exec, g, 0));
    CK(cudaGraphDestroy(g));
  }
};

// The medians (us per call) of 7 interleaved rounds, each timed replay after an untimed one.
std::vector<double> time_interleaved(cudaStream_t s, std::vector<Graph> &gs) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<std::vector<float>> t(gs.size());
  for (int round = 0; round < 7; round++)
    for (size_t j = 0; j < gs.size(); j++) {
      const size_t i = (j + round) % gs.size();
      CK(cudaGraphLaunch(gs[i].exec, s));
      CK(cudaEventRecord(e0, s));
      CK(cudaGraphLaunch(gs[i].exec, s));
      CK(cudaEventRecord(e1, s));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      t[i].push_back(ms);
    }
  std::vector<double> med;
  for (auto &v : t) {
    std::sort(v.begin(), v.end());
    med.push_back(v[v.size() / 2] * 1000.0 / kCalls);
  }
  for (auto &g : gs) CK(cudaGraphExecDestroy(g.exec));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return med;
}

// Largest |a - ref| over largest |ref| of the copy-0 outputs.
double rel_diff(const std::vector<float> &a, const std::vector<float> &ref) {
  double d = 0, big = 0;
  for (size_t i = 0; i < a.size(); i++) {
    if (!std::isfinite(a[i])) return INFINITY;
    d = std::max(d, (double)std::fabs(a[i] - ref[i]));
    big = std::max(big, (double)std::fabs(ref[i]));
  }
  return big > 0 ? d / big : d;
}

std::vector<float> output(const Rotation &r, int m, const Shape &s) {
  std::vector<float> v((size_t)m * s.n);
  CK(cudaMemcpy(v.data(), r.o(0), v.size() * 4, cudaMemcpyDeviceToHost));
  return v;
}

// Times cublasGemmEx and the candidates at one cell; returns the fastest candidate's index
// (-1 when none) and prints one line.
int time_cell(Bench &b, int m, const Shape &s, const std::vector<cublasLtMatmulAlgo_t> &algos, const char *tag) {
  const Rotation r = make_rotation(b.pool, b.pool_bytes, m, s);
  // Fresh operands: the last cell's outputs (and poison) lie where this cell's inputs are.
  fill_random<<<1024, 256>>>((__nv_bfloat16 *)b.pool, (size_t)r.copies * r.stride / 2, 12345u + m);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());  // the fill and memsets run on the legacy stream, b.s does not wait
  const LtDesc d(m, s);
  run_gemmex(b, m, s, r, 0);
  CK(cudaStreamSynchronize(b.s));
  const std::vector<float> ref = output(r, m, s);
  std::vector<bool> ok(algos.size(), false);
  for (size_t i = 0; i < algos.size(); i++) {
    cublasLtMatmulHeuristicResult_t chk;
    std::memset(&chk, 0, sizeof chk);
    const cublasStatus_t cs = cublasLtMatmulAlgoCheck(b.lt, d.op, d.a, d.b, d.c, d.c, &algos[i], &chk);
    if (cs != CUBLAS_STATUS_SUCCESS || chk.workspaceSize > kWorkspace) {
      printf("  algo %zu: check status %d, workspace %zu\n", i, (int)cs, chk.workspaceSize);
      continue;
    }
    CK(cudaMemset(r.o(0), 0xff, r.o_bytes));  // NaN poison: an unwritten element fails
    CK(cudaDeviceSynchronize());
    run_lt(b, d, algos[i], r, 0);
    CK(cudaStreamSynchronize(b.s));
    const double diff = rel_diff(output(r, m, s), ref);
    ok[i] = diff < 1e-4;
    if (!ok[i]) printf("  algo %zu: output off by %.3g of the largest\n", i, diff);
  }
  std::vector<Graph> gs;
  std::vector<int> which;  // -1 = GemmEx
  gs.emplace_back(b.s, [&](int i) { run_gemmex(b, m, s, r, i % r.copies); });
  which.push_back(-1);
  for (size_t i = 0; i < algos.size(); i++)
    if (ok[i]) {
      gs.emplace_back(b.s, [&](int c) { run_lt(b, d, algos[i], r, c % r.copies); });
      which.push_back((int)i);
    }
  const std::vector<double> t = time_interleaved(b.s, gs);
  int best = -1;
  double best_t = INFINITY, first_t = NAN;
  for (size_t j = 1; j < t.size(); j++) {
    if (which[j] == 0) first_t = t[j];
    if (t[j] < best_t) best_t = t[j], best = which[j];
  }
  int failed = 0;
  for (bool o : ok) failed += !o;
  printf("%-6s %5d %5d %5d | gemmex %8.2f | lt[0] %8.2f %6.3f | best lt[%2d] %8.2f %6.3f | %2zu algos %d off | %s |",
         tag, s.n, s.k, m, t[0], first_t, t[0] / first_t, best, best_t, t[0] / best_t, algos.size(), failed,
         best >= 0 ? describe(algos[best]).c_str() : "-");
  for (size_t j = 1; j < t.size(); j++) printf(" %d:%.2f", which[j], t[j]);
  printf("\n");
  fflush(stdout);
  return best;
}

std::vector<int> parse_list(const char *s) {
  std::vector<int> v;
  for (const char *p = s; *p;) {
    v.push_back(atoi(p));
    while (*p && *p != ',') p++;
    if (*p) p++;
  }
  return v;
}

}  // namespace

int main(int argc, char **argv) {
  std::vector<int> ms = {64, 128, 256, 512, 1024, 2048};
  int count = 8;
  bool carry = false;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--m" && i + 1 < argc) ms = parse_list(argv[++i]);
    else if (a == "--count" && i + 1 < argc) count = atoi(argv[++i]);
    else if (a == "--carry") carry = true;
    else {
      printf("usage: lt-algos [--m LIST] [--count N] [--carry]\n");
      return 2;
    }
  }
  const Shape shapes[] = {{256, 4096}, {2048, 4096}, {1024, 4096}, {512, 4096}, {384, 7168},
                          {2048, 7168}, {1024, 7168}, {512, 7168}, {256, 7168}};
  Bench b;
  b.pool_bytes = (size_t)1536 << 20;
  CK(cudaMalloc(&b.pool, b.pool_bytes));
  fill_random<<<1024, 256>>>((__nv_bfloat16 *)b.pool, b.pool_bytes / 2, 12345u);
  CK(cudaGetLastError());
  CK(cudaStreamCreateWithFlags(&b.s, cudaStreamNonBlocking));
  CB(cublasCreate(&b.h));
  CB(cublasLtCreate(&b.lt));
  CK(cudaMalloc(&b.ws, kWorkspace));
  CB(cublasSetStream(b.h, b.s));
  CB(cublasSetWorkspace(b.h, b.ws, kWorkspace));
  CK(cudaDeviceSynchronize());
  printf("lt-algos: us per call (graph of %d, cold L2, median of 7 interleaved); ratio = gemmex / lt; "
         "%d heuristic candidates, workspace %zu MiB\n",
         kCalls, count, kWorkspace >> 20);
  for (const Shape &s : shapes)
    for (int m : ms) {
      std::vector<cublasLtMatmulAlgo_t> algos;
      {
        const LtDesc d(m, s);
        algos = heuristic(b.lt, d, count);
      }
      const int best = time_cell(b, m, s, algos, "cell");
      if (!carry || best < 0 || m <= 64) continue;
      // The bucket's winner inside the bucket, beside that M's own first choice.
      for (int mi : {m / 2 + 1, m * 3 / 4}) {
        std::vector<cublasLtMatmulAlgo_t> own;
        {
          const LtDesc d(mi, s);
          own = heuristic(b.lt, d, 1);
        }
        std::vector<cublasLtMatmulAlgo_t> pair;
        if (!own.empty()) pair.push_back(own[0]);
        pair.push_back(algos[best]);
        time_cell(b, mi, s, pair, own.empty() ? "carry-" : "carry");
      }
    }
  return 0;
}
