/* smallm on the GPU through the public API (forced): the fp64 oracle bound with poisoned outputs
 * for every M in 1..64 and samples up to 256, DeepSeek-V4 shapes, padded leading dimensions, K
 * tails, NaN/Inf, subnormals, determinism, batch invariance (rows bitwise equal whatever M),
 * declined shapes falling back, and programmatic dependent launch inside a captured graph and right
 * after a kernel that writes x. GPU_SMALLM_PART runs one part (main, below); GPU_SMALLM_TRACE=1
 * names each launch before it starts (where a sanitizer run stops). */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "backends/smallm/smallm-config.h"
#include "backends/smallm/smallm-launch.h"
#include "pdl-producer.h"
#include "support.h"
#include "testing.h"

typedef struct set {
  int64_t mmax, n, k, ldx, ldw, ldo;
  uint16_t *hx, *hw;
  void *dx, *dw, *dout;
  double *ref, *absdot; /* oracle of rows 0..mmax-1 */
  float *full;          /* out of the M = mmax call: the bits every smaller M must match */
} set;

static int smallm_index = -1;

static uint64_t smallm_calls(bf16fp32_context *ctx) {
  bf16fp32_backend_info info;
  if (bf16fp32_backend_info_get(ctx, smallm_index, &info) != BF16FP32_OK) return 0;
  return info.calls;
}

static void make_set(set *s, int64_t mmax, int64_t n, int64_t k, int64_t px, int64_t pw,
                     int64_t po, uint64_t seed, int special) {
  memset(s, 0, sizeof *s);
  s->mmax = mmax, s->n = n, s->k = k, s->ldx = k + px, s->ldw = k + pw, s->ldo = n + po;
  s->hx = malloc((size_t)(mmax * s->ldx) * 2);
  s->hw = malloc((size_t)(n * s->ldw) * 2);
  s->ref = malloc((size_t)(mmax * n) * sizeof(double));
  s->absdot = malloc((size_t)(mmax * n) * sizeof(double));
  s->full = malloc((size_t)(mmax * s->ldo) * sizeof(float));
  CHECK(s->hx && s->hw && s->ref && s->absdot && s->full);
  sup_fill_bf16(s->hx, (size_t)(mmax * s->ldx), seed);
  sup_fill_bf16(s->hw, (size_t)(n * s->ldw), seed + 1);
  /* The padding holds NaN: a kernel that reads it shows. */
  sup_nan_outside(s->hx, (size_t)(mmax * s->ldx), s->hx, mmax, k, s->ldx);
  sup_nan_outside(s->hw, (size_t)(n * s->ldw), s->hw, n, k, s->ldw);
  if (special) {
    s->hx[0 * s->ldx + 1] = 0x7fc0; /* row 0: NaN everywhere */
    s->hx[1 * s->ldx + 2] = 0x7f80; /* row 1: +-Inf ... */
    s->hw[2 * s->ldw + 2] = 0;      /* ... and NaN in column 2 (Inf * 0) */
    s->hx[2 * s->ldx + 0] = 0x3f80;
    s->hw[3 * s->ldw + 0] = 0xff80; /* row 2, column 3: -Inf */
    sup_plant_subnormals(s->hx, s->ldx, s->hw, s->ldw, k); /* row 3, columns 4-5: exactly 1 */
  }
  s->dx = sup_gpu_alloc((size_t)(mmax * s->ldx) * 2);
  s->dw = sup_gpu_alloc((size_t)(n * s->ldw) * 2);
  s->dout = sup_gpu_alloc((size_t)(mmax * s->ldo) * 4 + 64);
  CHECK(s->dx && s->dw && s->dout);
  CHECK(!sup_gpu_upload(s->dx, s->hx, (size_t)(mmax * s->ldx) * 2));
  CHECK(!sup_gpu_upload(s->dw, s->hw, (size_t)(n * s->ldw) * 2));
  CHECK(!sup_oracle(mmax, n, k, s->hx, s->ldx, s->hw, s->ldw, s->ref, s->absdot, 16));
}

static void free_set(set *s) {
  free(s->hx), free(s->hw), free(s->ref), free(s->absdot), free(s->full);
  sup_gpu_free(s->dx), sup_gpu_free(s->dw), sup_gpu_free(s->dout);
}

/* Rows row0..row0+m-1 of the set through the API into out (host, m x ldo, poisoned first).
 * Returns 1 when smallm ran it and the result is within the oracle bound. */
static int run_rows(bf16fp32_context *ctx, set *s, int64_t m, int64_t row0, float *out) {
  size_t bytes = (size_t)(m * s->ldo) * 4;
  sup_poison_f32(out, (size_t)(m * s->ldo));
  if (sup_gpu_upload(s->dout, out, bytes)) return 0;
  uint64_t before = smallm_calls(ctx);
  sup_trace("api m=%lld n=%lld k=%lld row0=%lld", (long long)m, (long long)s->n, (long long)s->k,
            (long long)row0);
  bf16fp32_status st = bf16fp32_linear(ctx, BF16FP32_DEVICE, m, s->n, s->k,
                                       (const uint16_t *)s->dx + row0 * s->ldx, s->ldx, s->dw,
                                       s->ldw, s->dout, s->ldo, NULL);
  CHECK_OK(st);
  if (st != BF16FP32_OK || sup_gpu_sync() || sup_gpu_download(out, s->dout, bytes)) return 0;
  int ran = smallm_calls(ctx) == before + 1;
  sup_check_result r = sup_compare(m, s->n, s->k, s->ref + row0 * s->n, s->absdot + row0 * s->n,
                                   out, s->ldo);
  if (!ran || !sup_check_ok(&r))
    fprintf(stderr, "m=%lld n=%lld k=%lld row0=%lld: smallm ran %d, worst %.3g, %lld bad, "
            "%lld unwritten, %lld overwritten\n", (long long)m, (long long)s->n, (long long)s->k,
            (long long)row0, ran, r.worst_ratio, (long long)r.violations, (long long)r.unwritten,
            (long long)r.overwritten);
  return ran && sup_check_ok(&r);
}

static int same_rows(const set *s, const float *out, int64_t m, int64_t row0) {
  for (int64_t i = 0; i < m; i++)
    if (memcmp(out + i * s->ldo, s->full + (row0 + i) * s->ldo, (size_t)s->n * 4) != 0) return 0;
  return 1;
}

/* The full call, then each listed M (prefix rows) and some rows alone: all bitwise equal. */
static void check_set(bf16fp32_context *ctx, set *s, const int64_t *ms, int count) {
  float *out = malloc((size_t)(s->mmax * s->ldo) * sizeof(float));
  CHECK(out != NULL);
  if (!out) return;
  CHECK(run_rows(ctx, s, s->mmax, 0, s->full));
  CHECK(run_rows(ctx, s, s->mmax, 0, out)); /* determinism: the same bits again */
  CHECK(same_rows(s, out, s->mmax, 0));
  for (int i = 0; i < count; i++) {
    int ok = run_rows(ctx, s, ms[i], 0, out) && same_rows(s, out, ms[i], 0);
    if (!ok) fprintf(stderr, "  M=%lld differs from the M=%lld call\n", (long long)ms[i], (long long)s->mmax);
    CHECK(ok);
  }
  const int64_t rows[] = {1, s->mmax / 2, s->mmax - 1};
  for (int i = 0; i < 3; i++) {
    int ok = run_rows(ctx, s, 1, rows[i], out) && same_rows(s, out, 1, rows[i]);
    if (!ok) fprintf(stderr, "  row %lld alone differs\n", (long long)rows[i]);
    CHECK(ok);
  }
  free(out);
}

/* check_set on a fresh set of random operands (no NaN or Inf), freed after. */
static void check_shape(bf16fp32_context *ctx, int64_t mmax, int64_t n, int64_t k, int64_t px,
                        int64_t pw, int64_t po, uint64_t seed, const int64_t *ms, int count) {
  set s;
  make_set(&s, mmax, n, k, px, pw, po, seed, 0);
  check_set(ctx, &s, ms, count);
  free_set(&s);
}

/* A kernel the API may not choose for this shape, launched directly (plain or under PDL) after
 * check_set: `to` switches the chosen configuration to it (args: its parameters; it returns 1
 * where that configuration does not fit the device, and the case is skipped). Within the oracle
 * bound, every poisoned output written, and the same bits as the API's M = mmax call (every
 * kernel sums alike). Returns the cases run. */
typedef int (*switch_fn)(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k,
                         size_t smem, const int *args);

static int check_direct(set *s, const int64_t *ms, int count, const char *what, switch_fn to,
                        const int *args, int pdl) {
  int ran = 0;
  int dev = 0, sms = 0, smem = 0;
  CHECK(cudaGetDevice(&dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) == cudaSuccess);
  float *out = malloc((size_t)(s->mmax * s->ldo) * sizeof(float));
  CHECK(out != NULL);
  if (!out) return 0;
  for (int i = 0; i < count; i++) {
    const int64_t m = ms[i];
    const size_t bytes = (size_t)(m * s->ldo) * 4;
    bf16fp32__smallm_config c;
    int ok = bf16fp32__smallm_choose(m, s->n, s->k, sms, (size_t)smem, &c) == 0;
    const int sw = ok ? to(&c, m, s->n, s->k, (size_t)smem, args) : -1;
    if (sw == 1) continue;
    ok = ok && sw == 0;
    ran++;
    sup_trace("%s%s m=%lld n=%lld k=%lld", what, pdl ? " under PDL" : "", (long long)m,
              (long long)s->n, (long long)s->k);
    sup_poison_f32(out, (size_t)(m * s->ldo));
    ok = ok && !sup_gpu_upload(s->dout, out, bytes) &&
         bf16fp32__smallm_launch(&c, m, s->n, s->k, s->dx, s->ldx, s->dw, s->ldw, s->dout, s->ldo,
                                 NULL, pdl) == 0 &&
         !sup_gpu_sync() && !sup_gpu_download(out, s->dout, bytes);
    sup_check_result r = sup_compare(m, s->n, s->k, s->ref, s->absdot, out, s->ldo);
    ok = ok && sup_check_ok(&r) && same_rows(s, out, m, 0);
    if (!ok)
      fprintf(stderr, "%s m=%lld n=%lld k=%lld: worst %.3g, %lld bad, %lld unwritten, or not the "
              "API's bits\n", what, (long long)m, (long long)s->n, (long long)s->k, r.worst_ratio,
              (long long)r.violations, (long long)r.unwritten);
    CHECK(ok);
  }
  free(out);
  return ran;
}

/* The wgmma kernel, which no shape chooses (the wide kernel measured faster): blocks of
 * args[0] rows x args[1] tokens, args[2] per warpgroup, stages of args[3] sub-chunks (skipped
 * where that ring does not fit). */
static int to_wgmma(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k,
                    size_t smem, const int *args) {
  (void)m, (void)k;
  if (bf16fp32__smallm_use_wgmma(c, n, args[0], args[1], args[2], smem) != 0) return -1;
  return bf16fp32__smallm_use_tile_subs(c, args[3], smem) == 0 ? 0 : 1;
}
static void check_wgmma(set *s, const int64_t *ms, int count, int rows, int tokens, int wgt) {
  static const int subs[] = {4, 5, 7};
  for (int i = 0; i < 3; i++) {
    const int args[4] = {rows, tokens, wgt, subs[i]};
    CHECK(check_direct(s, ms, count, "wgmma", to_wgmma, args, 0) > 0 || subs[i] == 7);
  }
}
/* The wide kernel (M > 64) as the API chooses its block, with stages of args[0] sub-chunks
 * (skipped where that ring does not fit). */
static int to_tile_subs(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k,
                        size_t smem, const int *args) {
  (void)m, (void)n, (void)k;
  if (!c->wide) return -1;
  return bf16fp32__smallm_use_tile_subs(c, args[0], smem) == 0 ? 0 : 1;
}
static void check_tile_subs(set *s, const int64_t *ms, int count) {
  static const int subs[] = {4, 5, 7};
  for (int i = 0; i < 3; i++) {
    CHECK(check_direct(s, ms, count, "wide stages", to_tile_subs, &subs[i], 0) > 0 || subs[i] == 7);
    CHECK(check_direct(s, ms, count, "wide stages (pdl)", to_tile_subs, &subs[i], 1) > 0 ||
          subs[i] == 7);
  }
}

/* The stream kernel (M <= 64), which the API chooses only at some shapes: stages of args[0]
 * sub-chunks (1 to 7; an even count leaves a pad in the box), up to args[1] stages, args[2]
 * blocks sharing a tile (2: splits of 16 rows, one K slice); under PDL, args[3] sets stream_wl2
 * (the later weight boxes requested into L2 before the wait) and args[4] stream_early (the next
 * call launched at block entry), which no table entry chooses now. A ring per warp: 7 fit twice
 * up to M = 16 (above M = 8 with the partial sums over the rings), and above M = 16 only the
 * smaller stages fit; shared rings: above M = 16 stages of more than 3 may not fit (skipped). */
static int to_stream(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k,
                     size_t smem, const int *args) {
  (void)n, (void)k;
  if (bf16fp32__smallm_use_stream(c, m, args[0], args[1], args[2], smem) == 0) {
    c->stream_wl2 = args[3];
    c->stream_early = args[4];
    return 0;
  }
  if (args[2] == 2) return args[0] > 3 && m > 16 ? 1 : -1;
  return m > 16 ? 1 : -1; /* the stages do not fit */
}
static void check_stream(set *s, const int64_t *ms, int count) {
  /* the last four: the L2 requests and the early launch, each alone and together (PDL only) */
  static const int kinds[][5] = {{5, 3, 1, 0, 0}, {4, 2, 1, 0, 0}, {7, 2, 1, 0, 0},
                                 {3, 4, 1, 0, 0}, {1, 4, 1, 0, 0}, {5, 3, 1, 1, 0},
                                 {7, 2, 1, 0, 1}, {3, 4, 1, 1, 1}, {1, 4, 1, 1, 1}};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    const int must = ms[0] <= 8 || kinds[i][0] == 1; /* one-sub-chunk stages fit up to M = 64 */
    const int pdl_only = kinds[i][3] || kinds[i][4];
    if (!pdl_only)
      CHECK(check_direct(s, ms, count, "stream", to_stream, kinds[i], 0) > 0 || !must);
    CHECK(check_direct(s, ms, count, pdl_only ? "stream (pdl, wl2 / early)" : "stream (pdl)",
                       to_stream, kinds[i], 1) > 0 ||
          !must);
  }
}
/* The share kernel (M <= 64, where a block's rows fit its shared memory), with x's fragments
 * read into registers when args[0] says so (M <= 16), the weight fragments when args[1] does
 * (share_wpre 1 or 2), its last args[2] warp groups' weight columns copied after the wait, and
 * requested into L2 before it when args[3] says so (bf16fp32__smallm_share_late), args[4] row
 * blocks of the split per block (bf16fp32__smallm_share_tiles); each check returns the cases
 * run. */
static int to_share(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k, size_t smem,
                    const int *args) {
  if (args[0] && m > 16) return 1;
  /* skipped where the rows do not fit, a warp's range is too long for registers, or the late
   * groups or the row blocks do not apply */
  if (bf16fp32__smallm_use_share(c, m, n, k, args[0], args[1], smem) != 0) return 1;
  if (bf16fp32__smallm_share_late(c, args[2], args[3]) != 0) return 1;
  return bf16fp32__smallm_share_tiles(c, m, args[4], smem) == 0 ? 0 : 1;
}
/* Each form of kinds (to_share's args) plainly and under PDL, named after its args. */
static int check_share_kinds(set *s, const int64_t *ms, int count, const int (*kinds)[5],
                             int nkinds) {
  static const char *const wpre[3] = {"", ", w read first", ", w read with x"};
  int ran = 0;
  for (int i = 0; i < nkinds; i++)
    for (int pdl = 0; pdl < 2; pdl++) {
      char name[112], late[24] = "";
      if (kinds[i][2])
        snprintf(late, sizeof late, ", %d late%s", kinds[i][2], kinds[i][3] ? " via L2" : "");
      snprintf(name, sizeof name, "share%s%s%s%s%s", kinds[i][0] ? ", x in registers" : "",
               wpre[kinds[i][1]], late, kinds[i][4] == 2 ? ", two row blocks" : "",
               pdl ? " (pdl)" : "");
      ran += check_direct(s, ms, count, name, to_share, kinds[i], pdl);
    }
  return ran;
}
static int check_share(set *s, const int64_t *ms, int count) {
  static const int kinds[4][5] = {
      {0, 0, 0, 0, 1}, {1, 0, 0, 0, 1}, {0, 1, 0, 0, 1}, {0, 2, 0, 0, 1}};
  return check_share_kinds(s, ms, count, kinds, 4);
}
static int check_share_late(set *s, const int64_t *ms, int count) {
  /* with and without the late columns' L2 requests, x's rows and x in registers */
  static const int kinds[4][5] = {
      {0, 0, 1, 0, 1}, {0, 0, 3, 1, 1}, {1, 0, 2, 1, 1}, {0, 0, 2, 0, 1}};
  return check_share_kinds(s, ms, count, kinds, 4);
}
/* Two row blocks per block: x's rows and x in registers, with and without late groups */
static int check_share_tiles(set *s, const int64_t *ms, int count) {
  static const int kinds[4][5] = {
      {0, 0, 0, 0, 2}, {1, 0, 0, 0, 2}, {0, 0, 3, 1, 2}, {1, 0, 2, 1, 2}};
  return check_share_kinds(s, ms, count, kinds, 4);
}
/* K ends inside a 32-wide sub-chunk; tiny shapes (M x N x K; set i with seed 20 + i) */
static const int64_t tails[4][3] = {{5, 256, 4104}, {3, 48, 8}, {70, 64, 40}, {256, 1040, 72}};
/* Every share form on a shape whose K ends inside a sub-chunk, m = s->mmax <= 64: the slice's
 * zeros past K, which at 5 x 256 x 4104 lie in the late columns, and at 3 x 48 x 8 (one
 * sub-chunk) late groups with no columns at all. */
static void check_share_tail(set *s) {
  CHECK(check_share(s, &s->mmax, 1) == (s->mmax <= 16 ? 8 : 6));
  CHECK(check_share_late(s, &s->mmax, 1) == (s->mmax <= 16 ? 8 : 6));
  /* N = 48: three row blocks of 16, which do not pair up */
  CHECK(check_share_tiles(s, &s->mmax, 1) == (s->n == 48 ? 0 : s->mmax <= 16 ? 8 : 4));
}
/* The stream kernel in blocks of 64 tokens above M = 64: stages of args[0] sub-chunks, up to
 * args[1], args[2] blocks per tile; each listed M must run. */
static int to_stream_tokens(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k,
                            size_t smem, const int *args) {
  return bf16fp32__smallm_use_stream_tokens(c, m, n, k, args[0], args[1], args[2], smem);
}
static void check_stream_tokens(set *s, const int64_t *ms, int count, int groups) {
  static const int kinds[][3] = {{1, 3, 1}, {1, 4, 1}, {1, 3, 2}, {3, 3, 2}};
  for (int i = 0; i < 4; i++) {
    if (kinds[i][2] != groups) continue;
    CHECK(check_direct(s, ms, count, "stream tokens", to_stream_tokens, kinds[i], 0) == count);
    CHECK(check_direct(s, ms, count, "stream tokens (pdl)", to_stream_tokens, kinds[i], 1) == count);
  }
}

/* The stream kernel with two blocks per tile (one K slice, 16-row splits: N = 2048): every M
 * given must run with stages of 1 and 3 sub-chunks. */
static void check_stream_groups(set *s, const int64_t *ms, int count) {
  static const int kinds[][5] = {{1, 4, 2, 0, 0}, {3, 3, 2, 0, 0}, {5, 2, 2, 0, 0}, {7, 2, 2, 0, 0}};
  for (int i = 0; i < 4; i++) {
    const int ran = check_direct(s, ms, count, "stream groups", to_stream, kinds[i], 0);
    const int ran_pdl = check_direct(s, ms, count, "stream groups (pdl)", to_stream, kinds[i], 1);
    CHECK((ran == count && ran_pdl == count) || kinds[i][0] > 3);
  }
}

/* The fold kernel (M <= 8, where its chains and rows fit; bf16fp32__smallm_use_fold), plainly
 * and under PDL; returns the cases run. */
static int to_fold(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k, size_t smem,
                   const int *args) {
  (void)args;
  return bf16fp32__smallm_use_fold(c, m, n, k, smem) == 0 ? 0 : 1;
}
static int check_fold(set *s, const int64_t *ms, int count) {
  return check_direct(s, ms, count, "fold", to_fold, NULL, 0) +
         check_direct(s, ms, count, "fold (pdl)", to_fold, NULL, 1);
}

/* flash.router (256 x 4096) at every M = 1-64 and four above, in every kernel that takes it
 * but the share kernel, whose forms there are test_share_only's (those alone took 635 s under
 * racecheck on the H200, in two pieces) */
static void test_router(bf16fp32_context *ctx) {
  set s;
  int64_t ms[80];
  int count = 0;
  for (int64_t m = 1; m <= 64; m++) ms[count++] = m;
  const int64_t above[] = {65, 100, 128, 200};
  for (int i = 0; i < 4; i++) ms[count++] = above[i];
  make_set(&s, 256, 256, 4096, 0, 0, 0, 11, 0); /* flash.router */
  check_set(ctx, &s, ms, count);
  check_stream(&s, ms, 16); /* M = 1 .. 16 */
  CHECK(check_fold(&s, ms, 16) == 2 * 8); /* M = 1 .. 8 */
  check_tile_subs(&s, ms + 64, 4); /* M = 65, 100, 128, 200 */
  check_stream_tokens(&s, ms + 64, 4, 1);
  free_set(&s);
}

/* The other shapes, padded leading dimensions, K tails, NaN and Inf */
static void test_shapes(bf16fp32_context *ctx) {
  set s;
  const int64_t few[] = {1, 7, 16, 33};
  make_set(&s, 64, 2048, 7168, 0, 0, 0, 12, 0); /* pro.c4-main, the largest */
  check_set(ctx, &s, few, 4);
  check_stream(&s, few, 3);
  const int64_t more_tiles[] = {17, 24, 32, 40, 64}; /* the stream kernel with 4 and 8 token tiles */
  check_stream(&s, more_tiles, 5);
  const int64_t grouped[] = {1, 7, 8, 16, 17, 24, 32, 40, 63, 64};
  check_stream_groups(&s, grouped, 10);
  CHECK(check_share(&s, few, 3) == 0); /* 16 rows of 14 KB do not fit a block */
  free_set(&s);
  make_set(&s, 256, 512, 7168, 0, 0, 0, 13, 0);
  check_set(ctx, &s, few, 4);
  /* ranges of 14 sub-chunks: x in registers with one token tile (M = 1, 7), the weights not */
  CHECK(check_share(&s, few, 3) == 2 * 3 + 2 * 2);
  CHECK(check_fold(&s, few, 4) == 0); /* chains of 14 sub-chunks */
  check_wgmma(&s, few, 4, 128, 64, 64); /* WK = 4 */
  check_wgmma(&s, few, 4, 128, 32, 32);
  free_set(&s);
  make_set(&s, 128, 1024, 4096, 0, 0, 0, 14, 0);
  check_set(ctx, &s, few, 4);
  check_stream(&s, few, 3); /* a cluster of 2 */
  CHECK(check_share(&s, few, 4) == 3 * 2 * 4 + 2 * 3); /* M = 33: x's rows */
  CHECK(check_share_late(&s, few, 4) == 3 * 2 * 4 + 2 * 3); /* 8 warp groups */
  CHECK(check_share_tiles(&s, few, 4) == 4 * 2 * 3); /* M = 33: 32 + 33 rows do not fit */
  CHECK(check_fold(&s, few, 4) == 2 * 2); /* M = 1, 7: 16 chains of 8 sub-chunks */
  check_stream(&s, more_tiles, 5);
  check_wgmma(&s, few, 4, 64, 64, 32); /* WK = 8 */
  free_set(&s);
  /* N = 2048: the decode kernel (M = 24, 64), the wide blocks above M = 64 (padded rows), the
   * same bits everywhere; the wgmma kernel too */
  const int64_t wg[] = {1, 24, 64, 65, 128, 200};
  make_set(&s, 256, 2048, 4096, 8, 8, 8, 16, 0);
  check_set(ctx, &s, wg, 6);
  check_wgmma(&s, wg, 6, 64, 64, 32); /* WK = 8 */
  check_tile_subs(&s, wg + 3, 3); /* tiles shared by two blocks up to M = 128 */
  check_stream_tokens(&s, wg + 3, 3, 1);
  check_stream_tokens(&s, wg + 3, 3, 2);
  check_stream_groups(&s, wg, 3); /* padded leading dimensions */
  free_set(&s);
  /* K past 2^24 (smallm's limit until it was found to be 2^31 - 1024), ending inside a
   * sub-chunk: the tiled kernel on 8 slices of 2^21 */
  const int64_t two[] = {1, 2};
  check_shape(ctx, 3, 16, ((int64_t)1 << 24) + 40, 8, 0, 8, 73, two, 2);
  make_set(&s, 100, 384, 7168, 8, 24, 8, 15, 0); /* padded leading dimensions */
  const int64_t padded[] = {1, 13, 64};
  check_set(ctx, &s, padded, 3);
  check_stream(&s, padded, 3);
  CHECK(check_share(&s, padded, 3) == 3 * 2 * 3 + 2 * 2); /* rows ldx and ldw apart */
  CHECK(check_share_late(&s, padded, 3) == 3 * 2 * 3 + 2 * 2);
  CHECK(check_share_tiles(&s, padded, 3) == 4 * 2 * 2); /* M = 64: 64 + 64 rows do not fit */
  CHECK(check_fold(&s, padded, 3) == 2); /* M = 1: 225 KB of rows */
  free_set(&s);
  /* flash.c4-indexer, where the tables choose the fold under PDL at M = 1-4 */
  const int64_t indexer[] = {1, 2, 3, 4, 5, 8, 9};
  make_set(&s, 9, 512, 4096, 0, 0, 0, 18, 0);
  check_set(ctx, &s, indexer, 7);
  CHECK(check_fold(&s, indexer, 7) == 2 * 6);
  free_set(&s);

  /* shapes no table names (on 132 SMs the generic table of smallm-prefer.c): at 896 x K the
   * fold kernel (M <= 8), x in registers over two row blocks (9-16), the tiled kernel (24, 32);
   * at 1280 x K the decode kernel (M <= 8) and x's rows over two row blocks (9-32); K ending
   * inside a sub-chunk, padded rows; every M's rows the bits of M = 32's */
  const int64_t generic[] = {1, 5, 8, 9, 16, 24};
  check_shape(ctx, 32, 896, 1544, 8, 0, 8, 17, generic, 6);
  check_shape(ctx, 32, 1280, 2056, 0, 8, 0, 19, generic, 6);
  /* at 256 x K past K = 7168: x in registers over one row block (M <= 8), then the stream kernel
   * on two stages of 3 sub-chunks (M = 9-32) and on three of 1 (M = 33-48) */
  const int64_t narrow[] = {1, 8, 9, 16, 17, 32, 33};
  check_shape(ctx, 48, 256, 12296, 8, 0, 8, 24, narrow, 7);
  /* the same entries just past K = 7168 at an N between 256 and 384 (x in registers to
   * M = 16 there) */
  check_shape(ctx, 48, 320, 7688, 0, 8, 8, 25, narrow, 7);
  /* the stream kernel on three stages of 1 at M = 33-64 for K = 4097-7168, and x's rows over
   * one row block at N = 128-255, M = 17-48 from K = 8192 */
  const int64_t past4096[] = {1, 16, 32, 33, 49};
  check_shape(ctx, 64, 320, 5128, 8, 0, 8, 26, past4096, 5);
  check_shape(ctx, 48, 192, 10248, 0, 8, 8, 27, narrow, 7);
  /* x's rows over one row block at N = 128-255, M = 49-64 just past K = 7168 and at N = 256-384,
   * M = 33-64 for K = 2048-4096; the stream kernel on three stages of 3 sub-chunks (M = 17-24) and
   * two (M = 25-32) past K = 12288 at N = 128-255 */
  const int64_t edges[] = {1, 17, 33, 49};
  check_shape(ctx, 64, 192, 7688, 8, 0, 8, 28, edges, 4);
  check_shape(ctx, 64, 320, 3080, 0, 8, 0, 29, edges, 4);
  const int64_t past12288[] = {1, 16, 17, 24};
  check_shape(ctx, 32, 128, 14344, 8, 0, 8, 30, past12288, 4);
  /* the stream kernel on 3 x 2 stages with the partial sums after the rings at N = 128-255,
   * M = 49-59 from K = 9729, where x's rows over one row block do not fit */
  const int64_t past48[] = {1, 33, 49, 56};
  check_shape(ctx, 59, 192, 12280, 8, 0, 8, 32, past48, 4);

  /* the tails (and the stream kernel where M <= 16; the share kernel's: test_share_only) */
  for (int i = 0; i < 4; i++) {
    make_set(&s, tails[i][0], tails[i][1], tails[i][2], 0, 0, 0, 20 + (uint64_t)i, 0);
    CHECK(run_rows(ctx, &s, s.mmax, 0, s.full));
    if (s.mmax <= 16) check_stream(&s, &s.mmax, 1);
    if (i == 0) CHECK(check_fold(&s, &s.mmax, 1) == 2); /* K ends inside a sub-chunk */
    if (s.mmax > 64 && s.n % 32 == 0) check_tile_subs(&s, &s.mmax, 1); /* the wide kernel */
    if (s.mmax > 64) check_stream_tokens(&s, &s.mmax, 1, 1);
    free_set(&s);
  }
  /* NaN and Inf propagate */
  make_set(&s, 9, 256, 4096, 0, 0, 0, 30, 1);
  CHECK(run_rows(ctx, &s, 9, 0, s.full));
  check_stream(&s, &s.mmax, 1);
  CHECK(check_share(&s, &s.mmax, 1) == 8);
  CHECK(check_share_tiles(&s, &s.mmax, 1) == 8);
  const int64_t nan_ms[] = {1, 8};
  CHECK(check_fold(&s, nan_ms, 2) == 2 * 2);
  free_set(&s);
  /* and above M = 64: the wide kernel (the API's there), the wgmma and token-block kernels */
  const int64_t nan_wide[] = {65, 128};
  make_set(&s, 128, 2048, 4096, 0, 0, 0, 31, 1);
  CHECK(run_rows(ctx, &s, 128, 0, s.full));
  check_wgmma(&s, nan_wide, 2, 64, 64, 32);
  check_tile_subs(&s, nan_wide, 2);
  check_stream_tokens(&s, nan_wide, 2, 1);
  free_set(&s);
}

/* The share kernel's checks: with sampled == 0 (GPU_SMALLM_PART=share, or the whole test) every
 * form at M = lo .. hi on 256 x 4096, and when hi is 64 on the padded and tail shapes too (a
 * racecheck of M = 1-64 ran past 9 minutes on the H200, so GPU_SMALLM_SHARE_M=LO-HI runs it in
 * pieces);
 * with sampled (GPU_SMALLM_PART=sample) every form at a sample of M and on those shapes, and the
 * fold kernel's two instances, a racecheck run of a few minutes. */
static void test_share_only(bf16fp32_context *ctx, int sampled, int lo, int hi) {
  set s;
  int64_t ms[64];
  for (int i = 0; i < 64; i++) ms[i] = i + 1;
  static const int64_t sample[] = {1, 2, 4, 8, 16, 33, 64};
  const int64_t above[] = {65, 100, 128, 200};
  make_set(&s, 64, 256, 4096, 0, 0, 0, 11, 0); /* flash.router */
  CHECK(run_rows(ctx, &s, 64, 0, s.full));
  CHECK(check_share(&s, above, 4) == 0); /* above M = 64: declined */
  if (sampled) {
    CHECK(check_fold(&s, sample, 4) == 2 * 4); /* the fold kernel too, M = 1, 2, 4, 8 */
    CHECK(check_share(&s, sample, 7) == 3 * 2 * 7 + 2 * 5);
    CHECK(check_share_late(&s, sample, 7) == 3 * 2 * 7 + 2 * 5);
    CHECK(check_share_tiles(&s, sample, 7) == 2 * 2 * 7 + 2 * 2 * 5);
  } else {
    /* each form plainly and under PDL, x in registers (two more) up to M = 16 */
    const int count = hi - lo + 1, small = hi < 16 ? count : lo <= 16 ? 16 - lo + 1 : 0;
    CHECK(check_share(&s, ms + lo - 1, count) == 3 * 2 * count + 2 * small);
    CHECK(check_share_late(&s, ms + lo - 1, count) == 3 * 2 * count + 2 * small);
    CHECK(check_share_tiles(&s, ms + lo - 1, count) == 2 * 2 * count + 2 * 2 * small);
  }
  free_set(&s);
  if (!sampled && hi < 64) return; /* the other shapes go with the piece that ends at M = 64 */
  const int64_t few[] = {1, 7, 16, 33};
  make_set(&s, 33, 1024, 4096, 8, 24, 8, 14, 0); /* padded leading dimensions */
  CHECK(run_rows(ctx, &s, 33, 0, s.full));
  CHECK(check_share(&s, few, 4) == 3 * 2 * 4 + 2 * 3);
  CHECK(check_share_late(&s, few, 4) == 3 * 2 * 4 + 2 * 3);
  CHECK(check_share_tiles(&s, few, 4) == 4 * 2 * 3);
  free_set(&s);
  /* pro.c128-main: ranges of 14 sub-chunks, x in registers in the wide form; two row blocks fill
   * the block, with room for the push's slots up to M = 4 */
  const int64_t wide[] = {1, 4, 8};
  make_set(&s, 8, 1024, 7168, 0, 0, 0, 17, 0);
  CHECK(run_rows(ctx, &s, 8, 0, s.full));
  CHECK(check_share(&s, wide, 3) == 2 * 3 + 2 * 3);
  CHECK(check_share_late(&s, wide, 3) == 3 * 3 * 2); /* with x's rows only: none in the wide form */
  CHECK(check_share_tiles(&s, wide, 3) == 2 * 2);
  free_set(&s);
  if (sampled) { /* the fold's other instance: 16 chains of 8 sub-chunks */
    const int64_t two[] = {1, 4};
    make_set(&s, 4, 512, 4096, 0, 0, 0, 19, 0);
    CHECK(run_rows(ctx, &s, 4, 0, s.full));
    CHECK(check_fold(&s, two, 2) == 2 * 2);
    free_set(&s);
  }
  for (int i = 0; i < 4; i++) {
    if (tails[i][0] > 64) continue; /* the share kernel runs up to M = 64 */
    make_set(&s, tails[i][0], tails[i][1], tails[i][2], 0, 0, 0, 20 + (uint64_t)i, 0);
    CHECK(run_rows(ctx, &s, s.mmax, 0, s.full));
    check_share_tail(&s);
    free_set(&s);
  }
}

/* Shapes smallm declines run on another backend (the forced one falls back), still correct. */
static void test_declines(bf16fp32_context *ctx) {
  struct {
    int64_t m, n, k, px, po, out_offset;
  } cases[] = {
      {4, 256, 4100, 4, 0, 0},  /* K not a multiple of 8 */
      {4, 256, 4096, 4, 0, 0},  /* ldx not a multiple of 8 */
      {257, 256, 512, 0, 0, 0}, /* M above 256 */
      {4, 200, 512, 0, 0, 0},   /* N not a multiple of 16 */
      {4, 256, 512, 0, 8, 2},   /* out only 8-byte aligned */
  };
  for (int i = 0; i < 5; i++) {
    set s;
    make_set(&s, cases[i].m, cases[i].n, cases[i].k, cases[i].px, 0, cases[i].po, 40 + (uint64_t)i, 0);
    size_t no = (size_t)(s.mmax * s.ldo);
    float *out = malloc((no + 2) * sizeof(float));
    float *dout = (float *)s.dout + cases[i].out_offset;
    CHECK(out != NULL);
    if (!out) continue;
    sup_poison_f32(out, no + 2);
    CHECK(!sup_gpu_upload(s.dout, out, (no + 2) * 4));
    uint64_t before = smallm_calls(ctx);
    sup_trace("decline case %d", i);
    CHECK_OK(bf16fp32_linear(ctx, BF16FP32_DEVICE, s.mmax, s.n, s.k, s.dx, s.ldx, s.dw, s.ldw,
                             dout, s.ldo, NULL));
    CHECK(!sup_gpu_sync() && !sup_gpu_download(out, s.dout, (no + 2) * 4));
    CHECK(smallm_calls(ctx) == before); /* declined: another backend ran it */
    sup_check_result r = sup_compare(s.mmax, s.n, s.k, s.ref, s.absdot, out + cases[i].out_offset, s.ldo);
    CHECK(sup_check_ok(&r));
    free(out);
    free_set(&s);
  }
}

/* A context with use_pdl = 1 and smallm forced; NULL (a failed check) when it cannot be made. */
static bf16fp32_context *pdl_context(void) {
  bf16fp32_context *ctx = NULL;
  CHECK_OK(sup_create_pdl(&ctx, 1));
  if (ctx) CHECK_OK(bf16fp32_force_backend(ctx, "smallm"));
  return ctx;
}

/* use_pdl = 1 right after a kernel that writes x while the GEMM's prologue runs (it lets the
 * GEMM start at once, then waits 20 us before writing): the GEMM reads the new x, its rows the
 * bits of a call with x already in place. Under PDL the kernels fetch weights, and request x into
 * L2, before griddepcontrol.wait: 2048 x 4096 runs the stream kernel (two blocks per tile at
 * M = 5-8 and 49-64, else a ring per warp), as does 512 x 7168 at M = 1-16; the share kernel
 * (x read after the wait) runs 256 x 4096 at every M, 1024 x 4096 up to M = 16 (two row blocks
 * per block, x in registers), 512 x 7168 at M = 24 and 384 x 7168 up to M = 24. */
static void test_pdl_after_producer(void) {
  bf16fp32_context *ctx = pdl_context();
  if (!ctx) return;
  const int64_t shapes[][2] = {{2048, 4096}, {256, 4096}, {1024, 4096}, {512, 7168}, {384, 7168}};
  const int64_t ms[] = {1, 8, 16, 24, 33, 64};
  for (int i = 0; i < 5; i++) {
    set s;
    make_set(&s, 64, shapes[i][0], shapes[i][1], 8, 0, 0, 70 + (uint64_t)i, 0);
    const size_t xn = (size_t)(s.mmax * s.ldx);
    uint16_t *xold = malloc(xn * 2);
    float *out = malloc((size_t)(s.mmax * s.ldo) * sizeof(float));
    void *xnew = sup_gpu_alloc(xn * 2), *st = sup_gpu_stream_create();
    CHECK(xold && out && xnew && st);
    if (xold && out && xnew && st) {
      sup_fill_bf16(xold, xn, 80 + (uint64_t)i);
      CHECK(!sup_gpu_upload(xnew, s.hx, xn * 2));
      CHECK(run_rows(ctx, &s, s.mmax, 0, s.full)); /* x in place */
      for (size_t j = 0; j < sizeof ms / sizeof ms[0]; j++) {
        const int64_t m = ms[j];
        const size_t bytes = (size_t)(m * s.ldo) * 4;
        sup_poison_f32(out, (size_t)(m * s.ldo));
        CHECK(!sup_gpu_upload(s.dout, out, bytes) && !sup_gpu_upload(s.dx, xold, xn * 2));
        const uint64_t before = smallm_calls(ctx);
        sup_trace("pdl after a producer m=%lld n=%lld k=%lld", (long long)m, (long long)s.n,
                  (long long)s.k);
        CHECK(!sup_gpu_slow_copy_u16(s.dx, xnew, xn, 20, st));
        CHECK_OK(bf16fp32_linear(ctx, BF16FP32_DEVICE, m, s.n, s.k, s.dx, s.ldx, s.dw, s.ldw,
                                 s.dout, s.ldo, st));
        CHECK(!sup_gpu_stream_sync(st) && !sup_gpu_download(out, s.dout, bytes));
        const int ok = smallm_calls(ctx) == before + 1 && same_rows(&s, out, m, 0);
        if (!ok)
          fprintf(stderr, "pdl after a producer: %lldx%lld M=%lld differs from x in place\n",
                  (long long)s.n, (long long)s.k, (long long)m);
        CHECK(ok);
      }
    }
    sup_gpu_stream_destroy(st);
    sup_gpu_free(xnew);
    free(xold), free(out);
    free_set(&s);
  }
  bf16fp32_destroy(ctx);
}

/* use_pdl = 1, calls of the stream kernel (512 x 7168 M = 4; bf16fp32__smallm_prefer_stream)
 * and of the share kernel (1024 x 4096 M = 1 and 12 with two row blocks per block and x in
 * registers, 256 x 7168 M = 8, two row blocks with x's rows at 384 x 7168 M = 5, 512 x 4096
 * M = 16 and 256 x 4096 M = 3; bf16fp32__smallm_prefer_share) and of the fold kernel (512 x 4096
 * M = 2; bf16fp32__smallm_prefer_fold): a replayed graph of eight back to back, each into its own
 * poisoned output, every one the bits of the M = 64 call. */
static void test_pdl_chain(void) {
  bf16fp32_context *ctx = pdl_context();
  if (!ctx) return;
  const int64_t cases[][3] = {{1024, 4096, 1}, {512, 7168, 4}, {256, 7168, 8}, {384, 7168, 5},
                              {1024, 4096, 12}, {512, 4096, 16}, {256, 4096, 3}, {512, 4096, 2}};
  enum { CALLS = 8 };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    set s;
    make_set(&s, 64, cases[i][0], cases[i][1], 8, 0, 0, 90 + (uint64_t)i, 0);
    const int64_t m = cases[i][2];
    const size_t bytes = (size_t)(m * s.ldo) * 4;
    float *out = malloc((size_t)(s.mmax * s.ldo) * sizeof(float));
    void *o[CALLS] = {0};
    cudaStream_t st = (cudaStream_t)sup_gpu_stream_create();
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    int made = out && st;
    for (int c = 0; c < CALLS && made; c++) made = (o[c] = sup_gpu_alloc(bytes)) != NULL;
    CHECK(made);
    if (made) {
      CHECK(run_rows(ctx, &s, s.mmax, 0, s.full));
      CHECK_OK(bf16fp32_prewarm(ctx, BF16FP32_DEVICE, s.n, s.k, &m, 1, st));
      CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
      for (int c = 0; c < CALLS; c++)
        CHECK_OK(bf16fp32_linear(ctx, BF16FP32_DEVICE, m, s.n, s.k, s.dx, s.ldx, s.dw, s.ldw, o[c],
                                 s.ldo, st));
      CHECK(cudaStreamEndCapture(st, &graph) == cudaSuccess);
      CHECK(graph && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
      sup_poison_f32(out, (size_t)(m * s.ldo));
      for (int c = 0; c < CALLS; c++) CHECK(!sup_gpu_upload(o[c], out, bytes));
      sup_trace("pdl chain of %d m=%lld n=%lld k=%lld", CALLS, (long long)m, (long long)s.n,
                (long long)s.k);
      for (int rep = 0; rep < 2 && exec; rep++) CHECK(cudaGraphLaunch(exec, st) == cudaSuccess);
      CHECK(!sup_gpu_stream_sync(st));
      for (int c = 0; c < CALLS; c++) {
        const int ok = !sup_gpu_download(out, o[c], bytes) && same_rows(&s, out, m, 0);
        if (!ok)
          fprintf(stderr, "pdl chain: %lldx%lld M=%lld call %d differs\n", (long long)s.n,
                  (long long)s.k, (long long)m, c);
        CHECK(ok);
      }
    }
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    for (int c = 0; c < CALLS; c++) sup_gpu_free(o[c]);
    sup_gpu_stream_destroy(st);
    free(out);
    free_set(&s);
  }
  bf16fp32_destroy(ctx);
}

/* use_pdl = 1: the same bits as a plain launch, also from a replayed graph of several calls; the
 * generic table's PDL entries past N = 4096 and from K = 8192. */
static void test_pdl(void) {
  bf16fp32_context *ctx = pdl_context();
  if (!ctx) return;
  set s;
  make_set(&s, 64, 2048, 4096, 0, 0, 0, 50, 0);
  float *out = malloc((size_t)(64 * s.ldo) * sizeof(float));
  CHECK(out != NULL);
  if (out) {
    CHECK(run_rows(ctx, &s, 64, 0, s.full));
    const int64_t ms[] = {1, 16};
    for (int i = 0; i < 2; i++) CHECK(run_rows(ctx, &s, ms[i], 0, out) && same_rows(&s, out, ms[i], 0));

    /* three calls in one graph: M = 64 into o1, M = 16 into o2, M = 64 into o1 again */
    size_t bytes = (size_t)(64 * s.ldo) * 4;
    void *o2 = sup_gpu_alloc(bytes);
    cudaStream_t st = (cudaStream_t)sup_gpu_stream_create();
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    const int64_t pre[] = {16, 64};
    CHECK(o2 && st);
    CHECK_OK(bf16fp32_prewarm(ctx, BF16FP32_DEVICE, s.n, s.k, pre, 2, st));
    CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
    CHECK_OK(bf16fp32_linear(ctx, BF16FP32_DEVICE, 64, s.n, s.k, s.dx, s.ldx, s.dw, s.ldw, s.dout, s.ldo, st));
    CHECK_OK(bf16fp32_linear(ctx, BF16FP32_DEVICE, 16, s.n, s.k, s.dx, s.ldx, s.dw, s.ldw, o2, s.ldo, st));
    CHECK_OK(bf16fp32_linear(ctx, BF16FP32_DEVICE, 64, s.n, s.k, s.dx, s.ldx, s.dw, s.ldw, s.dout, s.ldo, st));
    CHECK(cudaStreamEndCapture(st, &graph) == cudaSuccess);
    CHECK(graph && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
    sup_poison_f32(out, (size_t)(64 * s.ldo));
    CHECK(!sup_gpu_upload(s.dout, out, bytes) && !sup_gpu_upload(o2, out, bytes));
    sup_trace("pdl graph of M = 64, 16, 64 n=%lld k=%lld", (long long)s.n, (long long)s.k);
    for (int rep = 0; rep < 3 && exec; rep++) CHECK(cudaGraphLaunch(exec, st) == cudaSuccess);
    CHECK(!sup_gpu_stream_sync(st));
    CHECK(!sup_gpu_download(out, s.dout, bytes) && same_rows(&s, out, 64, 0));
    CHECK(!sup_gpu_download(out, o2, (size_t)(16 * s.ldo) * 4) && same_rows(&s, out, 16, 0));
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    sup_gpu_stream_destroy(st);
    sup_gpu_free(o2);
    free(out);
  }
  free_set(&s);
  /* the generic table's PDL entries past N = 4096 and from K = 8192 (on 132 SMs): x's rows over
   * two row blocks at 5120 x 1032, the stream kernel on 5 x 2 (M <= 4) and 3 x 2 (M = 5-8) stages
   * at 6144 x 2056 and on 5 x 3 at 6144 x 4104, x's rows over one row block at 512 x 16392; K
   * ending inside a sub-chunk, padded rows; every M's rows the bits of the largest M's */
  const int64_t past[][3] = {{16, 5120, 1032}, {16, 6144, 2056}, {8, 6144, 4104}, {16, 512, 16392}};
  const int64_t ms[] = {1, 4, 5, 8, 9};
  for (int i = 0; i < 4; i++)
    check_shape(ctx, past[i][0], past[i][1], past[i][2], 8, 16, 8, 60 + (uint64_t)i, ms,
                past[i][0] > 8 ? 5 : 4);
  /* at N = 256-384 past K = 7168: x's rows over one row block (M = 9-33 at 384 x 12296), the
   * stream kernel on three stages of 1 sub-chunk (M = 48) */
  const int64_t narrow[] = {1, 9, 16, 17, 33};
  check_shape(ctx, 48, 384, 12296, 0, 8, 8, 64, narrow, 5);
  /* x's rows over one row block at M = 33-64 for K = 4097-7168 */
  const int64_t past4096[] = {1, 16, 32, 33, 49};
  check_shape(ctx, 64, 320, 5128, 8, 8, 0, 65, past4096, 5);
  /* x's rows over two row blocks at N = 320-384, M = 17-32 for K = 4097-8192; at N = 128-255 x's
   * rows over one row block at M = 17-24 past K = 12288, and for K = 8193-10240 where they fit
   * (to M = 56 at 128 x 9224), then the stream kernel on four stages of 1 (M = 64); at
   * N = 256-384, K = 7169-8192 x's rows over one row block at M = 49-64 too (256 x 8184) */
  const int64_t past16[] = {1, 16, 17, 24};
  check_shape(ctx, 32, 384, 4104, 0, 8, 8, 66, past16, 4);
  check_shape(ctx, 32, 384, 8184, 8, 0, 8, 69, past16, 4);
  check_shape(ctx, 32, 128, 14344, 8, 0, 8, 67, past16, 4);
  check_shape(ctx, 64, 128, 9224, 8, 8, 0, 68, past4096, 5);
  check_shape(ctx, 64, 256, 8184, 0, 8, 8, 70, past4096, 5);
  /* at N = 128-255 the stream kernel on 3 x 2 stages at M = 49-59 for K = 10241-12288 */
  check_shape(ctx, 56, 128, 10760, 0, 8, 8, 71, past4096, 5);
  bf16fp32_destroy(ctx);
}

int main(void) {
  if (!sup_gpu_available()) return testing_skip("gpu-smallm", "no CUDA device");
  bf16fp32_context *ctx = NULL;
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  if (!ctx) return testing_summary("gpu-smallm");
  bf16fp32_backend_info info;
  for (int i = 0; i < bf16fp32_backend_count(); i++)
    if (bf16fp32_backend_info_get(ctx, i, &info) == BF16FP32_OK && strcmp(info.name, "smallm") == 0)
      smallm_index = i;
  if (smallm_index < 0 || bf16fp32_backend_info_get(ctx, smallm_index, &info) != BF16FP32_OK) {
    bf16fp32_destroy(ctx);
    return testing_skip("gpu-smallm", "smallm is not in this build");
  }
  if (!info.available) {
    char why[200];
    snprintf(why, sizeof why, "smallm unavailable: %s", info.reason);
    bf16fp32_destroy(ctx);
    return testing_skip("gpu-smallm", why);
  }
  CHECK_OK(bf16fp32_force_backend(ctx, "smallm"));
  sup_trace_start("GPU_SMALLM_TRACE"); /* names each launch before it starts */
  /* GPU_SMALLM_PART runs one part (so that compute-sanitizer's racecheck of each fits its time,
   * tools/device-run.sh sanitize): router (every kernel but the share kernel on 256 x 4096, M =
   * 1-64 and above), shapes (every kernel on the other shapes), rest (the declines and the PDL
   * launches; each alone: declines, pdl, producer, chain), share (the share kernel's forms on
   * 256 x 4096 at M = 1-64 or GPU_SMALLM_SHARE_M's LO-HI, and on a padded and the tail shapes) or
   * sample (the same at a sample of M); unset: router, shapes, share and rest */
  const char *part = getenv("GPU_SMALLM_PART");
  const int all = part == NULL || part[0] == '\0';
  const int router = all || strcmp(part, "router") == 0;
  const int shapes = all || strcmp(part, "shapes") == 0;
  const int rest = all || strcmp(part, "rest") == 0;
  const int declines = rest || strcmp(part, "declines") == 0;
  const int pdl = rest || strcmp(part, "pdl") == 0;
  const int producer = rest || strcmp(part, "producer") == 0;
  const int chain = rest || strcmp(part, "chain") == 0;
  int share = all || strcmp(part, "share") == 0;
  const int sample = !all && strcmp(part, "sample") == 0;
  if (!router && !shapes && !declines && !pdl && !producer && !chain && !share && !sample) {
    fprintf(stderr,
            "gpu-smallm: GPU_SMALLM_PART is '%s': router, shapes, rest (declines, pdl, producer, "
            "chain), share or sample\n",
            part);
    CHECK(0);
  }
  int lo = 1, hi = 64;
  const char *range = getenv("GPU_SMALLM_SHARE_M");
  char end;
  if (share && range != NULL && range[0] != '\0' &&
      (sscanf(range, "%d-%d%c", &lo, &hi, &end) != 2 || lo < 1 || hi > 64 || lo > hi)) {
    fprintf(stderr, "gpu-smallm: GPU_SMALLM_SHARE_M is '%s': LO-HI within 1-64\n", range);
    CHECK(0);
    share = 0;
  }
  if (router) test_router(ctx);
  if (shapes) test_shapes(ctx);
  if (share || sample) test_share_only(ctx, sample, lo, hi);
  if (declines) test_declines(ctx);
  bf16fp32_destroy(ctx);
  if (pdl) test_pdl();
  if (producer) test_pdl_after_producer();
  if (chain) test_pdl_chain();
  return testing_summary("gpu-smallm");
}
