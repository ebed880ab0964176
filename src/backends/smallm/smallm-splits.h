/* The splits measured for the DeepSeek-V4 shapes on 132 SMs: pure data, read by smallm's
 * configuration (smallm-config.c) and by the built-in rules (rules.c), which give smallm these
 * shapes on such GPUs. Built in every configuration, CUDA or not. */
#ifndef BF16FP32_SMALLM_SPLITS_H
#define BF16FP32_SMALLM_SPLITS_H

#include <stddef.h>
#include <stdint.h>

#define BF16FP32__SMALLM_TUNED_SMS 132

typedef struct bf16fp32__smallm_tuned_split {
  int n, k, rows, ksplit, decode_mask;
} bf16fp32__smallm_tuned_split;

/* Splits measured fastest on an H200 (132 SMs) for the DeepSeek-V4 shapes, weighing M <= 64
 * first and M = 256 next, and the token tilings (bit b: mt = 2^b) where the decode kernel beat
 * the tiled one (bench/smallm-probe.cu split sweep, 2026-11-30; docs/smallm-notes.md). At
 * N = 2048, 16 / 1 (session 7): 2-9 % faster than 32 / 2 at M <= 16 and within 2 % at 32-64,
 * but 25-45 % slower above M = 64, where cuBLAS is faster than either. At 512 x K, 32 / 4
 * (session 20, smallm-probe --split-stream, then each M's kernel re-measured): 64 blocks in
 * clusters of 4 instead of 128 in clusters of 8 took 0.80-0.99x the time at M <= 64 in plain
 * launches and 0.77-1.02x under PDL, 0.86-0.93x at M = 256, but 1.14-1.23x at M = 128.
 * Every split sums in its own fixed order; which one a shape uses must not depend on M. */
static const bf16fp32__smallm_tuned_split bf16fp32__smallm_tuned_132[] = {
    {256, 4096, 32, 8, 0x0},  {512, 4096, 32, 4, 0x1},  {1024, 4096, 16, 2, 0xf},
    {2048, 4096, 16, 1, 0xf}, {256, 7168, 32, 8, 0x1},  {384, 7168, 32, 8, 0xb},
    {512, 7168, 32, 4, 0xf},  {1024, 7168, 16, 2, 0xf}, {2048, 7168, 16, 1, 0xf},
};

/* The measured split of (n, k) on a GPU of sm_count SMs, or NULL where none was measured. */
static inline const bf16fp32__smallm_tuned_split *bf16fp32__smallm_tuned_for(int64_t n, int64_t k,
                                                                             int sm_count) {
  const size_t count = sizeof bf16fp32__smallm_tuned_132 / sizeof bf16fp32__smallm_tuned_132[0];
  if (sm_count != BF16FP32__SMALLM_TUNED_SMS) return NULL;
  for (size_t i = 0; i < count; i++)
    if (bf16fp32__smallm_tuned_132[i].n == n && bf16fp32__smallm_tuned_132[i].k == k)
      return &bf16fp32__smallm_tuned_132[i];
  return NULL;
}

#endif
