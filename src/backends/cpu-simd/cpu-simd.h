/* cpu-simd internals: instruction-set levels, the per-ISA kernels, and the hooks the unit test
 * uses to force a level. Not part of the backend interface (that is bf16fp32__backend). */
#ifndef BF16FP32_CPU_SIMD_H
#define BF16FP32_CPU_SIMD_H

#include <stdint.h>
#include <stdlib.h>

/* The levels of one architecture are ordered: a higher one implies that the CPU and OS also
 * run the lower ones. A machine has the levels of its own architecture only. */
typedef enum bf16fp32__simd_isa {
  BF16FP32__ISA_NONE = 0,       /* no usable vector path: the backend is unavailable */
  BF16FP32__ISA_AVX2 = 1,       /* x86: AVX2 + FMA, YMM state enabled by the OS */
  BF16FP32__ISA_AVX512BF16 = 2, /* x86: AVX-512 F/BW/VL/DQ + BF16, ZMM and opmask state enabled */
  BF16FP32__ISA_AMX = 3,        /* x86: the above + AMX-BF16, tile state enabled and granted */
  BF16FP32__ISA_NEON = 4,       /* aarch64: Advanced SIMD with fp32 FMA */
} bf16fp32__simd_isa;

/* The kernels are built for the architecture the compiler targets (CMakeLists.txt: x86's AVX2,
 * AVX-512 BF16 and AMX files, aarch64's NEON file); elsewhere detection finds no level and the
 * backend declines. BF16FP32__ISA_LOWEST is this build's lowest vector level. */
#if defined(__x86_64__) || defined(__i386__)
#define BF16FP32__SIMD_KERNELS 1
#define BF16FP32__ISA_LOWEST BF16FP32__ISA_AVX2
#define BF16FP32__ISA_HIGHEST BF16FP32__ISA_AMX
#elif defined(__aarch64__)
#define BF16FP32__SIMD_KERNELS 1
#define BF16FP32__ISA_LOWEST BF16FP32__ISA_NEON
#define BF16FP32__ISA_HIGHEST BF16FP32__ISA_NEON
#else
#define BF16FP32__SIMD_KERNELS 0
#define BF16FP32__ISA_LOWEST BF16FP32__ISA_NONE
#define BF16FP32__ISA_HIGHEST BF16FP32__ISA_NONE
#endif

/* The best level this CPU and OS support (x86: cpuid and xgetbv, and for AMX Linux's grant of
 * the tile data state to the process, asked for here; aarch64: the kernel's HWCAP words; never
 * assumed). */
bf16fp32__simd_isa bf16fp32__simd_detect(void);
const char *bf16fp32__simd_isa_name(bf16fp32__simd_isa isa);
/* The level of a name from bf16fp32__simd_isa_name; NONE for any other text. */
bf16fp32__simd_isa bf16fp32__simd_isa_from_name(const char *name);

/* The operands of one call as the kernels see them. */
typedef struct bf16fp32__simd_args {
  const uint16_t *x, *w;
  float *out;
  int64_t m, n, k, ldx, ldw, ldo;
  /* The block is the thread's first pass over these x rows in the call: they come from memory,
   * so the tiles of its first group prefetch the next row tile's x (as they do the next w). */
  int x_cold;
} bf16fp32__simd_args;

/* Cache blocking, shared by the kernels (blocking.h); the figures are measurements on the
 * 2-core Zen 4 VM this was tuned on (the NEON kernel takes them as they are: no Arm machine
 * has timed it).
 * - Up to FEW_ROWS x rows (x stays in L2): each group of 24 w rows meets all of them while it is
 *   in L1/L2. More rows: L2 blocks of w rows (W_BLOCK_BYTES) meet sweeps of up to X_BLOCK_ROWS
 *   x rows (a few MB: L3). At M = 16 the groups are 15-25% faster than blocks (a block's first
 *   pass stalls on memory).
 * - From PREFETCH_MIN_ROWS rows, the tiles of a group prefetch the next group into L2 (20%
 *   faster at M = 16 when w is beyond L3, 2% at M = 256). Below, tiles are bound by loads and
 *   prefetches (loads too) slow them by 15%; w streams on the hardware prefetchers alone.
 *   Above FEW_ROWS, a thread's first group also meets its x rows for the first time (from memory
 *   under a cold cache): the first tile of each row tile prefetches the next row tile's x
 *   instead of its share of w (3-6% faster at M = 256 on the DSV4 shapes with N <= 512).
 *   What is left at M = 256 (0.94-0.99x oneDNN at N <= 512 in alternated runs): warm work runs
 *   at 98% of the FMA peak; each thread's first units wait on x and the first w block from
 *   memory (3-5% of the call; one core pulls 7-10 GB/s while it computes). Finer work units
 *   (one w block by 32-128 x rows, stolen), w blocks of twice the bytes (5-10% slower), a row
 *   split between threads and x prefetched 2-3 row tiles ahead were all within 2%: not kept.
 *   Nor was prefetching the next row tile's x in every group (a row per tile, with w's): 3-8%
 *   slower at N <= 512, the L3 and the hardware prefetchers serve x well when the L3 holds it.
 * - Rows whose stride is a multiple of 4 KiB (k = 4096) fall in the same L1 sets; when x's and
 *   w's do, the 4 + 6 lines a step touches exceed its 8 ways: 10-25% slower. From
 *   PACK_MIN_ROWS x rows, the first row tile of a group copies the w rows it reads to scratch at
 *   a padded stride (stores only) and the other row tiles read the copy (13% faster at 128
 *   rows, even at 32, slower below). With few rows, each thread copies x instead (12-18%). */
#define BF16FP32__SIMD_W_BLOCK_BYTES (384 * 1024)
#define BF16FP32__SIMD_X_BLOCK_ROWS 256
#define BF16FP32__SIMD_FEW_ROWS 16
#define BF16FP32__SIMD_GROUP 24
#define BF16FP32__SIMD_PREFETCH_MIN_ROWS 4
#define BF16FP32__SIMD_PACK_MIN_ROWS 32
/* More threads than this are not used (the pool's size and `info`'s count keep to it). */
#define BF16FP32__SIMD_MAX_THREADS 64

/* Does a stride (elements) put consecutive rows within a cache line of the same L1 set? */
static inline int bf16fp32__simd_aliases(int64_t ld) {
  const int64_t off = (ld * 2) % 4096;
  return off < 64 || off > 4096 - 64;
}
/* Copy w groups for a sweep of `rows` x rows at this w stride? */
static inline int bf16fp32__simd_should_pack(int64_t rows, int64_t ldw) {
  return rows >= BF16FP32__SIMD_PACK_MIN_ROWS && bf16fp32__simd_aliases(ldw);
}
/* Copy the (few) x rows? When both strides alias and x's lines share w's sets (their addresses
 * within 256 bytes of each other modulo 4 KiB, as page-aligned tensors are). */
static inline int bf16fp32__simd_should_copy_x(int64_t rows, const uint16_t *x, int64_t ldx,
                                               const uint16_t *w, int64_t ldw) {
  const uint64_t apart = ((uintptr_t)x - (uintptr_t)w) % 4096;
  return rows >= 2 && rows <= BF16FP32__SIMD_FEW_ROWS && bf16fp32__simd_aliases(ldx) &&
         bf16fp32__simd_aliases(ldw) && (apart < 256 || apart > 4096 - 256);
}

/* Stride of a copied w row: k rounded up to a cache line, plus one line. */
static inline int64_t bf16fp32__simd_packed_ld(int64_t k) { return (k + 31) / 32 * 32 + 32; }
/* Rows of w per L2 block: a multiple of 24, which every tile width of both kernels divides. */
static inline int64_t bf16fp32__simd_w_block_rows(int64_t k) {
  int64_t nb = BF16FP32__SIMD_W_BLOCK_BYTES / (2 * bf16fp32__simd_packed_ld(k)) / 24 * 24;
  return nb < 24 ? 24 : nb;
}
/* End of the span of `span` rows (or columns) at `at`, before `end`: a remainder of up to a
 * third of a span joins the last span rather than making a thin one of its own. A thin last
 * group or work unit streams all of x once more for a few w rows, in narrow tiles bound by
 * loads (at M = 256 and N = 256, the 8-column unit each thread finished with ran 20% slower
 * a column than the others). */
static inline int64_t bf16fp32__simd_span_end(int64_t at, int64_t end, int64_t span) {
  return end - at <= span + span / 3 ? end : at + span;
}
/* uint16 elements of one thread's scratch: a block of copied w rows (with the remainder a
 * block may take in), or the few x rows. */
static inline int64_t bf16fp32__simd_scratch_elems(int64_t k) {
  const int64_t rows = bf16fp32__simd_w_block_rows(k);
  return (rows + rows / 3) * bf16fp32__simd_packed_ld(k);
}

/* Scratch of `elems` uint16 elements, 64-byte aligned (free() it); NULL when memory is short. */
static inline uint16_t *bf16fp32__simd_scratch_alloc(int64_t elems) {
  return aligned_alloc(64, (size_t)(elems * 2 + 63) / 64 * 64);
}

/* Computes out[m0:m1, n0:n1] on the calling thread; scratch (NULL: read w in place) holds
 * bf16fp32__simd_scratch_elems(k) elements. Each element is reduced over the whole of k in one
 * fixed order whatever the block, tile or copy it goes through, so results do not depend on m,
 * the thread count or the split (deterministic and batch-invariant for a given ISA level).
 * Returns nonzero when some w row of [n0, n1) holds a bf16 subnormal that the level's
 * instructions took as zero (AVX-512 BF16 and AMX look as w passes through their registers, when
 * m1 > m0; AVX2 and NEON widen exactly and return 0). */
typedef int (*bf16fp32__simd_block_fn)(const bf16fp32__simd_args *a, int64_t m0, int64_t m1,
                                       int64_t n0, int64_t n1, uint16_t *scratch);
int bf16fp32__simd_block_avx512bf16(const bf16fp32__simd_args *a, int64_t m0, int64_t m1,
                                    int64_t n0, int64_t n1, uint16_t *scratch);
/* x rows one pass of the AMX kernel covers (two tiles of 16): a sweep of more reads w from
 * panels packed in the thread's scratch. */
#define BF16FP32__AMX_PASS_ROWS 32
/* w rows one pass covers (two halves of 16), and the columns a thread takes at a time with the
 * AMX kernel: whole passes (the other kernels' unit of 24 left half of a pass's second half
 * empty) and, above one pass of rows, four, so that x's rows come from L3 once for four panels
 * (each unit reads them again): 1.1-1.3x at M = 64-256, N >= 1024 (bench/amx-ab.c, the H200's
 * host). */
#define BF16FP32__AMX_PASS_COLS 32
#define BF16FP32__AMX_UNIT_COLS 128
/* LDTILECFG's 64-byte operand (palette 1: 8 tiles of up to 16 rows of 64 bytes). */
typedef struct bf16fp32__amx_tile_config {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} bf16fp32__amx_tile_config;
int bf16fp32__simd_block_amx(const bf16fp32__simd_args *a, int64_t m0, int64_t m1, int64_t n0,
                             int64_t n1, uint16_t *scratch);
int bf16fp32__simd_block_avx2(const bf16fp32__simd_args *a, int64_t m0, int64_t m1, int64_t n0,
                              int64_t n1, uint16_t *scratch);
int bf16fp32__simd_block_neon(const bf16fp32__simd_args *a, int64_t m0, int64_t m1, int64_t n0,
                              int64_t n1, uint16_t *scratch);
/* Whether k bf16 values hold a subnormal (exponent bits zero, fraction not), which the AVX-512
 * BF16 and AMX instructions take as zero (x86: AVX2 code). */
int bf16fp32__simd_subnormal_avx2(const uint16_t *p, int64_t k);
/* The same test on the 32 bf16 lanes of a ZMM register, as the AVX-512 BF16 and AMX kernels load
 * w: the lanes whose exponent bits are zero, of those the ones whose fraction is not (a macro:
 * those files, and the instruction model that builds them, have the AVX-512 intrinsics). */
#define BF16FP32__SIMD_SUBNORMALS_512(v)                                                       \
  _mm512_mask_test_epi16_mask(_mm512_testn_epi16_mask((v), _mm512_set1_epi16(0x7f80)), (v),    \
                              _mm512_set1_epi16(0x007f))
/* The kernel of a level of this build's architecture (NULL where none is built). */
bf16fp32__simd_block_fn bf16fp32__simd_block_for(bf16fp32__simd_isa isa);

/* Test hooks on a state made by the backend's probe. force: 0 on success, -1 when the level is
 * above what was detected, of another architecture, or NONE. The thread count is the one probe
 * was configured with. */
int bf16fp32__cpu_simd_force_isa(void *state, bf16fp32__simd_isa isa);
/* Runs level isa (any level of this build's architecture, detected or not) with `block` as its
 * kernel, until force_isa returns the state to the levels' own: tests/x86-model builds the
 * AVX-512 BF16 and AMX kernels on a model of their instructions, which this sets before the rest
 * of the backend (its splits, scratch and copies), on any x86 machine. 0 on success, -1 for a
 * level of another architecture, NONE or a NULL kernel. */
int bf16fp32__cpu_simd_force_kernel(void *state, bf16fp32__simd_isa isa,
                                    bf16fp32__simd_block_fn block);
bf16fp32__simd_isa bf16fp32__cpu_simd_isa(const void *state);
int bf16fp32__cpu_simd_threads(const void *state);

#endif
