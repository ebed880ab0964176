/* The built-in rules: which backend each device family (and SM count) gets first for a shape
 * range, and why (the sm_90 ranges follow the H100 and H200 benchmarks named in src/rules.c). */
#include <string.h>

#include "context.h"
#include "testing.h"

static const char *rule_for(const char *family, int sms, int where, int64_t m, int64_t n,
                            int64_t k) {
  bf16fp32__shape s;
  memset(&s, 0, sizeof s);
  s.where = where, s.m = m, s.n = n, s.k = k, s.ldx = k, s.ldw = k, s.ldo = n;
  char why[256] = "";
  int b = bf16fp32__rule_choice(family, sms, &s, why, sizeof why);
  EXPECT(b < 0 || strstr(why, family) || where == BF16FP32_HOST, "why names the family: %s", why);
  return b < 0 ? "" : bf16fp32__registry[b].name;
}

int main(void) {
  const int dev = BF16FP32_DEVICE;
  /* Narrow weights: smallm up to M = 64 (router shapes of several sizes measured), then cuBLAS. */
  EXPECT(strcmp(rule_for("sm_90", 132, dev, 64, 128, 4096), "smallm") == 0, "128x4096 M = 64");
  EXPECT(strcmp(rule_for("sm_90", 132, dev, 33, 384, 7168), "smallm") == 0, "384x7168 M = 33");
  EXPECT(strcmp(rule_for("sm_90", 132, dev, 65, 128, 4096), "cublas") == 0, "128x4096 M = 65");
  /* The DSV4 shapes on 132 SMs: smallm up to M = 32, cuBLAS above; not at another SM count or
   * at a shape between them (1536x7168 runs an untuned split). */
  EXPECT(strcmp(rule_for("sm_90", 132, dev, 32, 512, 7168), "smallm") == 0, "512x7168 M = 32");
  EXPECT(strcmp(rule_for("sm_90", 132, dev, 5, 2048, 7168), "smallm") == 0, "2048x7168 M = 5");
  EXPECT(strcmp(rule_for("sm_90", 132, dev, 33, 2048, 4096), "cublas") == 0, "2048x4096 M = 33");
  /* Except at K = 4096 and N <= 1024, where smallm goes on up to M = 64. */
  EXPECT(strcmp(rule_for("sm_90", 132, dev, 64, 1024, 4096), "smallm") == 0, "1024x4096 M = 64");
  EXPECT(strcmp(rule_for("sm_90", 132, dev, 33, 512, 4096), "smallm") == 0, "512x4096 M = 33");
  EXPECT(strcmp(rule_for("sm_90", 132, dev, 65, 1024, 4096), "cublas") == 0, "1024x4096 M = 65");
  EXPECT(strcmp(rule_for("sm_90", 132, dev, 33, 512, 7168), "cublas") == 0, "512x7168 M = 33");
  EXPECT(strcmp(rule_for("sm_90", 114, dev, 33, 1024, 4096), "cublas") == 0, "114 SMs, M = 33");
  EXPECT(strcmp(rule_for("sm_90", 114, dev, 32, 512, 7168), "cublas") == 0, "114 SMs");
  EXPECT(strcmp(rule_for("sm_90", 132, dev, 16, 1536, 7168), "cublas") == 0, "1536x7168 M = 16");
  EXPECT(strcmp(rule_for("sm_90", 132, dev, 16, 2048, 2048), "cublas") == 0, "2048x2048 M = 16");
  /* M <= 4 anywhere; up to 16 at N <= 1024 and K <= 4096; cuBLAS for wide weights above. */
  EXPECT(strcmp(rule_for("sm_90", 132, dev, 4, 7168, 2048), "smallm") == 0, "7168x2048 M = 4");
  EXPECT(strcmp(rule_for("sm_90", 114, dev, 16, 1024, 4096), "smallm") == 0, "1024x4096 M = 16");
  EXPECT(strcmp(rule_for("sm_90", 132, dev, 16, 4096, 4096), "cublas") == 0, "4096x4096 M = 16");
  /* Other GPUs and the host. */
  EXPECT(strcmp(rule_for("cuda", 132, dev, 1, 256, 4096), "cublas") == 0, "another GPU");
  EXPECT(strcmp(rule_for("sm_90", 132, BF16FP32_HOST, 1, 256, 4096), "cpu-simd") == 0, "host call");
  return testing_summary("test-rules");
}
