/* smallm's variants (variant.h): one staging of the kernels for a shape, as text, so that the
 * tuners can time stagings other than the built-in tables' (smallm-config.c) and a tuning file
 * can name one, e.g. where the decode step and a shape alone disagree, or on a GPU the tables
 * were not measured on. A variant keeps the shape's split, so every variant sums alike: it
 * changes a call's time, never its bits (batch invariance holds whatever the variants).
 *   0                                the chooser's kernel (decode, tiled or wide), no table
 *   1.subs.stages.groups.over.early  the stream kernel, M <= 64 (bf16fp32__smallm_use_stream_at,
 *                                    early: c->stream_early); a seventh field 1: paired launches
 *                                    under PDL (bf16fp32__smallm_stream_pair)
 *   2.xreg.wpre.late.l2.tiles        the share kernel, M <= 64 (bf16fp32__smallm_use_share,
 *                                    _share_late, _share_tiles)
 *   3.subs.stages.groups.over        the stream kernel in blocks of 64 tokens, M > 64
 *                                    (bf16fp32__smallm_use_stream_tokens_at)
 *   4                                the fold kernel, M <= 8 (bf16fp32__smallm_use_fold) */
#ifndef BF16FP32_SMALLM_VARIANT_H
#define BF16FP32_SMALLM_VARIANT_H

#include "internal.h"
#include "smallm-config.h"

/* The variant of c, a configuration as bf16fp32__smallm_choose_for or
 * bf16fp32__smallm_apply_variant give it. Returns 0, or -1 for a configuration no variant
 * names (one set up by hand for a probe). */
int bf16fp32__smallm_variant_of(const bf16fp32__smallm_config *c, char out[BF16FP32__VARIANT_LEN]);

/* The configuration variant `text` names for (m, n, k) into *c. Returns 0, or -1 (c unchanged)
 * when the text is not a smallm variant as bf16fp32__smallm_variant_of writes it, or does not
 * apply to or fit this shape. */
int bf16fp32__smallm_apply_variant(bf16fp32__smallm_config *c, const char *text, int64_t m,
                                   int64_t n, int64_t k, int sm_count, size_t smem_limit);

/* Up to max variants worth timing for (m, n, k) besides the default of the launch kind
 * (use_pdl): the other launch kind's default, the share kernel (x's rows, then x in registers;
 * one and two row blocks each), the fold kernel, a grid of stream stagings, then the chooser's
 * kernel; each distinct and applicable. Returns how many. */
int bf16fp32__smallm_list_variants(int64_t m, int64_t n, int64_t k, int sm_count, int use_pdl,
                                   size_t smem_limit, char (*names)[BF16FP32__VARIANT_LEN], int max);

#endif
