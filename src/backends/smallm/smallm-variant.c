/* smallm's variants: configurations to and from text, and the ones worth timing
 * (smallm-variant.h). Pure C, like smallm-config.c. */
#include <string.h>

#include "smallm-variant.h"
#include "variant.h"

enum { CHOSEN = 0, STREAM = 1, SHARE = 2, TOKENS = 3, FOLD = 4 };

int bf16fp32__smallm_variant_of(const bf16fp32__smallm_config *c, char out[BF16FP32__VARIANT_LEN]) {
  int64_t f[7] = {CHOSEN};
  int count = 1;
  if (c->stream && c->stream_wl2) return -1;
  if (c->stream && c->stream_tblocks > 1) {
    const int64_t v[] = {TOKENS, c->stream_subs, c->stream_stages, c->stream_groups, c->stream_over};
    memcpy(f, v, sizeof v), count = 5;
  } else if (c->stream) {
    const int64_t v[] = {STREAM, c->stream_subs, c->stream_stages, c->stream_groups,
                         c->stream_over, c->stream_early, 1};
    memcpy(f, v, sizeof v), count = c->stream_pair ? 7 : 6; /* the pair field only when set */
  } else if (c->fold) {
    f[0] = FOLD;
  } else if (c->share) {
    const int64_t v[] = {SHARE, c->share_xreg, c->share_wpre, c->share_late, c->share_late_l2,
                         c->share_tiles};
    memcpy(f, v, sizeof v), count = 6;
  }
  return bf16fp32__variant_format(f, count, out);
}

/* Each field a small int (the setters check the ranges that matter). */
static int small(int64_t v) { return v >= 0 && v <= 64; }

int bf16fp32__smallm_apply_variant(bf16fp32__smallm_config *c, const char *text, int64_t m,
                                   int64_t n, int64_t k, int sm_count, size_t smem_limit) {
  int64_t f[BF16FP32__VARIANT_FIELDS];
  bf16fp32__smallm_config t;
  const int count = bf16fp32__variant_parse(text, f);
  if (count < 1) return -1;
  for (int i = 0; i < count; i++)
    if (!small(f[i])) return -1;
  if (bf16fp32__smallm_choose(m, n, k, sm_count, smem_limit, &t) != 0) return -1;
  int ok;
  switch (f[0]) {
  case CHOSEN:
    ok = count == 1;
    break;
  case STREAM:
    ok = (count == 6 || (count == 7 && f[6] == 1)) && f[5] <= 1 &&
         bf16fp32__smallm_use_stream_at(&t, m, (int)f[1], (int)f[2], (int)f[3], (int)f[4],
                                        smem_limit) == 0;
    if (ok) t.stream_early = (int)f[5];
    if (ok && count == 6) bf16fp32__smallm_one_per_sm(&t, sm_count, smem_limit);
    /* paired launches apply under PDL only, where the variants are timed as the launches run */
    if (ok && count == 7) ok = bf16fp32__smallm_stream_pair(&t, 1) == 0;
    break;
  case SHARE:
    ok = count == 6 &&
         bf16fp32__smallm_use_share(&t, m, n, k, (int)f[1], (int)f[2], smem_limit) == 0 &&
         bf16fp32__smallm_share_late(&t, (int)f[3], (int)f[4]) == 0 &&
         bf16fp32__smallm_share_tiles(&t, m, (int)f[5], smem_limit) == 0;
    if (ok) bf16fp32__smallm_one_per_sm(&t, sm_count, smem_limit);
    break;
  case FOLD:
    ok = count == 1 && bf16fp32__smallm_use_fold(&t, m, n, k, smem_limit) == 0;
    break;
  case TOKENS:
    ok = count == 5 && bf16fp32__smallm_use_stream_tokens_at(&t, m, n, k, (int)f[1], (int)f[2],
                                                             (int)f[3], (int)f[4], smem_limit) == 0;
    break;
  default:
    ok = 0;
  }
  /* One text per configuration: an alias (a flag written 2, a leading zero) is refused. */
  char back[BF16FP32__VARIANT_LEN];
  if (!ok || bf16fp32__smallm_variant_of(&t, back) != 0 || strcmp(back, text) != 0) return -1;
  *c = t;
  return 0;
}

typedef struct listing {
  char (*names)[BF16FP32__VARIANT_LEN];
  int count, max;
  char skip[BF16FP32__VARIANT_LEN]; /* the default's */
} listing;

/* Appends c's variant unless it is the default's or already listed. */
static void offer(listing *l, const bf16fp32__smallm_config *c) {
  char v[BF16FP32__VARIANT_LEN];
  if (l->count >= l->max || bf16fp32__smallm_variant_of(c, v) != 0 || strcmp(v, l->skip) == 0)
    return;
  for (int i = 0; i < l->count; i++)
    if (strcmp(l->names[i], v) == 0) return;
  memcpy(l->names[l->count++], v, sizeof v);
}

/* Stream stagings worth timing (subs, stages, groups), in order: the larger stages fit only at
 * small M, so each M gets the largest that fit first (the tables' winners on the H200 are among
 * them: docs/smallm-notes.md). Each is fitted with fewer stages where it needs to. */
static const int stream_grid[][3] = {{7, 2, 1}, {5, 3, 1}, {5, 2, 1}, {3, 3, 1}, {3, 2, 1},
                                     {1, 3, 1}, {1, 4, 1}, {3, 3, 2}, {1, 3, 2}};
static const int tokens_grid[][3] = {{1, 3, 1}, {1, 3, 2}, {3, 3, 2}, {1, 4, 1}};

int bf16fp32__smallm_list_variants(int64_t m, int64_t n, int64_t k, int sm_count, int use_pdl,
                                   size_t smem_limit, char (*names)[BF16FP32__VARIANT_LEN], int max) {
  bf16fp32__smallm_config chosen, t;
  listing l = {names, 0, max, ""};
  if (max <= 0 || bf16fp32__smallm_choose(m, n, k, sm_count, smem_limit, &chosen) != 0) return 0;
  if (bf16fp32__smallm_choose_for(m, n, k, sm_count, use_pdl, smem_limit, &t) != 0 ||
      bf16fp32__smallm_variant_of(&t, l.skip) != 0)
    l.skip[0] = '\0';
  if (bf16fp32__smallm_choose_for(m, n, k, sm_count, !use_pdl, smem_limit, &t) == 0) offer(&l, &t);
  if (m <= BF16FP32__SMALLM_DECODE_MAX_M) {
    /* the share kernel with x's rows, then with x in registers (M <= 16) */
    for (int xreg = 0; xreg <= 1; xreg++)
      for (int tiles = 1; tiles <= 2; tiles++) {
        t = chosen;
        if (bf16fp32__smallm_use_share(&t, m, n, k, xreg, 0, smem_limit) == 0 &&
            bf16fp32__smallm_share_tiles(&t, m, tiles, smem_limit) == 0)
          offer(&l, &t);
      }
    t = chosen; /* the fold kernel (M <= 8) */
    if (bf16fp32__smallm_use_fold(&t, m, n, k, smem_limit) == 0) offer(&l, &t);
    for (size_t i = 0; i < sizeof stream_grid / sizeof stream_grid[0]; i++) {
      t = chosen;
      if (bf16fp32__smallm_use_stream(&t, m, stream_grid[i][0], stream_grid[i][1],
                                      stream_grid[i][2], smem_limit) == 0)
        offer(&l, &t);
    }
  } else {
    for (size_t i = 0; i < sizeof tokens_grid / sizeof tokens_grid[0]; i++) {
      t = chosen;
      if (bf16fp32__smallm_use_stream_tokens(&t, m, n, k, tokens_grid[i][0], tokens_grid[i][1],
                                             tokens_grid[i][2], smem_limit) == 0)
        offer(&l, &t);
    }
  }
  offer(&l, &chosen);
  return l.count;
}
