/* smallm's variants without a GPU: the default configuration of every DeepSeek-V4 shape at every
 * M, plainly and under PDL, has a variant that gives it back; every listed variant is distinct,
 * not the default, applies, names itself, and keeps the shape's split (so its sums, and bits,
 * are the default's), and every share and fold form and the chooser's kernel that applies is
 * listed; texts that are not smallm variants as they are written (aliases too), or
 * do not fit the shape, are refused and leave the configuration alone; paired launches' texts
 * and footprints. */
#include <string.h>

#include "testing.h"

/* Compiled in here so that the test also runs in builds without the CUDA backends (where the
 * smallm folder is left out of the library); the library's copies are then never linked. */
#include "backends/smallm/smallm-config.c"
#include "backends/smallm/smallm-prefer.c"
#include "backends/smallm/smallm-variant.c"

enum { H200_SMS = 132 };
static const size_t H200_SMEM = 232448; /* sharedMemPerBlockOptin on sm_90 */

static const int dsv4[][2] = {{256, 4096}, {2048, 4096}, {1024, 4096}, {512, 4096}, {384, 7168},
                              {2048, 7168}, {1024, 7168}, {512, 7168}, {256, 7168}};

/* Every field of the configuration (a field added there must be added here: the size says so). */
_Static_assert(sizeof(bf16fp32__smallm_config) == 240, "same_config: compare the new field");
static int same_config(const bf16fp32__smallm_config *a, const bf16fp32__smallm_config *b) {
#define SAME(f) (a->f == b->f)
  return memcmp(&a->split, &b->split, sizeof a->split) == 0 && SAME(mt) && SAME(mpad) &&
         SAME(sb) && SAME(xk) && SAME(nb) && SAME(dbuf) && SAME(threads) && SAME(grid_x) &&
         SAME(grid_y) && SAME(xbuf_bytes) && SAME(smem_bytes) && SAME(decode) && SAME(deep) &&
         SAME(decode_smem) && SAME(wide) && SAME(wide_rows) && SAME(wide_tokens) &&
         SAME(wide_smem) && SAME(wide_subs) && SAME(wide_groups) && SAME(wgmma) &&
         SAME(wg_tokens) && SAME(stream) && SAME(stream_subs) && SAME(stream_stages) &&
         SAME(stream_groups) && SAME(stream_smem) && SAME(stream_over) && SAME(stream_wl2) &&
         SAME(stream_tblocks) && SAME(stream_early) && SAME(stream_pair) && SAME(share) &&
         SAME(share_pitch) && SAME(share_smem) && SAME(share_xreg) && SAME(share_wpre) &&
         SAME(share_late) && SAME(share_late_l2) && SAME(share_tiles) && SAME(fold) &&
         SAME(fold_pitch) && SAME(fold_smem) && SAME(fold_xn);
#undef SAME
}

static int offered, applied_kinds[5];

/* (m, n, k) on a GPU of sms SMs under the launch kind pdl: the default's round trip and every
 * listed variant's. */
static void check_shape(int64_t m, int64_t n, int64_t k, int sms, int pdl) {
  bf16fp32__smallm_config def, c;
  char text[BF16FP32__VARIANT_LEN], back[BF16FP32__VARIANT_LEN];
  char names[8][BF16FP32__VARIANT_LEN];
  if (bf16fp32__smallm_choose_for(m, n, k, sms, pdl, H200_SMEM, &def) != 0) {
    EXPECT(0, "no default for m=%lld n=%lld k=%lld", (long long)m, (long long)n, (long long)k);
    return;
  }
  EXPECT(bf16fp32__smallm_variant_of(&def, text) == 0, "m=%lld n=%lld: no variant", (long long)m,
         (long long)n);
  EXPECT(bf16fp32__smallm_apply_variant(&c, text, m, n, k, sms, H200_SMEM) == 0 &&
             same_config(&c, &def),
         "m=%lld n=%lld k=%lld pdl=%d: %s does not give the default back", (long long)m,
         (long long)n, (long long)k, pdl, text);
  const int count = bf16fp32__smallm_list_variants(m, n, k, sms, pdl, H200_SMEM, names, 7);
  offered += count;
  for (int i = 0; i < count; i++) {
    const char *v = names[i];
    EXPECT(strcmp(v, text) != 0, "m=%lld n=%lld: the default %s listed", (long long)m, (long long)n, v);
    for (int j = 0; j < i; j++) EXPECT(strcmp(v, names[j]) != 0, "listed twice: %s", v);
    const int ok = bf16fp32__smallm_apply_variant(&c, v, m, n, k, sms, H200_SMEM) == 0;
    EXPECT(ok, "m=%lld n=%lld k=%lld pdl=%d: %s does not apply", (long long)m, (long long)n,
           (long long)k, pdl, v);
    if (!ok) continue;
    applied_kinds[v[0] - '0']++;
    EXPECT(bf16fp32__smallm_variant_of(&c, back) == 0 && strcmp(back, v) == 0,
           "%s names itself %s", v, back);
    EXPECT(memcmp(&c.split, &def.split, sizeof c.split) == 0, "%s changes the split", v);
    EXPECT(c.smem_bytes <= H200_SMEM && c.stream_smem <= H200_SMEM && c.share_smem <= H200_SMEM &&
               c.wide_smem <= H200_SMEM && c.fold_smem <= H200_SMEM,
           "%s does not fit", v);
  }
}

static void test_dsv4(void) {
  for (int i = 0; i < 9; i++)
    for (int64_t m = 1; m <= 256; m++)
      for (int pdl = 0; pdl < 2; pdl++) check_shape(m, dsv4[i][0], dsv4[i][1], H200_SMS, pdl);
  /* the kinds of variant all occur, and the tables' other launch kind is among them */
  CHECK(applied_kinds[0] > 0 && applied_kinds[1] > 0 && applied_kinds[2] > 0 &&
        applied_kinds[3] > 0 && applied_kinds[4] > 0);
  char names[7][BF16FP32__VARIANT_LEN];
  bf16fp32__smallm_config plain;
  char text[BF16FP32__VARIANT_LEN];
  /* 1024x4096 M = 1: under PDL the share kernel, plainly the stream kernel */
  CHECK(bf16fp32__smallm_choose_for(1, 1024, 4096, H200_SMS, 0, H200_SMEM, &plain) == 0 &&
        bf16fp32__smallm_variant_of(&plain, text) == 0);
  const int count = bf16fp32__smallm_list_variants(1, 1024, 4096, H200_SMS, 1, H200_SMEM, names, 7);
  CHECK(count > 0 && strcmp(names[0], text) == 0);
  /* a smaller max lists a prefix */
  char few[2][BF16FP32__VARIANT_LEN];
  CHECK(bf16fp32__smallm_list_variants(1, 1024, 4096, H200_SMS, 1, H200_SMEM, few, 2) == 2 &&
        strcmp(few[0], names[0]) == 0 && strcmp(few[1], names[1]) == 0);
  CHECK(bf16fp32__smallm_list_variants(1, 1024, 4096, H200_SMS, 1, H200_SMEM, few, 0) == 0);
}

/* On GPUs the tables were not measured on, the variants still offer the stream and share
 * kernels, and odd shapes get theirs. */
static void test_other(void) {
  char names[7][BF16FP32__VARIANT_LEN];
  const int before = applied_kinds[1] + applied_kinds[2];
  for (int64_t m = 1; m <= 64; m += 7) {
    check_shape(m, 1024, 7168, 114, 1);
    check_shape(m, 256, 4096, 78, 0);
    check_shape(m, 528, 1032, 132, 1);
  }
  CHECK(applied_kinds[1] + applied_kinds[2] > before);
  CHECK(bf16fp32__smallm_list_variants(4, 1024, 7168, 114, 1, H200_SMEM, names, 7) >= 3);
  check_shape(200, 528, 1032, 132, 0);
  /* the generic table's defaults (132 SMs, shapes the tables do not name) name themselves: the
   * fold, the share kernel's forms, the stream kernel's, the chooser's kernel between them */
  static const int generic[][2] = {{896, 1544},  {1280, 2056}, {768, 3072},  {2048, 2560},
                                   {256, 2048},  {3072, 5120}, {1536, 6144}, {2560, 2560}};
  for (size_t i = 0; i < sizeof generic / sizeof generic[0]; i++)
    for (int64_t m = 1; m <= 40; m++)
      for (int pdl = 0; pdl < 2; pdl++) check_shape(m, generic[i][0], generic[i][1], H200_SMS, pdl);
  bf16fp32__smallm_config c;
  char text[BF16FP32__VARIANT_LEN];
  CHECK(bf16fp32__smallm_choose_for(8, 896, 1544, H200_SMS, 0, H200_SMEM, &c) == 0 &&
        bf16fp32__smallm_variant_of(&c, text) == 0 && strcmp(text, "4") == 0);
  CHECK(bf16fp32__smallm_choose_for(16, 896, 1544, H200_SMS, 0, H200_SMEM, &c) == 0 &&
        bf16fp32__smallm_variant_of(&c, text) == 0 && strcmp(text, "2.1.0.0.0.2") == 0);
  CHECK(bf16fp32__smallm_choose_for(24, 1280, 2056, H200_SMS, 1, H200_SMEM, &c) == 0 &&
        bf16fp32__smallm_variant_of(&c, text) == 0 && strcmp(text, "2.0.0.0.0.2") == 0);
  CHECK(bf16fp32__smallm_choose_for(4, 3072, 5120, H200_SMS, 1, H200_SMEM, &c) == 0 &&
        bf16fp32__smallm_variant_of(&c, text) == 0 && strcmp(text, "1.5.3.1.0.0") == 0);
  CHECK(bf16fp32__smallm_list_variants(4, 200, 4096, H200_SMS, 0, H200_SMEM, names, 7) == 0);
}

static int listed(char (*names)[BF16FP32__VARIANT_LEN], int count, const char *v) {
  for (int i = 0; i < count; i++)
    if (strcmp(names[i], v) == 0) return 1;
  return 0;
}

/* With room for all of them, the list holds every form its header names that applies to the
 * shape and is not the default: the share kernel with x's rows and with x in registers, over one
 * and over two row blocks, and the fold kernel, up to M = 64; the chooser's own kernel at every
 * M. */
static void test_listed(void) {
  static const char *const forms[] = {"2.0.0.0.0.1", "2.0.0.0.0.2", "2.1.0.0.0.1", "2.1.0.0.0.2",
                                      "4", "0"};
  static const int64_t ms[] = {1, 4, 8, 9, 16, 17, 64, 65, 256};
  char names[32][BF16FP32__VARIANT_LEN], def[BF16FP32__VARIANT_LEN];
  int missing = 0, applied = 0;
  for (int i = 0; i < 9; i++)
    for (size_t j = 0; j < sizeof ms / sizeof ms[0]; j++)
      for (int pdl = 0; pdl < 2; pdl++) {
        const int64_t m = ms[j], n = dsv4[i][0], k = dsv4[i][1];
        bf16fp32__smallm_config c;
        CHECK(bf16fp32__smallm_choose_for(m, n, k, H200_SMS, pdl, H200_SMEM, &c) == 0 &&
              bf16fp32__smallm_variant_of(&c, def) == 0);
        const int count = bf16fp32__smallm_list_variants(m, n, k, H200_SMS, pdl, H200_SMEM, names, 32);
        CHECK(count < 32);
        for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
          if (strcmp(forms[f], def) == 0 ||
              bf16fp32__smallm_apply_variant(&c, forms[f], m, n, k, H200_SMS, H200_SMEM) != 0)
            continue;
          applied++;
          if (!listed(names, count, forms[f]) && ++missing <= 10)
            fprintf(stderr, "%lldx%lld M = %lld pdl %d: %s not listed\n", (long long)n,
                    (long long)k, (long long)m, pdl, forms[f]);
        }
      }
  EXPECT(missing == 0 && applied > 0, "%d forms not listed (%d apply)", missing, applied);
}

static void test_refused(void) {
  static const char *const bad[] = {"", "x", "-1", "1..2", "0.0", "4", "1.7.2", "1.7.2.1.0.0.0",
                                    "1.9.2.1.0.0", "1.7.2.1.0.2", "1.7.9.1.0.0", "1.7.2.3.0.0",
                                    "1.7.2.2.0.0", "2.0.0.9.0.1", "2.0.0.0.0.3", "2.0.3.0.0.1",
                                    "3.1.3.1.1", "99999999999.1", "1.1.3.1.0.0.5",
                                    /* aliases of applicable variants: one text per staging */
                                    "01.7.2.1.0.0", "1.07.2.1.0.0", "1.7.2.1.00.0"};
  bf16fp32__smallm_config c, was;
  CHECK(bf16fp32__smallm_choose_for(5, 2048, 7168, H200_SMS, 0, H200_SMEM, &c) == 0);
  was = c;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    EXPECT(bf16fp32__smallm_apply_variant(&c, bad[i], 5, 2048, 7168, H200_SMS, H200_SMEM) != 0,
           "'%s' applied", bad[i]);
    EXPECT(same_config(&c, &was), "'%s' changed the configuration", bad[i]);
  }
  CHECK(bf16fp32__smallm_apply_variant(&c, NULL, 5, 2048, 7168, H200_SMS, H200_SMEM) != 0);
  /* what applies at one M does not at another: x in registers above M = 16, the token blocks
   * at M <= 64, stages that do not fit beside 64 tokens */
  CHECK(bf16fp32__smallm_apply_variant(&c, "2.1.0.0.0.1", 8, 1024, 4096, H200_SMS, H200_SMEM) == 0);
  CHECK(bf16fp32__smallm_apply_variant(&c, "2.1.0.0.0.1", 20, 1024, 4096, H200_SMS, H200_SMEM) != 0);
  CHECK(bf16fp32__smallm_apply_variant(&c, "2.2.0.0.0.1", 8, 1024, 4096, H200_SMS, H200_SMEM) != 0);
  CHECK(bf16fp32__smallm_apply_variant(&c, "3.1.3.1.0", 100, 1024, 4096, H200_SMS, H200_SMEM) == 0 &&
        c.stream_tblocks == 2);
  CHECK(bf16fp32__smallm_apply_variant(&c, "3.1.3.1.0", 64, 1024, 4096, H200_SMS, H200_SMEM) != 0);
  CHECK(bf16fp32__smallm_apply_variant(&c, "1.7.3.1.0.0", 64, 2048, 7168, H200_SMS, H200_SMEM) != 0);
  /* the fold: M <= 8, 16 or 32 chains of at most 8 sub-chunks (512x4096 yes; 2048x7168 has 8
   * chains, 512x7168 chains of 14) */
  CHECK(bf16fp32__smallm_apply_variant(&c, "4", 8, 512, 4096, H200_SMS, H200_SMEM) == 0 && c.fold);
  CHECK(bf16fp32__smallm_apply_variant(&c, "4", 9, 512, 4096, H200_SMS, H200_SMEM) != 0);
  CHECK(bf16fp32__smallm_apply_variant(&c, "4", 1, 512, 7168, H200_SMS, H200_SMEM) != 0);
  CHECK(bf16fp32__smallm_apply_variant(&c, "4.0", 1, 512, 4096, H200_SMS, H200_SMEM) != 0);
  /* a shape the kernel does not handle */
  CHECK(bf16fp32__smallm_apply_variant(&c, "0", 4, 200, 4096, H200_SMS, H200_SMEM) != 0);
  /* a configuration set up by hand that no variant names: the stream kernel with its weight
   * boxes also requested into L2 (smallm-probe's; no table sets it) */
  char text[BF16FP32__VARIANT_LEN];
  CHECK(bf16fp32__smallm_choose(4, 1024, 7168, H200_SMS, H200_SMEM, &c) == 0 &&
        bf16fp32__smallm_use_stream(&c, 4, 5, 2, 1, H200_SMEM) == 0 &&
        bf16fp32__smallm_variant_of(&c, text) == 0);
  c.stream_wl2 = 1;
  CHECK(bf16fp32__smallm_variant_of(&c, text) != 0);
}

/* Paired launches: a seventh field 1 marks a stream staging with a ring per warp and up to 16
 * tokens; its text comes back; groups and more token tiles refuse it; its calls alternate the
 * two footprints under PDL and run as they are plainly or where no pair fits. */
static void test_pair(void) {
  bf16fp32__smallm_config c, t;
  char back[BF16FP32__VARIANT_LEN];
  CHECK(bf16fp32__smallm_apply_variant(&c, "1.5.2.1.0.0.1", 4, 1024, 7168, H200_SMS, H200_SMEM) ==
            0 &&
        c.stream_pair && bf16fp32__smallm_variant_of(&c, back) == 0 &&
        strcmp(back, "1.5.2.1.0.0.1") == 0);
  CHECK(bf16fp32__smallm_apply_variant(&t, "1.3.3.2.1.0.1", 24, 2048, 7168, H200_SMS,
                                       H200_SMEM) != 0);
  CHECK(bf16fp32__smallm_apply_variant(&t, "1.3.2.1.0.0.1", 24, 1024, 7168, H200_SMS,
                                       H200_SMEM) != 0);
  CHECK(bf16fp32__smallm_apply_variant(&t, "1.3.2.1.0.0", 24, 1024, 7168, H200_SMS, H200_SMEM) ==
        0);
  const bf16fp32__smallm_pair h200 = {{416, 384}, 115840, 115584}, none = {{0, 0}, 0, 0},
                              small = {{416, 384}, 115840, 100000};
  t = c;
  bf16fp32__smallm_pair_footprint(&t, &h200, 1, 0);
  CHECK(t.stream_pair && t.stream_smem == 115840 && t.threads == BF16FP32__SMALLM_THREADS);
  t = c;
  bf16fp32__smallm_pair_footprint(&t, &h200, 1, 7);
  CHECK(t.stream_pair && t.stream_smem == c.stream_smem && t.threads == 416);
  /* consecutive calls alternate the two footprints: odd calls the extra warps, even ones the
   * shared memory */
  for (unsigned call = 1; call <= 6; call++) {
    t = c;
    bf16fp32__smallm_pair_footprint(&t, &h200, 1, call);
    EXPECT(call % 2 ? t.threads == 416 && t.stream_smem == c.stream_smem
                    : t.threads == BF16FP32__SMALLM_THREADS && t.stream_smem == h200.smem,
           "call %u: %d threads, %zu bytes", call, t.threads, t.stream_smem);
  }
  /* a configuration of the most a pair may take is paired; one of more is not */
  t = c;
  t.stream_smem = h200.max_smem;
  bf16fp32__smallm_pair_footprint(&t, &h200, 1, 2);
  CHECK(t.stream_smem == h200.smem);
  t = c;
  t.stream_smem = h200.max_smem + 16;
  bf16fp32__smallm_pair_footprint(&t, &h200, 1, 2);
  CHECK(t.stream_smem == h200.max_smem + 16);
  t = c;
  bf16fp32__smallm_pair_footprint(&t, &h200, 0, 1);
  CHECK(!t.stream_pair && t.stream_smem == c.stream_smem && t.threads == c.threads);
  t = c;
  bf16fp32__smallm_pair_footprint(&t, &none, 1, 1);
  CHECK(same_config(&t, &c));
  t = c;
  bf16fp32__smallm_pair_footprint(&t, &small, 1, 1);
  CHECK(same_config(&t, &c));
}

int main(void) {
  test_dsv4();
  test_other();
  test_listed();
  test_refused();
  test_pair();
  printf("%d variants offered\n", offered);
  return testing_summary("test-smallm-variant");
}
