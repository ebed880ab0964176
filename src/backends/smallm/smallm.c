/* smallm: the decode-size GEMM kernel for sm_90 (M <= 256), batch-invariant and deterministic.
 * Host glue: probe loads the module (so no call, captured or not, loads or allocates), run picks
 * the launch configuration (smallm-config.c, or a tuned variant: smallm-variant.c) and launches
 * one of the six kernels (decode, stream, share, tiled, wide, wgmma: smallm-decode.cu,
 * smallm-stream.cu, smallm-share.cu, smallm-kernel.cu, smallm-wide.cu, smallm-wgmma-sm90a.cu),
 * which sum alike. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda-check.h"
#include "smallm-config.h"
#include "smallm-launch.h"
#include "smallm-variant.h"

typedef struct smallm_state {
  int device;
  int sm_count;
  size_t smem_limit; /* per-block opt-in shared memory */
  int use_pdl;
  bf16fp32__smallm_pair pair; /* paired launches' footprints on this device */
  atomic_uint pair_calls;     /* paired calls so far: their parity picks the footprint */
} smallm_state;

static bf16fp32_status smallm_probe(const bf16fp32__config *cfg, void **state, char *why,
                                    size_t why_len) {
  bf16fp32_status st = BF16FP32_OK;
  bf16fp32__device_info info;
  smallm_state *s = NULL;
  int e;
  *state = NULL;
  if (why_len > 0) why[0] = '\0';
  if (cfg->device < 0) {
    snprintf(why, why_len, "no CUDA device");
    return BF16FP32_NO_DEVICE;
  }
  BF16FP32__TRY(bf16fp32__device_query(cfg->device, &info));
  if (info.cc_major != 9) {
    /* Built for sm_90 only: clusters, bulk copies and griddepcontrol, with Hopper's tiling. */
    snprintf(why, why_len, "needs compute capability 9.x (sm_90); this device is %d.%d",
             info.cc_major, info.cc_minor);
    return BF16FP32_BACKEND_UNAVAILABLE;
  }
  e = bf16fp32__smallm_load(info.smem_optin_per_block);
  if (e != 0) {
    st = bf16fp32__cuda_status((cudaError_t)e, "bf16fp32__smallm_load", __FILE__, __LINE__);
    snprintf(why, why_len, "kernel module load failed: %s", cudaGetErrorName((cudaError_t)e));
    goto cleanup;
  }
  s = calloc(1, sizeof *s);
  if (!s) return bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "smallm state");
  s->device = cfg->device;
  s->sm_count = info.sm_count;
  s->smem_limit = info.smem_optin_per_block;
  s->use_pdl = cfg->use_pdl != 0;
  e = bf16fp32__smallm_stream_pair_fit(cfg->device, s->smem_limit, &s->pair);
  if (e != 0) {
    free(s);
    st = bf16fp32__cuda_status((cudaError_t)e, "bf16fp32__smallm_stream_pair_fit", __FILE__,
                               __LINE__);
    snprintf(why, why_len, "kernel attributes query failed: %s", cudaGetErrorName((cudaError_t)e));
    goto cleanup;
  }
  atomic_init(&s->pair_calls, 0u);
  *state = s;
cleanup:
  if (st != BF16FP32_OK && why[0] == '\0') snprintf(why, why_len, "%s", bf16fp32_last_error());
  return st;
}

static bool smallm_supports(const void *state, const bf16fp32__shape *sh) {
  const smallm_state *s = state;
  bf16fp32__smallm_config c;
  if (!s || sh->where != BF16FP32_DEVICE) return false;
  if (!bf16fp32__smallm_shape_ok(sh->m, sh->n, sh->k, sh->ldx, sh->ldw, sh->ldo, sh->align))
    return false;
  return bf16fp32__smallm_choose(sh->m, sh->n, sh->k, s->sm_count, s->smem_limit, &c) == 0;
}

static bf16fp32_status smallm_prewarm(void *state, const bf16fp32__shape *sh, const char *variant,
                                      void *stream) {
  (void)variant; /* a variant is a configuration, chosen at run as the default is */
  /* Nothing is lazy: the module was loaded at probe and a launch allocates nothing. */
  (void)stream;
  return smallm_supports(state, sh) ? BF16FP32_OK : BF16FP32_DECLINED;
}

static bf16fp32_status smallm_run(void *state, const bf16fp32__call *call) {
  smallm_state *s = state;
  const bf16fp32__shape *sh = &call->shape;
  bf16fp32__smallm_config c;
  int e;
  if (!bf16fp32__smallm_shape_ok(sh->m, sh->n, sh->k, sh->ldx, sh->ldw, sh->ldo, sh->align))
    return BF16FP32_DECLINED;
  /* A tuned variant (smallm-variant.h) where it applies here, else the tables' choice. */
  const bool tuned = call->variant && call->variant[0] &&
                     bf16fp32__smallm_apply_variant(&c, call->variant, sh->m, sh->n, sh->k,
                                                    s->sm_count, s->smem_limit) == 0;
  if (!tuned && bf16fp32__smallm_choose_for(sh->m, sh->n, sh->k, s->sm_count, s->use_pdl,
                                            s->smem_limit, &c) != 0)
    return BF16FP32_DECLINED;
  if (c.stream_pair)
    bf16fp32__smallm_pair_footprint(&c, &s->pair, s->use_pdl,
                                    atomic_fetch_add(&s->pair_calls, 1u));
  e = bf16fp32__smallm_launch(&c, sh->m, sh->n, sh->k, call->x, sh->ldx, call->w, sh->ldw,
                              call->out, sh->ldo, call->stream, s->use_pdl);
  if (e != 0)
    return bf16fp32__cuda_status((cudaError_t)e, "smallm launch", __FILE__, __LINE__);
  return BF16FP32_OK;
}

static void smallm_reset(void *state) { free(state); }

static int smallm_variants(void *state, const bf16fp32__shape *sh,
                           char (*names)[BF16FP32__VARIANT_LEN], int max) {
  const smallm_state *s = state;
  if (!smallm_supports(state, sh)) return 0;
  return bf16fp32__smallm_list_variants(sh->m, sh->n, sh->k, s->sm_count, s->use_pdl,
                                        s->smem_limit, names, max);
}

const bf16fp32__backend bf16fp32__backend_smallm = {
    .name = "smallm",
    .where = BF16FP32_DEVICE,
    .probe = smallm_probe,
    .supports = smallm_supports,
    .prewarm = smallm_prewarm,
    .run = smallm_run,
    .reset = smallm_reset,
    .variants = smallm_variants,
};
