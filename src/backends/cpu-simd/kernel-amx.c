/* cpu-simd's AMX kernel (Sapphire Rapids and later): TDPBF16PS tiles of 16 x rows by 16 w rows
 * over 32 k. x tiles load where x lies; w goes through a 16 x 16 transpose of its k pairs into
 * the layout the instruction takes for its second operand (a "panel"), made once per sweep of x
 * rows and read from cache by every row tile of the sweep.
 *
 * Sums: each output element starts at zero and takes the tile products of its k chunks in order,
 * each chunk's 16 pairs in the instruction's own fixed order; between k blocks the partial sum
 * waits in out as an fp32 value, which changes nothing. An element's sum therefore depends on
 * its x row and w row alone: not on m, the tile it sits in, the thread or the split
 * (deterministic and batch-invariant on a machine, like the other levels; its bits are its own).
 * Padding (rows past m or n, k past the end) is zeros in both operands: 0 x 0 adds nothing. */
#include <immintrin.h>
#include <string.h>

#include "cpu-simd.h"

/* Tile registers (macros: the intrinsics paste the number into the instruction's text): sums
 * C<row tile><w half>, x tiles A0 A1, panel tiles B0 B1. */
#define C00 0
#define C01 1
#define C10 2
#define C11 3
#define A0 4
#define A1 5
#define B0 6
#define B1 7

#define CHUNK_BYTES 1024    /* one 16 x 16-pair operand: 16 rows of 64 bytes */
#define PANEL_CHUNKS 64     /* k chunks of a panel: 2 x 64 KB, kept in L2 with x's slice */
#define PREFETCH_CHUNKS 8   /* how far ahead of its packing a streaming pass requests w */

/* Row tile i's x and sum tiles hold exactly rows[i] rows (x tiles then load in place even when
 * a pass is short of rows; an element's sum does not depend on how many rows its tile has).
 * Loading a configuration zeroes every tile, so it changes only between passes. */
typedef struct tiles {
  int rows[2];
} tiles;

static void configure(tiles *t, int rows0, int rows1) {
  if (t->rows[0] == rows0 && t->rows[1] == rows1) return;
  bf16fp32__amx_tile_config c;
  memset(&c, 0, sizeof c);
  c.palette = 1;
  for (int r = 0; r < 8; r++) c.colsb[r] = 64, c.rows[r] = 16;
  c.rows[A0] = c.rows[C00] = c.rows[C01] = (uint8_t)rows0;
  c.rows[A1] = c.rows[C10] = c.rows[C11] = (uint8_t)(rows1 ? rows1 : 16);
  _tile_loadconfig(&c);
  t->rows[0] = rows0, t->rows[1] = rows1;
}

/* One chunk of a w half: rows [0, rows) of w (stride ldw), k in [k0, k0 + kr), into dst in the
 * pair layout (row p: the 16 rows' pairs p, 4 bytes each). Missing rows and k are zeros. Returns
 * whether the chunk holds a bf16 subnormal, which TDPBF16PS takes as zero (tested in the
 * registers the rows pass through: two mask tests a row). */
static int pack_chunk(const uint16_t *w, int64_t ldw, int rows, int64_t k0, int kr, uint8_t *dst) {
  const __mmask32 mask = kr >= 32 ? (__mmask32)~0u : (__mmask32)((1u << kr) - 1);
  __m512i r[16];
  __mmask32 subnormal = 0;
  for (int j = 0; j < 16; j++) {
    r[j] = j < rows ? _mm512_maskz_loadu_epi16(mask, w + j * ldw + k0) : _mm512_setzero_si512();
    subnormal |= BF16FP32__SIMD_SUBNORMALS_512(r[j]);
  }
  /* 16 x 16 transpose of 32-bit pairs: interleave within 128-bit lanes, then move lanes. */
  __m512i t[16], u[16];
  for (int j = 0; j < 16; j += 2) {
    t[j] = _mm512_unpacklo_epi32(r[j], r[j + 1]);
    t[j + 1] = _mm512_unpackhi_epi32(r[j], r[j + 1]);
  }
  for (int j = 0; j < 16; j += 4) {
    u[j] = _mm512_unpacklo_epi64(t[j], t[j + 2]);     /* pairs 4L + 0 of rows j..j+3 */
    u[j + 1] = _mm512_unpackhi_epi64(t[j], t[j + 2]); /* 4L + 1 */
    u[j + 2] = _mm512_unpacklo_epi64(t[j + 1], t[j + 3]);
    u[j + 3] = _mm512_unpackhi_epi64(t[j + 1], t[j + 3]);
  }
  for (int e = 0; e < 4; e++) {
    const __m512i a = _mm512_shuffle_i32x4(u[e], u[4 + e], 0x44);
    const __m512i b = _mm512_shuffle_i32x4(u[e], u[4 + e], 0xee);
    const __m512i c = _mm512_shuffle_i32x4(u[8 + e], u[12 + e], 0x44);
    const __m512i d = _mm512_shuffle_i32x4(u[8 + e], u[12 + e], 0xee);
    _mm512_storeu_si512(dst + (0 + e) * 64, _mm512_shuffle_i32x4(a, c, 0x88));
    _mm512_storeu_si512(dst + (4 + e) * 64, _mm512_shuffle_i32x4(a, c, 0xdd));
    _mm512_storeu_si512(dst + (8 + e) * 64, _mm512_shuffle_i32x4(b, d, 0x88));
    _mm512_storeu_si512(dst + (12 + e) * 64, _mm512_shuffle_i32x4(b, d, 0xdd));
  }
  return subnormal != 0;
}

/* The part of a pass the tiles cover: rows [0, rows) of x (one or two row tiles), w rows
 * [0, cols) (one or two halves of the panel). */
typedef struct pass {
  const uint16_t *x;
  int64_t ldx, k;
  float *out;
  int64_t ldo;
  int rows, cols;            /* valid x rows (1..32) and w rows (1..32) */
  uint16_t xtmp[2][16 * 32]; /* a row tile's last chunk when k ends inside it */
} pass;

/* Points the pass at x rows from i and w rows from j of the block, as many as a pass takes
 * before m1 and n1. */
static void place(pass *p, const bf16fp32__simd_args *a, int64_t i, int64_t m1, int64_t j,
                  int64_t n1) {
  p->x = a->x + i * a->ldx, p->out = a->out + i * a->ldo + j;
  p->rows = (int)(m1 - i < BF16FP32__AMX_PASS_ROWS ? m1 - i : BF16FP32__AMX_PASS_ROWS);
  p->cols = (int)(n1 - j < BF16FP32__AMX_PASS_COLS ? n1 - j : BF16FP32__AMX_PASS_COLS);
}

/* The k values chunk c holds: 32, fewer in the last, none past the end. */
static int chunk_k(const pass *p, int64_t c) {
  const int64_t left = p->k - 32 * c;
  return left >= 32 ? 32 : left > 0 ? (int)left : 0;
}

static int row_tiles(const pass *p) { return p->rows > 16 ? 2 : 1; }
static int halves(const pass *p) { return p->cols > 16 ? 2 : 1; }
static int tile_rows(const pass *p, int i) { return p->rows - 16 * i < 16 ? p->rows - 16 * i : 16; }
static int half_cols(const pass *p, int h) { return p->cols - 16 * h < 16 ? p->cols - 16 * h : 16; }

static void set_tiles(tiles *t, const pass *p) {
  configure(t, tile_rows(p, 0), row_tiles(p) == 2 ? tile_rows(p, 1) : 0);
}

/* x chunk c of row tile i into tile A0 + i: in place, or from xtmp (k past the end zeros). */
static void load_x(pass *p, int i, int64_t c) {
  const int kr = chunk_k(p, c);
  const uint16_t *src = p->x + 16 * i * p->ldx + 32 * c;
  int64_t stride = p->ldx * 2;
  if (kr < 32) {
    uint16_t *t = p->xtmp[i];
    memset(t, 0, sizeof p->xtmp[i]);
    for (int r = 0; r < tile_rows(p, i); r++) memcpy(t + 32 * r, src + r * p->ldx, (size_t)kr * 2);
    src = t, stride = 64;
  }
  if (i == 0) _tile_loadd(A0, src, stride);
  else _tile_loadd(A1, src, stride);
}

/* The products of one chunk: B0 (and B1) from the panel, then every (row tile, half) pair. */
static void chunk_products(pass *p, int64_t c, const uint8_t *b) {
  const int mt = row_tiles(p), nh = halves(p);
  _tile_loadd(B0, b, 64);
  if (nh == 2) _tile_loadd(B1, b + CHUNK_BYTES, 64);
  load_x(p, 0, c);
  _tile_dpbf16ps(C00, A0, B0);
  if (nh == 2) _tile_dpbf16ps(C01, A0, B1);
  if (mt == 2) {
    load_x(p, 1, c);
    _tile_dpbf16ps(C10, A1, B0);
    if (nh == 2) _tile_dpbf16ps(C11, A1, B1);
  }
}

/* Moves the sums between the tiles and out: in place for a half of 16 columns, else through a
 * buffer (only valid elements of out read or written). */
static void sums_io(pass *p, int load) {
  float tmp[16 * 16];
  for (int i = 0; i < row_tiles(p); i++)
    for (int h = 0; h < halves(p); h++) {
      const int rows = tile_rows(p, i), cols = half_cols(p, h);
      float *o = p->out + 16 * i * p->ldo + 16 * h;
      float *src = cols == 16 ? o : tmp;
      const int64_t stride = cols == 16 ? p->ldo * 4 : 64;
      if (load && cols < 16) {
        memset(tmp, 0, sizeof tmp);
        for (int r = 0; r < rows; r++) memcpy(tmp + 16 * r, o + r * p->ldo, (size_t)cols * 4);
      }
      const int t = 2 * i + h; /* C00, C01, C10, C11 */
#define SUMS_IO(T)                         \
  do {                                     \
    if (load) _tile_loadd(T, src, stride); \
    else _tile_stored(T, src, stride);     \
  } while (0)
      if (t == 0) SUMS_IO(C00);
      else if (t == 1) SUMS_IO(C01);
      else if (t == 2) SUMS_IO(C10);
      else SUMS_IO(C11);
#undef SUMS_IO
      if (!load && cols < 16)
        for (int r = 0; r < rows; r++) memcpy(o + r * p->ldo, tmp + 16 * r, (size_t)cols * 4);
    }
}

static void zero_sums(const pass *p) {
  _tile_zero(C00);
  if (halves(p) == 2) _tile_zero(C01);
  if (row_tiles(p) == 2) _tile_zero(C10);
  if (row_tiles(p) == 2 && halves(p) == 2) _tile_zero(C11);
}

/* Packs chunk c of the pass's w rows (both halves) at b; whether it holds a subnormal. */
static int pack_pair(const pass *p, const uint16_t *w, int64_t ldw, int64_t c, uint8_t *b) {
  const int kr = chunk_k(p, c);
  int subnormal = 0;
  for (int h = 0; h < halves(p); h++)
    subnormal |=
        pack_chunk(w + 16 * h * ldw, ldw, half_cols(p, h), 32 * c, kr, b + h * CHUNK_BYTES);
  return subnormal;
}

/* Requests chunk c of the pass's w rows (a line each) into L1, if k reaches it. */
static void prefetch_chunk(const pass *p, const uint16_t *w, int64_t ldw, int64_t c) {
  if (!chunk_k(p, c)) return;
  for (int r = 0; r < p->cols; r++) _mm_prefetch((const char *)(w + r * ldw + 32 * c), _MM_HINT_T0);
}

/* Up to 32 x rows by 32 w rows over all of k, each chunk of w packed one chunk ahead of its
 * products (a tile load right after the stores that made its bytes waits for them to reach the
 * cache; nothing is reused: the rows fit one pass). The pass walks 32 rows of w at once, more
 * streams than the hardware prefetchers follow, so it requests the rows PREFETCH_CHUNKS ahead
 * (1.15-1.5x at M <= 16 on the H200's host; 4 and 12 ahead were level with 8). */
static int stream_pass(tiles *t, pass *p, const uint16_t *w, int64_t ldw) {
  _Alignas(64) uint8_t b[2][2 * CHUNK_BYTES];
  const int64_t chunks = (p->k + 31) / 32;
  set_tiles(t, p);
  zero_sums(p);
  for (int64_t c = 1; c <= PREFETCH_CHUNKS; c++) prefetch_chunk(p, w, ldw, c);
  int subnormal = pack_pair(p, w, ldw, 0, b[0]);
  for (int64_t c = 0; c < chunks; c++) {
    prefetch_chunk(p, w, ldw, c + 1 + PREFETCH_CHUNKS);
    if (c + 1 < chunks) subnormal |= pack_pair(p, w, ldw, c + 1, b[(c + 1) & 1]);
    chunk_products(p, c, b[c & 1]);
  }
  sums_io(p, 0);
  return subnormal;
}

/* Every w row of [n0, n1) goes through pack_chunk (all of k) when m1 > m0: the result is whether
 * any held a subnormal. */
int bf16fp32__simd_block_amx(const bf16fp32__simd_args *a, int64_t m0, int64_t m1, int64_t n0,
                             int64_t n1, uint16_t *scratch) {
  tiles t = {{-1, -1}};
  pass p;
  int subnormal = 0;
  p.ldx = a->ldx, p.k = a->k, p.ldo = a->ldo;
  const int64_t chunks = (a->k + 31) / 32;
  /* A panel of w (both halves of up to PANEL_CHUNKS chunks) needs the thread's scratch; without
   * it, or with rows for one pass only, each pass packs w as it goes. */
  const int64_t room = scratch ? bf16fp32__simd_scratch_elems(a->k) * 2 / (2 * CHUNK_BYTES) : 0;
  const int64_t block = room < PANEL_CHUNKS ? room : PANEL_CHUNKS;
  if (m1 - m0 <= BF16FP32__AMX_PASS_ROWS || block < 1) {
    for (int64_t j = n0; j < n1; j += BF16FP32__AMX_PASS_COLS)
      for (int64_t i = m0; i < m1; i += BF16FP32__AMX_PASS_ROWS) {
        place(&p, a, i, m1, j, n1);
        subnormal |= stream_pass(&t, &p, a->w + j * a->ldw, a->ldw);
      }
    _tile_release();
    return subnormal;
  }
  uint8_t *panel = (uint8_t *)scratch;
  /* k blocks outermost, so that x's slice of a block stays in L2 while the panels go by. */
  for (int64_t c0 = 0; c0 < chunks; c0 += block) {
    const int64_t c1 = c0 + block < chunks ? c0 + block : chunks;
    for (int64_t j = n0; j < n1; j += BF16FP32__AMX_PASS_COLS) {
      place(&p, a, m0, m1, j, n1); /* the panel's columns */
      for (int64_t c = c0; c < c1; c++)
        subnormal |=
            pack_pair(&p, a->w + j * a->ldw, a->ldw, c, panel + (c - c0) * 2 * CHUNK_BYTES);
      for (int64_t i = m0; i < m1; i += BF16FP32__AMX_PASS_ROWS) {
        place(&p, a, i, m1, j, n1);
        set_tiles(&t, &p);
        if (c0 == 0) zero_sums(&p);
        else sums_io(&p, 1);
        for (int64_t c = c0; c < c1; c++)
          chunk_products(&p, c, panel + (c - c0) * 2 * CHUNK_BYTES);
        sums_io(&p, 0);
      }
    }
  }
  _tile_release();
  return subnormal;
}
