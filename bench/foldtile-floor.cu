// foldtile-floor: how fast a smallm kernel for M = 65-256 can move its bytes when its blocks
// hold tiles of R weight rows x TT tokens over all of K (no cluster) or over a part of K in
// clusters of 2, 4 or 8 blocks along K, measured as the library's bench measures (a graph of 200
// calls, cold L2, median of 7 replays; bench-cuda.cuh), beside cuBLAS in the same run.
//
// Why (docs/smallm-notes.md, sessions 28-29 and 66): at M = 128-256 the split's chains on
// separate SMs exchange chains x M x N x 4 bytes (2.2-3.9 us at M = 128), more than the targets
// leave. With fewer K parts per tile the exchange shrinks to the tile's R x TT sums per part, but
// each block then takes in its R rows and TT tokens over a larger part of K: the bytes into the
// SMs are W x M / TT + X x N / R, for tiles that cover the grid in one wave. This kernel does
// only the movement: a block of 256 threads per tile streams its rows and tokens of its K part
// through a ring of NS stages of KS columns (one mbarrier per stage, a __syncthreads before a
// stage is refilled), then, in a cluster, leaves its R x TT floats in shared memory and each rank
// adds its share of every rank's in rank order (the library's pull: the restricted cluster
// barrier, DSMEM loads, the exit barrier) and stores them; alone it stores its tile. No
// arithmetic and only one partial sum per rank (the library's order needs one per K slice), so
// where this floor is above a target no kernel fed this way meets it. The best of R and TT in
// 16-128, KS and NS counts, plainly and, with --pdl, under PDL (the first stages' weight copies
// before griddepcontrol.wait, x's after it).
// Feeds: one 1-D bulk copy per row and stage, issued by the lanes of all eight warps (default);
// --tma: two tensor-map boxes per stage (rows, tokens) from thread 0, up to 12 stages in flight;
// --warp-tma: the same boxes through a ring per warp, each warp an eighth of the K part.
//
// On the H200 (session 66), per-row copies: the floor is above the target at 14 of the 18 cells
// of the nine DSV4 shapes at M = 128 and 256 for every cluster size; under it at 256x4096
// M = 128 (3.60 us against 4.55, clusters of 4), 1024x4096 M = 128 (0.95 of the target),
// 512x4096 M = 128 and 256x4096 M = 256 (0.98-0.99). Without a cluster the blocks took in about
// 75-105 GB/s each after a start of about 1 us, 9.6-13.5 TB/s over the GPU. --tma was no faster
// (0.94-1.50 of the targets). A ring per warp (a quarter of K and half of the rows each, per-row
// copies; an earlier form of this probe, not kept) was 1.1-2.1x slower. --same, every block
// reading the first tile's rows (all bytes shared, as x is in the stream kernel), was only 0-15 %
// faster (256x4096 M = 128 without a cluster 4.68 -> 4.06 us): the feed's rate, not the rows'
// being distinct, limits these forms. --warp-tma, a ring per warp of tensor-map boxes over an
// eighth of the K part (the stream kernel's feed, which took in 160 GB/s per SM from one shared
// L2-resident 1 MB in bench/ingress-rate.cu; session 66 with boxes of 64 and 128 columns, now
// swept up to 224): 1.03-1.77 of the targets, no better, its stages small in an eighth of the
// shared memory (with --same 0.84-1.13 at M = 128: that feed does gain from shared rows, which a
// tile's distinct weight rows and tokens are not).
// This file's per-row feed runs 3-15 % slower than its first form (git bfdc5b3), which gave the
// per-row figures above (same logic; the tensor maps in the kernel's argument took about half of
// that in an A/B on the H200, the rest was not found); --same and the box feeds were measured
// with this form.
// --mcast (N >= 1024, M = 16-64 by --m): tiles of R rows and all M tokens over all of K, x shared
// by a cluster of 2 or 4 row blocks (each rank multicasts its share of the x rows into every
// rank's ring; a cluster barrier after each stage keeps a slot until all ranks have read it):
// 1.24-1.46x slower than each block copying all of x itself, at all 12 cells.
// --mcast-arrive (session 67): the same sharing with x's share as one multicast tensor box per
// stage from a producer thread off the consumers' path, each slot refilled once every rank's
// consumers have released it (an empty mbarrier per slot: arrivals from the own rank's consumers
// locally, from the others' remotely and relaxed, the cheapest release; see release_to_cluster):
// 1.08-1.16x slower with 2 ranks and 1.08-1.14x with 4 than with 1 (each block its own x), at
// all 12 cells, M = 64 included, where x is most of the bytes: fewer L2 reads of x do not
// shorten the call. With the remote arrivals at release semantics and cluster scope
// (mbarrier.arrive.release.cluster, sessions 12 and 15's form) 2.2-3.0x slower (N = 2048).
// --n N: only the shapes of that N. --pdl-only: only launches under PDL.
// --l2 (the per-row and --tma feeds, under PDL): each row's columns past the ring's first stages
// requested into L2 before griddepcontrol.wait, as the library's stream kernel requests x and,
// where its table says so, its later weights: whether more bytes on their way before the wait
// move the M = 128-256 floor. --l2-cols C: only C columns past the first stages; --l2-w: only the
// weight rows; --l2-late: the requests after the first stages' copies rather than at entry.
// Session 68, per-row feed, the best per cell against the same run without the requests: --l2
// 1.00-1.63x, --l2-late 1.01-1.62x, --l2-cols 512 1.00-1.11x, --l2-w 1.00-1.27x; unchanged only
// where the ring's first stages already cover the K part. The loss grows with the bytes
// requested, wherever they are issued, though the ring reads every one of those bytes anyway.
// At M = 16 and 32 (--m 16,32,64) no feed here is a floor: the library's own kernels are faster
// than the best of the per-row and --warp-tma feeds at eight of the nine M = 16 cells and two
// M = 32 ones (inferred: under PDL they request more of their bytes before the wait).
// --mma (session 69): the per-row feed with the library's arithmetic (mma_kernel): each block SPB
// K slices of the library's split (clusters of ksplit / SPB along K), the chains summed in the
// library's order and added through the pull, every tile's first call checked bit for bit
// against smallm's output (no tile differed); each tile also timed as the floor (no arithmetic).
// --tile R,TT,KS,NS,SPB: that tile only; --each: every tile's two times.
// On the H200 under PDL (calls 2 and 6) the best tile per cell ran 2.3-12.5x the target
// (256x4096 M = 128 10.23 us, against the target's 4.53, the floor's 3.9-4.1 and smallm's 5.69);
// at two tiles of call 3's form the arithmetic took 2.6-4.1x the floor's time (64 x 64 and 32 x 64
// on clusters of 8: 5.07 -> 13.01 and 5.04 -> 20.47 us). ncu (call 6, the 32 x 64 tile, plain,
// isolated): 1,762 instructions per warp at 8.4 cycles each, two warps per scheduler and at
// C < 8 one of them busy per stage; a sub-chunk's 16 MMAs take about 88 instructions, half of
// them moves that pair rows g and g + 8 in the MMA's A registers (session 5's reading of the wide
// kernel); 21 % of the stall samples at the cluster's exit barrier. A first form (each warp 2-4
// pieces over every chain, call 1) ran 1.75-6.09x the targets, 1.9-3.4x its floor. Call 9 (the
// block sums through the library's bf16fp32__smallm_unit_sum, four rows at a time, where call 6
// added single floats): 9.56 and 15.02 us at 256x4096 and 256x7168 M = 128 (call 8: 10.26 and
// 15.73), the library's bits at all 220 tiles. Session 71 (each piece's two MMAs through the
// library's bf16fp32__smallm_mma_sub, one loop, where two loops issued all first MMAs, then all
// second ones): 9.48 and 14.77 us against 9.60 and 15.11 in the same call, the same bits.
// Build: nvcc -O3 -std=c++17 -Isrc -Iinclude -gencode=arch=compute_90a,code=sm_90a bench/foldtile-floor.cu
//   src/backends/smallm/smallm-{kernel,decode,wide,stream,share,fold,wgmma-sm90a}.cu
//   src/backends/smallm/smallm-{config,prefer}.c -lcublas (the library's kernels for --mma's check)
#include <cuda_runtime.h>

#include <cstdint>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include <cooperative_groups.h>

#include "backends/smallm/smallm-cluster-sum.cuh" /* the pull's cluster barriers, add4 */
#include "backends/smallm/smallm-config.h"      /* --mma: the split, its slices and chains */
#include "backends/smallm/smallm-fragments.cuh"   /* the bulk copy and the mbarrier helpers */
#include "backends/smallm/smallm-launch.h"      /* --mma: the library's bits to check against */
#include "backends/smallm/smallm-tiles.cuh"       /* bf16fp32__tma_box, close_chain, lds16 */
#include "bench-cublas.cuh"
#include "bench-tma.cuh"
#include "bench-cuda.cuh"
#include "measure-floor.h"

namespace {

constexpr int THREADS = 256, WARPS = THREADS / 32, RING = 128; /* the ring after the barriers */
constexpr int WRING = 1024; /* --warp-tma: the rings after the warps' barriers */
constexpr int MAXNS = 4, MAXNS_TMA = 12; /* stages in flight: per-row copies, tensor boxes */
constexpr int ARRIVE_NS = 8, EMPTY = 64; /* --mcast-arrive: stages; its empty barriers' offset */
static_assert(8 * ARRIVE_NS <= EMPTY && EMPTY + 8 * ARRIVE_NS <= RING, "barriers before the ring");

struct Args {
  CUtensorMap tw, tx; /* the weights' and x's maps, boxes of KS columns x R or TT rows (TT / mc
                       * with --mcast-arrive) */
  const uint16_t *w, *x;
  float *out;
  int n, k, m;
  int rows, tt, ks, ns; /* tile rows and tokens, stage columns, stages in flight */
  int pitch;            /* bytes per row in a stage of the per-row feed (2 KS, + 64 with --mma) */
  int ranks;            /* blocks of a cluster along K (blockIdx.z), each a part of K */
  int mc;               /* --mcast: blocks of a cluster along the rows sharing x by multicast */
  int arrive;           /* --mcast-arrive: a producer thread, slots released by remote arrivals */
  int l2;               /* --l2: under PDL the rows past the first stages into L2 before the wait */
  int l2_cols;          /* --l2-cols C: only C columns past the first stages (0: all of the part) */
  int l2_w;             /* --l2-w: only the weight rows (no token rows) */
  int l2_late;          /* --l2-late: the requests after the first stages' copies, not at entry */
  int same;             /* --same: every block reads tile (0, 0)'s rows (all of them shared) */
  int tma;              /* --tma: a stage is two tensor-map boxes (its rows, its tokens) */
  int warp_rings;       /* --warp-tma: a ring per warp over an eighth of the K part, boxes */
  int pdl;
};

/* --mma's own arguments, apart from Args so that the floor's kernels keep their code: with these
 * fields in Args and the pull reading its set count from them, the floor ran 1-8 % slower on the
 * H200 (session 69, calls 7 and 8; as it is, within 1 % of the form before --mma). */
struct MmaArgs {
  int kwarps;     /* the library split's chains per K slice */
  int spb;        /* the split's K slices per block (ranks x spb = ksplit) */
  int block_cols; /* a block's columns (spb equal slices) */
  int chain_len;  /* sub-chunks per chain (the split's, all equal) */
  int rgw, tgw;   /* a warp's pieces: 16-row groups x 8-token groups */
};

/* The block's tile: (row block, token tile), tile (0, 0) for every block with --same. */
__device__ __forceinline__ int2 tile_of_block(const Args &a) {
  return a.same ? make_int2(0, 0)
                : make_int2(static_cast<int>(blockIdx.x), static_cast<int>(blockIdx.y));
}

/* Row i of the block's tile: weight row i (i < R), else token i - R (the last token past M). */
__device__ __forceinline__ const uint16_t *row_src(const Args &a, int i) {
  const int2 t = tile_of_block(a);
  return i < a.rows ? a.w + static_cast<long long>(t.x * a.rows + i) * a.k
                    : a.x + static_cast<long long>(min(t.y * a.tt + i - a.rows, a.m - 1)) * a.k;
}

/* Copy i of a stage (rows first, then tokens) is issued by lane i / 8 of warp i % 8: each
 * issuing lane arrives on the stage's barrier with its own bytes. */
__device__ __forceinline__ void issue(const Args &a, uint32_t base, int q, int first, int last,
                                      int k0, int k1) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int copies = a.rows + a.tt, slot = q % a.ns;
  const int cols = min(a.ks, k1 - k0 - q * a.ks), bytes = 2 * cols;
  const uint32_t bar = base + 8 * slot;
  const uint32_t stage = base + RING + static_cast<uint32_t>(slot * copies * a.pitch);
  for (int i = warp + WARPS * lane; i < copies; i += THREADS) {
    if (i < first || i >= last) continue;
    const uint16_t *src = row_src(a, i);
    bf16fp32__bar_expect(bar, bytes);
    bf16fp32__bulk_copy(stage + i * a.pitch, src + k0 + q * a.ks, bytes, bar);
  }
}

/* --mcast: the tile's rows over all of K, the x rows shared by a cluster of mc row blocks
 * (blockIdx.x): rank r copies the x rows j with j % mc == r into every rank's ring by one
 * multicast copy each, its weight rows alone; each block's stage barrier expects all the stage's
 * bytes (thread 0's one arrival), and a cluster barrier after every stage keeps a slot until
 * every rank has read it. */
__device__ __forceinline__ void issue_mcast(const Args &a, uint32_t base, int q, bool w_rows,
                                            bool x_rows, int rank) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int copies = a.rows + a.tt, slot = q % a.ns;
  const int bytes = 2 * min(a.ks, a.k - q * a.ks);
  const uint32_t bar = base + 8 * slot;
  const uint32_t stage = base + RING + static_cast<uint32_t>(slot * copies * a.ks * 2);
  if (w_rows && threadIdx.x == 0) bf16fp32__bar_expect(bar, copies * bytes);
  const unsigned short everyone = static_cast<unsigned short>((1u << a.mc) - 1u);
  for (int i = warp + WARPS * lane; i < copies; i += THREADS) {
    const bool is_w = i < a.rows;
    if (is_w ? !w_rows : (!x_rows || (i - a.rows) % a.mc != rank)) continue;
    const uint16_t *src = row_src(a, i);
    if (is_w || a.mc == 1)
      bf16fp32__bulk_copy(stage + i * a.ks * 2, src + q * a.ks, bytes, bar);
    else
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
          "[%0], [%1], %2, [%3], %4;" ::"r"(stage + i * a.ks * 2),
          "l"(src + q * a.ks), "r"(bytes), "r"(bar), "h"(everyone)
          : "memory");
  }
}

__device__ __forceinline__ void cluster_sync_all() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;"
               ::: "memory");
}

/* --tma, --warp-tma: one stage as two tensor-map boxes at column c0 into `stage`, the tile's R
 * weight rows, then its TT tokens (tokens past M and columns past K arrive as zeros and count);
 * with the rows, the one arrival expecting both. By one thread. */
__device__ __forceinline__ void tile_boxes(const Args &a, uint32_t stage, uint32_t bar, int c0,
                                           bool w_rows, bool x_rows) {
  const int2 t = tile_of_block(a);
  if (w_rows) {
    bf16fp32__bar_expect(bar, (a.rows + a.tt) * a.ks * 2);
    bf16fp32__tma_box(stage, &a.tw, c0, t.x * a.rows, bar);
  }
  if (x_rows) bf16fp32__tma_box(stage + a.rows * a.ks * 2, &a.tx, c0, t.y * a.tt, bar);
}

/* --l2, under PDL (per-row and --tma feeds): each row's columns past the ring's first stages (the
 * next C of them with --l2-cols, weight rows only with --l2-w) requested into L2 before the wait,
 * as the stream kernel's w_to_l2 and x requests do, so that they come from DRAM while the
 * previous call finishes; at block entry, or with --l2-late after the first stages' copies. */
__device__ __forceinline__ void request_rest_to_l2(const Args &a, int k0, int k1) {
  const int past = k0 + a.ns * a.ks, upto = a.l2_cols ? min(k1, past + a.l2_cols) : k1;
  if (!a.pdl || a.warp_rings || past >= upto) return;
  for (int i = threadIdx.x; i < (a.l2_w ? a.rows : a.rows + a.tt); i += THREADS)
    bf16fp32__bulk_to_l2(row_src(a, i) + past, 2u * static_cast<uint32_t>(upto - past));
}

/* The ring's first NS stages of nq: under PDL the weights before griddepcontrol.wait and x after
 * it, plainly both before it. feed(q, w_rows, x_rows) issues stage q; before_wait() runs between
 * the first stages' issue and the wait. */
template <class Feed, class BeforeWait>
__device__ void feed_first_stages(const Args &a, int nq, Feed feed, BeforeWait before_wait) {
  const int pro = min(a.ns, nq);
  for (int q = 0; q < pro; q++) feed(q, true, !a.pdl);
  before_wait();
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (a.pdl)
    for (int q = 0; q < pro; q++) feed(q, false, true);
}

/* The stages' run: the first NS stages fed (feed_first_stages), then each stage waited for on
 * bars + 8 * slot and handed to consume(q, stage) (the probe's floor reads one 4-byte word of it,
 * so that the data is used; --mma runs its MMAs on it), the slot released and fed again.
 * release() frees a slot. */
template <class Feed, class Consume, class Release, class BeforeWait>
__device__ void run_stages(const Args &a, const unsigned char *ring, uint32_t bars,
                           int stage_bytes, int nq, Feed feed, Consume consume, Release release,
                           BeforeWait before_wait) {
  feed_first_stages(a, nq, feed, before_wait);
  for (int q = 0; q < nq; q++) {
    const int slot = q % a.ns;
    bf16fp32__bar_wait(bars + 8 * slot, (q / a.ns) & 1);
    consume(q, ring + slot * stage_bytes);
    release();
    if (q + a.ns < nq) feed(q + a.ns, true, true);
  }
}

/* The floor's use of a stage: word `word` of it added to acc. */
struct ReadWord {
  float &acc;
  int word;
  __device__ void operator()(int, const unsigned char *stage) const {
    acc += reinterpret_cast<const float *>(stage)[word];
  }
};

/* The block's ring (one per block, NS stages after the barriers): fed by per-row copies, by
 * boxes (--tma) or, MCAST, by multicast; a slot released by the block's barrier, with
 * multicast the cluster's; each stage handed to consume(q, stage). */
template <bool MCAST, class Consume>
__device__ void run_ring(const Args &a, const unsigned char *smem, uint32_t base, int nq, int k0,
                         int k1, int rank, Consume consume) {
  const int copies = a.rows + a.tt, stage_bytes = copies * a.pitch;
  auto feed = [&](int q, bool w_rows, bool x_rows) {
    if constexpr (MCAST)
      issue_mcast(a, base, q, w_rows, x_rows, rank);
    else if (!a.tma)
      issue(a, base, q, w_rows ? 0 : a.rows, x_rows ? copies : a.rows, k0, k1);
    else if (threadIdx.x == 0)
      tile_boxes(a, base + RING + static_cast<uint32_t>((q % a.ns) * stage_bytes),
                 base + 8 * (q % a.ns), k0 + q * a.ks, w_rows, x_rows);
  };
  auto release = [] {
    if constexpr (MCAST)
      cluster_sync_all();
    else
      __syncthreads();
  };
  auto l2_late = [&] { /* --l2 is for the unshared feeds only */
    if constexpr (!MCAST)
      if (a.l2_late) request_rest_to_l2(a, k0, k1);
  };
  run_stages(a, smem + RING, base, stage_bytes, nq, feed, consume, release, l2_late);
}

/* The tile's R x TT outputs, each written once (the value is not a product). */
__device__ __forceinline__ void store_tile(const Args &a, float v) {
  for (int u = threadIdx.x; u < a.rows * a.tt; u += THREADS) {
    const int tok = static_cast<int>(blockIdx.y) * a.tt + u / a.rows;
    if (tok < a.m) a.out[static_cast<long long>(tok) * a.n + blockIdx.x * a.rows + u % a.rows] = v;
  }
}

/* --warp-tma: warp w streams the whole tile (R rows, TT tokens) over its eighth of [k0, k1)
 * through its own ring of NS stages of KS columns, two tensor-map boxes per stage issued by its
 * lane 0, the warp waiting on its own barriers and releasing a slot behind __syncwarp (the
 * stream kernel's feed). The last stage of a warp may read past its eighth (boxes are whole). */
__device__ float run_warp_rings(const Args &a, const unsigned char *smem, uint32_t base, int k0,
                                int k1) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int kw = (((k1 - k0 + WARPS - 1) / WARPS + 7) / 8) * 8;
  const int wk0 = min(k1, k0 + warp * kw), wk1 = min(k1, wk0 + kw);
  const int nq = (wk1 - wk0 + a.ks - 1) / a.ks, stage_bytes = (a.rows + a.tt) * a.ks * 2;
  const uint32_t bars = base + 8 * MAXNS_TMA * warp;
  const int ring = WRING + warp * a.ns * stage_bytes; /* bytes from smem */
  auto feed = [&](int q, bool w_rows, bool x_rows) {
    if (lane == 0)
      tile_boxes(a, base + static_cast<uint32_t>(ring + (q % a.ns) * stage_bytes),
                 bars + 8 * (q % a.ns), wk0 + q * a.ks, w_rows, x_rows);
  };
  float acc = 0.0f;
  run_stages(a, smem + ring, bars, stage_bytes, nq, feed, ReadWord{acc, lane},
             [] { __syncwarp(); }, [] {});
  return acc;
}

/* The cluster's exchange in the library's pull: the block's SPB sets of R x TT partial sums in
 * its shared memory (part[slice][token][row]) behind the restricted cluster barrier, each rank
 * adds its share of the float4 units (4 rows of a token) from every rank's sets in rank and set
 * order and stores them, then the exit barrier; alone (one rank) the block adds its own sets.
 * After a __syncthreads that follows the writes to part. */
__device__ __forceinline__ void pull_and_store(const Args &a, const float *part, int spb) {
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  const int rank = a.ranks > 1 ? static_cast<int>(cluster.block_rank()) : 0;
  const int units = a.rows * a.tt / 4, sets = a.ranks * spb;
  if (a.ranks > 1) bf16fp32__smallm_cluster_share();
  for (int u = rank * units / a.ranks + threadIdx.x; u < (rank + 1) * units / a.ranks; u += THREADS) {
    float4 v[8];
#pragma unroll
    for (int i = 0; i < 8; i++)
      if (i < sets) {
        const float *from =
            a.ranks > 1 ? cluster.map_shared_rank(const_cast<float *>(part), i / spb) : part;
        v[i] = reinterpret_cast<const float4 *>(from)[(i % spb) * units + u];
      }
    float4 sum = v[0];
#pragma unroll
    for (int i = 1; i < 8; i++)
      if (i < sets) bf16fp32__smallm_add4(sum, v[i]);
    const int tok = static_cast<int>(blockIdx.y) * a.tt + (4 * u) / a.rows;
    if (tok < a.m)
      *reinterpret_cast<float4 *>(a.out + static_cast<long long>(tok) * a.n + blockIdx.x * a.rows +
                                  (4 * u) % a.rows) = sum;
  }
  if (a.ranks > 1) bf16fp32__smallm_cluster_exit();
}

__global__ void __launch_bounds__(THREADS, 1) floor_kernel(const __grid_constant__ Args a) {
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const int kpart = (((a.k + a.ranks - 1) / a.ranks + 7) / 8) * 8;
  const int k0 = min(a.k, static_cast<int>(blockIdx.z) * kpart), k1 = min(a.k, k0 + kpart);
  const int copies = a.rows + a.tt, nq = (k1 - k0 + a.ks - 1) / a.ks;
  if (threadIdx.x == 0) {
    const int bars = a.warp_rings ? WARPS * MAXNS_TMA : a.ns;
    for (int s = 0; s < bars; s++) bf16fp32__bar_init(base + 8 * s, a.tma || a.warp_rings ? 1 : copies);
    bf16fp32__bar_init_fence();
  }
  __syncthreads();
  if (a.l2 && !a.l2_late) request_rest_to_l2(a, k0, k1);
  float acc = 0.0f;
  if (a.warp_rings)
    acc = run_warp_rings(a, smem, base, k0, k1);
  else
    run_ring<false>(a, smem, base, nq, k0, k1, 0, ReadWord{acc, static_cast<int>(threadIdx.x)});
  __syncthreads(); /* every warp done with the rings before they hold the sums */
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (a.ranks == 1) {
    store_tile(a, acc);
    return;
  }
  float *part = reinterpret_cast<float *>(smem + (a.warp_rings ? WRING : RING));
  for (int u = threadIdx.x; u < a.rows * a.tt; u += THREADS) part[u] = acc + u;
  __syncthreads();
  pull_and_store(a, part, 1);
}

/* --mma: the per-row feed with the library's arithmetic on it. A block holds SPB consecutive K
 * slices of the library's split (ranks x SPB = ksplit; the host takes only splits of equal slices
 * and chains and passes a block's columns and the chain length), so C = SPB x kwarps chains.
 * Chains go to warps: at C >= 8 chain c to warp c % 8, all of the tile's pieces (16 rows x 8
 * tokens); at C < 8 chain c to 8 / C warps, each RGW x TGW of the pieces. A warp runs the
 * sub-chunks of its chains that a stage holds as it lands, each chain from zero, with the
 * library's fragments (lane (g, t): 16 bytes at k = 8t of rows g and g + 8 and of token g per
 * sub-chunk, words 0-1 one MMA, 2-3 the next), and leaves each chain's sums in shared memory;
 * then every output adds a slice's chains (((c0 + c1) + c2) ...: the block sum) and the pull
 * adds the slices in rank and slice order: the library's bits (checked). Rows lie PITCH = 2 KS +
 * 64 bytes apart (64 mod 128), so rows g and g + 1 of a fragment read fall in different banks. */
template <int RGW, int TGW>
__global__ void __launch_bounds__(THREADS, 1) mma_kernel(const __grid_constant__ Args a,
                                                         const __grid_constant__ MmaArgs ma) {
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int k0 = static_cast<int>(blockIdx.z) * ma.block_cols, k1 = k0 + ma.block_cols;
  const int copies = a.rows + a.tt, nq = (ma.block_cols + a.ks - 1) / a.ks;
  const int nchains = ma.spb * ma.kwarps, len = ma.chain_len, per_stage = a.ks / 32;
  /* the warp's chains (cfirst, cfirst + cstep, ...) and its pieces (rg0.., tg0..) */
  const int wpc = nchains >= WARPS ? 1 : WARPS / nchains; /* warps per chain */
  const int part_of = nchains >= WARPS ? 0 : warp % wpc;
  const int cfirst = nchains >= WARPS ? warp : warp / wpc;
  const int cstep = nchains >= WARPS ? WARPS : nchains;
  const int tsplit = a.tt / 8 / TGW, rg0 = part_of / tsplit * RGW, tg0 = part_of % tsplit * TGW;
  /* the chains' sums after the ring: [chain][token][row] */
  float *chains = reinterpret_cast<float *>(smem + RING + a.ns * copies * a.pitch);
  if (threadIdx.x == 0) {
    for (int s = 0; s < a.ns; s++) bf16fp32__bar_init(base + 8 * s, copies);
    bf16fp32__bar_init_fence();
  }
  __syncthreads();
  int wo[RGW], xo[TGW]; /* the lane's fragment offsets in a stage: rows g (g + 8 at 8 pitches) */
#pragma unroll
  for (int r = 0; r < RGW; r++) wo[r] = ((rg0 + r) * 16 + g) * a.pitch + 16 * t;
#pragma unroll
  for (int b = 0; b < TGW; b++) xo[b] = (a.rows + (tg0 + b) * 8 + g) * a.pitch + 16 * t;
  const int p8 = 8 * a.pitch;
  float acc[RGW][TGW][4];
#pragma unroll
  for (int r = 0; r < RGW; r++)
#pragma unroll
    for (int b = 0; b < TGW; b++) acc[r][b][0] = acc[r][b][1] = acc[r][b][2] = acc[r][b][3] = 0.0f;
  auto consume = [&](int q, const unsigned char *stage) {
    const int j0 = q * per_stage, j1 = j0 + per_stage;
    for (int c = cfirst; c < nchains; c += cstep) {
      const int c0 = c * len, c1 = c0 + len, lo = max(c0, j0), hi = min(c1, j1);
      if (lo >= hi) continue;
      for (int j = lo; j < hi; j++) {
        const unsigned char *at = stage + 64 * (j - j0);
        uint4 w0[RGW], w8[RGW], x[TGW];
#pragma unroll
        for (int r = 0; r < RGW; r++) {
          w0[r] = bf16fp32__lds16(at + wo[r]);
          w8[r] = bf16fp32__lds16(at + wo[r] + p8);
        }
#pragma unroll
        for (int b = 0; b < TGW; b++) x[b] = bf16fp32__lds16(at + xo[b]);
#pragma unroll
        for (int r = 0; r < RGW; r++)
#pragma unroll
          for (int b = 0; b < TGW; b++) bf16fp32__smallm_mma_sub(acc[r][b], w0[r], w8[r], x[b]);
      }
      if (hi == c1) { /* the chain closes here: its sums out, the next from zero */
        float *out = chains + c * a.rows * a.tt;
#pragma unroll
        for (int r = 0; r < RGW; r++)
#pragma unroll
          for (int b = 0; b < TGW; b++) {
            const int tok = (tg0 + b) * 8 + 2 * t, row = (rg0 + r) * 16 + g;
            out[tok * a.rows + row] = acc[r][b][0], out[(tok + 1) * a.rows + row] = acc[r][b][1];
            out[tok * a.rows + row + 8] = acc[r][b][2];
            out[(tok + 1) * a.rows + row + 8] = acc[r][b][3];
            acc[r][b][0] = acc[r][b][1] = acc[r][b][2] = acc[r][b][3] = 0.0f;
          }
      }
    }
  };
  run_ring<false>(a, smem, base, nq, k0, k1, 0, consume);
  __syncthreads(); /* every chain's sums in, every warp done with the ring */
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  /* each slice's block sum over its chains, in chain order (the library's unit sum, 4 rows of a
   * token at a time), into part[slice][token][row] */
  float *part = reinterpret_cast<float *>(smem + RING);
  const int tile = a.rows * a.tt;
  for (int sl = 0; sl < ma.spb; sl++)
    for (int e = 4 * threadIdx.x; e < tile; e += 4 * THREADS)
      *reinterpret_cast<float4 *>(part + sl * tile + e) = bf16fp32__smallm_unit_sum<8>(
          chains + sl * ma.kwarps * tile + e, tile, ma.kwarps);
  __syncthreads();
  pull_and_store(a, part, ma.spb);
}

using MmaKernel = void (*)(Args, MmaArgs);
/* The instance for warps of rgw x tgw pieces (nullptr: none built). */
MmaKernel mma_kernel_for(int rgw, int tgw) {
  switch (rgw * 100 + tgw) {
    case 101: return mma_kernel<1, 1>;
    case 102: return mma_kernel<1, 2>;
    case 104: return mma_kernel<1, 4>;
    case 108: return mma_kernel<1, 8>;
    case 201: return mma_kernel<2, 1>;
    case 202: return mma_kernel<2, 2>;
    case 204: return mma_kernel<2, 4>;
    case 208: return mma_kernel<2, 8>;
    case 401: return mma_kernel<4, 1>;
    case 402: return mma_kernel<4, 2>;
    case 404: return mma_kernel<4, 4>;
    default: return nullptr;
  }
}

__global__ void __launch_bounds__(THREADS, 1) mcast_kernel(const __grid_constant__ Args a) {
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const int nq = (a.k + a.ks - 1) / a.ks, rank = static_cast<int>(blockIdx.x) % a.mc;
  if (threadIdx.x == 0) {
    for (int s = 0; s < a.ns; s++) bf16fp32__bar_init(base + 8 * s, 1);
    bf16fp32__bar_init_fence();
  }
  cluster_sync_all(); /* every rank's barriers ready before any multicast lands */
  float acc = 0.0f;
  run_ring<true>(a, smem, base, nq, 0, a.k, rank, ReadWord{acc, static_cast<int>(threadIdx.x)});
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  store_tile(a, acc);
}

/* --mcast-arrive: the x rows shared as by --mcast, but fed by one producer thread (thread 0; the
 * rest of warp 0 idle), so that the consumers (warps 1-7) never issue copies: per stage a box of
 * the tile's weight rows into its own slot and, multicast, a box of its rank's TT / mc x rows
 * into every rank's slot, after waiting for that slot's empty barrier, on which each rank's
 * consumers arrive once done with it: on their own rank's locally, on the others' remotely.
 * The remote arrivals are relaxed, the least such a release can cost: arrivals with release
 * semantics at cluster scope made the ring 2.2-3.0x slower on the H200 (session 67). Relaxed is
 * safe here only because the consumers read words of the weight rows, which no other rank
 * writes; a kernel that reads the multicast x rows needs its reads ordered before the remote
 * arrival (release semantics, as the default .release.cta of CUTLASS's pipelines; not
 * measured here). */
__device__ __forceinline__ void release_to_cluster(uint32_t empty, int mc, int rank) {
  for (int r = 0; r < mc; r++) {
    if (r == rank) {
      asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(empty) : "memory");
      continue;
    }
    uint32_t remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(empty), "r"(r));
    asm volatile("mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote)
                 : "memory");
  }
}

__global__ void __launch_bounds__(THREADS, 1) mcast_arrive_kernel(const __grid_constant__ Args a) {
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const int nq = (a.k + a.ks - 1) / a.ks, rank = static_cast<int>(blockIdx.x) % a.mc;
  const int xr = a.tt / a.mc, stage_bytes = (a.rows + a.tt) * a.ks * 2;
  if (threadIdx.x == 0) {
    for (int s = 0; s < a.ns; s++) {
      bf16fp32__bar_init(base + 8 * s, 1);
      bf16fp32__bar_init(base + EMPTY + 8 * s, a.mc);
    }
    bf16fp32__bar_init_fence();
  }
  cluster_sync_all(); /* every rank's barriers ready before any multicast or arrival lands */
  float acc = 0.0f;
  if (threadIdx.x == 0) {
    const unsigned short everyone = static_cast<unsigned short>((1u << a.mc) - 1u);
    auto feed = [&](int q, bool w_rows, bool x_rows) {
      const int slot = q % a.ns;
      const uint32_t bar = base + 8 * slot, stage = base + RING + slot * stage_bytes;
      if (w_rows) {
        bf16fp32__bar_expect(bar, stage_bytes);
        bf16fp32__tma_box(stage, &a.tw, q * a.ks, tile_of_block(a).x * a.rows, bar);
      }
      if (!x_rows) return;
      const uint32_t xdst = stage + (a.rows + rank * xr) * a.ks * 2;
      if (a.mc == 1)
        bf16fp32__tma_box(xdst, &a.tx, q * a.ks, 0, bar);
      else
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
            ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(xdst),
            "l"(reinterpret_cast<uint64_t>(&a.tx)), "r"(q * a.ks), "r"(rank * xr), "r"(bar),
            "h"(everyone)
            : "memory");
    };
    feed_first_stages(a, nq, feed, [] {});
    for (int q = a.ns; q < nq; q++) {
      bf16fp32__bar_wait<true>(base + EMPTY + 8 * (q % a.ns), (q / a.ns - 1) & 1);
      feed(q, true, true);
    }
  } else if (threadIdx.x >= 32) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    for (int q = 0; q < nq; q++) {
      const int slot = q % a.ns;
      bf16fp32__bar_wait(base + 8 * slot, (q / a.ns) & 1);
      acc += reinterpret_cast<const float *>(smem + RING + slot * stage_bytes)[threadIdx.x];
      asm volatile("bar.sync 1, %0;" ::"r"(THREADS - 32) : "memory"); /* the consumers done */
      if (threadIdx.x == 32 && q + a.ns < nq)
        release_to_cluster(base + EMPTY + 8 * slot, a.mc, rank);
    }
  }
  __syncwarp(); /* warp 0's idle lanes wait for its producer */
  __syncthreads(); /* every warp out of its loop before the aligned cluster barrier */
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  /* every arrival and multicast into this block was waited for above; the barrier keeps the
   * ranks' exits together, as a kernel's cluster sum would */
  cluster_sync_all();
  store_tile(a, acc);
}

struct Pools {
  uint16_t *w, *x;
  float *out;
  size_t wbytes, xbytes, obytes;
  int copies;
};

/* A 2-D map of rows x k bf16 (leading dimension k), boxes of box_cols x box_rows, no swizzle;
 * the program stops if the driver refuses it. */
void encode_rows(CUtensorMap *map, const uint16_t *base, int rows, int k, int box_cols, int box_rows) {
  static const bench_encode_fn encode = bench_map_encoder();
  const cuuint64_t dims[2] = {(cuuint64_t)k, (cuuint64_t)rows}, strides[1] = {(cuuint64_t)k * 2};
  const cuuint32_t box[2] = {(cuuint32_t)box_cols, (cuuint32_t)box_rows}, elem[2] = {1, 1};
  if (encode(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<uint16_t *>(base), dims, strides,
             box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
    printf("cuTensorMapEncodeTiled refused a %d x %d box\n", box_cols, box_rows);
    exit(2);
  }
}

/* One call on operand copy c of the pools: mma_kernel with ma, else the floor's kernels. */
void launch(cudaStream_t s, const Pools &p, const Args &a, size_t smem, int c,
            const MmaArgs *ma) {
  Args b = a;
  b.w = p.w + c * (p.wbytes / 2), b.x = p.x + c * (p.xbytes / 2), b.out = p.out + c * (p.obytes / 4);
  if (a.tma || a.warp_rings || a.arrive) {
    encode_rows(&b.tw, b.w, a.n, a.k, a.ks, a.rows);
    encode_rows(&b.tx, b.x, a.m, a.k, a.ks, a.arrive ? a.tt / a.mc : a.tt);
  }
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute at[2];
  cfg.gridDim = dim3(a.n / a.rows, (a.m + a.tt - 1) / a.tt, a.ranks), cfg.blockDim = dim3(THREADS);
  cfg.dynamicSmemBytes = smem, cfg.stream = s;
  int na = 0;
  if (a.ranks > 1 || a.mc > 1) {
    at[na].id = cudaLaunchAttributeClusterDimension;
    at[na].val.clusterDim.x = a.mc > 1 ? a.mc : 1, at[na].val.clusterDim.y = 1;
    at[na].val.clusterDim.z = a.ranks;
    na++;
  }
  if (a.pdl) {
    at[na].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[na].val.programmaticStreamSerializationAllowed = 1;
    na++;
  }
  cfg.attrs = at, cfg.numAttrs = na;
  if (ma)
    CK(cudaLaunchKernelEx(&cfg, mma_kernel_for(ma->rgw, ma->tgw), b, *ma));
  else
    CK(cudaLaunchKernelEx(
        &cfg, a.arrive ? mcast_arrive_kernel : a.mc > 0 ? mcast_kernel : floor_kernel, b));
}

double time_floor(cudaStream_t s, const Pools &p, const Args &a, size_t smem,
                  const MmaArgs *ma = nullptr) {
  return bench_time_graph(s, 200, [&](int i) { launch(s, p, a, smem, i % p.copies, ma); });
}

/* --mma: operands of random bf16 in [-1, 1), a hash of the element's index and the seed. */
__global__ void fill_random(uint16_t *v, size_t count, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint32_t h = bench_hash(i, seed);
    const float f = static_cast<float>(h >> 8) * (2.0f / 16777216.0f) - 1.0f;
    v[i] = static_cast<uint16_t>(__float_as_uint(f) >> 16); /* truncated: any bf16 will do */
  }
}

/* --mma: outputs of call copy 0 that differ, bit for bit, from the library's ref (M x N). */
long long differing(cudaStream_t s, const Pools &p, const Args &a, const MmaArgs &ma, size_t smem,
                    const float *ref) {
  CK(cudaMemsetAsync(p.out, 0xff, p.obytes, s)); /* NaN poison: an unwritten output differs */
  launch(s, p, a, smem, 0, &ma);
  CK(cudaStreamSynchronize(s));
  std::vector<uint32_t> got(p.obytes / 4), want(p.obytes / 4);
  CK(cudaMemcpy(got.data(), p.out, p.obytes, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(want.data(), ref, p.obytes, cudaMemcpyDeviceToHost));
  long long bad = 0;
  for (size_t i = 0; i < got.size(); i++) bad += got[i] != want[i];
  return bad;
}

}  // namespace

/* --mma: one cell's sweep of tiles on the library's split (clusters of ksplit along K, the
 * slices), each tile timed as the floor (no arithmetic) and with the arithmetic (mma_kernel),
 * every --mma tile's first call checked bit for bit against the library's smallm; prints the best
 * of each and its ratio to the target. */
struct TileChoice {
  int rows, tt, ks, ns, spb; /* --tile: only this one (rows 0: the sweep) */
  bool each;                 /* --each: every tile's two times */
};
void mma_cell(cudaStream_t s, const Pools &p, int n, int k, int m, int sms, int smem_max,
              bool pdl_too, bool pdl_only, double target, const TileChoice &only) {
  bf16fp32__smallm_split sp;
  bf16fp32__smallm_config c;
  float *ref = nullptr;
  if (bf16fp32__smallm_choose_split(n, k, sms, &sp) != 0 ||
      bf16fp32__smallm_choose_for(m, n, k, sms, 0, static_cast<size_t>(smem_max), &c) != 0) {
    printf(" | smallm declines\n");
    return;
  }
  /* the split's slices and chains must be equal, of whole sub-chunks (every DSV4 shape's are) */
  const int subs = k / 32 / sp.ksplit;
  if (k % (32 * sp.ksplit) || subs % sp.kwarps) {
    printf(" | unequal slices or chains (not probed)\n");
    return;
  }
  CK(cudaMalloc(&ref, p.obytes));
  if (bf16fp32__smallm_launch(&c, m, n, k, p.x, k, p.w, k, ref, n, s, 0) != 0) {
    printf(" | smallm's launch failed\n");
    CK(cudaFree(ref));
    return;
  }
  double best[2] = {1e30, 1e30}; /* the floor, with the arithmetic */
  char what[2][64] = {"-", "-"};
  int tiles = 0, wrong = 0;
  for (int pdl = pdl_only ? 1 : 0; pdl <= (pdl_too ? 1 : 0); pdl++)
    for (int spb = 1; spb <= sp.ksplit; spb *= 2)
      for (int rows : {16, 32, 64, 128})
        for (int tt : {16, 32, 64, 128})
          for (int ks : {128, 256, 512, 1024})
            for (int ns : {2, 3, 4}) {
              const int ranks = sp.ksplit / spb, nchains = spb * sp.kwarps;
              const int wpc = nchains >= WARPS ? 1 : WARPS / nchains;
              const int tsplit = std::min(wpc, tt / 8), rsplit = wpc / tsplit;
              const int tgw = tt / 8 / tsplit, rgw = rows / 16 / rsplit;
              const long long blocks = (long long)(n / rows) * ((m + tt - 1) / tt) * ranks;
              if (only.rows && (rows != only.rows || tt != only.tt || ks != only.ks ||
                                ns != only.ns || spb != only.spb))
                continue;
              if (n % rows || tt > m || rsplit * tsplit != wpc || rows / 16 % rsplit ||
                  !mma_kernel_for(rgw, tgw) || blocks > sms || blocks < sms / 4 ||
                  ks > spb * subs * 32)
                continue;
              for (int arith = 0; arith < 2; arith++) {
                Args a = {};
                a.n = n, a.k = k, a.m = m, a.rows = rows, a.tt = tt, a.ks = ks, a.ns = ns;
                a.pitch = 2 * ks + (arith ? 64 : 0), a.pdl = pdl, a.ranks = ranks;
                MmaArgs ma = {};
                ma.kwarps = sp.kwarps, ma.spb = spb, ma.block_cols = spb * subs * 32;
                ma.chain_len = subs / sp.kwarps, ma.rgw = rgw, ma.tgw = tgw;
                const size_t ring = RING + (size_t)ns * (rows + tt) * a.pitch;
                const size_t smem = ring + (arith ? (size_t)nchains * rows * tt * 4 : 0);
                const size_t sums = (size_t)(arith ? spb : 1) * rows * tt * 4; /* over the ring */
                if (smem > (size_t)smem_max || sums > ring - RING) continue;
                if (arith) {
                  tiles++;
                  wrong += differing(s, p, a, ma, smem, ref) != 0;
                }
                const double t = time_floor(s, p, a, smem, arith ? &ma : nullptr);
                if (only.each)
                  printf("\n    %s %d %d %d %d /%d%s: %.2f us", arith ? "mma  " : "floor", rows, tt,
                         ks, ns, ranks, pdl ? " p" : "", t);
                if (t < best[arith]) {
                  best[arith] = t;
                  snprintf(what[arith], sizeof what[arith], "%d %d %d %d /%d%s", rows, tt, ks, ns,
                           ranks, pdl ? " p" : "");
                }
              }
            }
  if (best[1] > 1e29) {
    printf(" | no tile fits\n");
    CK(cudaFree(ref));
    return;
  }
  printf("%s | split %d/%d | floor %-16s %6.2f | mma %-16s %6.2f | %.2f | tiles with other bits "
         "%d of %d\n",
         only.each ? "\n   " : "", sp.rows, sp.ksplit, what[0], best[0], what[1], best[1],
         best[1] / target, wrong, tiles);
  CK(cudaFree(ref));
}

int main(int argc, char **argv) {
  bool pdl_too = false, mcast = false, arrive = false, same = false, tma = false, warp_tma = false;
  bool l2 = false, pdl_only = false, l2_w = false, l2_late = false, mma = false;
  int l2_cols = 0;
  std::vector<int> ms = {128, 256};
  int only_n = 0; /* --n: the shapes of this N only */
  TileChoice only = {};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--pdl")) pdl_too = true;
    else if (!strcmp(argv[i], "--pdl-only")) pdl_too = pdl_only = true;
    else if (!strcmp(argv[i], "--mcast")) mcast = true;
    else if (!strcmp(argv[i], "--mcast-arrive")) mcast = arrive = true;
    else if (!strcmp(argv[i], "--same")) same = true;
    else if (!strcmp(argv[i], "--tma")) tma = true;
    else if (!strcmp(argv[i], "--warp-tma")) warp_tma = true;
    else if (!strcmp(argv[i], "--mma")) mma = true;
    else if (!strcmp(argv[i], "--each")) only.each = true;
    else if (!strcmp(argv[i], "--tile") && i + 1 < argc &&
             sscanf(argv[++i], "%d,%d,%d,%d,%d", &only.rows, &only.tt, &only.ks, &only.ns,
                    &only.spb) != 5) {
      printf("--tile R,TT,KS,NS,SPB\n");
      return 2;
    }
    else if (!strcmp(argv[i], "--n") && i + 1 < argc) only_n = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--l2")) l2 = true;
    else if (!strcmp(argv[i], "--l2-cols") && i + 1 < argc) l2_cols = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--l2-w")) l2_w = true;
    else if (!strcmp(argv[i], "--l2-late")) l2 = l2_late = true;
    else if (!strcmp(argv[i], "--m") && i + 1 < argc) {
      ms.clear();
      for (char *t = strtok(argv[++i], ","); t; t = strtok(nullptr, ",")) ms.push_back(atoi(t));
    }
  }
  struct Shape {
    int n, k;
  };
  const Shape shapes[] = {{256, 4096}, {512, 4096}, {256, 7168}, {384, 7168}, {512, 7168},
                          {1024, 4096}, {1024, 7168}, {2048, 4096}, {2048, 7168}};
  int smem_max = 0, sms = 0;
  CK(cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaFuncSetAttribute(floor_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_max));
  CK(cudaFuncSetAttribute(mcast_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_max));
  CK(cudaFuncSetAttribute(mcast_arrive_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          smem_max));
  for (int rgw : {1, 2, 4})
    for (int tgw : {1, 2, 4, 8})
      if (mma_kernel_for(rgw, tgw))
        CK(cudaFuncSetAttribute(mma_kernel_for(rgw, tgw),
                                cudaFuncAttributeMaxDynamicSharedMemorySize, smem_max));
  if (mma && bf16fp32__smallm_load(static_cast<size_t>(smem_max)) != 0) {
    printf("smallm's kernels did not load\n");
    return 1;
  }
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cublasHandle_t h = bench_cublas_on(s);
  const size_t rot = 512ull << 20; /* rotated over at least this many bytes: cold L2 */
  printf("foldtile-floor: each block streams R weight rows and TT tokens over its part of K "
         "(clusters along K), then the cluster's pull; %d SMs, %d bytes of shared memory per "
         "block\n", sms, smem_max);
  if (mcast)
    printf("%s: over all of K, x shared by multicast in clusters of 1, 2, 4 row blocks%s\n",
           arrive ? "--mcast-arrive" : "--mcast",
           arrive ? "; one producer thread, slots released by remote mbarrier arrivals" : "");
  if (same)
    printf("--same: every block reads the first tile's rows (the same bytes on every SM)\n");
  if (tma) printf("--tma: each stage two tensor-map boxes (rows, tokens), up to %d stages\n", MAXNS_TMA);
  if (warp_tma) printf("--warp-tma: a ring of tensor-map boxes per warp, each an eighth of K\n");
  if (l2)
    printf("--l2: under PDL the %s past the first stages (%d columns; 0: all) requested into L2 "
           "before the wait, %s\n", l2_w ? "weight rows" : "rows", l2_cols,
           l2_late ? "after the first stages' copies" : "at block entry");
  printf("%5s %5s %4s | %6s %6s %6s | clusters of 1, 2, 4%s: the best (R TT KS NS, p: under PDL) "
         "and its us | best / target\n", "N", "K", "M", "F", "cuBLAS", "target",
         mcast ? " along the rows" : ", 8 along K");
  for (const Shape &sh : shapes)
    for (int m : ms) {
      if ((mcast && sh.n < 1024) || (only_n && sh.n != only_n)) continue;
      Pools p;
      p.wbytes = (size_t)sh.n * sh.k * 2, p.xbytes = (size_t)m * sh.k * 2,
      p.obytes = (size_t)m * sh.n * 4;
      p.copies = (int)((rot + p.wbytes + p.xbytes + p.obytes - 1) / (p.wbytes + p.xbytes + p.obytes));
      CK(cudaMalloc(&p.w, p.copies * p.wbytes));
      CK(cudaMalloc(&p.x, p.copies * p.xbytes));
      CK(cudaMalloc(&p.out, p.copies * p.obytes));
      if (mma) { /* operands the check can tell apart */
        fill_random<<<1024, 256, 0, s>>>(p.w, p.copies * p.wbytes / 2, 1u);
        fill_random<<<1024, 256, 0, s>>>(p.x, p.copies * p.xbytes / 2, 2u);
        CK(cudaStreamSynchronize(s));
      } else {
        CK(cudaMemset(p.w, 0, p.copies * p.wbytes));
        CK(cudaMemset(p.x, 0, p.copies * p.xbytes));
      }
      const double tcub = bench_time_graph(s, 200, [&](int i) {
        const int c = i % p.copies;
        bench_cublas_gemm(h, sh.n, m, sh.k, p.w + c * (p.wbytes / 2), p.x + c * (p.xbytes / 2),
                          p.out + c * (p.obytes / 4));
      });
      const double F = bf16fp32__floor_us(m, sh.n, sh.k);
      const double target = bf16fp32__target_us(m, sh.n, sh.k, tcub);
      if (mma) {
        printf("%5d %5d %4d | %6.2f %6.2f %6.2f", sh.n, sh.k, m, F, tcub, target);
        mma_cell(s, p, sh.n, sh.k, m, sms, smem_max, pdl_too, pdl_only, target, only);
        fflush(stdout);
        CK(cudaFree(p.w));
        CK(cudaFree(p.x));
        CK(cudaFree(p.out));
        continue;
      }
      /* best[c]: clusters of 1 << c blocks along K (or, --mcast, along the rows), the better of
       * plain and PDL */
      const int NC = mcast ? 3 : 4;
      double best[4];
      char what[4][64];
      for (int c = 0; c < NC; c++) best[c] = 1e30, snprintf(what[c], sizeof what[c], "-");
      for (int c = 0; c < NC; c++)
        for (int pdl = pdl_only ? 1 : 0; pdl <= (pdl_too ? 1 : 0); pdl++)
          for (int rows : {16, 32, 64, 128})
            for (int tt : {16, 32, 64, 128})
              for (int ks : {32, 64, 96, 128, 160, 224, 256, 512, 1024})
                for (int ns : {2, 3, 4, 6, 8, 12}) {
                  /* --warp-tma up to the stream kernel's 7-sub-chunk boxes (224 columns) */
                  if (arrive     ? (ks != 64 && ks != 128 && ks != 256) || ns > ARRIVE_NS
                      : warp_tma ? ks > 224 || ns > 8
                      : tma      ? ks != 128 && ks != 256
                                 : ks < 256 || ns > MAXNS)
                    continue;
                  const int ranks = mcast ? 1 : 1 << c, mc = mcast ? 1 << c : 0;
                  const size_t smem = warp_tma && !mcast
                                          ? WRING + (size_t)WARPS * ns * (rows + tt) * ks * 2
                                          : RING + (size_t)ns * (rows + tt) * ks * 2;
                  const long long blocks = (long long)(sh.n / rows) * ((m + tt - 1) / tt) * ranks;
                  if (sh.n % rows || tt > m || smem > (size_t)smem_max || blocks > sms ||
                      blocks < sms / 4 || (rows + tt) > THREADS ||
                      (size_t)rows * tt * 4 > smem - RING || ks > sh.k / ranks ||
                      (mcast && tt != m))
                    continue;
                  Args a = {};
                  a.n = sh.n, a.k = sh.k, a.m = m, a.rows = rows, a.tt = tt, a.ks = ks, a.ns = ns;
                  a.pitch = 2 * ks, a.pdl = pdl, a.ranks = ranks, a.mc = mc, a.arrive = arrive, a.same = same;
                  a.l2 = l2, a.l2_cols = l2_cols, a.l2_w = l2_w, a.l2_late = l2_late;
                  a.tma = tma && !mcast;
                  a.warp_rings = warp_tma && !mcast;
                  const double t = time_floor(s, p, a, smem);
                  if (t < best[c]) {
                    best[c] = t;
                    snprintf(what[c], sizeof what[c], "%d %d %d %d%s", rows, tt, ks, ns,
                             pdl ? " p" : "");
                  }
                }
      double b = 1e30;
      for (int c = 0; c < NC; c++) b = best[c] < b ? best[c] : b;
      printf("%5d %5d %4d | %6.2f %6.2f %6.2f", sh.n, sh.k, m, F, tcub, target);
      for (int c = 0; c < NC; c++)
        if (best[c] < 1e29) printf(" | %-18s %6.2f", what[c], best[c]);
        else printf(" | %-18s %6s", "-", "-");
      if (b < 1e29)
        printf(" | %.2f\n", b / target);
      else
        printf(" | - (no tile fits)\n");
      fflush(stdout);
      CK(cudaFree(p.w));
      CK(cudaFree(p.x));
      CK(cudaFree(p.out));
    }
  CK(cudaStreamSynchronize(s));
  CK(cudaGetLastError());
  return 0;
}
