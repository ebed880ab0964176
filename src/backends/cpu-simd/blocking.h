/* cpu-simd's cache-blocking loop, shared by the per-ISA kernels (the reasons are in cpu-simd.h):
 * groups of w rows meet sweeps of x rows in register tiles, copied or prefetched when it pays. */
#ifndef BF16FP32_CPU_SIMD_BLOCKING_H
#define BF16FP32_CPU_SIMD_BLOCKING_H

#include "cpu-simd.h"

/* Full unrolling of a tile's loops over its rows and columns (constant trip counts), so that its
 * accumulators stay in registers. Under `#pragma GCC unroll n` clang 14 left the column loop
 * rolled and the accumulator arrays on the stack (its AVX2 kernel at 0.6x gcc's speed); its own
 * full-unroll pragma unrolls them. */
#define BF16FP32__SIMD_PRAGMA(text) _Pragma(#text)
#if defined(__clang__)
#define BF16FP32__SIMD_UNROLL(n) BF16FP32__SIMD_PRAGMA(clang loop unroll(full))
#else
#define BF16FP32__SIMD_UNROLL(n) BF16FP32__SIMD_PRAGMA(GCC unroll n)
#endif

/* One register tile over the whole of k: out[0:mr, 0:nr] of the tile's rows and columns. The
 * copying kind also stores the w rows it reads to wc (stride ldc); the other ignores wc. Both
 * prefetch pf_rows rows at pf (stride pfld) to L2 along the way, for a later tile. Returns
 * whether the w rows it read hold a bf16 subnormal (a checking tile of a kernel whose
 * instructions take them as zero; any other returns 0). */
typedef int (*bf16fp32__simd_tile_fn)(const uint16_t *x, int64_t ldx, const uint16_t *w,
                                      int64_t ldw, float *o, int64_t ldo, int64_t k,
                                      uint16_t *wc, int64_t ldc, const uint16_t *pf, int pf_rows,
                                      int64_t pfld);

/* A tile's mode C, in bits: COPY stores the w rows it reads to wc, CHECK looks at them for bf16
 * subnormals (the AVX-512 BF16 kernel's; the exact kernels' tiles have no CHECK). */
#define BF16FP32__SIMD_COPY 1
#define BF16FP32__SIMD_CHECK 2

/* One bf16fp32__simd_tile_fn per tile shape (MR x NR) and mode C, each a call of the including
 * kernel's own always-inlined `tile`, so that each keeps its accumulators in registers. */
#define BF16FP32__SIMD_TILE_FN(MR, NR, C, SUFFIX)                                              \
  static int tile_##MR##x##NR##SUFFIX(const uint16_t *x, int64_t ldx, const uint16_t *w,       \
                                      int64_t ldw, float *o, int64_t ldo, int64_t k,           \
                                      uint16_t *wc, int64_t ldc, const uint16_t *pf,           \
                                      int pf_rows, int64_t pfld) {                             \
    return tile(x, ldx, w, ldw, o, ldo, k, wc, ldc, pf, pf_rows, pfld, MR, NR, C);             \
  }

/* A row of the tile table: the functions for MR rows and 1..4, 1..6 or 1..8 columns, then their
 * addresses padded to 8 entries (unused widths NULL). */
#define BF16FP32__SIMD_TILES_4(MR, C, S)                                                       \
  BF16FP32__SIMD_TILE_FN(MR, 1, C, S) BF16FP32__SIMD_TILE_FN(MR, 2, C, S)                      \
  BF16FP32__SIMD_TILE_FN(MR, 3, C, S) BF16FP32__SIMD_TILE_FN(MR, 4, C, S)
#define BF16FP32__SIMD_TILES_6(MR, C, S)                                                       \
  BF16FP32__SIMD_TILES_4(MR, C, S)                                                             \
  BF16FP32__SIMD_TILE_FN(MR, 5, C, S) BF16FP32__SIMD_TILE_FN(MR, 6, C, S)
#define BF16FP32__SIMD_TILES_8(MR, C, S)                                                       \
  BF16FP32__SIMD_TILES_6(MR, C, S)                                                             \
  BF16FP32__SIMD_TILE_FN(MR, 7, C, S) BF16FP32__SIMD_TILE_FN(MR, 8, C, S)
#define BF16FP32__SIMD_PTRS_4(MR, S)                                                           \
  tile_##MR##x1##S, tile_##MR##x2##S, tile_##MR##x3##S, tile_##MR##x4##S
#define BF16FP32__SIMD_PTRS_6(MR, S)                                                           \
  BF16FP32__SIMD_PTRS_4(MR, S), tile_##MR##x5##S, tile_##MR##x6##S
#define BF16FP32__SIMD_PTRS_8(MR, S)                                                           \
  BF16FP32__SIMD_PTRS_6(MR, S), tile_##MR##x7##S, tile_##MR##x8##S
#define BF16FP32__SIMD_ROW_4(MR, S) BF16FP32__SIMD_PTRS_4(MR, S), NULL, NULL, NULL, NULL
#define BF16FP32__SIMD_ROW_6(MR, S) BF16FP32__SIMD_PTRS_6(MR, S), NULL, NULL
#define BF16FP32__SIMD_ROW_8(MR, S) BF16FP32__SIMD_PTRS_8(MR, S)

/* tiles / checking / copying[(mr - 1) * 8 + (nr - 1)]; full-height tiles (mr_max rows) are
 * nr_full wide, shorter ones (the last rows) nr_short wide; both divide 24. The first row tile of
 * each sweep meets every w row of the block, over all of k: it alone uses checking tiles (or
 * copying ones, which then check too), and the result is whether any of them saw a subnormal
 * (the block function's; 0 where checking is the plain tiles). */
static inline int bf16fp32__simd_blocked(const bf16fp32__simd_args *a, int64_t m0, int64_t m1,
                                         int64_t n0, int64_t n1, uint16_t *scratch,
                                         const bf16fp32__simd_tile_fn *tiles,
                                         const bf16fp32__simd_tile_fn *checking,
                                         const bf16fp32__simd_tile_fn *copying, int mr_max,
                                         int nr_full, int nr_short) {
  const int64_t k = a->k, ldx = a->ldx, ldw = a->ldw, ldo = a->ldo;
  const int64_t ldp = bf16fp32__simd_packed_ld(k);
  int seen = 0;
  for (int64_t mc = m0; mc < m1; mc += BF16FP32__SIMD_X_BLOCK_ROWS) {
    const int64_t mce = m1 - mc > BF16FP32__SIMD_X_BLOCK_ROWS ? mc + BF16FP32__SIMD_X_BLOCK_ROWS
                                                              : m1;
    /* A group of w rows meets every x row of the sweep before the next group. When its stride
     * aliases, the first row tile copies the group to scratch as it reads it, and the other row
     * tiles read the copy. */
    const int64_t group = mce - mc <= BF16FP32__SIMD_FEW_ROWS ? BF16FP32__SIMD_GROUP
                                                              : bf16fp32__simd_w_block_rows(k);
    const int pack = scratch && bf16fp32__simd_should_pack(mce - mc, ldw);
    for (int64_t g = n0, ge; g < n1; g = ge) {
      ge = bf16fp32__simd_span_end(g, n1, group);
      /* The next group's rows (whichever thread takes them), spread over this group's tile
       * calls and prefetched to L2 as they run, so the next group does not start on a miss. */
      const int64_t next = mce - mc >= BF16FP32__SIMD_PREFETCH_MIN_ROWS
                               ? (ge + group < a->n ? group : a->n - ge) : 0;
      const int64_t calls =
          (mce - mc + mr_max - 1) / mr_max * ((ge - g + nr_full - 1) / nr_full);
      int64_t call = 0, wdone = 0;
      const int x_pf =
          a->x_cold && g == n0 && ge - g > nr_full && mce - mc > BF16FP32__SIMD_FEW_ROWS;
      for (int64_t i = mc; i < mce; i += mr_max) {
        const int mr = mce - i < mr_max ? (int)(mce - i) : mr_max;
        const int nr_main = mr == mr_max ? nr_full : nr_short;
        const int copy = pack && i == mc, from_copy = pack && i > mc;
        const bf16fp32__simd_tile_fn *fns = copy ? copying : i == mc ? checking : tiles;
        const uint16_t *xi = a->x + i * ldx;
        float *oi = a->out + i * ldo;
        for (int64_t j = g, nr; j < ge; j += nr) {
          /* A last tile narrower than half the width would be bound by its loads (x's loads
           * shared by few w rows): the last two tiles split what is left evenly instead. */
          const int64_t left = ge - j;
          nr = left <= nr_main ? left : left < nr_main + nr_main / 2 ? (left + 1) / 2 : nr_main;
          uint16_t *wc = pack ? scratch + (j - g) * ldp : NULL;
          call++;
          const uint16_t *pf = NULL;
          int pf_rows = 0;
          int64_t pfld = ldw;
          if (x_pf && j == g && i + mr_max < mce) {
            /* The first tile of a row tile fetches the next row tile's x (never past mce). */
            const int64_t nx = i + mr_max, nxe = nx + mr_max < mce ? nx + mr_max : mce;
            if (nxe > nx) pf = a->x + nx * ldx, pf_rows = (int)(nxe - nx), pfld = ldx;
          } else {
            int64_t r1 = next * call / calls;
            if (r1 > next) r1 = next;
            if (r1 > wdone) pf = a->w + (ge + wdone) * ldw, pf_rows = (int)(r1 - wdone);
            if (r1 > wdone) wdone = r1;
          }
          const bf16fp32__simd_tile_fn fn = fns[(mr - 1) * 8 + ((int)nr - 1)];
          if (from_copy)
            fn(xi, ldx, wc, ldp, oi + j, ldo, k, NULL, 0, pf, pf_rows, pfld);
          else
            seen |= fn(xi, ldx, a->w + j * ldw, ldw, oi + j, ldo, k, wc, ldp, pf, pf_rows, pfld);
        }
      }
    }
  }
  return seen;
}

#endif
