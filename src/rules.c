/* Built-in rules: per device family, which backend auto tries first for a shape range. Data,
 * not branches; measured tuning results (tune files) override them. First match wins. */
#include <stdio.h>
#include <string.h>

#include "context.h"

typedef struct rule {
  const char *family; /* "sm_90", "cuda" (any other GPU), "cpu" */
  int64_t m_max, n_max, k_max;
  const char *backend;
  const char *why;
} rule;

#define ANY INT64_MAX

/* sm_90 entries follow the H200 benchmark (docs/bench-h200.txt): smallm where it beat cuBLAS
 * in the same run (at M <= 4: 0.996-1.49x on all nine DSV4 shapes), cuBLAS elsewhere. */
static const rule rules[] = {
    {"sm_90", 4, ANY, ANY, "smallm", "M <= 4: smallm on par with cuBLAS or faster"},
    {"sm_90", 16, 384, ANY, "smallm", "decode-sized M, narrow weights: smallm beats cuBLAS here"},
    {"sm_90", 16, 1024, 4096, "smallm", "decode-sized M, narrow weights: smallm beats cuBLAS here"},
    {"sm_90", ANY, ANY, ANY, "cublas", "cuBLAS: faster than smallm at this size on the H200"},
    {"cuda", ANY, ANY, ANY, "cublas", "GPU without a tuned kernel: cuBLAS"},
    {"cpu", ANY, ANY, ANY, "cpu-simd", "host call: SIMD bf16 dot products"},
};

int bf16fp32__rule_choice(const char *family, const bf16fp32__shape *s, char *why, size_t why_len) {
  const char *fam = s->where == BF16FP32_HOST ? "cpu" : family;
  for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
    const rule *r = &rules[i];
    if (strcmp(r->family, fam) != 0 || s->m > r->m_max || s->n > r->n_max || s->k > r->k_max)
      continue;
    int b = bf16fp32__registry_find(r->backend);
    if (b < 0) continue;
    if (why) snprintf(why, why_len, "rule %s #%zu: %s", r->family, i, r->why);
    return b;
  }
  return -1;
}
