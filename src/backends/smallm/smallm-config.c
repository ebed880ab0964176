/* smallm launch configuration as pure C: the (N, K) split that fixes the summation order, the
 * M-dependent token tiling and K batching chosen to fit registers and shared memory, and each
 * kernel form's shared-memory layout (the tables that pick a form: smallm-prefer.c). */
#include "smallm-config.h"
#include "smallm-splits.h"

int bf16fp32__smallm_shape_ok(int64_t m, int64_t n, int64_t k, int64_t ldx, int64_t ldw,
                              int64_t ldo, int align) {
  /* 16-byte rows and pointers: the 16-byte weight loads, the 16-byte cp.async of x and the
   * float4 output stores need them. The tensor maps of x and w take row strides under 2^40
   * bytes (cuTensorMapEncodeTiled). */
  const int64_t max_ld = ((int64_t)1 << 39) - 8;
  return m >= 1 && m <= BF16FP32__SMALLM_MAX_M && n >= 16 && n % 16 == 0 && n <= 65536 &&
         k >= 8 && k % 8 == 0 && k <= BF16FP32__SMALLM_MAX_K && ldx % 8 == 0 && ldw % 8 == 0 &&
         ldo % 8 == 0 && ldx <= max_ld && ldw <= max_ld && align == 16;
}

/* Wide-kernel blocks (rows x tokens, and groups: blocks sharing a tile of a one-slice split)
 * measured fastest on an H200 where the rule in bf16fp32__smallm_choose picks another kernel or
 * block, for M in [m_from, m_upto] (smallm-probe --wide, docs/smallm-notes.md): at 1024 x 7168
 * above M = 128, 6-12 % faster than the rule's block and than the wgmma kernel (session 6); at
 * N = 2048 (session 7), tiles shared by 2 blocks up to M = 128, 20-24 % faster than the best
 * unshared block, and above that unshared 64 x 32 blocks (shared ones, whose chain sums take
 * shared memory, then run in two waves: 29-36 % slower at M = 256), as fast as the rule's
 * 32 x 64 at M = 256 and 35 % faster at M = 129. */
static const struct {
  int n, k, m_from, m_upto, rows, tokens, groups;
} tiles_132[] = {
    {2048, 4096, 65, 128, 64, 32, 2},   {2048, 4096, 129, 256, 64, 32, 1},
    {2048, 7168, 65, 128, 64, 32, 2},   {2048, 7168, 129, 256, 64, 32, 1},
    {1024, 7168, 129, 256, 64, 64, 1},
};

/* One set of block (or warp group) sums: tokens x (rows + 4) floats, each token's rows padded
 * by 4 (the layout of bf16fp32__smallm_store_warp and the tile kernels' block sums). */
static size_t sums_bytes(int rows, int tokens) {
  return (size_t)tokens * (size_t)(rows + 4) * sizeof(float);
}

/* 32-wide sub-chunks of the longest K slice, and of one warp group's share of it. */
static int64_t slice_subs(int64_t k, const bf16fp32__smallm_split *sp) {
  return ((k + 31) / 32 + sp->ksplit - 1) / sp->ksplit;
}
static int64_t warp_subs(int64_t k, const bf16fp32__smallm_split *sp) {
  return bf16fp32__smallm_chain_len((int)slice_subs(k, sp), sp->kwarps);
}

int bf16fp32__smallm_choose_split(int64_t n, int64_t k, int sm_count, bf16fp32__smallm_split *s) {
  int64_t subs = (k + 31) / 32;
  if (n < 16 || n % 16 != 0 || k < 1) return -1;
  if (sm_count < 1) sm_count = 1;
  /* Elsewhere: 32 rows per block (16 when N is not a multiple of 32) and as many K slices as
   * leave about one block per SM, up to a portable cluster of 8 (this rule picks the measured
   * winner for seven of the nine shapes above). */
  s->rows = n % 32 == 0 ? 32 : 16;
  /* the decode kernel won at N >= 1024 and lost to the tiled one at most smaller N */
  s->decode_mask = n >= 1024 ? 0xf : 0x0;
  int64_t split = sm_count / (n / s->rows);
  if (split > BF16FP32__SMALLM_MAX_SPLIT) split = BF16FP32__SMALLM_MAX_SPLIT;
  const bf16fp32__smallm_tuned_split *tuned = bf16fp32__smallm_tuned_for(n, k, sm_count);
  if (tuned) {
    s->rows = tuned->rows;
    split = tuned->ksplit;
    s->decode_mask = tuned->decode_mask;
  }
  if (split > subs) split = subs;
  if (split < 1) split = 1;
  s->ksplit = (int)split;
  s->kwarps = 128 / s->rows; /* eight warps: 16 rows each, the rest split the slice's K */
  return 0;
}

static size_t tile_smem(const bf16fp32__smallm_config *c, int subs);

/* The wide kernel's stage for c (m tokens): 4 sub-chunks where 5 would take as many stages,
 * else 7 where that takes fewer stages than 5 and the grid still runs in one wave with the
 * wider ring, else 5. The copies cost per box row as well as per byte, so fewer, wider stages
 * fetch a block's tiles sooner; but the wider ring leaves fewer blocks per SM, and clusters of
 * 4 or 8 blocks do not pack every SM (an eighth of the places is left as a margin). On the H200
 * (docs/smallm-notes.md, session 21; smallm-probe --chosen, three interleaved runs at M = 65-256
 * against stages of 4 everywhere) this took 0.87-1.02x the time in plain launches (median 0.96)
 * and 0.77-1.01x under PDL (median 0.92); stages of 7 where the grid then needed a second wave
 * were up to 1.58x slower. */
static void choose_tile_subs(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k,
                             int sm_count, size_t smem_limit) {
  if (!c->wide) return;
  const int64_t subs = slice_subs(k, &c->split) / c->wide_groups; /* a block's sub-chunks */
  const int64_t s4 = (subs + 3) / 4, s5 = (subs + 4) / 5, s7 = (subs + 6) / 7;
  if (s4 <= s5) {
    bf16fp32__smallm_use_tile_subs(c, 4, smem_limit); /* as much room as 5: cannot fail */
    return;
  }
  const size_t smem7 = tile_smem(c, 7);
  if (s7 >= s5 || smem7 > smem_limit) return;
  const int cluster = c->split.ksplit * c->wide_groups;
  int64_t places = (int64_t)((smem_limit + 1024) / (smem7 + 1024)) * sm_count;
  if (cluster >= 4) places -= places / 8;
  const int64_t blocks = cluster * ((m + c->wide_tokens - 1) / c->wide_tokens) * (n / c->wide_rows);
  if (blocks <= places) bf16fp32__smallm_use_tile_subs(c, 7, smem_limit);
}

int bf16fp32__smallm_choose(int64_t m, int64_t n, int64_t k, int sm_count, size_t smem_limit,
                            bf16fp32__smallm_config *c) {
  /* Above M = 64 the wide kernel: the largest of these blocks (rows x tokens) that still gives
   * every SM a block, else the smallest; where none fits, the tiled kernel. On the H200 this
   * picked the fastest block of six, or one within 8 % of it, for every DeepSeek-V4 shape at
   * M = 128 and 256 (docs/smallm-notes.md, session 3). */
  static const int blocks[][2] = {{64, 64}, {32, 64}, {32, 32}};
  bf16fp32__smallm_split sp;
  if (bf16fp32__smallm_choose_split(n, k, sm_count, &sp) != 0) return -1;
  if (bf16fp32__smallm_choose_with(m, n, k, &sp, smem_limit, c) != 0) return -1;
  if (sm_count == 132)
    for (size_t i = 0; i < sizeof tiles_132 / sizeof tiles_132[0]; i++)
      if (tiles_132[i].n == n && tiles_132[i].k == k && m >= tiles_132[i].m_from &&
          m <= tiles_132[i].m_upto &&
          bf16fp32__smallm_use_wide(c, n, tiles_132[i].rows, tiles_132[i].tokens, smem_limit) == 0 &&
          (tiles_132[i].groups == 1 ||
           bf16fp32__smallm_use_groups(c, tiles_132[i].groups, smem_limit) == 0)) {
        choose_tile_subs(c, m, n, k, sm_count, smem_limit);
        return 0;
      }
  if (m <= BF16FP32__SMALLM_DECODE_MAX_M) {
    /* A block per SM at most leaves the registers of a second block free: the decode kernel
     * then keeps twice the weights in flight, which paid 1-5 % where a warp has more sub-chunks
     * than the usual ring holds. Clusters of 2 at most: at one block per SM, 16 clusters of 8
     * did not all fit on the H200 at once (a second wave, twice the time; docs/smallm-notes.md). */
    c->deep = c->decode && c->mt <= 2 && (int64_t)c->grid_x * c->grid_y <= sm_count &&
              sp.ksplit <= 2 && warp_subs(k, &sp) > BF16FP32__SMALLM_DECODE_RING;
    return 0;
  }
  for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
    const int rows = blocks[i][0], tokens = blocks[i][1];
    const int64_t count = sp.ksplit * ((m + tokens - 1) / tokens) * (n % rows == 0 ? n / rows : 0);
    const int last = i + 1 == sizeof blocks / sizeof blocks[0];
    if ((count >= sm_count || last) && bf16fp32__smallm_use_wide(c, n, rows, tokens, smem_limit) == 0)
      break;
  }
  choose_tile_subs(c, m, n, k, sm_count, smem_limit);
  return 0;
}

/* K elements per token row of a tiled-kernel x batch of sb sub-chunks per warp group: group c's
 * sub-chunks begin at c * sb * 32 (load_x in smallm-kernel.cu), so more than one batch takes all
 * kwarps segments; one batch only up to the furthest end of a group's sub-chunks over the slices
 * (rounded to 64 so that rows stay bank-friendly). A shorter slice gives each group fewer
 * sub-chunks, so its last group can end further out than the longest slice's (528x1032: slices
 * of 8 and 9 sub-chunks, sb = 2, group 7 of an 8-sub-chunk slice at 448-479). */
static int64_t batch_width(int64_t k, const bf16fp32__smallm_split *sp, int64_t nq, int sb) {
  const int64_t full = (int64_t)sb * sp->kwarps * 32;
  if (nq > sb) return full;
  int64_t end = 0;
  for (int r = 0; r < sp->ksplit; r++) {
    int64_t k0, k1;
    bf16fp32__smallm_slice(k, sp->ksplit, r, &k0, &k1);
    const int nsubs = (int)((k1 - k0 + 31) / 32);
    /* the last group with sub-chunks ends furthest out (each group takes at most sb) */
    for (int g = sp->kwarps - 1; g >= 0; g--) {
      int j0, j1;
      bf16fp32__smallm_chain(nsubs, g, sp->kwarps, &j0, &j1);
      if (j1 == j0) continue;
      const int64_t e = (int64_t)(g * sb + j1 - j0) * 32;
      if (e > end) end = e;
      break;
    }
  }
  end = (end + 63) / 64 * 64;
  return end < full ? end : full;
}

/* Shared memory for sb sub-chunks per warp per batch: x buffers (two when there is more than
 * one batch) or the partial sums, whichever is larger. */
static size_t batch_smem(int64_t k, const bf16fp32__smallm_split *sp, int64_t nq, int mpad, int sb,
                         size_t partials, int single, int *dbuf, int *xk, size_t *xb) {
  int64_t nb = (nq + sb - 1) / sb;
  const int64_t width = batch_width(k, sp, nq, sb);
  *dbuf = nb > 1 && !single;
  *xk = (int)width;
  *xb = (size_t)bf16fp32__smallm_rows_bytes(mpad, (int)width);
  size_t need = *xb * (*dbuf ? 2 : 1);
  return need > partials ? need : partials;
}

int bf16fp32__smallm_choose_with(int64_t m, int64_t n, int64_t k, const bf16fp32__smallm_split *split,
                                 size_t smem_limit, bf16fp32__smallm_config *c) {
  const bf16fp32__smallm_split sp = *split;
  if (m < 1 || m > BF16FP32__SMALLM_MAX_M || k < 1) return -1;
  if ((sp.rows != 16 && sp.rows != 32 && sp.rows != 64 && sp.rows != 128) || n % sp.rows != 0)
    return -1;
  if (sp.kwarps != 128 / sp.rows) return -1;
  if (sp.ksplit < 1 || sp.ksplit > BF16FP32__SMALLM_MAX_SPLIT || sp.ksplit > (k + 31) / 32)
    return -1;
  if (sp.decode_mask < 0 || sp.decode_mask > 15) return -1;
  const int r = sp.rows, wk = sp.kwarps;
  const int64_t tiles = (m + 7) / 8;
  const int mt = tiles <= 1 ? 1 : tiles <= 2 ? 2 : tiles <= 4 ? 4 : tiles <= 8 ? 8 : tiles <= 16 ? 16 : 32;
  const int mpad = 8 * mt; /* every tile of every warp is staged (zeros past m): no branches */
  const int64_t nq = warp_subs(k, &sp);
  const size_t partials = (size_t)wk * sums_bytes(r, mpad);
  int sbmax = BF16FP32__SMALLM_SB_MAX(mt);
  if (sbmax > nq) sbmax = (int)nq;

  /* The most weights in flight (sb), preferably within the decode budget at M <= 64 (two
   * blocks per SM); else the largest sb that fits. */
  int sb = sbmax, dbuf = 0, xk = 0;
  size_t xb = 0, smem = 0;
  size_t decode = smem_limit < BF16FP32__SMALLM_DECODE_SMEM ? smem_limit : BF16FP32__SMALLM_DECODE_SMEM;
  smem = batch_smem(k, &sp, nq, mpad, sb, partials, 0, &dbuf, &xk, &xb);
  if (!(m <= 64 && smem <= decode)) {
    /* Double-buffered x first (its loads overlap the MMAs); else one buffer reloaded. */
    int found = 0;
    for (int single = 0; single < 2 && !found; single++)
      for (sb = sbmax; sb >= 1 && !found; sb--) {
        smem = batch_smem(k, &sp, nq, mpad, sb, partials, single, &dbuf, &xk, &xb);
        found = smem <= smem_limit;
      }
    if (!found) return -1;
    sb++; /* the loop stepped past the one found */
  }

  c->split = sp;
  c->mt = mt, c->mpad = mpad, c->sb = sb, c->xk = xk;
  c->nb = (int)((nq + sb - 1) / sb);
  c->dbuf = dbuf;
  c->threads = BF16FP32__SMALLM_THREADS;
  c->grid_x = sp.ksplit;
  c->grid_y = (int)(n / r);
  c->xbuf_bytes = xb;
  c->smem_bytes = smem;
  c->decode_smem = partials;
  {
    const int b = mt == 1 ? 0 : mt == 2 ? 1 : mt == 4 ? 2 : 3;
    c->decode = m <= BF16FP32__SMALLM_DECODE_MAX_M && (sp.decode_mask >> b & 1) &&
                c->decode_smem <= smem_limit;
  }
  c->deep = 0;
  c->wide = 0;
  c->wide_rows = c->wide_tokens = 0;
  c->wide_smem = 0;
  c->wide_groups = 1;
  c->wide_subs = 0;
  c->wgmma = 0;
  c->wg_tokens = 0;
  c->stream = 0;
  c->stream_subs = 0;
  c->stream_stages = 0;
  c->stream_groups = 1;
  c->stream_smem = 0;
  c->stream_wl2 = 0;
  c->stream_over = 0;
  c->stream_tblocks = 1;
  c->stream_early = 0;
  c->stream_pair = 0;
  c->share = 0;
  c->share_pitch = 0;
  c->share_smem = 0;
  c->share_xreg = 0;
  c->share_xwide = 0;
  c->share_wpre = 0;
  c->share_late = 0;
  c->share_late_l2 = 0;
  c->share_tiles = 1;
  c->fold = 0;
  c->fold_pitch = 0;
  c->fold_smem = 0;
  c->fold_xn = 0;
  return 0;
}

int bf16fp32__smallm_choose_for(int64_t m, int64_t n, int64_t k, int sm_count, int use_pdl,
                                size_t smem_limit, bf16fp32__smallm_config *c) {
  if (bf16fp32__smallm_choose(m, n, k, sm_count, smem_limit, c) != 0) return -1;
  bf16fp32__smallm_prefer_stream(c, m, n, k, sm_count, use_pdl, smem_limit);
  bf16fp32__smallm_prefer_share(c, m, n, k, sm_count, use_pdl, smem_limit);
  bf16fp32__smallm_prefer_fold(c, m, n, k, sm_count, use_pdl, smem_limit);
  bf16fp32__smallm_prefer_generic(c, m, n, k, sm_count, use_pdl, smem_limit);
  return 0;
}

/* over: -1 lets stream_fit lay the partial sums after the rings where they fit, else over them */
static int stream_fit(bf16fp32__smallm_config *c, int64_t m, int subs, int stages,
                      int min_stages, int groups, int over, size_t smem_limit);
static int tokens_fit(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k, int subs,
                      int stages, int min_stages, int groups, int over, size_t smem_limit);
static size_t share_smem(const bf16fp32__smallm_config *c, int64_t m, int64_t pitch, int xreg,
                         int tiles);

int bf16fp32__smallm_use_stream(bf16fp32__smallm_config *c, int64_t m, int subs, int stages,
                                int groups, size_t smem_limit) {
  return stream_fit(c, m, subs, stages, 2, groups, -1, smem_limit);
}

int bf16fp32__smallm_use_stream_at(bf16fp32__smallm_config *c, int64_t m, int subs, int stages,
                                   int groups, int over, size_t smem_limit) {
  if (over != 0 && over != 1) return -1;
  return stream_fit(c, m, subs, stages, stages, groups, over, smem_limit);
}

int bf16fp32__smallm_pair_applies(const bf16fp32__smallm_config *c, int use_pdl) {
  /* the instances smallm-stream.cu builds for it */
  return use_pdl && c->stream && c->stream_groups == 1 && c->stream_tblocks <= 1 && c->mt >= 1 &&
         c->mt <= 2;
}

int bf16fp32__smallm_stream_pair(bf16fp32__smallm_config *c, int use_pdl) {
  if (!bf16fp32__smallm_pair_applies(c, use_pdl)) return -1;
  c->stream_pair = 1;
  return 0;
}

void bf16fp32__smallm_pair_footprint(bf16fp32__smallm_config *c, const bf16fp32__smallm_pair *p,
                                     int use_pdl, unsigned call) {
  if (!c->stream_pair) return;
  if (!bf16fp32__smallm_pair_applies(c, use_pdl)) { /* plainly: not the PDL launch's instances */
    c->stream_pair = 0;
    return;
  }
  const int threads = p->threads[c->mt - 1];
  if (threads == 0 || c->stream_smem > p->max_smem) return;
  if (call & 1u)
    c->threads = threads;
  else if (c->stream_smem < p->smem)
    c->stream_smem = p->smem;
}

/* c switched to the stream kernel in blocks of 64 tokens (stream_fit's arguments at M = 64) */
static int tokens_fit(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k, int subs,
                      int stages, int min_stages, int groups, int over, size_t smem_limit) {
  const int64_t full = BF16FP32__SMALLM_DECODE_MAX_M;
  bf16fp32__smallm_config t;
  if (m <= full || m > BF16FP32__SMALLM_MAX_M ||
      bf16fp32__smallm_choose_with(full, n, k, &c->split, smem_limit, &t) != 0 ||
      stream_fit(&t, full, subs, stages, min_stages, groups, over, smem_limit) != 0)
    return -1;
  t.stream_tblocks = (int)((m + full - 1) / full);
  *c = t;
  return 0;
}

int bf16fp32__smallm_use_stream_tokens(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k,
                                       int subs, int stages, int groups, size_t smem_limit) {
  return tokens_fit(c, m, n, k, subs, stages, 2, groups, -1, smem_limit);
}

int bf16fp32__smallm_use_stream_tokens_at(bf16fp32__smallm_config *c, int64_t m, int64_t n,
                                          int64_t k, int subs, int stages, int groups, int over,
                                          size_t smem_limit) {
  if (over != 0 && over != 1) return -1;
  return tokens_fit(c, m, n, k, subs, stages, stages, groups, over, smem_limit);
}

int bf16fp32__smallm_use_share(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k,
                               int xreg, int wpre, size_t smem_limit) {
  bf16fp32__smallm_config t;
  if (m < 1 || m > BF16FP32__SMALLM_DECODE_MAX_M || (xreg && m > 16)) return -1;
  if (wpre < 0 || wpre > 2 || (wpre && xreg)) return -1;
  /* the token tiles and the partial sums' room as for any kernel at m <= 64 */
  if (bf16fp32__smallm_choose_with(m, n, k, &c->split, smem_limit, &t) != 0) return -1;
  /* a warp's range in registers: 8 sub-chunks, or 16 of x with one token tile */
  const int64_t range = warp_subs(k, &t.split);
  const int xwide = xreg && range > BF16FP32__SMALLM_XREG_SUBS;
  if ((wpre && range > BF16FP32__SMALLM_XREG_SUBS) ||
      (xwide && (t.mt != 1 || range > BF16FP32__SMALLM_XREG_WIDE_SUBS)))
    return -1;
  const int64_t pitch = 64 * (slice_subs(k, &t.split) | 1);
  const size_t smem = share_smem(&t, m, pitch, xreg, 1);
  if (smem > smem_limit) return -1;
  t.share = 1;
  t.decode = 0;
  t.share_pitch = (int)pitch;
  t.share_smem = smem;
  t.share_xreg = xreg != 0;
  t.share_xwide = xwide;
  t.share_wpre = wpre;
  t.share_late = 0;
  t.share_late_l2 = 0;
  t.share_tiles = 1;
  *c = t;
  return 0;
}

int bf16fp32__smallm_use_fold(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k,
                              size_t smem_limit) {
  bf16fp32__smallm_config t;
  const int rows = BF16FP32__SMALLM_FOLD_ROWS;
  if (m < 1 || m > BF16FP32__SMALLM_FOLD_MAX_M || n % rows != 0) return -1;
  if (bf16fp32__smallm_choose_with(m, n, k, &c->split, smem_limit, &t) != 0) return -1;
  const int chains = t.split.ksplit * t.split.kwarps;
  const int64_t range = warp_subs(k, &t.split); /* the longest chain */
  if ((chains != 2 * BF16FP32__SMALLM_WARPS && chains != 4 * BF16FP32__SMALLM_WARPS) ||
      range > BF16FP32__SMALLM_FOLD_MAX_SUBS)
    return -1;
  /* the row as in global memory, its last sub-chunk whole */
  const int64_t pitch = 64 * ((k + 31) / 32 | 1);
  const size_t bytes = (size_t)pitch * rows, sums = (size_t)chains * sums_bytes(rows, t.mpad);
  const size_t smem = BF16FP32__SMALLM_SHARE_BARS + (bytes > sums ? bytes : sums);
  if (smem > smem_limit) return -1;
  t.fold = 1;
  t.decode = 0;
  t.grid_x = 1;
  t.grid_y = (int)(n / rows);
  t.fold_pitch = (int)pitch;
  t.fold_smem = smem;
  t.fold_xn = range <= 4 ? 4 : BF16FP32__SMALLM_FOLD_MAX_SUBS;
  *c = t;
  return 0;
}

/* The push's receive slots (K split only): ksplit slots (bf16fp32__smallm_push_slot) of the
 * block's units, four rows of one token each. */
static size_t share_recv(const bf16fp32__smallm_config *c, int64_t m, int tiles) {
  const int units = (int)(m * tiles * c->split.rows / 4), s = c->split.ksplit;
  return s > 1 ? (size_t)s * (size_t)bf16fp32__smallm_push_slot(units, s) * 16u : 0;
}
size_t bf16fp32__smallm_share_recv(const bf16fp32__smallm_config *c, int64_t m) {
  return share_recv(c, m, c->share_tiles);
}

/* The share kernel's shared memory for `tiles` row blocks of c's split: the barriers, then the
 * weight rows and (not xreg) x's m token rows, or the partial sums laid over them where those
 * are larger (kwarps sets of mpad tokens x (rows + 4) floats), then the push's receive slots. */
static size_t share_smem(const bf16fp32__smallm_config *c, int64_t m, int64_t pitch, int xreg,
                         int tiles) {
  const int rows = tiles * c->split.rows;
  const size_t bytes = (size_t)pitch * (size_t)(rows + (xreg ? 0 : m));
  const size_t sums = (size_t)c->split.kwarps * sums_bytes(rows, c->mpad);
  return BF16FP32__SMALLM_SHARE_BARS + (bytes > sums ? bytes : sums) + share_recv(c, m, tiles);
}

int bf16fp32__smallm_share_tiles(bf16fp32__smallm_config *c, int64_t m, int tiles,
                                 size_t smem_limit) {
  if (!c->share || (tiles != 1 && tiles != 2) || (tiles == 2 && c->share_wpre != 0)) return -1;
  const int blocks = c->grid_y * c->share_tiles; /* the split's row blocks */
  if (blocks % tiles != 0) return -1;
  const size_t smem = share_smem(c, m, c->share_pitch, c->share_xreg, tiles);
  if (smem > smem_limit) return -1;
  c->share_tiles = tiles;
  c->grid_y = blocks / tiles;
  c->share_smem = smem;
  return 0;
}

int bf16fp32__smallm_share_late(bf16fp32__smallm_config *c, int late, int l2) {
  if (!c->share || late < 0 || late >= c->split.kwarps ||
      (late > 0 && (c->share_wpre != 0 || c->share_xwide)) ||
      l2 < 0 || l2 > 1 || (l2 && late == 0))
    return -1;
  c->share_late = late;
  c->share_late_l2 = l2;
  return 0;
}

/* bf16fp32__smallm_use_stream with at least min_stages stages; over 0 or 1 only that layout */
static int stream_fit(bf16fp32__smallm_config *c, int64_t m, int subs, int stages,
                      int min_stages, int groups, int over_only, size_t smem_limit) {
  if (c->wide || m < 1 || m > 8 * c->mt || c->mt > 8) return -1;
  if (subs < 1 || subs > BF16FP32__SMALLM_STREAM_MAX_SUBS || stages < 2 || stages > 8) return -1;
  if (groups != 1 && groups != 2) return -1;
  if (groups == 2 && (c->split.ksplit != 1 || c->split.rows != 16 || c->grid_y % 2 != 0))
    return -1;
  const int rings = BF16FP32__SMALLM_WARPS / groups;
  const size_t stage = (size_t)bf16fp32__smallm_stream_stage_bytes(m, subs, 16 * groups);
  const size_t head = BF16FP32__SMALLM_STREAM_BARS;
  /* the decode kernel's partial sums, laid out alike (with groups: half the chains, twice the
   * rows) */
  const size_t partials = groups == 1 ? c->decode_smem
                                      : (size_t)(c->split.kwarps / groups) *
                                            sums_bytes(16 * groups, c->mpad);
  /* the partial sums after the rings (no barrier before them), else over them */
  for (int over = groups > 1; over < 2; over++)
    for (int s = stages; s >= min_stages && (over_only < 0 || over == over_only); s--) {
      const size_t ring = (size_t)rings * s * stage;
      const size_t smem = head + (over ? (ring > partials ? ring : partials) : ring + partials);
      if (smem <= smem_limit) {
        c->stream = 1;
        c->decode = 0;
        c->share = 0;
        c->fold = 0;
        c->stream_subs = subs;
        c->stream_stages = s;
        c->stream_groups = groups;
        c->stream_wl2 = 0;
        c->stream_pair = 0;
        c->stream_smem = smem;
        c->stream_over = over;
        if (groups == 2) c->grid_x = 2, c->grid_y /= 2;
        return 0;
      }
    }
  return -1;
}

/* A tile kernel's ring of `stages` buffers of `subs` sub-chunks (its block sums: sums_bytes). */
static size_t ring_bytes(int rows, int tokens, int stages, int subs) {
  return (size_t)stages * (size_t)(rows + tokens) * BF16FP32__SMALLM_TILE_PITCH(subs);
}
/* The shared memory of c's tile kernel with stages of `subs`: 128 bytes of barriers, then the
 * ring (the wgmma kernel: plus one stage's x as core matrices) or the block sums, whichever is
 * larger; with groups, the ring and then one set of sums per chain of a group. */
static size_t tile_smem(const bf16fp32__smallm_config *c, int subs) {
  const int rows = c->wide_rows, tokens = c->wide_tokens;
  if (c->wide_groups > 1)
    return 128 + ring_bytes(rows, tokens, BF16FP32__SMALLM_WIDE_STAGES, subs) +
           (size_t)(c->split.kwarps / c->wide_groups) * sums_bytes(rows, tokens);
  const size_t ring = c->wgmma ? ring_bytes(rows, tokens, BF16FP32__SMALLM_WG_STAGES, subs) +
                                     (size_t)tokens * 64 * subs
                               : ring_bytes(rows, tokens, BF16FP32__SMALLM_WIDE_STAGES, subs);
  const size_t sums = sums_bytes(rows, tokens);
  return 128 + (ring > sums ? ring : sums);
}
/* Sets c to a tile kernel's blocks of rows x tokens (wg_tokens > 0: the wgmma kernel), stages
 * of 5 sub-chunks. -1 when its shared memory exceeds smem_limit. */
static int use_tiles(bf16fp32__smallm_config *c, int rows, int tokens, int wg_tokens,
                     size_t smem_limit) {
  bf16fp32__smallm_config t = *c;
  t.wide = 1;
  t.wgmma = wg_tokens > 0;
  t.decode = 0;
  t.stream = 0;
  t.fold = 0;
  t.wide_rows = rows;
  t.wide_tokens = tokens;
  t.wg_tokens = wg_tokens;
  t.wide_groups = 1;
  t.wide_subs = 5;
  t.wide_smem = tile_smem(&t, t.wide_subs);
  if (t.wide_smem > smem_limit) return -1;
  *c = t;
  return 0;
}

int bf16fp32__smallm_use_tile_subs(bf16fp32__smallm_config *c, int subs, size_t smem_limit) {
  if (!c->wide || (subs != 4 && subs != 5 && subs != 7)) return -1;
  const size_t smem = tile_smem(c, subs);
  if (smem > smem_limit) return -1;
  c->wide_subs = subs;
  c->wide_smem = smem;
  return 0;
}

int bf16fp32__smallm_use_groups(bf16fp32__smallm_config *c, int groups, size_t smem_limit) {
  const int wk = c->split.kwarps;
  if (!c->wide || c->wgmma || c->split.ksplit != 1 || groups < 2 || wk % groups != 0) return -1;
  const int chains = wk / groups;
  if (1 + (groups - 1) * chains > BF16FP32__SMALLM_MAX_SPLIT) return -1;
  /* the chain sums are kept beside the ring, which is still in use when they close */
  bf16fp32__smallm_config t = *c;
  t.wide_groups = groups;
  t.wide_smem = tile_smem(&t, t.wide_subs);
  if (t.wide_smem > smem_limit) return -1;
  *c = t;
  return 0;
}

int bf16fp32__smallm_use_wide(bf16fp32__smallm_config *c, int64_t n, int rows, int tokens,
                              size_t smem_limit) {
  const int wt = BF16FP32__SMALLM_WIDE_WARP_TOKENS(c->split.kwarps);
  if (rows < 32 || rows % 32 != 0 || n % rows != 0 || tokens < wt || tokens % wt != 0) return -1;
  if (rows / 32 * (tokens / wt) > BF16FP32__SMALLM_WARPS || rows > 256 || tokens > 256) return -1;
  return use_tiles(c, rows, tokens, 0, smem_limit);
}

int bf16fp32__smallm_use_wgmma(bf16fp32__smallm_config *c, int64_t n, int rows, int tokens,
                               int wg_tokens, size_t smem_limit) {
  const int wk = c->split.kwarps;
  if (!(wk == 4 || (wk == 8 && wg_tokens == 32)) || (wg_tokens != 32 && wg_tokens != 64))
    return -1;
  if ((rows != 64 && rows != 128) || n % rows != 0) return -1;
  if ((tokens != 32 && tokens != 64 && tokens != 128) || tokens % wg_tokens != 0) return -1;
  if (rows / 64 * (tokens / wg_tokens) > 2) return -1;
  return use_tiles(c, rows, tokens, wg_tokens, smem_limit);
}
