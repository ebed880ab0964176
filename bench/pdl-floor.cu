// pdl-floor: the least time per call that any kernel computing out[M,N] = x[M,K] . w[N,K]^T can
// take at the DeepSeek-V4 shapes, measured as the library's bench measures (a graph of 200 calls,
// cold L2, median of 7 replays; bench-cuda.cuh), launched plainly and under programmatic
// dependent launch (PDL), beside cuBLAS in the same run.
//
// The floor kernel does only what every such kernel must do and nothing else: it brings all of
// the call's weights from DRAM into shared memory (1-D bulk copies, each block a contiguous
// share; under PDL before griddepcontrol.wait, since the weights do not depend on the previous
// kernel), requests its share of x into L2 before the wait, reads that share after the wait, and
// writes its share of the outputs once both have arrived. No arithmetic, no sum across blocks,
// every share the same size; the fastest of four grid sizes counts. A real kernel does all of
// this and more, so where the floor is above a target, no kernel can meet that target under this
// protocol. "chain" is the same kernel without the weights: what the hand-over from one call to
// the next and x and the stores cost alone.
//
// Then a ladder at M = 1 under PDL, from the floor towards the shape of a smallm call, one step
// at a time: the smallm split's grid (N / R x S blocks of 256 threads, each the weight bytes of
// one block) with the trigger at entry; the trigger after the wait, as smallm has it; then a
// cluster of the split's S blocks whose end is smallm's cluster sum in miniature (the restricted
// fences around a cluster barrier, one 16-byte read from the next rank's shared memory, the exit
// barrier), and that cluster with the trigger at entry again; then the same for other splits of
// the small shapes (fewer slices: each another summation order, which smallm would have to take
// at every M of that shape).
//
// Rotation: ceil(400 MB / (w + x + out bytes)) copies of each operand, call i on copy i % copies.
// --ladder: the ladder alone.
// --ingress: the floor kernel's weights alone (no x, no outputs) on G blocks of B bytes each,
// plainly and under PDL, and the rate at which one SM takes them in from DRAM: 168 KB over the
// time between B = 56 and 224 KB, which takes the launch and the first bytes' latency out
// (docs/smallm-notes.md, session 54: up to about 170 GB/s for one SM alone on the H200, and the
// DRAM's rate from 64 SMs on).
// Build: nvcc -O3 -std=c++17 -Isrc -gencode=arch=compute_90a,code=sm_90a bench/pdl-floor.cu -lcublas
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/smallm/smallm-cluster-sum.cuh" /* the pull's cluster barriers */
#include "backends/smallm/smallm-fragments.cuh"   /* the bulk copy and the request into L2 */
#include "backends/smallm/smallm-tiles.cuh"       /* the barrier's expected bytes and wait */
#include "bench-cublas.cuh"
#include "bench-cuda.cuh"
#include "measure-floor.h"

namespace {

constexpr int THREADS = 128;
constexpr int PIECE = 16384; /* bytes per bulk copy */

struct FArgs {
  const unsigned char *w;
  long long wbytes;
  int wshare; /* bytes per block, a multiple of 16 */
  const unsigned char *x;
  long long xbytes;
  int xshare; /* bytes per block, a multiple of 16 */
  float *out;
  long long outs;
  int oshare; /* floats per block, a multiple of 4 */
  int trigger_after; /* 1: launch_dependents after the wait, else at entry */
  int cluster_end;   /* 1: the blocks end with a cluster sum's barriers and one DSMEM read */
};

template <bool PDL>
__global__ void __launch_bounds__(256) floor_kernel(const FArgs a) {
  extern __shared__ __align__(128) unsigned char smem[];
  /* the next call's blocks may start at once, as early as anything can let them */
  if (PDL && !a.trigger_after) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const uint32_t bar = static_cast<uint32_t>(__cvta_generic_to_shared(smem)), buf = bar + 128;
  const long long w0 = static_cast<long long>(blockIdx.x) * a.wshare;
  const int wlen = static_cast<int>(max(0LL, min(static_cast<long long>(a.wshare), a.wbytes - w0)));
  const long long x0 = static_cast<long long>(blockIdx.x) * a.xshare;
  const int xlen = static_cast<int>(max(0LL, min(static_cast<long long>(a.xshare), a.xbytes - x0)));
  const long long o0 = static_cast<long long>(blockIdx.x) * a.oshare;
  const int olen = static_cast<int>(max(0LL, min(static_cast<long long>(a.oshare), a.outs - o0)));
  if (threadIdx.x == 0) {
    bf16fp32__bar_init(bar);
    bf16fp32__bar_init_fence();
    bf16fp32__bar_expect(bar, wlen);
    for (int off = 0; off < wlen; off += PIECE)
      bf16fp32__bulk_copy(buf + off, a.w + w0 + off, min(PIECE, wlen - off), bar);
    if (xlen > 0) bf16fp32__bulk_to_l2(a.x + x0, static_cast<uint32_t>(xlen));
  }
  __syncthreads(); /* the barrier is set up before anyone waits on it */
  if (PDL) asm volatile("griddepcontrol.wait;" ::: "memory");
  if (PDL && a.trigger_after) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  unsigned v = 0;
  for (int i = 16 * threadIdx.x; i < xlen; i += 16 * blockDim.x) {
    const uint4 q = *reinterpret_cast<const uint4 *>(a.x + x0 + i);
    v ^= q.x ^ q.y ^ q.z ^ q.w;
  }
  bf16fp32__bar_wait(bar, 0);
  if (wlen > 0) v ^= *reinterpret_cast<const unsigned *>(smem + 128 + (4 * threadIdx.x) % wlen);
  if (a.cluster_end) {
    cooperative_groups::cluster_group cl = cooperative_groups::this_cluster();
    reinterpret_cast<unsigned *>(smem + 64)[threadIdx.x & 7] = v;
    __syncthreads();
    bf16fp32__smallm_cluster_share();
    const unsigned *peer = cl.map_shared_rank(reinterpret_cast<unsigned *>(smem + 64),
                                              (cl.block_rank() + 1) % cl.num_blocks());
    v ^= peer[threadIdx.x & 7];
    bf16fp32__smallm_cluster_exit();
  }
  const float f = __uint_as_float(v); /* the stores wait for both */
  for (int i = 4 * threadIdx.x; i < olen; i += 4 * blockDim.x)
    *reinterpret_cast<float4 *>(a.out + o0 + i) = make_float4(f, f, f, f);
}

long long round_up(long long v, long long to) { return (v + to - 1) / to * to; }

struct Shape {
  int n, k;
};

/* One timing of the floor kernel (with or without the weights) at grid `grid`; < 0 when a
 * block's share does not fit shared memory. */
struct Form {
  int threads = THREADS, trigger_after = 0, cluster = 1;
};

double time_floor(cudaStream_t s, int pdl, int grid, bool weights, long long m, const Shape &sh,
                  int copies, unsigned char *wpool, unsigned char *xpool, float *opool, int smem_max,
                  const Form &fm = Form()) {
  const long long wbytes = weights ? 2LL * sh.n * sh.k : 0, xbytes = 2LL * m * sh.k, outs = m * sh.n;
  FArgs a;
  a.wbytes = wbytes, a.xbytes = xbytes, a.outs = outs;
  a.wshare = static_cast<int>(round_up((wbytes + grid - 1) / grid, 16));
  a.xshare = static_cast<int>(round_up((xbytes + grid - 1) / grid, 16));
  a.oshare = static_cast<int>(round_up((outs + grid - 1) / grid, 4));
  a.trigger_after = fm.trigger_after, a.cluster_end = fm.cluster > 1;
  const int smem = 128 + a.wshare;
  if (smem > smem_max) return -1.0;
  auto kern = pdl ? floor_kernel<true> : floor_kernel<false>;
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaLaunchAttribute attr[2];
  unsigned na = 0;
  if (fm.cluster > 1) {
    attr[na].id = cudaLaunchAttributeClusterDimension;
    attr[na].val.clusterDim.x = fm.cluster, attr[na].val.clusterDim.y = 1, attr[na].val.clusterDim.z = 1;
    na++;
  }
  if (pdl) {
    attr[na].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[na].val.programmaticStreamSerializationAllowed = 1;
    na++;
  }
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(grid), cfg.blockDim = dim3(fm.threads), cfg.dynamicSmemBytes = smem, cfg.stream = s;
  cfg.attrs = attr, cfg.numAttrs = na;
  auto rec = [&](int i) {
    const int c = i % copies;
    a.w = wpool + static_cast<size_t>(c) * 2 * sh.n * sh.k;
    a.x = xpool + static_cast<size_t>(c) * xbytes;
    a.out = opool + static_cast<size_t>(c) * outs;
    CK(cudaLaunchKernelEx(&cfg, kern, a));
  };
  for (int i = 0; i < 8; i++) rec(i);
  CK(cudaStreamSynchronize(s));
  return bench_time_graph(s, 200, rec);
}

/* --ingress: G blocks each copying B bytes of rows 8 KB long (the weights of N = G B / 8 KB
 * rows of K = 4096) into shared memory, nothing else; us per call and the per-SM rate. */
void ingress(cudaStream_t s, unsigned char *wpool, size_t wpool_bytes, int smem_max, long long rot) {
  const int grids[] = {8, 16, 32, 64, 96, 128, 132};
  const long long sizes[] = {56LL << 10, 112LL << 10, 224LL << 10};
  printf("ingress: G blocks x B bytes into shared memory, us per call plainly / under PDL "
         "(trigger at entry); per SM = 168 KB / (t(224 KB) - t(56 KB)), plainly\n");
  for (int g : grids) {
    double t[2][3];
    for (int b = 0; b < 3; b++) {
      const Shape sh = {static_cast<int>(g * sizes[b] / 8192), 4096};
      const long long wbytes = 2LL * sh.n * sh.k;
      const int copies = static_cast<int>(std::min<long long>((rot + wbytes - 1) / wbytes,
                                                             static_cast<long long>(wpool_bytes) / wbytes));
      for (int pdl = 0; pdl < 2; pdl++)
        t[pdl][b] = time_floor(s, pdl, g, true, 0, sh, copies, wpool, nullptr, nullptr, smem_max);
    }
    const double per_sm = (sizes[2] - sizes[0]) / ((t[0][2] - t[0][0]) * 1e-6) / 1e9;
    printf("G %3d | plain %6.2f %6.2f %6.2f | pdl %6.2f %6.2f %6.2f | per SM %5.1f GB/s, all %5.2f TB/s "
           "| B = 224 KB: %5.2f TB/s plainly, %5.2f under PDL\n",
           g, t[0][0], t[0][1], t[0][2], t[1][0], t[1][1], t[1][2], per_sm, per_sm * g / 1000.0,
           g * sizes[2] / (t[0][2] * 1e-6) / 1e12, g * sizes[2] / (t[1][2] * 1e-6) / 1e12);
    fflush(stdout);
  }
}

}  // namespace

int main(int argc, char **argv) {
  const bool ladder_only = argc > 1 && std::string(argv[1]) == "--ladder";
  const bool ingress_only = argc > 1 && std::string(argv[1]) == "--ingress";
  const Shape shapes[] = {{256, 4096}, {2048, 4096}, {1024, 4096}, {512, 4096}, {384, 7168},
                          {2048, 7168}, {1024, 7168}, {512, 7168}, {256, 7168}};
  const int ms[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  const long long rot = 400LL << 20;
  int dev = 0, smem_max = 0, sms = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  /* pools big enough for every shape's rotation */
  const size_t wpool_bytes = rot + (64LL << 20), xpool_bytes = 256LL << 20, opool_bytes = 512LL << 20;
  unsigned char *wpool, *xpool;
  float *opool;
  CK(cudaMalloc(&wpool, wpool_bytes));
  CK(cudaMalloc(&xpool, xpool_bytes));
  CK(cudaMalloc(&opool, opool_bytes));
  CK(cudaMemset(wpool, 0x3c, wpool_bytes));
  CK(cudaMemset(xpool, 0x3c, xpool_bytes));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cublasHandle_t h = bench_cublas_on(s);
  if (ingress_only) {
    ingress(s, wpool, wpool_bytes, smem_max, rot);
    return 0;
  }
  const int grids[] = {sms, 2 * sms, 4 * sms, 8 * sms};
  printf("pdl-floor: us per call (graph of 200, cold L2, median of 7); SMs %d, shared memory per block %d\n", sms,
         smem_max);
  printf("%5s %5s %4s | %6s %6s | %7s %7s %9s %9s | %7s | %s\n", "N", "K", "M", "F", "target", "plain", "pdl",
         "chain", "chain-pdl", "cublas", "target below both floors");
  for (const Shape &sh : shapes)
    for (int m : ms) {
      if (ladder_only) break;
      const long long wbytes = 2LL * sh.n * sh.k, xbytes = 2LL * m * sh.k, obytes = 4LL * m * sh.n;
      int copies = static_cast<int>((rot + wbytes + xbytes + obytes - 1) / (wbytes + xbytes + obytes));
      if (copies < 1) copies = 1;
      if ((size_t)copies * wbytes > wpool_bytes || (size_t)copies * xbytes > xpool_bytes ||
          (size_t)copies * obytes > opool_bytes) {
        printf("pools too small\n");
        return 2;
      }
      const double F = bf16fp32__floor_us(m, sh.n, sh.k);
      double best[4] = {1e30, 1e30, 1e30, 1e30}; /* plain, pdl, chain plain, chain pdl */
      int bg[4] = {0, 0, 0, 0};
      for (int grid : grids)
        for (int v = 0; v < 4; v++) {
          const double t = time_floor(s, v & 1, grid, v < 2, m, sh, copies, wpool, xpool, opool, smem_max);
          if (t > 0 && t < best[v]) best[v] = t, bg[v] = grid;
        }
      const double cub = bench_time_graph(s, 200, [&](int i) {
        const int c = i % copies;
        bench_cublas_gemm(h, sh.n, m, sh.k, wpool + (size_t)c * wbytes, xpool + (size_t)c * xbytes,
                          opool + (size_t)c * m * sh.n);
      });
      CK(cudaGetLastError());
      const double target = bf16fp32__target_us(m, sh.n, sh.k, cub);
      printf("%5d %5d %4d | %6.2f %6.2f | %7.2f %7.2f %9.2f %9.2f | %7.2f | %s   (grids %d %d %d %d)\n", sh.n, sh.k,
             m, F, target, best[0], best[1], best[2], best[3], cub,
             best[1] > target && best[0] > target ? "yes" : "no", bg[0], bg[1], bg[2], bg[3]);
      fflush(stdout);
    }

  /* the ladder: each shape's smallm split (rows R, slices S) */
  const struct {
    Shape sh;
    int rows, ksplit;
  } splits[] = {{{256, 4096}, 32, 8},  {{2048, 4096}, 16, 1}, {{1024, 4096}, 16, 2},
                {{512, 4096}, 32, 4},  {{384, 7168}, 32, 8},  {{2048, 7168}, 16, 1},
                {{1024, 7168}, 16, 2}, {{512, 7168}, 32, 4},  {{256, 7168}, 32, 8},
                /* other splits of the small shapes (another summation order each) */
                {{256, 4096}, 32, 4},  {{256, 4096}, 32, 2},  {{256, 4096}, 16, 4},
                {{256, 4096}, 16, 2},  {{256, 4096}, 16, 1},  {{512, 4096}, 32, 2},
                {{512, 4096}, 16, 2},  {{384, 7168}, 32, 4},  {{384, 7168}, 32, 2},
                {{512, 7168}, 32, 2},  {{256, 7168}, 32, 4},  {{256, 7168}, 32, 2}};
  printf("\nladder at M = 1 under PDL (us per call): N K | floor | split grid, trigger at entry | "
         "trigger after the wait | + cluster of S with the cluster sum's barriers | the same, trigger at entry | "
         "grid, S\n");
  for (const auto &sp : splits) {
    const Shape &sh = sp.sh;
    const long long wbytes = 2LL * sh.n * sh.k, xbytes = 2LL * sh.k, obytes = 4LL * sh.n;
    const int copies = static_cast<int>((rot + wbytes + xbytes + obytes - 1) / (wbytes + xbytes + obytes));
    const int grid = sh.n / sp.rows * sp.ksplit;
    double best = 1e30;
    for (int g : grids) {
      const double t = time_floor(s, 1, g, true, 1, sh, copies, wpool, xpool, opool, smem_max);
      if (t > 0 && t < best) best = t;
    }
    Form f;
    f.threads = 256;
    const double t_entry = time_floor(s, 1, grid, true, 1, sh, copies, wpool, xpool, opool, smem_max, f);
    f.trigger_after = 1;
    const double t_after = time_floor(s, 1, grid, true, 1, sh, copies, wpool, xpool, opool, smem_max, f);
    f.cluster = sp.ksplit;
    const double t_cluster =
        sp.ksplit > 1 ? time_floor(s, 1, grid, true, 1, sh, copies, wpool, xpool, opool, smem_max, f) : t_after;
    f.trigger_after = 0;
    const double t_cluster_entry =
        sp.ksplit > 1 ? time_floor(s, 1, grid, true, 1, sh, copies, wpool, xpool, opool, smem_max, f) : t_entry;
    printf("%5d %5d | %6.2f | %6.2f | %6.2f | %6.2f | %6.2f | %d, %d (R %d)\n", sh.n, sh.k, best, t_entry,
           t_after, t_cluster, t_cluster_entry, grid, sp.ksplit, sp.rows);
    fflush(stdout);
  }
  return 0;
}
