// pdl-drain: does a dependent grid's griddepcontrol.wait also wait for reads that the dependent
// grid itself has in flight? A primary kernel (132 blocks) lets its dependent launch at entry,
// then spins for 20 us; the dependent (132 blocks, launched with programmatic dependent launch)
// reads X bytes from DRAM either `lead` us before the primary's end (by the primary's start
// time, which its block 0 publishes) or once its wait has passed, as bulk copies into shared
// memory (counted on an mbarrier, as the smallm share kernel fetches its weights) or as bulk
// prefetches into L2. The hand-over is the time from the primary's last block end to the
// dependent's first block passing its wait (global timer, the median of 30 pairs). If the wait
// only waits for the primary grid, the hand-over does not depend on X or lead; if it waits for
// the memory system to drain, it grows with the bytes still in flight when the primary ends.
// docs/smallm-notes.md, session 26.
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc bench/pdl-drain.cu
//        -o pdl-drain
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "backends/smallm/smallm-tiles.cuh" /* the share kernel's copy and barrier helpers */
#include "bench-cuda.cuh"

namespace {

constexpr int BLOCKS = 132, THREADS = 128;
constexpr int PIECE = 32768;       /* bytes per bulk copy or prefetch */
constexpr int RING = 6 * PIECE;    /* shared memory the copies land in (never read) */
/* a block's share at most: its copies side by side in RING, and within an mbarrier's
 * transaction count (2^20 - 1 bytes) */
constexpr long long MAX_SHARE = RING;
constexpr int COPY = 0, PREFETCH = 1;

__device__ __forceinline__ unsigned long long now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}

constexpr long long SPIN_NS = 20000;

/* stamps[b]: block b's end, after it has spun for SPIN_NS; *start: block 0's start */
__global__ void primary(unsigned long long *stamps, volatile unsigned long long *start) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (threadIdx.x != 0) return;
  const unsigned long long t0 = now();
  if (blockIdx.x == 0) *start = t0;
  while (now() - t0 < static_cast<unsigned long long>(SPIN_NS)) {
  }
  stamps[blockIdx.x] = now();
}

/* Thread 0 of block b reads its share of src (share bytes) in PIECE-byte bulk operations,
 * lead_ns before the primary's end or, with lead_ns < 0, once the wait has passed; stamps[b]:
 * entry, stamps[BLOCKS + b]: the wait passed. */
__global__ void dependent(const unsigned char *src, long long share, int kind, long long lead_ns,
                          volatile const unsigned long long *start, unsigned long long *stamps) {
  const bool after = lead_ns < 0;
  extern __shared__ __align__(128) unsigned char sm[];
  const uint32_t bar = static_cast<uint32_t>(__cvta_generic_to_shared(sm)), ring = bar + 128;
  const unsigned char *mine = src + blockIdx.x * share;
  auto reads = [&]() {
    if (kind == COPY) bf16fp32__bar_expect(bar, static_cast<int>(share));
    for (long long o = 0; o < share; o += PIECE) {
      const int bytes = static_cast<int>(share - o < PIECE ? share - o : PIECE);
      if (kind == COPY) bf16fp32__bulk_copy(ring + static_cast<uint32_t>(o), mine + o, bytes, bar);
      else bf16fp32__bulk_to_l2(mine + o, static_cast<uint32_t>(bytes));
    }
  };
  if (threadIdx.x != 0) return;
  stamps[blockIdx.x] = now();
  bf16fp32__bar_init(bar);
  bf16fp32__bar_init_fence();
  if (!after && share) {
    unsigned long long t0;
    while ((t0 = *start) == 0) {
    }
    while (now() < t0 + SPIN_NS - lead_ns) {
    }
    reads();
  }
  asm volatile("griddepcontrol.wait;" ::: "memory");
  stamps[BLOCKS + blockIdx.x] = now();
  if (after && share) reads();
  /* the copies land before the block's shared memory goes */
  if (kind == COPY && share) bf16fp32__bar_wait(bar, 0);
}

}  // namespace

int main() {
  const size_t pool = 512ull << 20; /* reads rotate over it: never from L2 */
  unsigned char *src;
  unsigned long long *ps, *ds;
  CK(cudaMalloc(&src, pool));
  CK(cudaMemset(src, 1, pool));
  CK(cudaFuncSetAttribute(dependent, cudaFuncAttributeMaxDynamicSharedMemorySize, 128 + RING));
  /* the primary with the SMs' shared memory at its largest too: blocks of a kernel that needs
   * another split of shared memory and L1 do not start on an SM until it has drained */
  CK(cudaFuncSetAttribute(primary, cudaFuncAttributePreferredSharedMemoryCarveout,
                          cudaSharedmemCarveoutMaxShared));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  constexpr int REPS = 32; /* pairs per graph; the first two are not counted */
  unsigned long long *start;
  CK(cudaMalloc(&start, REPS * 8));
  CK(cudaMalloc(&ps, REPS * BLOCKS * 8));
  CK(cudaMalloc(&ds, REPS * 2 * BLOCKS * 8));
  printf("hand-over: primary's last block end -> dependent's first wait passed (us, median of "
         "%d);\ndep entry, dep wait: the dependent's last block entry and last wait passed, from "
         "the same end\n", REPS - 2);
  printf("%-9s %-13s %6s | %9s %9s %9s\n", "reads", "when", "MB", "hand-over", "dep entry",
         "dep wait");
  size_t offset = 0;
  for (int kind : {COPY, PREFETCH})
    for (int mb : {0, 8, 24})
      for (long long lead : {-1LL, 500LL, 1500LL, 3000LL, 6000LL, 12000LL}) {
        if (mb == 0 && lead > 500) continue;
        const long long share = ((long long)mb << 20) / BLOCKS / 16 * 16;
        if (share > MAX_SHARE) { /* a block's copies would overrun one another in flight */
          printf("%d MB: more than %lld bytes per block\n", mb, MAX_SHARE);
          continue;
        }
        /* one graph of REPS pairs, each pair the primary and its dependent (a programmatic edge) */
        cudaGraph_t gr;
        cudaGraphExec_t ge;
        CK(cudaMemsetAsync(start, 0, REPS * 8, s));
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        for (int r = 0; r < REPS; r++) {
          if (offset + share * BLOCKS > pool) offset = 0;
          primary<<<BLOCKS, THREADS, 0, s>>>(ps + r * BLOCKS, start + r);
          cudaLaunchConfig_t cfg = {};
          cudaLaunchAttribute at[1];
          cfg.gridDim = dim3(BLOCKS), cfg.blockDim = dim3(THREADS);
          cfg.dynamicSmemBytes = 128 + RING, cfg.stream = s;
          at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
          at[0].val.programmaticStreamSerializationAllowed = 1;
          cfg.attrs = at, cfg.numAttrs = 1;
          CK(cudaLaunchKernelEx(&cfg, dependent, (const unsigned char *)src + offset, share, kind,
                                lead, (const unsigned long long *)(start + r),
                                ds + r * 2 * BLOCKS));
          offset += share * BLOCKS;
        }
        CK(cudaStreamEndCapture(s, &gr));
        CK(cudaGraphInstantiate(&ge, gr, 0));
        CK(cudaGraphLaunch(ge, s));
        CK(cudaStreamSynchronize(s));
        std::vector<unsigned long long> hp(REPS * BLOCKS), hd(REPS * 2 * BLOCKS);
        CK(cudaMemcpy(hp.data(), ps, hp.size() * 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(hd.data(), ds, hd.size() * 8, cudaMemcpyDeviceToHost));
        CK(cudaGraphExecDestroy(ge));
        CK(cudaGraphDestroy(gr));
        std::vector<double> hand, entry, wait;
        for (int r = 2; r < REPS; r++) {
          const unsigned long long *p = hp.data() + r * BLOCKS, *d = hd.data() + r * 2 * BLOCKS;
          const double end = (double)*std::max_element(p, p + BLOCKS);
          hand.push_back(((double)*std::min_element(d + BLOCKS, d + 2 * BLOCKS) - end) * 1e-3);
          entry.push_back(((double)*std::max_element(d, d + BLOCKS) - end) * 1e-3);
          wait.push_back(((double)*std::max_element(d + BLOCKS, d + 2 * BLOCKS) - end) * 1e-3);
        }
        auto med = [](std::vector<double> v) {
          std::sort(v.begin(), v.end());
          return v[v.size() / 2];
        };
        char when[32];
        if (lead < 0) snprintf(when, sizeof when, "after wait");
        else snprintf(when, sizeof when, "%.1f us early", lead * 1e-3);
        printf("%-9s %-13s %6d | %9.2f %9.2f %9.2f\n", kind == COPY ? "copy" : "prefetch", when, mb,
               med(hand), med(entry), med(wait));
        fflush(stdout);
      }
  return 0;
}
