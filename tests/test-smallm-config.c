/* The smallm launch configuration, without a GPU: accepted shapes, the (N, K) split of every
 * DeepSeek-V4 shape, the split's independence of M (batch invariance), that every M in 1..256
 * gets a configuration the kernels can run (threads, tiles, shared memory, within smaller limits
 * too), and the wide kernel's blocks. */
#include <stdio.h>
#include <string.h>

#include "testing.h"

/* Compiled in here so that the test also runs in builds without the CUDA backends (where the
 * smallm folder is left out of the library); the library's copies are then never linked. */
#include "backends/smallm/smallm-config.c"
#include "backends/smallm/smallm-prefer.c"

enum { H200_SMS = 132 };
static const size_t H200_SMEM = 232448; /* sharedMemPerBlockOptin on sm_90 */

static const int dsv4[][2] = {{256, 4096}, {2048, 4096}, {1024, 4096}, {512, 4096}, {384, 7168},
                              {2048, 7168}, {1024, 7168}, {512, 7168}, {256, 7168}};

/* What a block may take for two to fit an SM: each also holds the 1 KB the system reserves. */
static size_t h200_half_sm(void) { return (H200_SMEM + 1024) / 2 - 1024; }

static void test_shape_ok(void) {
  for (int i = 0; i < 9; i++) {
    int64_t n = dsv4[i][0], k = dsv4[i][1];
    for (int64_t m = 1; m <= 256; m++) CHECK(bf16fp32__smallm_shape_ok(m, n, k, k, k, n, 16));
    CHECK(bf16fp32__smallm_shape_ok(7, n, k, k + 8, k + 64, n + 8, 16)); /* padded ld */
  }
  CHECK(!bf16fp32__smallm_shape_ok(0, 256, 4096, 4096, 4096, 256, 16));
  /* row strides a tensor map takes: under 2^40 bytes */
  CHECK(bf16fp32__smallm_shape_ok(1, 256, 4096, ((int64_t)1 << 39) - 8, 4096, 256, 16));
  CHECK(!bf16fp32__smallm_shape_ok(1, 256, 4096, (int64_t)1 << 39, 4096, 256, 16));
  CHECK(!bf16fp32__smallm_shape_ok(1, 256, 4096, 4096, (int64_t)1 << 40, 256, 16));
  CHECK(bf16fp32__smallm_shape_ok(1, 256, 4096, 4096, ((int64_t)1 << 39) - 8, 256, 16)); /* w's */
  CHECK(!bf16fp32__smallm_shape_ok(1, 256, 4096, 4096, (int64_t)1 << 39, 256, 16));
  /* sizes that are not positive */
  CHECK(!bf16fp32__smallm_shape_ok(1, 0, 4096, 4096, 4096, 8, 16));
  CHECK(!bf16fp32__smallm_shape_ok(1, -16, 4096, 4096, 4096, 8, 16));
  CHECK(!bf16fp32__smallm_shape_ok(1, 256, 0, 8, 8, 256, 16));
  /* the largest N and K whose configurations test_every_m checks are shapes the kernel takes */
  CHECK(bf16fp32__smallm_shape_ok(64, 65536, 64, 64, 64, 65536, 16));
  CHECK(bf16fp32__smallm_shape_ok(256, 16, 1 << 20, 1 << 20, 1 << 20, 16, 16));
  CHECK(!bf16fp32__smallm_shape_ok(257, 256, 4096, 4096, 4096, 256, 16));
  CHECK(!bf16fp32__smallm_shape_ok(4, 200, 4096, 4096, 4096, 200, 16));  /* N % 16 */
  CHECK(!bf16fp32__smallm_shape_ok(4, 256, 4100, 4100, 4104, 256, 16));  /* K % 8 */
  CHECK(!bf16fp32__smallm_shape_ok(4, 256, 4096, 4100, 4096, 256, 16));  /* ldx % 8 */
  CHECK(!bf16fp32__smallm_shape_ok(4, 256, 4096, 4096, 4097, 256, 16));  /* ldw % 8 */
  CHECK(!bf16fp32__smallm_shape_ok(4, 256, 4096, 4096, 4096, 260, 16));  /* ldo % 8 */
  CHECK(!bf16fp32__smallm_shape_ok(4, 256, 4096, 4096, 4096, 256, 8));   /* 8-byte pointers */
  CHECK(!bf16fp32__smallm_shape_ok(4, 256, 4, 8, 8, 256, 16));           /* K < 8 */
  /* K up to 1024 under 2^31 (the kernels' 32-bit K indexes), the next multiple of 8 not */
  const int64_t kmax = ((int64_t)1 << 31) - 1024;
  CHECK(bf16fp32__smallm_shape_ok(2, 16, kmax, kmax, kmax, 16, 16));
  CHECK(!bf16fp32__smallm_shape_ok(2, 16, kmax + 8, kmax + 8, kmax + 8, 16, 16));
  for (int ksplit = 1; ksplit <= BF16FP32__SMALLM_MAX_SPLIT; ksplit++) {
    bf16fp32__smallm_slices sl; /* the int bounds the kernels take, exact at the largest K */
    bf16fp32__smallm_fill_slices(kmax, ksplit, &sl);
    int rising = sl.k[0] == 0 && sl.k[ksplit] == kmax;
    for (int r = 0; r < ksplit; r++) rising &= sl.k[r + 1] > sl.k[r];
    CHECK(rising);
  }
  CHECK(bf16fp32__smallm_shape_ok(3, 48, 8, 8, 8, 48, 16));
}

static void test_dsv4_split(void) {
  /* Expected on an H200: R rows per block, S-block clusters along K, WK warp groups. */
  static const int want[][4] = {{32, 8, 4, 0x0}, {16, 1, 8, 0xf}, {16, 2, 8, 0xf},
                                {32, 4, 4, 0x1}, {32, 8, 4, 0xb}, {16, 1, 8, 0xf},
                                {16, 2, 8, 0xf}, {32, 4, 4, 0xf}, {32, 8, 4, 0x1}};
  for (int i = 0; i < 9; i++) {
    bf16fp32__smallm_split s = {0, 0, 0, 0};
    CHECK(bf16fp32__smallm_choose_split(dsv4[i][0], dsv4[i][1], H200_SMS, &s) == 0);
    CHECK(s.rows == want[i][0] && s.ksplit == want[i][1] && s.kwarps == want[i][2] &&
          s.decode_mask == want[i][3]);
    CHECK(dsv4[i][0] / s.rows * s.ksplit <= H200_SMS); /* one wave */
    CHECK(dsv4[i][0] / s.rows * s.ksplit >= 64);
    CHECK(s.kwarps * s.rows == 128);
  }
}

static void test_generic_split(void) {
  bf16fp32__smallm_split s = {0, 0, 0, 0};
  /* another SM count: the rule (32 rows, one block per SM, clusters of up to 8) */
  CHECK(bf16fp32__smallm_choose_split(256, 4096, 114, &s) == 0 && s.rows == 32 && s.ksplit == 8);
  CHECK(bf16fp32__smallm_choose_split(2048, 7168, 114, &s) == 0 && s.rows == 32 && s.ksplit == 1);
  CHECK(bf16fp32__smallm_choose_split(48, 4096, 132, &s) == 0 && s.rows == 16 && s.ksplit == 8);
  CHECK(bf16fp32__smallm_choose_split(64, 40, 132, &s) == 0 && s.ksplit == 2); /* 2 sub-chunks */
  CHECK(bf16fp32__smallm_choose_split(200, 4096, 132, &s) != 0);
  /* 32 rows wherever N is a multiple of 32 (96, 1056: not of 64), else 16 */
  CHECK(bf16fp32__smallm_choose_split(96, 4096, 114, &s) == 0 && s.rows == 32 && s.kwarps == 4);
  CHECK(bf16fp32__smallm_choose_split(1056, 4096, 114, &s) == 0 && s.rows == 32);
  CHECK(bf16fp32__smallm_choose_split(1040, 4096, 114, &s) == 0 && s.rows == 16 && s.kwarps == 8);
  /* the decode kernel from N = 1024 on, the tiled one below */
  CHECK(bf16fp32__smallm_choose_split(1024, 4096, 114, &s) == 0 && s.decode_mask == 0xf);
  CHECK(bf16fp32__smallm_choose_split(1008, 4096, 114, &s) == 0 && s.decode_mask == 0x0);
  /* sizes that are not positive */
  CHECK(bf16fp32__smallm_choose_split(0, 4096, 132, &s) != 0);
  CHECK(bf16fp32__smallm_choose_split(-16, 4096, 132, &s) != 0);
  CHECK(bf16fp32__smallm_choose_split(256, 0, 132, &s) != 0);
  CHECK(bf16fp32__smallm_choose_split(256, -8, 132, &s) != 0);
  bf16fp32__smallm_config c;
  CHECK(bf16fp32__smallm_choose(1, 256, 0, 132, H200_SMEM, &c) != 0);
}

/* A split given by hand (bf16fp32__smallm_choose_with): rows of 16 to 128 dividing N, WK = 128 /
 * rows, 1 to 8 K slices and no more than K's 32-wide sub-chunks, a decode mask of 0 to 15; any
 * other is declined. */
static void test_split_given(void) {
  bf16fp32__smallm_config c;
  const bf16fp32__smallm_split ok = {32, 2, 4, 0xf};
  CHECK(bf16fp32__smallm_choose_with(4, 256, 4096, &ok, H200_SMEM, &c) == 0 &&
        memcmp(&c.split, &ok, sizeof ok) == 0 && c.grid_x == 2 && c.grid_y == 8);
  for (int rows = 8; rows <= 256; rows *= 2) {
    const bf16fp32__smallm_split sp = {rows, 1, 128 / rows, 0};
    const int want = rows >= 16 && rows <= 128;
    CHECK((bf16fp32__smallm_choose_with(4, 256, 4096, &sp, H200_SMEM, &c) == 0) == want);
  }
  const bf16fp32__smallm_split rows32 = {32, 1, 4, 0}, wk8 = {32, 1, 8, 0}, wk2 = {32, 1, 2, 0};
  CHECK(bf16fp32__smallm_choose_with(4, 48, 4096, &rows32, H200_SMEM, &c) != 0); /* 32 | 48 */
  CHECK(bf16fp32__smallm_choose_with(4, 96, 4096, &rows32, H200_SMEM, &c) == 0);
  CHECK(bf16fp32__smallm_choose_with(4, 256, 4096, &wk8, H200_SMEM, &c) != 0);   /* WK */
  CHECK(bf16fp32__smallm_choose_with(4, 256, 4096, &wk2, H200_SMEM, &c) != 0);
  /* K slices: 1 to 8, at most one per sub-chunk (K = 72: three sub-chunks) */
  for (int ks = 0; ks <= 9; ks++) {
    const bf16fp32__smallm_split sp = {32, ks, 4, 0};
    CHECK((bf16fp32__smallm_choose_with(4, 256, 4096, &sp, H200_SMEM, &c) == 0) ==
          (ks >= 1 && ks <= 8));
    CHECK((bf16fp32__smallm_choose_with(4, 256, 72, &sp, H200_SMEM, &c) == 0) ==
          (ks >= 1 && ks <= 3));
  }
  for (int mask = -1; mask <= 16; mask++) {
    const bf16fp32__smallm_split sp = {16, 1, 8, mask};
    CHECK((bf16fp32__smallm_choose_with(4, 256, 4096, &sp, H200_SMEM, &c) == 0) ==
          (mask >= 0 && mask <= 15));
  }
}

static int check_config(int64_t m, int64_t n, int64_t k, int sms, size_t smem) {
  bf16fp32__smallm_config c, c1;
  int ok = 1;
  if (bf16fp32__smallm_choose(m, n, k, sms, smem, &c) != 0) return 0;
  if (bf16fp32__smallm_choose(1, n, k, sms, smem, &c1) != 0) return 0;
  /* batch invariance: the split (summation order) is the same as at M = 1 */
  ok &= memcmp(&c.split, &c1.split, sizeof c.split) == 0;
  ok &= c.threads == BF16FP32__SMALLM_THREADS && c.split.kwarps * c.split.rows == 128;
  ok &= c.mt == 1 || c.mt == 2 || c.mt == 4 || c.mt == 8 || c.mt == 16 || c.mt == 32;
  ok &= c.mpad == 8 * c.mt && c.mpad >= m && (c.mt == 1 || 4 * c.mt < m); /* fewest tiles */
  ok &= c.sb >= 1 && c.sb <= BF16FP32__SMALLM_SB_MAX(c.mt);
  ok &= c.xk % 64 == 0 && c.xk <= c.sb * c.split.kwarps * 32 + 32 && c.xk >= 32;
  ok &= c.grid_x == c.split.ksplit && (int64_t)c.grid_y * c.split.rows == n;
  ok &= c.split.ksplit >= 1 && c.split.ksplit <= BF16FP32__SMALLM_MAX_SPLIT;
  ok &= c.xbuf_bytes == (size_t)bf16fp32__smallm_rows_bytes(c.mpad, c.xk);
  ok &= c.smem_bytes >= c.xbuf_bytes * (c.dbuf ? 2 : 1);
  ok &= c.smem_bytes >= (size_t)c.split.kwarps * (size_t)c.mpad * (size_t)(c.split.rows + 4) * 4;
  ok &= c.smem_bytes <= smem;
  /* the decode kernel: only where the mask says so, at M <= 64, in its shared memory */
  {
    const int b = c.mt == 1 ? 0 : c.mt == 2 ? 1 : c.mt == 4 ? 2 : 3;
    const int want_dec = m <= BF16FP32__SMALLM_DECODE_MAX_M && (c.split.decode_mask >> b & 1) &&
                         c.decode_smem <= smem;
    ok &= c.decode == want_dec;
    /* the deep ring: decode at mt <= 2 with at most one block per SM, clusters of at most 2,
     * where a warp has more sub-chunks than the usual ring holds (and only there) */
    const int64_t range = ((((k + 31) / 32 + c.split.ksplit - 1) / c.split.ksplit) +
                           c.split.kwarps - 1) / c.split.kwarps;
    ok &= c.deep == (c.decode && c.mt <= 2 && (int64_t)c.grid_x * c.grid_y <= sms &&
                     c.split.ksplit <= 2 && range > BF16FP32__SMALLM_DECODE_RING);
    ok &= c.decode_smem >= (size_t)c.split.kwarps * (size_t)c.mpad * (size_t)(c.split.rows + 4) * 4;
    ok &= !c.decode || c.decode_smem <= smem;
  }
  /* the wide kernel exactly above M = 64 on the DeepSeek-V4 shapes, in its shared memory, with
   * whole warps */
  if (c.wide) {
    const int wt = BF16FP32__SMALLM_WIDE_WARP_TOKENS(c.split.kwarps);
    ok &= m > BF16FP32__SMALLM_DECODE_MAX_M && !c.decode;
    ok &= c.wide_rows % 32 == 0 && n % c.wide_rows == 0 && c.wide_tokens % wt == 0;
    ok &= c.wide_rows / 32 * (c.wide_tokens / wt) <= BF16FP32__SMALLM_WARPS;
    ok &= c.wide_smem <= smem && c.wide_smem >= 128 + (size_t)c.wide_tokens * (c.wide_rows + 4) * 4;
    ok &= c.wide_subs == 4 || c.wide_subs == 5 || c.wide_subs == 7;
  } else {
    ok &= m <= BF16FP32__SMALLM_DECODE_MAX_M || n % 32 != 0;
  }
  /* the batches cover the longest slice; one batch needs no second buffer */
  int64_t subs_max = ((k + 31) / 32 + c.split.ksplit - 1) / c.split.ksplit;
  int64_t nq = (subs_max + c.split.kwarps - 1) / c.split.kwarps;
  ok &= (int64_t)c.nb * c.sb >= nq && (int64_t)(c.nb - 1) * c.sb < nq;
  ok &= !c.dbuf || c.nb > 1;
  ok &= c.nb > 1 || (int64_t)c.xk >= subs_max * 32; /* one batch holds the whole slice */
  ok &= c.sb <= nq; /* no batch longer than a warp's range (its x rows would hold gaps) */
  /* every rank's slice is non-empty, and every warp group's sub-chunks of a batch fit the
   * tiled kernel's x rows (group g's segment begins at g sb sub-chunks) */
  int64_t k0, k1;
  int end = 0; /* the furthest end of a group's sub-chunks */
  for (int r = 0; r < c.split.ksplit; r++) {
    bf16fp32__smallm_slice(k, c.split.ksplit, r, &k0, &k1);
    ok &= k1 > k0;
    for (int g = 0; g < c.split.kwarps; g++) {
      int j0, j1;
      bf16fp32__smallm_chain((int)((k1 - k0 + 31) / 32), g, c.split.kwarps, &j0, &j1);
      const int used = c.nb > 1 ? c.sb : j1 - j0;
      if (j1 > j0 && (g * c.sb + used) * 32 > end) end = (g * c.sb + used) * 32;
      if (j1 > j0 && (g * c.sb + used) * 32 > c.xk) {
        fprintf(stderr, "m=%lld n=%lld k=%lld: group %d of slice %d ends at %d, x rows of %d\n",
                (long long)m, (long long)n, (long long)k, g, r, (g * c.sb + used) * 32, c.xk);
        ok = 0;
      }
    }
  }
  /* one batch's x rows end at the furthest group's end, rounded up to 64 */
  ok &= c.nb > 1 || c.xk - 64 < end;
  return ok;
}

static void test_every_m(void) {
  for (int i = 0; i < 9; i++)
    for (int64_t m = 1; m <= 256; m++) {
      int ok = check_config(m, dsv4[i][0], dsv4[i][1], H200_SMS, H200_SMEM);
      if (!ok) fprintf(stderr, "config m=%lld n=%d k=%d\n", (long long)m, dsv4[i][0], dsv4[i][1]);
      CHECK(ok);
    }
  /* other devices and shapes: other SM counts, K tails, tiny and large N */
  static const int64_t other[][3] = {{1, 16, 8},       {3, 48, 8},       {70, 64, 40},
                                     {256, 1040, 72},  {5, 256, 4104},   {17, 4096, 4096},
                                     {256, 8192, 7168}, {64, 65536, 64}, {256, 16, 1 << 20},
                                     /* slices of unequal length (8 and 9 sub-chunks) */
                                     {1, 528, 1032},   {37, 528, 1032},  {9, 528, 1032},
                                     /* the largest K, past the 2^24 once taken as a limit */
                                     {1, 48, ((int64_t)1 << 31) - 1024},
                                     {65, 32, ((int64_t)1 << 31) - 1024},
                                     {3, 16, ((int64_t)1 << 24) + 40}};
  static const int sms[] = {132, 114, 78, 1};
  for (int s = 0; s < 4; s++)
    for (int i = 0; i < (int)(sizeof other / sizeof other[0]); i++) {
      int ok = check_config(other[i][0], other[i][1], other[i][2], sms[s], H200_SMEM);
      if (!ok) fprintf(stderr, "config m=%lld n=%lld k=%lld sms=%d\n", (long long)other[i][0],
                       (long long)other[i][1], (long long)other[i][2], sms[s]);
      CHECK(ok);
    }
  /* K of 8 to 2048 at N = 16 .. 1024, a few M: every configuration's x rows hold its groups */
  int bad = 0;
  for (int64_t k = 8; k <= 2048; k += 8)
    for (int64_t n = 16; n <= 1024; n *= 4)
      for (int64_t m = 1; m <= 64; m = 4 * m + 1) bad += !check_config(m, n, k, H200_SMS, H200_SMEM);
  EXPECT(bad == 0, "%d configurations of the K and N sweep", bad);
  bf16fp32__smallm_config c;
  /* the deep ring at a grid of exactly one block per SM (2048 x 7168 on 64 SMs: 64 blocks of 32
   * rows), not at one block more than SMs (on 63) */
  CHECK(check_config(1, 2048, 7168, 64, H200_SMEM) && check_config(1, 2048, 7168, 63, H200_SMEM));
  CHECK(bf16fp32__smallm_choose(1, 2048, 7168, 64, H200_SMEM, &c) == 0 &&
        c.grid_x * c.grid_y == 64 && c.deep);
  CHECK(bf16fp32__smallm_choose(1, 2048, 7168, 63, H200_SMEM, &c) == 0 &&
        c.grid_x * c.grid_y == 64 && !c.deep);
  CHECK(bf16fp32__smallm_choose(257, 256, 4096, 132, H200_SMEM, &c) != 0);
  CHECK(bf16fp32__smallm_choose(4, 200, 4096, 132, H200_SMEM, &c) != 0);
  CHECK(bf16fp32__smallm_choose(256, 2048, 7168, 132, 16 * 1024, &c) != 0); /* no room */
}

/* Below the H200's shared memory (a device of less, or a caller's limit): whatever is chosen fits
 * the limit (the x batches or partial sums, the decode kernel's sums where it runs, the wide
 * kernel's ring), a larger limit never declines what a smaller one took, and a shape is declined
 * only where nothing fits: at the smallest limit it takes, the block holds its partial sums or one
 * x buffer reloaded between batches, never a double buffer (one buffer of it fits less room). */
static void test_smem_limits(void) {
  static const int64_t shapes[][2] = {{256, 4096}, {2048, 4096}, {1024, 4096}, {512, 4096},
                                      {384, 7168}, {2048, 7168}, {1024, 7168}, {512, 7168},
                                      {256, 7168}, {48, 4096},   {528, 1032}};
  static const int64_t ms[] = {1, 8, 16, 33, 64, 100, 256};
  int bad = 0;
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
    for (size_t j = 0; j < sizeof ms / sizeof ms[0]; j++) {
      const int64_t m = ms[j], n = shapes[i][0], k = shapes[i][1];
      bf16fp32__smallm_split sp;
      CHECK(bf16fp32__smallm_choose_split(n, k, H200_SMS, &sp) == 0);
      int taken = 0;
      for (size_t limit = 0; limit <= H200_SMEM; limit += 64) {
        bf16fp32__smallm_config c;
        if (bf16fp32__smallm_choose(m, n, k, H200_SMS, limit, &c) != 0) {
          if (taken) {
            fprintf(stderr, "%lldx%lld M = %lld: declined at %zu bytes, taken below\n",
                    (long long)n, (long long)k, (long long)m, limit);
            bad++;
          }
          continue;
        }
        const int fits = c.smem_bytes <= limit && (!c.decode || c.decode_smem <= limit) &&
                         (!c.wide || c.wide_smem <= limit) &&
                         memcmp(&c.split, &sp, sizeof sp) == 0;
        const int least = taken || !c.dbuf || c.smem_bytes == c.decode_smem;
        if (!fits || !least) {
          fprintf(stderr, "%lldx%lld M = %lld within %zu bytes: smem %zu (dbuf %d, sums %zu), "
                  "decode %d, wide %d (%zu)\n", (long long)n, (long long)k, (long long)m, limit,
                  c.smem_bytes, c.dbuf, c.decode_smem, c.decode, c.wide, c.wide_smem);
          bad++;
        }
        taken = 1;
      }
      bad += !taken;
    }
  EXPECT(bad == 0, "%d configurations of the shared-memory sweep", bad);
}

/* The wide kernel's blocks: the first of 64 x 64, 32 x 64, 32 x 32 that gives every SM a
 * block, and the limits of bf16fp32__smallm_use_wide. */
static void test_wide_blocks(void) {
  bf16fp32__smallm_config c;
  CHECK(bf16fp32__smallm_choose(256, 384, 7168, H200_SMS, H200_SMEM, &c) == 0 && c.wide &&
        c.wide_rows == 64 && c.wide_tokens == 64); /* 8 slices x 4 x 6 = 192 blocks */
  CHECK(bf16fp32__smallm_choose(256, 512, 4096, H200_SMS, H200_SMEM, &c) == 0 && c.wide &&
        c.wide_rows == 32 && c.wide_tokens == 64); /* 64 x 64 would be 4 slices x 4 x 8 blocks */
  CHECK(bf16fp32__smallm_choose(256, 256, 4096, H200_SMS, H200_SMEM, &c) == 0 && c.wide &&
        c.wide_rows == 32 && c.wide_tokens == 64); /* 64 x 64 would be 128 blocks */
  CHECK(bf16fp32__smallm_choose(65, 1024, 4096, H200_SMS, H200_SMEM, &c) == 0 && c.wide &&
        c.wide_rows == 32 && c.wide_tokens == 32); /* 32 x 64 would be 2 x 2 x 32 blocks */
  CHECK(bf16fp32__smallm_choose(64, 1024, 4096, H200_SMS, H200_SMEM, &c) == 0 && !c.wide);
  CHECK(bf16fp32__smallm_choose(100, 48, 4096, H200_SMS, H200_SMEM, &c) == 0 && !c.wide);
  CHECK(bf16fp32__smallm_choose(256, 256, 4096, H200_SMS, H200_SMEM, &c) == 0);
  CHECK(bf16fp32__smallm_use_wide(&c, 256, 48, 64, H200_SMEM) != 0);  /* rows % 32 */
  CHECK(bf16fp32__smallm_use_wide(&c, 256, 64, 48, H200_SMEM) != 0);  /* tokens % 32 (WK 4) */
  CHECK(bf16fp32__smallm_use_wide(&c, 256, 128, 128, H200_SMEM) != 0); /* 16 warps */
  CHECK(bf16fp32__smallm_use_wide(&c, 256, 64, 64, 16 * 1024) != 0);  /* no room */
  CHECK(bf16fp32__smallm_use_wide(&c, 256, 32, 256, H200_SMEM) == 0 && c.wide_tokens == 256);
  CHECK(bf16fp32__smallm_choose(256, 1024, 4096, H200_SMS, H200_SMEM, &c) == 0);
  CHECK(bf16fp32__smallm_use_wide(&c, 1024, 32, 16, H200_SMEM) == 0); /* WK 8: 16-token warps */
}

/* The rule's wide blocks and stages on GPUs without a measured table (not 132 SMs): the first of
 * 64 x 64, 32 x 64, 32 x 32 that gives every SM a block (ceil(M / tokens) token blocks), the last
 * where none does; stages of 4 sub-chunks exactly where 5 take as many stages, of 7 only where
 * they take fewer stages than 5 and the grid runs in one wave (each block also holds the 1 KB
 * the system reserves). */
static void test_wide_rule(void) {
  static const int blocks[][2] = {{64, 64}, {32, 64}, {32, 32}};
  static const int64_t ns[] = {96, 256, 384, 512, 1024, 2048, 4096};
  static const int64_t ks[] = {1024, 2304, 4096, 7168, 9216};
  static const int64_t ms[] = {65, 96, 100, 128, 129, 160, 192, 200, 255, 256};
  static const int sms[] = {16, 32, 64, 78, 100, 114, 128};
  int bad = 0, sevens = 0;
  for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
    for (size_t b = 0; b < sizeof ks / sizeof ks[0]; b++)
      for (size_t d = 0; d < sizeof ms / sizeof ms[0]; d++)
        for (size_t e = 0; e < sizeof sms / sizeof sms[0]; e++) {
          const int64_t n = ns[a], k = ks[b], m = ms[d];
          bf16fp32__smallm_config c;
          if (bf16fp32__smallm_choose(m, n, k, sms[e], H200_SMEM, &c) != 0 || !c.wide) {
            bad++;
            continue;
          }
          const int64_t s = c.split.ksplit;
          int64_t count = 0;
          int ok = 1, i = 0;
          for (; i < 3; i++) {
            count = s * ((m + blocks[i][1] - 1) / blocks[i][1]) * (n / blocks[i][0]);
            if (blocks[i][0] == c.wide_rows && blocks[i][1] == c.wide_tokens) break;
            /* a larger block passed over: it does not divide N or leaves SMs without a block */
            ok &= n % blocks[i][0] != 0 || count < sms[e];
          }
          ok &= i < 3 && (i == 2 || count >= sms[e]);
          const int64_t subs = (((k + 31) / 32 + s - 1) / s + c.wide_groups - 1) / c.wide_groups;
          const int64_t s4 = (subs + 3) / 4, s5 = (subs + 4) / 5, s7 = (subs + 6) / 7;
          ok &= (c.wide_subs == 4) == (s4 <= s5);
          if (c.wide_subs == 7) {
            const int64_t per_sm = (int64_t)((H200_SMEM + 1024) / (c.wide_smem + 1024));
            ok &= s7 < s5 && count * c.wide_groups <= per_sm * sms[e];
            sevens++;
          }
          if (!ok) {
            fprintf(stderr, "%lldx%lld M = %lld on %d SMs: %d x %d, stages of %d\n", (long long)n,
                    (long long)k, (long long)m, sms[e], c.wide_rows, c.wide_tokens, c.wide_subs);
            bad++;
          }
        }
  EXPECT(bad == 0 && sevens > 0, "%d wide configurations off the rule (%d of 7)", bad, sevens);
}

/* The wide kernel's stages: 4 sub-chunks where 5 take as many stages, 7 where they take fewer
 * and the grid still fits one wave, else 5; and the limits of bf16fp32__smallm_use_tile_subs. */
static void test_tile_subs(void) {
  bf16fp32__smallm_config c;
  CHECK(bf16fp32__smallm_choose(128, 256, 4096, H200_SMS, H200_SMEM, &c) == 0 && c.wide &&
        c.wide_subs == 4); /* slices of 16 sub-chunks: 4 stages of 4 or of 5 */
  CHECK(bf16fp32__smallm_choose(256, 2048, 7168, H200_SMS, H200_SMEM, &c) == 0 && c.wide &&
        c.wide_subs == 7); /* 224: 32 stages, and 256 blocks fit two per SM */
  const size_t smem7 = c.wide_smem;
  CHECK(bf16fp32__smallm_use_tile_subs(&c, 5, H200_SMEM) == 0 && c.wide_subs == 5 &&
        c.wide_smem < smem7); /* pitch 320 against 448 */
  CHECK(bf16fp32__smallm_use_tile_subs(&c, 6, H200_SMEM) != 0 && c.wide_subs == 5);
  CHECK(bf16fp32__smallm_use_tile_subs(&c, 7, 32 * 1024) != 0 && c.wide_subs == 5); /* no room */
  CHECK(bf16fp32__smallm_choose(128, 2048, 4096, H200_SMS, H200_SMEM, &c) == 0 && c.wide &&
        c.wide_groups == 2 && c.wide_subs == 5); /* with 7, one block per SM: two waves */
  CHECK(bf16fp32__smallm_choose(192, 512, 4096, H200_SMS, H200_SMEM, &c) == 0 && c.wide &&
        c.wide_subs == 7); /* 192 blocks in clusters of 4, two per SM */
  CHECK(bf16fp32__smallm_choose(256, 512, 4096, H200_SMS, H200_SMEM, &c) == 0 && c.wide &&
        c.wide_subs == 5); /* 256 blocks: more than 7 / 8 of the 264 places */
  CHECK(bf16fp32__smallm_choose(200, 1024, 7168, H200_SMS, H200_SMEM, &c) == 0 && c.wide &&
        c.wide_subs == 7);
  CHECK(bf16fp32__smallm_choose(16, 1024, 7168, H200_SMS, H200_SMEM, &c) == 0 && !c.wide &&
        bf16fp32__smallm_use_tile_subs(&c, 5, H200_SMEM) != 0); /* not a tile kernel */
}

/* The stream kernel in blocks of 64 tokens above M = 64: the M = 64 configuration of the same
 * split, with the token blocks along z. */
static void test_stream_tokens(void) {
  bf16fp32__smallm_config c, c64;
  CHECK(bf16fp32__smallm_choose(64, 256, 4096, H200_SMS, H200_SMEM, &c64) == 0);
  CHECK(bf16fp32__smallm_use_stream(&c64, 64, 1, 3, 1, H200_SMEM) == 0);
  CHECK(bf16fp32__smallm_choose(130, 256, 4096, H200_SMS, H200_SMEM, &c) == 0 && c.wide);
  CHECK(bf16fp32__smallm_use_stream_tokens(&c, 130, 256, 4096, 1, 3, 1, H200_SMEM) == 0 &&
        c.stream && !c.wide && c.stream_tblocks == 3 && c.mt == 8 && c.mpad == 64 &&
        c.grid_x == c64.grid_x && c.grid_y == c64.grid_y && c.stream_smem == c64.stream_smem);
  CHECK(bf16fp32__smallm_choose(256, 2048, 7168, H200_SMS, H200_SMEM, &c) == 0);
  CHECK(bf16fp32__smallm_use_stream_tokens(&c, 256, 2048, 7168, 3, 3, 2, H200_SMEM) == 0 &&
        c.stream_groups == 2 && c.stream_tblocks == 4);
  CHECK(bf16fp32__smallm_choose(64, 256, 4096, H200_SMS, H200_SMEM, &c) == 0);
  CHECK(bf16fp32__smallm_use_stream_tokens(&c, 64, 256, 4096, 1, 3, 1, H200_SMEM) != 0);
  CHECK(bf16fp32__smallm_use_stream_tokens(&c, 257, 256, 4096, 1, 3, 1, H200_SMEM) != 0);
  CHECK(bf16fp32__smallm_use_stream_tokens(&c, 128, 256, 4096, 9, 3, 1, H200_SMEM) != 0);
  CHECK(bf16fp32__smallm_choose(128, 256, 4096, H200_SMS, H200_SMEM, &c) == 0 &&
        c.stream_tblocks == 1); /* the choice itself */
  /* the measured table: 2048 x 4096 up to M = 160 with two blocks per tile, not above */
  CHECK(bf16fp32__smallm_choose(160, 2048, 4096, H200_SMS, H200_SMEM, &c) == 0);
  bf16fp32__smallm_prefer_stream(&c, 160, 2048, 4096, H200_SMS, 1, H200_SMEM);
  CHECK(c.stream && c.stream_tblocks == 3 && c.stream_groups == 2 && c.stream_subs == 1);
  CHECK(bf16fp32__smallm_choose(161, 2048, 4096, H200_SMS, H200_SMEM, &c) == 0);
  bf16fp32__smallm_prefer_stream(&c, 161, 2048, 4096, H200_SMS, 0, H200_SMEM);
  CHECK(c.wide && !c.stream);
  CHECK(bf16fp32__smallm_choose(100, 1024, 7168, H200_SMS, H200_SMEM, &c) == 0);
  bf16fp32__smallm_prefer_stream(&c, 100, 1024, 7168, 100, 0, H200_SMEM); /* another GPU */
  CHECK(c.wide && !c.stream);
}

/* The wide kernel's measured blocks at N = 2048 and 1024 x 7168 (elsewhere the rule),
 * no shape on the wgmma kernel, and the limits of bf16fp32__smallm_use_wgmma. */
static void test_wgmma_blocks(void) {
  bf16fp32__smallm_config c;
  CHECK(bf16fp32__smallm_choose(256, 2048, 7168, H200_SMS, H200_SMEM, &c) == 0 && !c.wgmma &&
        c.wide && c.wide_rows == 64 && c.wide_tokens == 32 && c.wide_groups == 1);
  CHECK(bf16fp32__smallm_choose(129, 2048, 4096, H200_SMS, H200_SMEM, &c) == 0 && !c.wgmma &&
        c.wide && c.wide_rows == 64 && c.wide_tokens == 32 && c.wide_groups == 1);
  CHECK(bf16fp32__smallm_choose(128, 2048, 4096, H200_SMS, H200_SMEM, &c) == 0 && !c.wgmma &&
        c.wide && c.wide_rows == 64 && c.wide_tokens == 32 && c.wide_groups == 2);
  CHECK(bf16fp32__smallm_choose(65, 2048, 7168, H200_SMS, H200_SMEM, &c) == 0 && !c.wgmma &&
        c.wide && c.wide_rows == 64 && c.wide_tokens == 32 && c.wide_groups == 2);
  CHECK(c.wide_smem == 128 + (size_t)2 * (64 + 32) * BF16FP32__SMALLM_TILE_PITCH(c.wide_subs) +
                           (size_t)4 * 32 * (64 + 4) * 4); /* the ring, then four chain sets */
  CHECK(bf16fp32__smallm_choose(200, 1024, 7168, H200_SMS, H200_SMEM, &c) == 0 && c.wide &&
        c.wide_rows == 64 && c.wide_tokens == 64 && c.wide_groups == 1);
  CHECK(bf16fp32__smallm_choose(128, 1024, 7168, H200_SMS, H200_SMEM, &c) == 0 && c.wide &&
        c.wide_rows == 32 && c.wide_tokens == 32); /* the rule: 2 x 4 x 32 blocks */
  CHECK(bf16fp32__smallm_choose(256, 2048, 7168, 100, H200_SMEM, &c) == 0 && c.wide &&
        c.wide_rows == 64 && c.wide_tokens == 64); /* another SM count: the rule */
  CHECK(bf16fp32__smallm_choose(64, 2048, 7168, H200_SMS, H200_SMEM, &c) == 0 && !c.wgmma &&
        !c.wide);
  CHECK(bf16fp32__smallm_choose(64, 512, 7168, H200_SMS, H200_SMEM, &c) == 0 && !c.wide);
  CHECK(bf16fp32__smallm_choose(65, 512, 7168, H200_SMS, H200_SMEM, &c) == 0 && c.wide &&
        c.wide_rows == 32 && c.wide_tokens == 32); /* the rule: 4 x 3 x 16 blocks */
  CHECK(bf16fp32__smallm_choose(256, 512, 7168, H200_SMS, H200_SMEM, &c) == 0); /* WK 4 */
  CHECK(bf16fp32__smallm_use_wgmma(&c, 512, 96, 64, 64, H200_SMEM) != 0);  /* rows */
  CHECK(bf16fp32__smallm_use_wgmma(&c, 512, 64, 96, 32, H200_SMEM) != 0);  /* tokens */
  CHECK(bf16fp32__smallm_use_wgmma(&c, 512, 128, 128, 64, H200_SMEM) != 0); /* 4 groups */
  CHECK(bf16fp32__smallm_use_wgmma(&c, 512, 64, 64, 64, 16 * 1024) != 0);  /* no room */
  CHECK(bf16fp32__smallm_use_wgmma(&c, 512, 64, 128, 64, H200_SMEM) == 0 && c.wgmma);
  /* its ring of WG_STAGES, then one stage's x as core matrices (128 tokens x 64 bytes a
   * sub-chunk) */
  CHECK(c.wide_smem >= 128 + (size_t)BF16FP32__SMALLM_WG_STAGES * (64 + 128) *
                                 BF16FP32__SMALLM_TILE_PITCH(c.wide_subs) +
                           (size_t)128 * 64 * c.wide_subs);
  CHECK(bf16fp32__smallm_choose(256, 1024, 4096, H200_SMS, H200_SMEM, &c) == 0); /* WK 8 */
  CHECK(bf16fp32__smallm_use_wgmma(&c, 1024, 64, 64, 64, H200_SMEM) != 0);
  CHECK(bf16fp32__smallm_use_wgmma(&c, 1024, 64, 64, 32, H200_SMEM) == 0);
  CHECK(bf16fp32__smallm_choose(256, 256, 4096, H200_SMS, H200_SMEM, &c) == 0);
  c.split.kwarps = 2, c.split.rows = 64; /* WK 2: not an instance */
  CHECK(bf16fp32__smallm_use_wgmma(&c, 256, 64, 64, 64, H200_SMEM) != 0);
}

/* What bf16fp32__smallm_prefer_stream makes of the chosen configuration for (m, n, k) on an
 * H200 with sm_count SMs: the stream kernel with stages of `subs` sub-chunks and `stages`
 * stages, or (subs 0) the chosen kernel unchanged. */
static void expect_stream(int64_t m, int64_t n, int64_t k, int sm_count, int pdl, int subs,
                          int stages) {
  bf16fp32__smallm_config c, chosen;
  CHECK(bf16fp32__smallm_choose(m, n, k, sm_count, H200_SMEM, &c) == 0);
  chosen = c;
  bf16fp32__smallm_prefer_stream(&c, m, n, k, sm_count, pdl, H200_SMEM);
  if (subs == 0) {
    CHECK(!c.stream && c.decode == chosen.decode && c.wide == chosen.wide);
  } else {
    CHECK(c.stream && !c.decode && c.stream_subs == subs && c.stream_stages == stages &&
          c.stream_smem <= H200_SMEM);
  }
}

/* The configuration the table makes of the chosen one for (m, n, k) on an H200; 1 when that is
 * the stream kernel, 0 when not, -1 when nothing is chosen. */
static int table_config(int64_t m, int64_t n, int64_t k, int pdl, bf16fp32__smallm_config *c) {
  if (bf16fp32__smallm_choose(m, n, k, H200_SMS, H200_SMEM, c) != 0) return -1;
  bf16fp32__smallm_prefer_stream(c, m, n, k, H200_SMS, pdl, H200_SMEM);
  return c->stream;
}

/* The blocks per tile of the stream kernel the table picks (0: not the stream kernel). */
static int stream_groups(int64_t m, int64_t n, int64_t k, int pdl) {
  bf16fp32__smallm_config c;
  const int r = table_config(m, n, k, pdl, &c);
  return r == 1 ? c.stream_groups : r;
}

/* Whether the table has the stream kernel request its weights past the first ring fill into L2
 * before the wait, and lay its partial sums over the rings (-1: not the stream kernel); its
 * shared memory (0: not the stream kernel). */
static int stream_wl2(int64_t m, int64_t n, int64_t k, int pdl) {
  bf16fp32__smallm_config c;
  return table_config(m, n, k, pdl, &c) == 1 ? c.stream_wl2 : -1;
}
static int stream_over(int64_t m, int64_t n, int64_t k, int pdl) {
  bf16fp32__smallm_config c;
  return table_config(m, n, k, pdl, &c) == 1 ? c.stream_over : -1;
}
static int stream_early(int64_t m, int64_t n, int64_t k, int pdl) {
  bf16fp32__smallm_config c;
  return table_config(m, n, k, pdl, &c) == 1 ? c.stream_early : -1;
}
static size_t stream_smem(int64_t m, int64_t n, int64_t k, int pdl) {
  bf16fp32__smallm_config c;
  return table_config(m, n, k, pdl, &c) == 1 ? c.stream_smem : 0;
}

/* The stream kernel: at M <= 16 where it measured faster (in plain launches at 2048 x K and
 * 1024 x 7168, and at 256 x 7168 and 512 x 7168 for M = 1-16, 512 x 4096 for M = 9-16; under PDL
 * at every shape, 256 x 4096 up to M = 8, three-sub-chunk stages at small N from M = 5), at
 * M = 17-32 for N >= 512 (both launch kinds) and 256 x 7168 and 384 x 7168 (plain), and at
 * M = 33-64 for N >= 512, 384 x 7168 and 256 x 7168 (both kinds) and 256 x 4096 (PDL), on 132
 * SMs only, with
 * the stage size and count of the first table entry that fits, fewer stages where those do not
 * fit; never above M = 64 or on a tile kernel's configuration. */
static void test_stream(void) {
  expect_stream(1, 2048, 7168, H200_SMS, 0, 7, 3);
  expect_stream(4, 2048, 7168, H200_SMS, 0, 7, 2); /* two stages, x beside the weights */
  expect_stream(12, 2048, 7168, H200_SMS, 0, 7, 2);
  expect_stream(16, 2048, 7168, H200_SMS, 0, 7, 2); /* 7 fit with the partial sums over the rings */
  CHECK(stream_over(16, 2048, 7168, 0) == 1 && stream_over(12, 2048, 7168, 0) == 0);
  /* two blocks per tile: 2048 x 7168 from M = 17, 2048 x 4096 from M = 33 */
  expect_stream(17, 2048, 7168, H200_SMS, 1, 3, 3);
  CHECK(stream_groups(17, 2048, 7168, 1) == 2);
  expect_stream(32, 2048, 7168, H200_SMS, 0, 7, 2); /* plain: 7 x 2 up to M = 32 */
  CHECK(stream_groups(32, 2048, 7168, 0) == 2);
  expect_stream(33, 2048, 7168, H200_SMS, 0, 3, 3);
  expect_stream(64, 2048, 7168, H200_SMS, 0, 3, 3);
  CHECK(stream_groups(64, 2048, 7168, 1) == 2);
  expect_stream(32, 2048, 4096, H200_SMS, 0, 3, 2); /* a ring per warp: 3 stages do not fit */
  CHECK(stream_groups(32, 2048, 4096, 0) == 1);
  expect_stream(33, 2048, 4096, H200_SMS, 0, 3, 3);
  CHECK(stream_groups(33, 2048, 4096, 0) == 2);
  CHECK(stream_groups(16, 2048, 7168, 0) == 1);
  expect_stream(64, 1024, 4096, H200_SMS, 1, 1, 3);
  expect_stream(24, 1024, 4096, H200_SMS, 0, 3, 2);
  expect_stream(48, 256, 7168, H200_SMS, 0, 3, 2); /* 3 x 2 while it fits (the sums over the rings) */
  expect_stream(56, 256, 7168, H200_SMS, 1, 3, 2);
  CHECK(stream_over(56, 256, 7168, 1) == 1);
  expect_stream(64, 256, 7168, H200_SMS, 0, 1, 3);
  expect_stream(48, 1024, 7168, H200_SMS, 1, 3, 2); /* 1024 x 7168: 3 x 2 at M = 33-48 */
  expect_stream(49, 1024, 7168, H200_SMS, 0, 1, 3);
  expect_stream(24, 256, 7168, H200_SMS, 0, 3, 3);
  expect_stream(24, 256, 7168, H200_SMS, 1, 0, 0);
  expect_stream(24, 384, 7168, H200_SMS, 0, 3, 2);
  expect_stream(64, 256, 4096, H200_SMS, 1, 1, 3);
  expect_stream(64, 256, 4096, H200_SMS, 0, 0, 0);
  expect_stream(48, 2048, 4096, H200_SMS, 1, 3, 3); /* PDL: two blocks per tile at M = 33-64 */
  CHECK(stream_groups(33, 2048, 4096, 1) == 2 && stream_groups(49, 2048, 4096, 1) == 2);
  expect_stream(48, 512, 7168, H200_SMS, 0, 3, 2); /* 512 x K: 3 x 2 while it fits, then 1 x 3 */
  CHECK(stream_over(48, 512, 7168, 0) == 1 && stream_over(40, 512, 7168, 0) == 0);
  expect_stream(58, 512, 4096, H200_SMS, 1, 3, 2);
  expect_stream(60, 512, 4096, H200_SMS, 1, 1, 3);
  expect_stream(64, 512, 7168, H200_SMS, 0, 1, 3);
  expect_stream(65, 2048, 7168, H200_SMS, 0, 1, 3); /* token blocks */
  expect_stream(193, 2048, 7168, H200_SMS, 0, 0, 0);
  expect_stream(65, 512, 7168, H200_SMS, 1, 0, 0);
  expect_stream(1, 1024, 7168, H200_SMS, 0, 7, 2); /* 1024 x 7168 plain: M = 1-16 */
  expect_stream(8, 1024, 7168, H200_SMS, 0, 7, 2);
  expect_stream(12, 1024, 7168, H200_SMS, 0, 5, 2);
  expect_stream(4, 2048, 4096, H200_SMS, 0, 4, 2); /* 2048 x 4096 plain: 4, then 5 from M = 9 */
  expect_stream(8, 2048, 4096, H200_SMS, 0, 4, 2);
  expect_stream(9, 2048, 4096, H200_SMS, 0, 5, 2);
  expect_stream(8, 256, 7168, H200_SMS, 0, 7, 2); /* 256 x 7168 plain: M = 1-16 */
  expect_stream(12, 256, 7168, H200_SMS, 0, 7, 2);
  expect_stream(14, 256, 7168, H200_SMS, 0, 7, 2);
  expect_stream(16, 256, 7168, H200_SMS, 0, 7, 2); /* ... and 15-16 with the sums over the rings */
  expect_stream(17, 256, 7168, H200_SMS, 0, 3, 3);
  expect_stream(8, 256, 4096, H200_SMS, 1, 4, 2); /* 256 x 4096 PDL: 4 x 2 up to M = 8, then 3 x 2 */
  expect_stream(9, 256, 4096, H200_SMS, 1, 3, 2);
  expect_stream(16, 256, 4096, H200_SMS, 1, 3, 2);
  expect_stream(17, 256, 4096, H200_SMS, 1, 0, 0);
  expect_stream(4, 256, 4096, H200_SMS, 0, 0, 0);
  expect_stream(4, 2048, 4096, H200_SMS, 1, 4, 2); /* 2048 x 4096 PDL: 4 x 2 to M = 8, then 3 x 3 */
  expect_stream(8, 2048, 4096, H200_SMS, 1, 4, 2);
  CHECK(stream_groups(5, 2048, 4096, 1) == 1 && stream_groups(8, 2048, 4096, 1) == 1);
  expect_stream(9, 2048, 4096, H200_SMS, 1, 3, 3); /* ... a ring per warp at M = 9-16 */
  expect_stream(16, 2048, 4096, H200_SMS, 1, 3, 3);
  CHECK(stream_groups(9, 2048, 4096, 1) == 1 && stream_groups(16, 2048, 4096, 1) == 1);
  expect_stream(4, 1024, 4096, H200_SMS, 0, 0, 0);
  expect_stream(1, 1024, 4096, H200_SMS, 1, 4, 2); /* 1024 x 4096 PDL: 4 x 2 at M = 1, then 3 x 2 */
  expect_stream(2, 1024, 4096, H200_SMS, 1, 3, 2);
  expect_stream(16, 1024, 4096, H200_SMS, 1, 3, 2);
  expect_stream(1, 512, 7168, H200_SMS, 1, 7, 2); /* 512 x 7168 PDL: 7 x 2 as plainly */
  expect_stream(5, 512, 7168, H200_SMS, 1, 7, 2);
  expect_stream(6, 512, 7168, H200_SMS, 1, 7, 2);
  expect_stream(16, 512, 7168, H200_SMS, 1, 7, 2);
  expect_stream(17, 512, 7168, H200_SMS, 1, 3, 3);
  expect_stream(16, 512, 7168, H200_SMS, 0, 7, 2); /* plain: 7 x 2, 5 x 2 at M = 17-24 */
  expect_stream(17, 512, 7168, H200_SMS, 0, 5, 2);
  expect_stream(32, 512, 7168, H200_SMS, 0, 3, 2);
  expect_stream(4, 512, 4096, H200_SMS, 1, 4, 2); /* 512 x 4096 PDL: 4 x 2, then 3 x 3 */
  expect_stream(5, 512, 4096, H200_SMS, 1, 3, 3);
  expect_stream(16, 512, 4096, H200_SMS, 1, 3, 3);
  expect_stream(8, 512, 4096, H200_SMS, 0, 0, 0); /* plain: the decode kernel, then 4 x 2 */
  expect_stream(9, 512, 4096, H200_SMS, 0, 4, 2);
  expect_stream(24, 512, 4096, H200_SMS, 0, 3, 3);
  expect_stream(16, 384, 7168, H200_SMS, 1, 3, 2);
  expect_stream(1, 384, 7168, H200_SMS, 1, 3, 2);
  expect_stream(8, 256, 7168, H200_SMS, 1, 7, 2); /* 256 x 7168 PDL: 7 x 2, then 3 x 2 */
  expect_stream(9, 256, 7168, H200_SMS, 1, 3, 2);
  expect_stream(16, 256, 7168, H200_SMS, 1, 3, 2);
  expect_stream(17, 256, 7168, H200_SMS, 1, 0, 0);
  expect_stream(1, 2048, 7168, 114, 1, 0, 0); /* measured on 132 SMs only */
  /* weights past the ring into L2 before the wait: no entry (the pro decode step, session 45) */
  CHECK(stream_wl2(1, 1024, 4096, 1) == 0 && stream_wl2(16, 1024, 4096, 1) == 0);
  CHECK(stream_wl2(17, 1024, 4096, 1) == 0 && stream_wl2(4, 2048, 4096, 1) == 0);
  CHECK(stream_wl2(5, 2048, 4096, 1) == 0 && stream_wl2(8, 2048, 4096, 1) == 0);
  CHECK(stream_wl2(6, 1024, 7168, 1) == 0 && stream_wl2(8, 1024, 7168, 1) == 0);
  CHECK(stream_wl2(8, 1024, 7168, 0) == 0);
  CHECK(stream_wl2(8, 1024, 4096, 0) == -1); /* plain: the decode kernel */
  /* the next call launched at block entry, under PDL only, in the stream table: 1024 x 4096 at
   * M = 1 (with 4 x 2, two blocks per SM) and 256 x 7168 at M = 1-8 (there the share kernel's
   * entries win under PDL); not 512 x 7168 (the pro decode step) */
  CHECK(stream_early(1, 1024, 4096, 1) == 1 && stream_early(2, 1024, 4096, 1) == 0);
  CHECK(stream_smem(1, 1024, 4096, 1) <= h200_half_sm());
  /* its two blocks per SM: the partial sums after the rings, where they fit beside them */
  CHECK(stream_over(1, 1024, 4096, 1) == 0);
  CHECK(stream_early(1, 512, 7168, 1) == 0 && stream_early(8, 512, 7168, 1) == 0);
  CHECK(stream_early(8, 512, 7168, 0) == 0);
  CHECK(stream_early(1, 256, 7168, 1) == 1 && stream_early(8, 256, 7168, 1) == 1);
  CHECK(stream_early(9, 256, 7168, 1) == 0 && stream_early(1, 256, 7168, 0) == 0);
  CHECK(stream_early(1, 2048, 7168, 1) == 0 && stream_early(1, 256, 4096, 1) == 0);
  /* 1024 x 7168 under PDL: 7 x 2 at M = 1-4, 5 x 2 at M = 5-16, one block per SM (no entry asks
   * for two per SM there since session 46: the decode step; at M = 5 the stages would let two fit,
   * and the footprint is raised past half an SM) */
  const size_t half = h200_half_sm(), over_half = half + 16;
  expect_stream(1, 1024, 7168, H200_SMS, 1, 7, 2);
  expect_stream(4, 1024, 7168, H200_SMS, 1, 7, 2);
  expect_stream(5, 1024, 7168, H200_SMS, 1, 5, 2);
  CHECK(stream_over(5, 1024, 7168, 1) == 0 && stream_smem(5, 1024, 7168, 1) == over_half);
  expect_stream(6, 1024, 7168, H200_SMS, 1, 5, 2);
  CHECK(stream_over(6, 1024, 7168, 1) == 0 && stream_smem(6, 1024, 7168, 1) > half);
  expect_stream(7, 1024, 7168, H200_SMS, 1, 5, 2);
  expect_stream(8, 1024, 7168, H200_SMS, 1, 5, 2);
  CHECK(stream_smem(8, 1024, 7168, 1) > half);
  expect_stream(9, 1024, 7168, H200_SMS, 1, 5, 2);
  CHECK(stream_smem(9, 1024, 7168, 1) > half);
  /* 1024 x 4096 under PDL at M = 17-32: 3 x 2, the sums after the rings, one block per SM */
  CHECK(stream_over(17, 1024, 4096, 1) == 0 && stream_smem(17, 1024, 4096, 1) > half);
  CHECK(stream_over(21, 1024, 4096, 1) == 0 && stream_smem(21, 1024, 4096, 1) > half);
  CHECK(stream_over(22, 1024, 4096, 1) == 0 && stream_smem(22, 1024, 4096, 1) > half);
  CHECK(stream_over(21, 1024, 4096, 0) == 0); /* plain: the sums after the rings */
  /* Every stream default of one wave takes more than half an SM but the entry that asks for two
   * (1024 x 4096 M = 1 under PDL, above): the router at M = 33-34 and 2048 x 4096 at M = 1-5
   * would fit two; the footprint is their own from M = 35 and M = 6 on */
  CHECK(stream_smem(33, 384, 7168, 1) == over_half && stream_smem(34, 384, 7168, 0) == over_half);
  CHECK(stream_smem(35, 384, 7168, 1) > over_half);
  CHECK(stream_smem(1, 2048, 4096, 0) == over_half && stream_smem(5, 2048, 4096, 1) == over_half);
  CHECK(stream_smem(6, 2048, 4096, 0) > over_half);
  for (int m = 1; m <= 64; m++)
    for (size_t i = 0; i < sizeof dsv4 / sizeof dsv4[0]; i++)
      for (int pdl = 0; pdl < 2; pdl++) {
        const int n = dsv4[i][0], k = dsv4[i][1];
        const size_t smem = stream_smem(m, n, k, pdl);
        EXPECT(smem == 0 || smem > half || (m == 1 && n == 1024 && k == 4096 && pdl),
               "%dx%d M = %d pdl %d: %zu bytes, two blocks per SM", n, k, m, pdl, smem);
      }
  /* not where the grid exceeds one block per SM, nor for another kernel */
  {
    bf16fp32__smallm_config c;
    CHECK(table_config(33, 384, 7168, 1, &c) == 1);
    c.stream_smem = 1000;
    bf16fp32__smallm_one_per_sm(&c, c.grid_x * c.grid_y - 1, H200_SMEM);
    CHECK(c.stream_smem == 1000);
    bf16fp32__smallm_one_per_sm(&c, c.grid_x * c.grid_y, H200_SMEM);
    CHECK(c.stream_smem == over_half);
    c.stream = 0, c.stream_smem = 1000;
    bf16fp32__smallm_one_per_sm(&c, H200_SMS, H200_SMEM);
    CHECK(c.stream_smem == 1000);
  }

  bf16fp32__smallm_config c;
  CHECK(bf16fp32__smallm_choose(1, 2048, 7168, H200_SMS, H200_SMEM, &c) == 0);
  CHECK(bf16fp32__smallm_use_stream(&c, 1, 5, 3, 1, 64 * 1024) != 0 && !c.stream); /* no room for 2 */
  CHECK(bf16fp32__smallm_use_stream(&c, 9, 5, 3, 1, H200_SMEM) != 0 && !c.stream); /* one token tile */
  CHECK(bf16fp32__smallm_use_stream(&c, 1, 0, 3, 1, H200_SMEM) != 0 && !c.stream); /* stage size */
  CHECK(bf16fp32__smallm_use_stream(&c, 1, 8, 3, 1, H200_SMEM) != 0 && !c.stream);
  CHECK(bf16fp32__smallm_use_stream(&c, 1, 5, 1, 1, H200_SMEM) != 0 && !c.stream); /* one stage */
  CHECK(bf16fp32__smallm_use_stream(&c, 1, 4, 9, 1, H200_SMEM) != 0 && !c.stream);
  CHECK(bf16fp32__smallm_use_stream(&c, 1, 4, 4, 1, H200_SMEM) == 0 && c.stream_subs == 4 &&
        c.stream_stages == 4);
  /* 7 sub-chunks (224-wide boxes): 3 stages fit at M = 1, 2 at M = 8; at M = 16 none within
   * 200 KB, and 2 within the H200's 227 KB only with the partial sums over the rings */
  CHECK(bf16fp32__smallm_use_stream(&c, 1, 7, 3, 1, H200_SMEM) == 0 && c.stream_stages == 3);
  CHECK(bf16fp32__smallm_choose(8, 2048, 7168, H200_SMS, H200_SMEM, &c) == 0);
  CHECK(bf16fp32__smallm_use_stream(&c, 8, 7, 3, 1, H200_SMEM) == 0 && c.stream_stages == 2);
  CHECK(bf16fp32__smallm_choose(16, 2048, 7168, H200_SMS, H200_SMEM, &c) == 0);
  CHECK(bf16fp32__smallm_use_stream(&c, 16, 7, 3, 1, 200 * 1024) != 0 && !c.stream);
  /* (the larger of the rings and the partial sums) */
  CHECK(bf16fp32__smallm_use_stream(&c, 16, 7, 3, 1, H200_SMEM) == 0 && c.stream_stages == 2 &&
        c.stream_over && c.stream_smem == BF16FP32__SMALLM_STREAM_BARS + 8 * 2 * 32 * 448);
  /* four and eight token tiles: the x rows leave room for 2 stages of 3 sub-chunks at M = 32,
   * for stages of one sub-chunk only at M = 64 */
  CHECK(bf16fp32__smallm_choose(32, 2048, 7168, H200_SMS, H200_SMEM, &c) == 0 && c.mt == 4);
  CHECK(bf16fp32__smallm_use_stream(&c, 32, 5, 3, 1, H200_SMEM) != 0);
  CHECK(bf16fp32__smallm_use_stream(&c, 33, 3, 3, 1, H200_SMEM) != 0); /* not its token tiles */
  CHECK(bf16fp32__smallm_use_stream(&c, 32, 3, 3, 1, H200_SMEM) == 0 && c.stream_stages == 2);
  CHECK(bf16fp32__smallm_choose(64, 2048, 7168, H200_SMS, H200_SMEM, &c) == 0 && c.mt == 8);
  CHECK(bf16fp32__smallm_use_stream(&c, 64, 3, 2, 1, H200_SMEM) != 0);
  CHECK(bf16fp32__smallm_use_stream(&c, 64, 1, 8, 1, H200_SMEM) == 0 && c.stream_stages == 4);
  CHECK(bf16fp32__smallm_choose(256, 2048, 7168, H200_SMS, H200_SMEM, &c) == 0 && c.wide);
  CHECK(bf16fp32__smallm_use_stream(&c, 256, 5, 3, 1, H200_SMEM) != 0);

  /* two blocks per tile: one K slice and 16-row splits only; half the rings, 32 rows each, a
   * cluster of 2 over half the row blocks; the partial sums over the rings */
  CHECK(bf16fp32__smallm_choose(64, 2048, 7168, H200_SMS, H200_SMEM, &c) == 0);
  CHECK(bf16fp32__smallm_use_stream(&c, 64, 1, 4, 3, H200_SMEM) != 0 && !c.stream); /* groups */
  CHECK(bf16fp32__smallm_use_stream(&c, 64, 3, 3, 2, H200_SMEM) == 0 && c.stream_groups == 2 &&
        c.grid_x == 2 && c.grid_y == 64 && c.stream_stages == 3 &&
        c.stream_smem == BF16FP32__SMALLM_STREAM_BARS + 4 * 3 * (32 + 64) * 192);
  CHECK(bf16fp32__smallm_choose(1, 2048, 7168, H200_SMS, H200_SMEM, &c) == 0);
  CHECK(bf16fp32__smallm_use_stream(&c, 1, 1, 2, 2, H200_SMEM) == 0 &&
        c.stream_smem == BF16FP32__SMALLM_STREAM_BARS + 4 * 2 * 2176); /* 33 rows, to 128 bytes */
  /* where the partial sums take more room than the rings (M = 33: 64 tokens of them): half the
   * chains (4), twice the rows (32) */
  CHECK(bf16fp32__smallm_choose(33, 2048, 7168, H200_SMS, H200_SMEM, &c) == 0);
  CHECK(bf16fp32__smallm_use_stream(&c, 33, 1, 2, 2, H200_SMEM) == 0 && c.stream_over &&
        c.stream_smem == BF16FP32__SMALLM_STREAM_BARS + (size_t)4 * 64 * (32 + 4) * 4 &&
        c.stream_smem > BF16FP32__SMALLM_STREAM_BARS +
                            (size_t)4 * 2 * bf16fp32__smallm_stream_stage_bytes(33, 1, 32));
  CHECK(bf16fp32__smallm_choose(16, 1024, 7168, H200_SMS, H200_SMEM, &c) == 0); /* S 2 */
  CHECK(bf16fp32__smallm_use_stream(&c, 16, 3, 3, 2, H200_SMEM) != 0 && !c.stream);
  CHECK(bf16fp32__smallm_choose(16, 256, 4096, H200_SMS, H200_SMEM, &c) == 0); /* 32 rows */
  CHECK(bf16fp32__smallm_use_stream(&c, 16, 3, 3, 2, H200_SMEM) != 0 && !c.stream);
  /* an odd number of 16-row blocks (1072 = 67 x 16, one K slice) does not pair up */
  CHECK(bf16fp32__smallm_choose(1, 1072, 4096, H200_SMS, H200_SMEM, &c) == 0 &&
        c.split.rows == 16 && c.split.ksplit == 1 && c.grid_y == 67);
  CHECK(bf16fp32__smallm_use_stream(&c, 1, 1, 2, 2, H200_SMEM) != 0 && !c.stream);
  CHECK(bf16fp32__smallm_use_stream(&c, 1, 1, 2, 1, H200_SMEM) == 0 && c.stream);
  /* up to 64 tokens (8 token tiles): not M = 65-128, where the chooser's tiled kernel runs 16 */
  CHECK(bf16fp32__smallm_choose(100, 48, 4096, H200_SMS, H200_SMEM, &c) == 0 && !c.wide &&
        c.mt == 16);
  CHECK(bf16fp32__smallm_use_stream(&c, 100, 1, 2, 1, H200_SMEM) != 0 && !c.stream);
  /* the variants' form: the partial sums after the rings (0) or over them (1), nothing else */
  CHECK(bf16fp32__smallm_choose(1, 2048, 7168, H200_SMS, H200_SMEM, &c) == 0);
  CHECK(bf16fp32__smallm_use_stream_at(&c, 1, 5, 3, 1, -1, H200_SMEM) != 0 && !c.stream);
  CHECK(bf16fp32__smallm_use_stream_at(&c, 1, 5, 3, 1, 2, H200_SMEM) != 0 && !c.stream);
  CHECK(bf16fp32__smallm_use_stream_at(&c, 1, 5, 3, 1, 1, H200_SMEM) == 0 && c.stream_over == 1);
  CHECK(bf16fp32__smallm_use_stream_at(&c, 1, 5, 3, 1, 0, H200_SMEM) == 0 && c.stream_over == 0);
}

/* The push's receive slots after the rows: ksplit slots of the units (four rows of one token)
 * that one rank finishes. */
#define RECV(units, ksplit) ((size_t)(ksplit) * (size_t)(((units) + (ksplit) - 1) / (ksplit)) * 16u)

/* The share kernel's rows: every slice's row within the pitch (64 mod 128), the weight and
 * token rows or the partial sums within the shared memory, and what does not fit declined. */
static void test_share(void) {
  bf16fp32__smallm_config c;
  CHECK(bf16fp32__smallm_choose(1, 1024, 4096, H200_SMS, H200_SMEM, &c) == 0); /* 16 / 2 */
  CHECK(bf16fp32__smallm_use_share(&c, 1, 1024, 4096, 0, 0, H200_SMEM) == 0 && c.share && !c.stream &&
        !c.decode && c.share_pitch == 65 * 64 && c.share_smem == (size_t)(64 + 17 * 65 * 64) + RECV(4, 2) &&
        !c.share_xreg);
  CHECK(bf16fp32__smallm_use_share(&c, 1, 1024, 4096, 1, 0, H200_SMEM) == 0 && c.share_xreg &&
        c.share_smem == (size_t)(64 + 16 * 65 * 64) + RECV(4, 2)); /* no token rows */
  CHECK(bf16fp32__smallm_choose(16, 256, 4096, H200_SMS, H200_SMEM, &c) == 0); /* 32 / 8 */
  CHECK(bf16fp32__smallm_use_share(&c, 16, 256, 4096, 0, 0, H200_SMEM) == 0 &&
        c.share_pitch == 17 * 64 && c.share_smem == 64 + 48 * 17 * 64 + RECV(128, 8));
  CHECK(bf16fp32__smallm_choose(5, 256, 4104, H200_SMS, H200_SMEM, &c) == 0); /* K's end */
  CHECK(bf16fp32__smallm_use_share(&c, 5, 256, 4104, 0, 0, H200_SMEM) == 0 &&
        c.share_pitch % 128 == 64 &&
        c.share_pitch >= 64 * (((4104 + 31) / 32 + c.split.ksplit - 1) / c.split.ksplit));
  CHECK(bf16fp32__smallm_choose(3, 48, 8, H200_SMS, H200_SMEM, &c) == 0); /* the sums are larger */
  CHECK(bf16fp32__smallm_use_share(&c, 3, 48, 8, 0, 0, H200_SMEM) == 0 && c.share_pitch == 64 &&
        c.share_smem == 64 + c.decode_smem);
  CHECK(bf16fp32__smallm_choose(1, 2048, 7168, H200_SMS, H200_SMEM, &c) == 0); /* 14 KB rows */
  CHECK(bf16fp32__smallm_use_share(&c, 1, 2048, 7168, 0, 0, H200_SMEM) != 0 && !c.share);
  CHECK(bf16fp32__smallm_choose(1, 512, 7168, H200_SMS, H200_SMEM, &c) == 0); /* ranges of 14 */
  CHECK(bf16fp32__smallm_use_share(&c, 1, 512, 7168, 0, 0, H200_SMEM) == 0 && c.share &&
        !c.share_xreg && !c.share_xwide);
  /* x in registers over ranges of 9-16 sub-chunks: one token tile only (the wide form) */
  CHECK(bf16fp32__smallm_use_share(&c, 1, 512, 7168, 1, 0, H200_SMEM) == 0 && c.share_xreg &&
        c.share_xwide && c.share_smem == (size_t)(64 + 32 * 57 * 64) + RECV(8, 4));
  CHECK(bf16fp32__smallm_choose(9, 512, 7168, H200_SMS, H200_SMEM, &c) == 0);
  CHECK(bf16fp32__smallm_use_share(&c, 9, 512, 7168, 1, 0, H200_SMEM) != 0 && !c.share);
  CHECK(bf16fp32__smallm_choose(1, 1024, 4096, H200_SMS, H200_SMEM, &c) == 0); /* ranges of 8 */
  CHECK(bf16fp32__smallm_use_share(&c, 1, 1024, 4096, 1, 0, H200_SMEM) == 0 && !c.share_xwide);
  CHECK(bf16fp32__smallm_choose(1, 2048, 4096, H200_SMS, H200_SMEM, &c) == 0); /* 16 / 1: 16 */
  CHECK(bf16fp32__smallm_use_share(&c, 1, 2048, 4096, 1, 0, H200_SMEM) == 0 && c.share_xwide);
  CHECK(bf16fp32__smallm_share_late(&c, 1, 0) != 0 && c.share_late == 0); /* no late groups */
  CHECK(bf16fp32__smallm_choose(1, 2048, 7168, H200_SMS, H200_SMEM, &c) == 0); /* 28: too long */
  CHECK(bf16fp32__smallm_use_share(&c, 1, 2048, 7168, 1, 0, 1 << 20) != 0 && !c.share);
  /* 1024x7168 (16 / 2, ranges of 14): two row blocks fill the block with x in registers, with
   * room for the push's slots up to M = 4 */
  CHECK(bf16fp32__smallm_choose(4, 1024, 7168, H200_SMS, H200_SMEM, &c) == 0);
  CHECK(bf16fp32__smallm_use_share(&c, 4, 1024, 7168, 1, 0, H200_SMEM) == 0 && c.share_xwide &&
        bf16fp32__smallm_share_tiles(&c, 4, 2, H200_SMEM) == 0 && c.grid_y == 32 &&
        c.share_smem == (size_t)(64 + 32 * 113 * 64) + RECV(32, 2) && c.share_smem <= H200_SMEM);
  CHECK(bf16fp32__smallm_choose(8, 1024, 7168, H200_SMS, H200_SMEM, &c) == 0);
  CHECK(bf16fp32__smallm_use_share(&c, 8, 1024, 7168, 1, 0, H200_SMEM) == 0 &&
        bf16fp32__smallm_share_tiles(&c, 8, 2, H200_SMEM) != 0 && c.share_tiles == 1);
  CHECK(bf16fp32__smallm_choose(17, 256, 4096, H200_SMS, H200_SMEM, &c) == 0);
  CHECK(bf16fp32__smallm_use_share(&c, 17, 256, 4096, 1, 0, H200_SMEM) != 0 && !c.share); /* xreg */
  CHECK(bf16fp32__smallm_use_share(&c, 17, 256, 4096, 0, 0, H200_SMEM) == 0 && c.share &&
        c.mt == 4 && c.mpad == 32 && c.share_smem == 64 + 49 * 17 * 64 + RECV(136, 8));
  CHECK(bf16fp32__smallm_choose(64, 256, 4096, H200_SMS, H200_SMEM, &c) == 0);
  CHECK(bf16fp32__smallm_use_share(&c, 64, 256, 4096, 0, 0, H200_SMEM) == 0 && c.share &&
        c.mt == 8 && c.mpad == 64 && c.share_smem == 64 + 96 * 17 * 64 + RECV(512, 8));
  CHECK(bf16fp32__smallm_choose(65, 256, 4096, H200_SMS, H200_SMEM, &c) == 0);
  CHECK(bf16fp32__smallm_use_share(&c, 65, 256, 4096, 0, 0, H200_SMEM) != 0 && !c.share); /* M > 64 */
  /* the weight fragments in registers: ranges of at most 8 sub-chunks, not with x in registers */
  CHECK(bf16fp32__smallm_use_share(&c, 64, 256, 4096, 0, 2, H200_SMEM) == 0 && c.share_wpre == 2);
  CHECK(bf16fp32__smallm_use_share(&c, 16, 1024, 4096, 0, 1, H200_SMEM) == 0 && c.share_wpre == 1);
  CHECK(bf16fp32__smallm_choose(1, 512, 7168, H200_SMS, H200_SMEM, &c) == 0);
  CHECK(bf16fp32__smallm_use_share(&c, 1, 512, 7168, 0, 1, H200_SMEM) != 0 && !c.share); /* 14 */
  CHECK(bf16fp32__smallm_use_share(&c, 1, 256, 4096, 1, 1, H200_SMEM) != 0 && !c.share);
  CHECK(bf16fp32__smallm_use_share(&c, 1, 256, 4096, 0, 3, H200_SMEM) != 0 && !c.share);
  CHECK(bf16fp32__smallm_choose(1, 1024, 4096, H200_SMS, H200_SMEM, &c) == 0);
  CHECK(bf16fp32__smallm_use_share(&c, 1, 1024, 4096, 0, 0, 64 * 1024) != 0 && !c.share); /* no room */
  CHECK(bf16fp32__smallm_use_share(&c, 1, 1024, 4096, 0, 0, H200_SMEM) == 0 &&
        bf16fp32__smallm_use_stream(&c, 1, 4, 2, 1, H200_SMEM) == 0 && c.stream && !c.share);
  /* late warp groups: 0 to kwarps - 1, on the share kernel only, not with the weight fragments
   * in registers; use_share starts from none */
  CHECK(bf16fp32__smallm_choose(2, 1024, 4096, H200_SMS, H200_SMEM, &c) == 0);
  CHECK(bf16fp32__smallm_share_late(&c, 1, 0) != 0 && c.share_late == 0); /* not the share kernel */
  CHECK(bf16fp32__smallm_use_share(&c, 2, 1024, 4096, 0, 0, H200_SMEM) == 0 && c.split.kwarps == 8);
  CHECK(bf16fp32__smallm_share_late(&c, 7, 0) == 0 && c.share_late == 7);
  CHECK(bf16fp32__smallm_share_late(&c, 8, 0) != 0 && c.share_late == 7);
  CHECK(bf16fp32__smallm_share_late(&c, -1, 0) != 0 && c.share_late == 7);
  CHECK(bf16fp32__smallm_use_share(&c, 2, 1024, 4096, 0, 0, H200_SMEM) == 0 && c.share_late == 0);
  CHECK(bf16fp32__smallm_use_share(&c, 2, 1024, 4096, 0, 1, H200_SMEM) == 0 &&
        bf16fp32__smallm_share_late(&c, 1, 0) != 0 && bf16fp32__smallm_share_late(&c, 0, 0) == 0);
  CHECK(bf16fp32__smallm_use_share(&c, 2, 1024, 4096, 0, 2, H200_SMEM) == 0 &&
        bf16fp32__smallm_share_late(&c, 3, 0) != 0 && c.share_late == 0);
  CHECK(bf16fp32__smallm_use_share(&c, 2, 1024, 4096, 1, 0, H200_SMEM) == 0 &&
        bf16fp32__smallm_share_late(&c, 3, 0) == 0 && c.share_late == 3);
  /* the late columns' L2 requests: 0 or 1, only with late groups; use_share starts from none */
  CHECK(bf16fp32__smallm_share_late(&c, 4, 1) == 0 && c.share_late == 4 && c.share_late_l2 == 1);
  CHECK(bf16fp32__smallm_share_late(&c, 0, 1) != 0 && c.share_late == 4 && c.share_late_l2 == 1);
  CHECK(bf16fp32__smallm_share_late(&c, 2, 2) != 0 && bf16fp32__smallm_share_late(&c, 2, -1) != 0 &&
        c.share_late == 4 && c.share_late_l2 == 1);
  CHECK(bf16fp32__smallm_share_late(&c, 2, 0) == 0 && c.share_late == 2 && c.share_late_l2 == 0);
  CHECK(bf16fp32__smallm_share_late(&c, 2, 1) == 0 &&
        bf16fp32__smallm_use_share(&c, 2, 1024, 4096, 1, 0, H200_SMEM) == 0 &&
        c.share_late == 0 && c.share_late_l2 == 0);
  /* two row blocks per block: the grid along N halved, the rows (and the partial sums) of both
   * in the shared memory; not with the weight fragments in registers, nor where the rows or the
   * row blocks do not pair up; use_share starts from one */
  CHECK(bf16fp32__smallm_share_tiles(&c, 2, 1, H200_SMEM) == 0 && c.share_tiles == 1);
  CHECK(bf16fp32__smallm_use_share(&c, 16, 1024, 4096, 0, 0, H200_SMEM) == 0 &&
        c.share_tiles == 1 && c.grid_y == 64 &&
        c.share_smem == (size_t)(64 + 32 * 65 * 64) + RECV(64, 2));
  CHECK(bf16fp32__smallm_share_tiles(&c, 16, 2, H200_SMEM) == 0 && c.share_tiles == 2 &&
        c.grid_y == 32 && c.grid_x == 2 && c.share_smem == (size_t)(64 + 48 * 65 * 64) + RECV(128, 2));
  CHECK(bf16fp32__smallm_share_tiles(&c, 16, 2, H200_SMEM) == 0 && c.grid_y == 32); /* again */
  CHECK(bf16fp32__smallm_share_tiles(&c, 16, 1, H200_SMEM) == 0 && c.share_tiles == 1 &&
        c.grid_y == 64 && c.share_smem == (size_t)(64 + 32 * 65 * 64) + RECV(64, 2));
  CHECK(bf16fp32__smallm_share_tiles(&c, 16, 3, H200_SMEM) != 0 &&
        bf16fp32__smallm_share_tiles(&c, 16, 0, H200_SMEM) != 0 && c.share_tiles == 1);
  CHECK(bf16fp32__smallm_use_share(&c, 24, 1024, 4096, 0, 0, H200_SMEM) == 0 &&
        bf16fp32__smallm_share_tiles(&c, 24, 2, H200_SMEM) != 0 && c.share_tiles == 1 &&
        c.grid_y == 64); /* 32 + 24 rows of 4160 bytes do not fit */
  CHECK(bf16fp32__smallm_use_share(&c, 16, 1024, 4096, 1, 0, H200_SMEM) == 0 &&
        bf16fp32__smallm_share_tiles(&c, 16, 2, H200_SMEM) == 0 &&
        c.share_smem == (size_t)(64 + 32 * 65 * 64) + RECV(128, 2)); /* x in registers: no token rows */
  CHECK(bf16fp32__smallm_share_late(&c, 3, 1) == 0 && c.share_tiles == 2); /* late groups too */
  CHECK(bf16fp32__smallm_use_share(&c, 16, 1024, 4096, 0, 1, H200_SMEM) == 0 &&
        bf16fp32__smallm_share_tiles(&c, 16, 2, H200_SMEM) != 0 && c.share_tiles == 1);
  /* (use_share keeps the split of the shape c was chosen for) */
  CHECK(bf16fp32__smallm_choose(8, 48, 4096, H200_SMS, H200_SMEM, &c) == 0 &&
        bf16fp32__smallm_use_share(&c, 8, 48, 4096, 0, 0, H200_SMEM) == 0 && c.grid_y == 3 &&
        bf16fp32__smallm_share_tiles(&c, 8, 2, H200_SMEM) != 0); /* three row blocks */
  CHECK(bf16fp32__smallm_choose(64, 256, 4096, H200_SMS, H200_SMEM, &c) == 0 &&
        bf16fp32__smallm_use_share(&c, 64, 256, 4096, 0, 0, H200_SMEM) == 0 &&
        bf16fp32__smallm_share_tiles(&c, 64, 2, H200_SMEM) == 0 && c.grid_y == 4 &&
        c.grid_x == 8 && c.share_smem == (size_t)(64 + 128 * 17 * 64) + RECV(1024, 8));
  /* one sub-chunk: the partial sums take more room than the rows */
  CHECK(bf16fp32__smallm_choose(1, 64, 32, H200_SMS, H200_SMEM, &c) == 0 &&
        bf16fp32__smallm_use_share(&c, 1, 64, 32, 0, 0, H200_SMEM) == 0 &&
        bf16fp32__smallm_share_tiles(&c, 1, 2, H200_SMEM) == 0 && c.grid_y == 1 &&
        c.share_smem == (size_t)(64 + c.split.kwarps * c.mpad * (2 * c.split.rows + 4) * 4) &&
        c.share_smem > (size_t)(64 + (2 * c.split.rows + 1) * c.share_pitch));
  CHECK(bf16fp32__smallm_choose(1, 1024, 4096, H200_SMS, H200_SMEM, &c) == 0 &&
        bf16fp32__smallm_share_tiles(&c, 1, 2, H200_SMEM) != 0); /* not the share kernel */
  /* the table: its shapes, launches and M classes, 132 SMs, up to M = 64 */
  static const struct {
    int64_t m, n, k;
    int pdl, sms, share, xreg, wpre, late, l2, tiles;
  } table[] = {
      {1, 384, 7168, 1, 132, 1, 0, 0, 0, 0, 2},  {24, 384, 7168, 1, 132, 1, 0, 1, 0, 0, 1},
      {16, 384, 7168, 1, 132, 1, 0, 0, 0, 0, 2}, {16, 512, 4096, 1, 132, 1, 0, 0, 0, 0, 2},
      {5, 256, 4096, 1, 132, 1, 0, 2, 0, 0, 1},  {8, 256, 4096, 1, 132, 1, 0, 2, 0, 0, 1},
      {33, 384, 7168, 1, 132, 0, 0, 0, 0, 0, 0}, {1, 384, 7168, 0, 132, 0, 0, 0, 0, 0, 0},
      {12, 384, 7168, 0, 132, 1, 0, 0, 2, 0, 1}, {1, 384, 7168, 1, 114, 0, 0, 0, 0, 0, 0},
      {8, 512, 4096, 1, 132, 1, 0, 0, 0, 0, 2},  {32, 512, 4096, 1, 132, 1, 0, 0, 0, 0, 1},
      {33, 256, 4096, 1, 132, 1, 0, 2, 0, 0, 1}, {64, 256, 4096, 1, 132, 1, 0, 2, 0, 0, 1},
      {48, 512, 4096, 1, 132, 0, 0, 0, 0, 0, 0}, {12, 256, 7168, 1, 132, 1, 0, 0, 0, 0, 1},
      {64, 256, 7168, 1, 132, 1, 0, 2, 0, 0, 1}, {16, 256, 7168, 0, 132, 0, 0, 0, 0, 0, 0},
      {4, 256, 4096, 1, 132, 1, 0, 0, 0, 0, 2},  {16, 256, 4096, 1, 132, 1, 0, 0, 0, 0, 1},
      {64, 256, 4096, 0, 132, 1, 0, 2, 0, 0, 1}, {65, 256, 4096, 1, 132, 0, 0, 0, 0, 0, 0},
      {1, 1024, 4096, 1, 132, 1, 1, 0, 0, 0, 2}, {4, 1024, 4096, 1, 132, 1, 1, 0, 0, 0, 2},
      {5, 1024, 4096, 1, 132, 1, 1, 0, 0, 0, 2}, {16, 1024, 4096, 1, 132, 1, 1, 0, 0, 0, 2},
      {17, 1024, 4096, 1, 132, 0, 0, 0, 0, 0, 0},
      {1, 1024, 4096, 0, 132, 0, 0, 0, 0, 0, 0}, {1, 512, 7168, 1, 132, 0, 0, 0, 0, 0, 0},
      {24, 512, 7168, 1, 132, 1, 0, 0, 0, 0, 1}, {1, 2048, 7168, 1, 132, 0, 0, 0, 0, 0, 0},
      {48, 256, 7168, 1, 132, 1, 0, 2, 0, 0, 1}, {8, 256, 7168, 1, 132, 1, 0, 0, 0, 0, 1},
      {32, 256, 4096, 1, 132, 1, 0, 1, 0, 0, 1}, {1, 512, 4096, 0, 132, 1, 0, 0, 2, 0, 1},
      {32, 512, 4096, 0, 132, 1, 0, 0, 0, 0, 1}, {48, 512, 4096, 0, 132, 0, 0, 0, 0, 0, 0},
      {24, 256, 7168, 0, 132, 1, 0, 0, 0, 0, 1}, {16, 512, 4096, 0, 132, 1, 0, 0, 0, 0, 1},
      {8, 512, 4096, 0, 132, 1, 0, 0, 2, 0, 1}};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    CHECK(bf16fp32__smallm_choose_for(table[i].m, table[i].n, table[i].k, table[i].sms,
                                      table[i].pdl, H200_SMEM, &c) == 0);
    CHECK(c.share == table[i].share && c.share_xreg == table[i].xreg &&
          c.share_wpre == table[i].wpre && c.share_late == table[i].late &&
          c.share_late_l2 == table[i].l2 && (c.share ? c.share_tiles : 0) == table[i].tiles &&
          (!c.share || !c.stream));
  }
  /* Every share default of one wave takes more than half an SM (since session 85: the routers
   * and 512 x 4096 would fit two at M <= 28), a multiple of 16 bytes, with the push's receive
   * slots at its end; a grid of more blocks than SMs keeps its own footprint. */
  const size_t half = h200_half_sm();
  int raised = 0;
  for (int m = 1; m <= 64; m++)
    for (size_t i = 0; i < sizeof dsv4 / sizeof dsv4[0]; i++)
      for (int pdl = 0; pdl < 2; pdl++) {
        const int n = dsv4[i][0], k = dsv4[i][1];
        CHECK(bf16fp32__smallm_choose_for(m, n, k, H200_SMS, pdl, H200_SMEM, &c) == 0);
        if (!c.share) continue;
        bf16fp32__smallm_config own = c; /* the footprint of its own layout */
        own.share_smem = 0;
        CHECK(bf16fp32__smallm_share_tiles(&own, m, c.share_tiles, H200_SMEM) == 0);
        const int one_wave = c.grid_x * c.grid_y <= H200_SMS;
        EXPECT(c.share_smem % 16 == 0 && c.share_smem >= own.share_smem &&
                   (one_wave ? c.share_smem > half : c.share_smem == own.share_smem),
               "%dx%d M = %d pdl %d: %zu bytes (own %zu)", n, k, m, pdl, c.share_smem,
               own.share_smem);
        raised += c.share_smem > own.share_smem;
      }
  CHECK(raised > 0);
  CHECK(bf16fp32__smallm_choose_for(24, 384, 7168, H200_SMS, 1, H200_SMEM, &c) == 0 && c.share &&
        c.share_smem == half + 16);
  c.share_smem = 1000;
  bf16fp32__smallm_one_per_sm(&c, c.grid_x * c.grid_y - 1, H200_SMEM);
  CHECK(c.share_smem == 1000);
}

/* The fold kernel: where it applies (M <= 8; 16 or 32 chains of at most 8 sub-chunks; the rows
 * within the shared memory), its grid (N / 16 blocks, no cluster), rows (all of K, the last
 * sub-chunk whole) and room, and where the tables choose it (512x4096 under PDL at M = 1-4, 132
 * SMs). */
static void test_fold(void) {
  bf16fp32__smallm_config c;
  static const struct {
    int n, k, fits;
  } shapes[] = {{256, 4096, 1},  {512, 4096, 1},  {1024, 4096, 1}, {2048, 4096, 0}, {384, 7168, 1},
                {256, 7168, 1},  {512, 7168, 0},  {1024, 7168, 0}, {2048, 7168, 0}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
    for (int64_t m = 1; m <= 9; m++) {
      const int n = shapes[i].n, k = shapes[i].k;
      CHECK(bf16fp32__smallm_choose(m, n, k, H200_SMS, H200_SMEM, &c) == 0);
      const bf16fp32__smallm_split sp = c.split;
      const int ok = bf16fp32__smallm_use_fold(&c, m, n, k, H200_SMEM) == 0;
      EXPECT(ok == (shapes[i].fits && m <= 8), "fold at %dx%d M=%lld: %d", n, k, (long long)m, ok);
      if (!ok) {
        CHECK(!c.fold);
        continue;
      }
      CHECK(c.fold && !c.decode && !c.stream && !c.share && !c.wide);
      CHECK(memcmp(&c.split, &sp, sizeof sp) == 0 && c.grid_x == 1 && c.grid_y == n / 16);
      CHECK(c.fold_pitch == 64 * (k / 32 | 1) && c.fold_pitch >= 2 * k);
      CHECK(c.fold_smem == (size_t)(64 + 16 * c.fold_pitch) && c.fold_smem <= H200_SMEM);
      CHECK(c.fold_xn == (k / sp.ksplit / 32 / sp.kwarps <= 4 ? 4 : 8));
    }
  /* K ending inside a sub-chunk: that sub-chunk whole in the row */
  CHECK(bf16fp32__smallm_choose(1, 256, 4104, H200_SMS, H200_SMEM, &c) == 0 &&
        bf16fp32__smallm_use_fold(&c, 1, 256, 4104, H200_SMEM) == 0 && c.fold_pitch == 64 * 129);
  /* small K: the chains' sums take more room than the rows */
  CHECK(bf16fp32__smallm_choose(8, 256, 256, H200_SMS, H200_SMEM, &c) == 0 &&
        bf16fp32__smallm_use_fold(&c, 8, 256, 256, H200_SMEM) == 0 &&
        c.fold_smem == (size_t)(64 + c.split.ksplit * c.split.kwarps * 8 * 20 * 4) &&
        c.fold_smem > (size_t)(64 + 16 * c.fold_pitch));
  /* too little shared memory */
  CHECK(bf16fp32__smallm_choose(1, 384, 7168, H200_SMS, H200_SMEM, &c) == 0 &&
        bf16fp32__smallm_use_fold(&c, 1, 384, 7168, 200 * 1024) != 0 && !c.fold);
  /* the table */
  for (int64_t m = 1; m <= 9; m++)
    for (int pdl = 0; pdl < 2; pdl++)
      for (int sms = 114; sms <= 132; sms += 18) {
        CHECK(bf16fp32__smallm_choose_for(m, 512, 4096, sms, pdl, H200_SMEM, &c) == 0);
        EXPECT(c.fold == (pdl && sms == 132 && m <= 4), "512x4096 M=%lld pdl=%d sms=%d: fold %d",
               (long long)m, pdl, sms, c.fold);
        CHECK(bf16fp32__smallm_choose_for(m, 256, 4096, sms, pdl, H200_SMEM, &c) == 0 && !c.fold);
      }
}

/* The generic table: shapes without a measured split on 132 SMs, by N range, launch kind and M
 * class; where an entry does not fit, the next; the split is the chooser's; other SM counts and
 * the DSV4 shapes (the tables' own) untouched. */
static void test_generic(void) {
  bf16fp32__smallm_config c, base;
  static const struct {
    int64_t m, n, k;
    int pdl, sms, fold, share, xreg, tiles;
  } cases[] = {
      {1, 1024, 2048, 0, 132, 1, 0, 0, 0},  {8, 1024, 2048, 1, 132, 1, 0, 0, 0},
      {9, 1024, 2048, 0, 132, 0, 1, 1, 2},  {16, 1024, 2048, 1, 132, 0, 1, 1, 2},
      {16, 768, 1024, 0, 132, 0, 1, 1, 2},  {4, 512, 3072, 1, 132, 0, 1, 1, 2},
      {16, 1024, 5120, 0, 132, 0, 1, 0, 2}, /* x does not fit registers: its rows */
      {8, 1024, 5120, 0, 132, 0, 1, 1, 2},  /* the fold's chains too long: the share kernel */
      {32, 768, 2048, 0, 132, 0, 1, 0, 2},  {32, 768, 2048, 1, 132, 0, 1, 0, 2},
      {17, 512, 1024, 0, 132, 0, 0, 0, 0},  /* M = 17-32 at N < 1024: only from K = 2048 */
      {24, 640, 1536, 1, 132, 0, 0, 0, 0},  {33, 768, 2048, 0, 132, 0, 0, 0, 0},
      {8, 896, 1536, 0, 132, 1, 0, 0, 0},   {9, 896, 1536, 0, 132, 0, 1, 1, 2},
      {8, 1280, 2560, 0, 132, 0, 0, 0, 0},  {16, 1280, 2560, 0, 132, 0, 1, 0, 2},
      {24, 1280, 1536, 1, 132, 0, 1, 0, 2}, {32, 1024, 1536, 0, 132, 0, 1, 0, 2},
      {32, 2048, 2560, 1, 132, 0, 1, 0, 1}, {32, 2048, 2560, 0, 132, 0, 0, 0, 0},
      /* gpu-smallm's shapes for the generic table */
      {8, 896, 1544, 0, 132, 1, 0, 0, 0},   {16, 896, 1544, 0, 132, 0, 1, 1, 2},
      {24, 896, 1544, 0, 132, 0, 0, 0, 0},  {8, 1280, 2056, 0, 132, 0, 0, 0, 0},
      {9, 1280, 2056, 0, 132, 0, 1, 0, 2},  {32, 1280, 2056, 0, 132, 0, 1, 0, 2},
      {4, 1280, 2560, 1, 132, 0, 1, 1, 2},  {4, 1040, 2560, 1, 132, 0, 1, 0, 1},
      {4, 1024, 2560, 1, 132, 1, 0, 0, 0},  {1, 1280, 6144, 1, 132, 0, 1, 0, 1},
      {16, 256, 2048, 0, 132, 0, 1, 1, 1},  {16, 256, 2048, 1, 132, 0, 0, 0, 0},
      {8, 352, 2048, 0, 132, 0, 1, 1, 1},   {16, 400, 2048, 0, 132, 0, 0, 0, 0}, /* N's ends */
      {8, 1536, 1024, 0, 132, 0, 0, 0, 0},  {8, 1536, 1024, 1, 132, 0, 1, 1, 2},
      {16, 1536, 3072, 1, 132, 0, 1, 0, 1}, /* neither x in registers nor two row blocks fit */
      {8, 4096, 1024, 1, 132, 0, 0, 0, 0},  {8, 1280, 2048, 0, 132, 0, 0, 0, 0},
      {16, 768, 1024, 0, 114, 0, 0, 0, 0},  {4, 1024, 2048, 1, 114, 0, 0, 0, 0},
      {16, 5120, 1024, 1, 132, 0, 1, 0, 2}, /* past N = 4096 under PDL, K = 1024-2047 */
      {16, 8192, 1440, 1, 132, 0, 1, 0, 2}, /* two row blocks fit up to K = 1440 at M = 16 */
      {16, 8192, 1448, 1, 132, 0, 1, 0, 1}, {1, 16384, 2040, 1, 132, 0, 1, 0, 1},
      {4, 16384, 1024, 0, 132, 0, 0, 0, 0},
      {4, 5104, 1024, 1, 132, 0, 0, 0, 0},  {4, 16400, 1024, 1, 132, 0, 0, 0, 0},
      {4, 8192, 1023, 1, 132, 0, 0, 0, 0},  {17, 8192, 1024, 1, 132, 0, 0, 0, 0},
      {16, 16384, 2048, 1, 132, 0, 0, 0, 0}, /* from K = 2048 the stream kernel's, M <= 8 */
      {1, 5120, 1024, 1, 132, 0, 1, 0, 2},  {16, 5120, 1448, 1, 132, 0, 1, 0, 1},
      {8, 8192, 2040, 1, 132, 0, 1, 0, 1},  {4, 5088, 1024, 1, 132, 0, 0, 0, 0},
      {4, 16416, 1024, 1, 132, 0, 0, 0, 0}, {4, 16384, 1024, 1, 132, 0, 1, 0, 2},
      {8, 5120, 1024, 1, 132, 0, 1, 0, 2},  {4, 8192, 2040, 1, 132, 0, 1, 0, 1},
      {17, 5120, 1024, 1, 132, 0, 0, 0, 0},
      {4, 8192, 1024, 1, 114, 0, 0, 0, 0},
      /* from K = 8192 under PDL at N = 512-1024: x's rows over one row block where nothing
       * before it fits; plainly the chooser's kernel stays */
      {8, 1024, 8192, 1, 132, 0, 1, 0, 1},  {8, 1024, 8184, 1, 132, 0, 0, 0, 0},
      {8, 1024, 8192, 0, 132, 0, 0, 0, 0},  {4, 512, 16384, 1, 132, 0, 1, 0, 1},
      {4, 512, 8192, 1, 132, 0, 1, 1, 2},   {4, 1040, 8192, 1, 132, 0, 1, 0, 1},
      {1, 512, 16384, 1, 132, 0, 1, 0, 1},  {16, 512, 16384, 1, 132, 0, 1, 0, 1},
      {17, 512, 16384, 1, 132, 0, 0, 0, 0}, {4, 512, 24576, 1, 132, 0, 1, 0, 1},
      {17, 1024, 8192, 1, 132, 0, 0, 0, 0}, {4, 496, 8192, 1, 132, 0, 0, 0, 0},
      /* at N = 256-384 past K = 7168 under PDL, M = 9-48 (M = 49-64 to K = 8192): x's rows over
       * one row block where they fit (else the stream kernel's entries) */
      {9, 256, 8192, 1, 132, 0, 1, 0, 1},   {16, 384, 16384, 1, 132, 0, 1, 0, 1},
      {48, 256, 8192, 1, 132, 0, 1, 0, 1},  {33, 384, 12288, 1, 132, 0, 1, 0, 1},
      {8, 256, 8192, 1, 132, 0, 0, 0, 0},   {49, 256, 8192, 1, 132, 0, 1, 0, 1},
      {16, 256, 8184, 1, 132, 0, 1, 0, 1},  {16, 240, 8192, 1, 132, 0, 0, 0, 0},
      {16, 320, 7176, 1, 132, 0, 1, 0, 1},  {16, 320, 7168, 1, 132, 0, 0, 0, 0},
      {64, 384, 8192, 1, 132, 0, 1, 0, 1},  {49, 256, 8200, 1, 132, 0, 0, 0, 0},
      {64, 384, 8192, 0, 132, 0, 0, 0, 0},
      /* at N = 256-384 x's rows over one row block: under PDL at K = 4097-7168, M = 33-64, either
       * launch kind at K = 2048-4096, M = 33-64 and at K = 4097-7168, M = 17-32 (under PDL over
       * two row blocks from N = 320, to K = 8192); at N = 128-255, K = 7169-12288, M = 17-48, at
       * K = 7169-10240, M = 49-64 and under PDL past K = 12288, M = 17-32, either launch kind,
       * where they fit */
      {33, 256, 4104, 1, 132, 0, 1, 0, 1},  {64, 384, 7160, 1, 132, 0, 1, 0, 1},
      {33, 320, 4096, 1, 132, 0, 1, 0, 1},  {64, 384, 2048, 0, 132, 0, 1, 0, 1},
      {33, 256, 2040, 0, 132, 0, 0, 0, 0},  {32, 320, 4096, 0, 132, 0, 0, 0, 0},
      {32, 320, 4104, 1, 132, 0, 1, 0, 2},  {17, 384, 7160, 1, 132, 0, 1, 0, 2},
      {32, 384, 8192, 1, 132, 0, 1, 0, 2},  {17, 320, 7176, 1, 132, 0, 1, 0, 2},
      {32, 384, 8200, 1, 132, 0, 1, 0, 1},  {33, 384, 8192, 1, 132, 0, 1, 0, 1},
      {32, 304, 4104, 1, 132, 0, 1, 0, 1},  {24, 384, 4104, 0, 132, 0, 1, 0, 1},
      {17, 128, 8192, 0, 132, 0, 1, 0, 1},  {48, 192, 10240, 1, 132, 0, 1, 0, 1},
      {40, 128, 12288, 0, 132, 0, 1, 0, 1}, {16, 128, 8192, 0, 132, 0, 0, 0, 0},
      {49, 128, 8192, 0, 132, 0, 1, 0, 1},  {17, 128, 8184, 0, 132, 0, 1, 0, 1},
      {64, 192, 7176, 1, 132, 0, 1, 0, 1},  {17, 128, 7168, 0, 132, 0, 0, 0, 0},
      {24, 128, 14336, 1, 132, 0, 1, 0, 1}, {24, 128, 14336, 0, 132, 0, 0, 0, 0},
      {33, 128, 14336, 1, 132, 0, 0, 0, 0},
      /* the K ranges' ends; at M = 64, K = 10240 x's rows do not fit */
      {32, 384, 7160, 0, 132, 0, 1, 0, 1},  {49, 128, 10240, 0, 132, 0, 1, 0, 1},
      {32, 384, 7176, 0, 132, 0, 0, 0, 0},  {49, 128, 10248, 0, 132, 0, 0, 0, 0},
      {64, 128, 10240, 0, 132, 0, 0, 0, 0},
      {17, 128, 12296, 0, 132, 0, 0, 0, 0}, {17, 112, 8192, 0, 132, 0, 0, 0, 0},
      {16, 400, 8192, 1, 132, 0, 0, 0, 0},  {16, 256, 8192, 0, 132, 0, 1, 1, 1},
      {24, 256, 12288, 1, 132, 0, 1, 0, 1}, {1, 384, 12288, 1, 132, 0, 0, 0, 0},
      {4, 256, 8192, 1, 132, 0, 0, 0, 0},
      {16, 1024, 4096, 0, 132, 0, 0, 0, 0}, /* DSV4: the tables' (the stream kernel) */
      {16, 512, 4096, 0, 132, 0, 1, 0, 1},  /* DSV4: the share table's own entry */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const int64_t m = cases[i].m, n = cases[i].n, k = cases[i].k;
    CHECK(bf16fp32__smallm_choose(m, n, k, cases[i].sms, H200_SMEM, &base) == 0);
    CHECK(bf16fp32__smallm_choose_for(m, n, k, cases[i].sms, cases[i].pdl, H200_SMEM, &c) == 0);
    EXPECT(c.fold == cases[i].fold && c.share == cases[i].share &&
               (c.share ? c.share_xreg : 0) == cases[i].xreg &&
               (c.share ? c.share_tiles : 0) == cases[i].tiles,
           "%lldx%lld M = %lld pdl %d sms %d: fold %d share %d xreg %d tiles %d", (long long)n,
           (long long)k, (long long)m, cases[i].pdl, cases[i].sms, c.fold, c.share, c.share_xreg,
           c.share_tiles);
    CHECK(memcmp(&c.split, &base.split, sizeof c.split) == 0);
    if (c.share) CHECK(!c.share_wpre && !c.share_late && c.share_smem <= H200_SMEM);
  }
  /* plainly at N = 1536-4096 from K = 3072 on, M <= 16: the stream kernel, stages of 7
   * sub-chunks, two of them; under PDL at N = 2560-4096 from K = 2560 on, three stages of 5
   * sub-chunks at M <= 8, two of 7 at M = 9-16 (the partial sums over the rings at M = 16); at
   * N = 1536-2048 from K = 5120 at M = 9-16 and from K = 6144 at M = 5-8; past N = 4096 and at
   * narrow N past K = 7168 below. Two stages of 7 at M = 16 fit only over the partial sums. */
  static const struct {
    int64_t m, n, k;
    int pdl, subs, stages; /* subs 0: not the stream kernel */
  } streams[] = {{1, 1536, 3072, 0, 7, 2},  {8, 4096, 6144, 0, 7, 2},  {16, 2048, 5120, 0, 7, 2},
                 {17, 2048, 5120, 0, 0, 0}, {4, 1536, 2560, 0, 0, 0}, {4, 8192, 4096, 0, 0, 0},
                 {4, 1280, 6144, 0, 0, 0},  {4, 2048, 7168, 0, 7, 2},  {4, 4096, 3072, 1, 5, 3},
                 {1, 2560, 2560, 1, 5, 3},  {8, 3072, 6144, 1, 5, 3},  {9, 2560, 4096, 1, 7, 2},
                 {16, 4096, 2560, 1, 7, 2}, {4, 2048, 3072, 1, 0, 0}, {4, 3072, 2552, 1, 0, 0},
                 {4, 4112, 4096, 1, 0, 0},  {17, 3072, 3072, 1, 0, 0}, {4, 3072, 3072, 0, 7, 2},
                 {16, 1536, 5120, 1, 7, 2}, {9, 2048, 6144, 1, 7, 2},  {12, 2048, 5112, 1, 0, 0},
                 {8, 1536, 6144, 1, 5, 3},  {5, 2048, 6144, 1, 5, 3},  {4, 2048, 6144, 1, 0, 0},
                 {8, 1536, 6136, 1, 0, 0},  {8, 1520, 6144, 1, 0, 0},  {16, 2064, 5120, 1, 0, 0},
                 /* past N = 4096 under PDL: 5 x 3 from K = 4096 at M <= 8; at K = 2048-4095
                  * 5 x 2 at M <= 4 and 3 x 2 at M = 5-8; none at M = 9-16 */
                 {1, 5120, 4096, 1, 5, 3},  {8, 16384, 16384, 1, 5, 3}, {9, 8192, 4096, 1, 0, 0},
                 {4, 5120, 4095, 1, 5, 2},  {1, 16384, 2048, 1, 5, 2}, {5, 8192, 2048, 1, 3, 2},
                 {8, 12288, 4095, 1, 3, 2}, {16, 6144, 2048, 1, 0, 0}, {4, 6144, 4096, 0, 0, 0},
                 {4, 5104, 4096, 1, 0, 0},  {4, 16400, 4096, 1, 0, 0}, {4, 6144, 24576, 1, 5, 3},
                 {4, 5104, 2048, 1, 0, 0},  {4, 16400, 2048, 1, 0, 0}, {4, 8192, 2048, 0, 0, 0},
                 {8, 5120, 2048, 1, 3, 2},  {8, 5104, 2048, 1, 0, 0},  {8, 16384, 2048, 1, 3, 2},
                 {8, 16400, 2048, 1, 0, 0}, {8, 8192, 2048, 0, 0, 0},  {17, 8192, 4096, 1, 0, 0},
                 {17, 8192, 2048, 1, 0, 0},
                 /* at N = 256-384 past K = 7168: 3 x 2 at M = 9-32, 1 x 3 at M = 33-48, under PDL
                  * where x's rows over one row block do not fit (the cases above); plainly x in
                  * registers over one row block first (M <= 16, the entry before them), and at
                  * M <= 8 the chooser's kernel where x does not fit registers */
                 {9, 256, 10240, 0, 3, 2},  {32, 384, 16384, 0, 3, 2}, {16, 256, 12288, 0, 3, 2},
                 {17, 320, 24576, 0, 3, 2}, {17, 256, 8192, 0, 3, 2},  {8, 256, 12288, 0, 0, 0},
                 {33, 256, 12288, 0, 1, 3}, {48, 384, 8192, 0, 1, 3},  {49, 256, 12288, 0, 0, 0},
                 {16, 256, 8192, 0, 0, 0},  {17, 256, 8184, 0, 3, 2},  {16, 256, 12288, 1, 0, 0},
                 {32, 384, 16384, 1, 3, 2}, {33, 384, 16384, 1, 1, 3}, {48, 256, 12288, 1, 1, 3},
                 {49, 384, 8192, 1, 0, 0},  {16, 400, 12288, 0, 0, 0}, {16, 240, 12288, 0, 0, 0},
                 {8, 256, 32768, 0, 0, 0},  {1, 256, 32768, 0, 0, 0},  {4, 256, 32768, 0, 0, 0},
                 {1, 384, 12288, 1, 0, 0},  {4, 384, 12288, 1, 0, 0},  {33, 240, 12288, 0, 0, 0},
                 {33, 400, 12288, 0, 0, 0}, {33, 256, 8184, 0, 1, 3},  {17, 320, 7176, 0, 3, 2},
                 {17, 320, 7168, 0, 0, 0},  {33, 320, 7176, 0, 1, 3},
                 /* 1 x 3 at M = 33-64 for K = 4097-7168 (plainly; under PDL x's rows, above);
                  * 3 x 2 at N = 128-255, K = 8192-12288, M = 17-48 where x's rows do not fit;
                  * there 3 x 3 (3 x 2 where three stages do not fit) past K = 12288 at M = 17-32,
                  * 1 x 4 under PDL at K = 8193-10240, M = 49-64, then 3 x 2 from K = 9729 to 12288
                  * at M = 49-59 (the partial sums after the rings) */
                 {33, 256, 4104, 0, 1, 3},  {64, 384, 7160, 0, 1, 3},  {64, 320, 4096, 0, 0, 0},
                 {32, 320, 4104, 0, 0, 0},  {49, 320, 7176, 0, 0, 0},  {41, 128, 12288, 1, 3, 2},
                 {44, 192, 12288, 0, 3, 2}, {40, 128, 12288, 0, 0, 0}, {41, 128, 12296, 0, 0, 0},
                 {24, 128, 14336, 0, 3, 3}, {24, 192, 16384, 1, 3, 3}, {32, 192, 16384, 1, 3, 2},
                 {17, 240, 12296, 0, 3, 3}, {16, 128, 14336, 0, 0, 0}, {56, 128, 10240, 1, 1, 4},
                 {64, 192, 9216, 1, 1, 4},  {56, 128, 10248, 1, 3, 2},
                 {56, 128, 10240, 0, 3, 2}, {59, 192, 12288, 1, 3, 2}, {49, 240, 12288, 0, 3, 2},
                 {60, 128, 12288, 1, 0, 0}, {56, 128, 12296, 1, 0, 0}, {64, 128, 10248, 0, 0, 0},
                 {56, 112, 12288, 1, 0, 0}, {56, 256, 12288, 0, 0, 0}};
  for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++) {
    const int64_t m = streams[i].m, n = streams[i].n, k = streams[i].k;
    CHECK(bf16fp32__smallm_choose_for(m, n, k, H200_SMS, streams[i].pdl, H200_SMEM, &c) == 0);
    EXPECT(c.stream == (streams[i].subs != 0) &&
               (!c.stream || (c.stream_subs == streams[i].subs &&
                              c.stream_stages == streams[i].stages && c.stream_groups == 1 &&
                              c.stream_over == ((m == 16 && streams[i].subs == 7) ||
                                                   (m > 48 && streams[i].subs == 3)))),
           "%lldx%lld M = %lld pdl %d: stream %d, %d x %d, over %d", (long long)n, (long long)k,
           (long long)m, streams[i].pdl, c.stream, c.stream_subs, c.stream_stages, c.stream_over);
  }
  /* a one-wave grid takes more than half an SM, as the tables' share defaults do */
  CHECK(bf16fp32__smallm_choose_for(16, 1024, 2048, H200_SMS, 0, H200_SMEM, &c) == 0 &&
        c.share_smem > h200_half_sm());
}

/* Each slice's sub-chunks go to the warp groups in contiguous ranges, in order, all of them
 * once: group ranges of ceil(n / WK), the last ones shorter or empty. */
static void test_chains(void) {
  for (int n = 0; n <= 40; n++)
    for (int wk = 1; wk <= 8; wk *= 2) {
      int prev = 0;
      for (int c = 0; c < wk; c++) {
        int j0, j1;
        bf16fp32__smallm_chain(n, c, wk, &j0, &j1);
        CHECK(j0 == prev && j1 >= j0 && j1 - j0 <= (n + wk - 1) / wk);
        if (j1 < n) CHECK(j1 - j0 == (n + wk - 1) / wk);
        prev = j1;
      }
      CHECK(prev == n);
    }
}

/* The slice bounds the kernels get from the host are bf16fp32__smallm_slice's, for every rank,
 * and the last one ends at K. */
static void test_slices(void) {
  for (int64_t k = 8; k <= 20000; k += k < 600 ? 8 : 2056)
    for (int ksplit = 1; ksplit <= BF16FP32__SMALLM_MAX_SPLIT && ksplit <= (k + 31) / 32; ksplit++) {
      bf16fp32__smallm_slices s;
      memset(&s, 0xff, sizeof s);
      bf16fp32__smallm_fill_slices(k, ksplit, &s);
      for (int r = 0; r < ksplit; r++) {
        int64_t k0, k1;
        bf16fp32__smallm_slice(k, ksplit, r, &k0, &k1);
        CHECK(s.k[r] == k0 && s.k[r + 1] == k1);
      }
      CHECK(s.k[ksplit] == k);
    }
}

/* The wide kernel's groups: rank r sums chains r C .. r C + C - 1 (C = WK / groups), so the
 * ranks' ranges follow one another, start where a chain starts and cover the slice; and the
 * limits of bf16fp32__smallm_use_groups. */
static void test_groups(void) {
  for (int n = 1; n <= 300; n++)
    for (int wk = 2; wk <= 8; wk *= 2)
      for (int groups = 2; groups <= wk; groups *= 2) {
        int prev = 0, j0, j1, c0, c1;
        for (int r = 0; r < groups; r++) {
          bf16fp32__smallm_group(n, r, wk, groups, &j0, &j1);
          bf16fp32__smallm_chain(n, r * (wk / groups), wk, &c0, &c1);
          CHECK(j0 == prev && j1 >= j0 && j0 == c0);
          prev = j1;
        }
        CHECK(prev == n);
      }
  /* only the wide kernel on one K slice, WK a multiple of the groups, within the memory */
  bf16fp32__smallm_config c;
  CHECK(bf16fp32__smallm_choose(256, 512, 7168, H200_SMS, H200_SMEM, &c) == 0); /* S 8 */
  CHECK(bf16fp32__smallm_use_groups(&c, 2, H200_SMEM) != 0);
  CHECK(bf16fp32__smallm_choose(64, 2048, 7168, H200_SMS, H200_SMEM, &c) == 0); /* decode */
  CHECK(bf16fp32__smallm_use_groups(&c, 2, H200_SMEM) != 0);
  CHECK(bf16fp32__smallm_choose(256, 2048, 7168, H200_SMS, H200_SMEM, &c) == 0);
  CHECK(bf16fp32__smallm_use_groups(&c, 3, H200_SMEM) != 0);         /* WK 8 */
  CHECK(bf16fp32__smallm_use_groups(&c, 2, 64 * 1024) != 0);         /* no room */
  CHECK(bf16fp32__smallm_use_groups(&c, 4, H200_SMEM) == 0 && c.wide_groups == 4);
  CHECK(bf16fp32__smallm_use_wide(&c, 2048, 64, 64, H200_SMEM) == 0 && c.wide_groups == 1);
  /* nor the wgmma kernel's tiles */
  CHECK(bf16fp32__smallm_use_wgmma(&c, 2048, 64, 64, 32, H200_SMEM) == 0 && c.wgmma);
  CHECK(bf16fp32__smallm_use_groups(&c, 2, H200_SMEM) != 0 && c.wide_groups == 1);
}

/* The cluster sum's shares: ranks 0..S-1 finish consecutive ranges of a block's units, all of
 * them once, as evenly as integer division allows; each unit's owner is the rank whose range
 * holds it (the push sends it there). */
static void test_cluster_shares(void) {
  for (int units = 1; units <= 2048; units += units < 80 ? 1 : 37)
    for (int s = 1; s <= BF16FP32__SMALLM_MAX_SPLIT; s++) {
      CHECK(bf16fp32__smallm_share(0, units, s) == 0 && bf16fp32__smallm_share(s, units, s) == units);
      for (int q = 0; q < s; q++) {
        const int len = bf16fp32__smallm_share(q + 1, units, s) - bf16fp32__smallm_share(q, units, s);
        CHECK(len >= units / s && len <= (units + s - 1) / s);
      }
      for (int u = 0; u < units; u++) {
        const int q = bf16fp32__smallm_owner(u, units, s);
        CHECK(q >= 0 && q < s && bf16fp32__smallm_share(q, units, s) <= u &&
              u < bf16fp32__smallm_share(q + 1, units, s));
      }
    }
}

static void test_slices_and_rows(void) {
  static const int64_t ks[] = {8, 24, 32, 40, 4096, 4104, 7168, 7176};
  for (int i = 0; i < 8; i++)
    for (int s = 1; s <= 8; s++) {
      int64_t subs = (ks[i] + 31) / 32, prev = 0, k0, k1;
      if (s > subs) continue;
      for (int r = 0; r < s; r++) {
        bf16fp32__smallm_slice(ks[i], s, r, &k0, &k1);
        CHECK(k0 == prev && k1 > k0 && k0 % 32 == 0);
        prev = k1;
      }
      CHECK(prev == ks[i]);
    }
  static const int xks[] = {64, 128, 256, 896, 2048};
  for (int i = 0; i < 5; i++) {
    int kc = xks[i];
    for (int r = 0; r + 1 < 256; r++) {
      int a = bf16fp32__smallm_rowoff(r, kc), b = bf16fp32__smallm_rowoff(r + 1, kc);
      CHECK(a % 16 == 0 && b - a >= 2 * kc);          /* rows do not overlap, 16-byte aligned */
      if (r % 2 == 0) CHECK((b - a) % 128 == 64);    /* rows 2i, 2i+1: other banks */
    }
    CHECK(bf16fp32__smallm_rows_bytes(256, kc) >= bf16fp32__smallm_rowoff(255, kc) + 2 * kc);
  }
}

int main(void) {
  test_shape_ok();
  test_dsv4_split();
  test_generic_split();
  test_split_given();
  test_every_m();
  test_smem_limits();
  test_wide_blocks();
  test_wide_rule();
  test_wgmma_blocks();
  test_tile_subs();
  test_stream_tokens();
  test_stream();
  test_groups();
  test_share();
  test_fold();
  test_generic();
  test_chains();
  test_slices();
  test_cluster_shares();
  test_slices_and_rows();
  return testing_summary("test-smallm-config");
}
