/* The built-in rules: which backend each device family (and SM count) gets first for a shape
 * range, plainly and under PDL, and why (the sm_90 ranges follow the H100 and H200 benchmarks
 * named in src/rules.c). */
#include <stdbool.h>
#include <string.h>

#include "context.h"
#include "testing.h"

enum { PLAIN = 0, PDL = 1 };

/* Expects the rule for (family, SMs, launch kind, where, M, N, K) to name backend want. */
static void expect_rule(const char *want, const char *family, int sms, int pdl, int where,
                        int64_t m, int64_t n, int64_t k) {
  bf16fp32__shape s;
  memset(&s, 0, sizeof s);
  s.where = where, s.m = m, s.n = n, s.k = k, s.ldx = k, s.ldw = k, s.ldo = n;
  char why[256] = "";
  int b = bf16fp32__rule_choice(family, sms, pdl == PDL, &s, why, sizeof why);
  const char *got = b < 0 ? "" : bf16fp32__registry[b].name;
  EXPECT(strcmp(got, want) == 0, "%s, %d SMs, %s, where %d, %lldx%lld M = %lld: %s, not %s\n",
         family, sms, pdl == PDL ? "PDL" : "plain", where, (long long)n, (long long)k,
         (long long)m, got, want);
  EXPECT(b < 0 || strstr(why, family) || where == BF16FP32_HOST, "why names the family: %s", why);
}

int main(void) {
  const int dev = BF16FP32_DEVICE;
  /* Small K (H100, session 89): cuBLAS up to K = 384 at N <= 1024, and up to K = 640 but for
   * M <= 4 at N <= 384; smallm at K = 768, and at N = 4096 for M <= 4. */
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 1, 64, 96);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 16, 1024, 384);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 64, 256, 384);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 4, 256, 384);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 1, 256, 512);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 4, 384, 640);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 4, 385, 640);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 1, 1024, 512);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 5, 256, 640);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 64, 1024, 512);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 5, 256, 641);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 16, 256, 768);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 1, 1025, 96);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 1, 4096, 384);
  /* Narrow weights: smallm up to M = 64 (router shapes of several sizes measured), then cuBLAS. */
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 64, 128, 4096);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 33, 384, 7168);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 65, 128, 4096);
  /* The DSV4 shapes on 132 SMs: smallm up to M = 32, cuBLAS above; not at another SM count or
   * at a shape between them (1536x7168 runs an untuned split). */
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 32, 512, 7168);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 5, 2048, 7168);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 33, 2048, 4096);
  /* Except at K = 4096 and N <= 1024, where smallm goes on up to M = 64. */
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 64, 1024, 4096);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 33, 512, 4096);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 65, 1024, 4096);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 33, 512, 7168);
  expect_rule("cublas", "sm_90", 114, PLAIN, dev, 33, 1024, 4096);
  /* session 90's entries (H100): M <= 16 at N <= 768 up to K = 6144, M <= 8 up to N = 2048,
   * M <= 32 at N <= 896 from K = 1024 to 4096; on 132 SMs only, where smallm's generic table
   * (smallm-prefer.c) was measured */
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 16, 768, 6144);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 16, 768, 8192); /* to K = 8192 (session 92) */
  expect_rule("smallm", "sm_90", 132, PDL, dev, 16, 512, 8192);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 16, 768, 8200);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 17, 512, 6144);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 16, 784, 6144);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 8, 2048, 12288);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 9, 2048, 2048);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 8, 2064, 2048);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 32, 768, 1024);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 32, 768, 4096);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 32, 768, 1016);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 17, 1024, 1016);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 32, 768, 4104);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 33, 768, 2048);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 17, 896, 2048);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 17, 912, 2048);
  /* under PDL: M <= 32 up to N = 2048 and K = 3072 (session 92; 2560 before), K < 1024 included */
  expect_rule("smallm", "sm_90", 132, PDL, dev, 32, 2048, 2560);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 32, 2048, 3072);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 32, 2048, 3080);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 24, 1024, 768);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 24, 1024, 768);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 24, 2064, 1024);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 33, 1024, 1024);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 16, 1024, 1016);
  expect_rule("cublas", "sm_90", 114, PLAIN, dev, 16, 768, 6144);
  expect_rule("cublas", "sm_90", 114, PLAIN, dev, 8, 2048, 2048);
  expect_rule("cublas", "sm_90", 114, PDL, dev, 32, 768, 2048);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 32, 768, 2048);
  expect_rule("cublas", "sm_90", 114, PLAIN, dev, 32, 512, 7168);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 16, 1536, 7168);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 16, 2048, 2048);
  /* session 91's boxes, lower bounds and launch kinds included (H100, H200; 132 SMs only):
   * plainly smallm at M <= 16 for N = 1536-3072 and K = 3072-5120, at M <= 8 up to N = 4096 and
   * K = 6144, and cuBLAS at M <= 4 for N = 2560-4096 and K = 1536-2560 */
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 16, 1536, 3072);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 16, 3072, 5120);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 16, 1528, 3072);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 16, 1536, 3064);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 16, 3080, 3072);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 16, 2048, 5128);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 17, 2048, 4096 + 8);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 8, 4096, 6144);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 8, 3072, 3072);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 8, 4096, 6152);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 8, 4104, 6144);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 8, 3072, 3064);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 9, 4096, 6144);
  expect_rule("cublas", "sm_90", 114, PLAIN, dev, 8, 4096, 6144);
  expect_rule("cublas", "sm_90", 114, PLAIN, dev, 16, 2048, 4104);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 4, 2560, 1536);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 1, 4096, 2560);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 4, 2552, 2048);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 4, 4104, 2048);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 4, 3072, 1528);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 4, 3072, 2568);
  expect_rule("smallm", "sm_90", 114, PLAIN, dev, 4, 3072, 2048);
  /* under PDL: smallm at M <= 16 for N = 2049-3072 and K = 1024-2560, for N = 1536-4096 and
   * K = 2561-4096 and for N = 3072-4096 up to K = 6144; at M <= 12 for N = 1536-2560 up to
   * K = 5120, at M <= 16 for N = 1536-2048 from K = 5120 to 6144; the M <= 4 box stays smallm's */
  expect_rule("smallm", "sm_90", 132, PDL, dev, 1, 4096, 2560);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 16, 2056, 1024);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 16, 3072, 2560);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 16, 3080, 2560);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 16, 2560, 1016);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 16, 2560, 2048);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 16, 1536, 2568);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 16, 4096, 4096);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 16, 4104, 4096);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 16, 1528, 4096); /* from N = 1025 (session 92) */
  expect_rule("smallm", "sm_90", 132, PDL, dev, 16, 1040, 4096);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 16, 3584, 2568);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 16, 1040, 4104);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 17, 1040, 4096);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 16, 4096, 4096);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 16, 3072, 6144);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 16, 3064, 5120);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 16, 4096, 6152);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 12, 2560, 5120);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 13, 2560, 5120);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 12, 2560, 5128);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 16, 1536, 6144);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 16, 2048, 5120);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 16, 2048, 5112);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 17, 1536, 6144);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 16, 1536, 6152);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 9, 2056, 6144);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 5, 2560, 6144);
  expect_rule("cublas", "sm_90", 114, PDL, dev, 16, 2560, 3072);
  /* session 92's boxes (132 SMs): under PDL past N = 4096 smallm at M <= 16 for K = 1024-2047,
   * at M <= 8 for N = 6144-8192, K = 2048-4095 and for N = 6144-16384, K = 4096-6144 */
  expect_rule("smallm", "sm_90", 132, PDL, dev, 16, 5120, 1024);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 16, 16384, 2047);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 16, 16384, 2048);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 16, 5120, 1016);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 16, 5104, 1024);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 16, 16400, 1024);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 17, 8192, 1024);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 16, 8192, 1024);
  expect_rule("cublas", "sm_90", 114, PDL, dev, 16, 8192, 1024);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 8, 5120, 2048); /* M = 5-8 from N = 6144 */
  expect_rule("smallm", "sm_90", 132, PDL, dev, 4, 5120, 2048);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 8, 6144, 2048);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 8, 6128, 2048);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 8, 8192, 4095);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 9, 8192, 2048);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 8, 8208, 2048);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 8, 8192, 2048);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 8, 6144, 4096);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 4, 16384, 8192); /* the M <= 4 rule */
  expect_rule("smallm", "sm_90", 132, PDL, dev, 8, 16384, 6144);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 8, 16384, 6152);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 8, 16400, 8192);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 8, 6128, 4096);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 9, 6144, 4096);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 8, 5120, 4096);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 8, 12288, 4088);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 8, 8192, 4096);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 8, 16400, 4096);
  expect_rule("cublas", "sm_90", 114, PDL, dev, 8, 8192, 4096);
  expect_rule("cublas", "sm_90", 114, PDL, dev, 8, 8192, 2048);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 4, 5120, 4096); /* the M <= 4 rule */
  /* cuBLAS at M <= 8 past K = 12288 for N = 385-768 plainly, past K = 8192 for N = 897-1024
   * under PDL but at M <= 4 up to K = 12288 */
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 1, 512, 16384);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 8, 768, 12296);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 8, 1024, 16384);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 8, 784, 16384);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 1, 400, 12296);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 4, 1024, 12288);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 4, 384, 16384);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 4, 1040, 16384);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 9, 512, 16384);
  expect_rule("smallm", "sm_90", 114, PLAIN, dev, 4, 512, 16384);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 4, 512, 16384);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 8, 1024, 8192);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 8, 1024, 8200);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 4, 1024, 12288);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 4, 912, 12288);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 4, 1024, 8200);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 8, 768, 12288);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 5, 1024, 12288);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 4, 1024, 12296);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 4, 1024, 12296);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 1, 912, 16384);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 4, 896, 16384);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 4, 1040, 16384);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 8, 1024, 8200);
  expect_rule("smallm", "sm_90", 114, PDL, dev, 4, 1024, 16384);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 1, 512, 40960);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 1, 1024, 40960);
  /* from K = 8192: M <= 16 at N = 1537-2048 to K = 12288, either launch kind; under PDL
   * M <= 16 at N = 3073-4096 to K = 16384 */
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 16, 2048, 8192);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 16, 1552, 12288);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 16, 2048, 8184);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 16, 2048, 12296);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 16, 1536, 8192);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 16, 2064, 8192);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 17, 2048, 8192);
  expect_rule("cublas", "sm_90", 114, PLAIN, dev, 16, 2048, 8192);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 16, 4096, 16384);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 5, 3088, 8192);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 16, 4096, 8184);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 16, 4096, 16392);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 16, 3072, 8192);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 16, 4112, 8192);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 17, 4096, 8192);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 16, 4096, 8192);
  expect_rule("cublas", "sm_90", 114, PDL, dev, 16, 4096, 8192);
  /* narrow weights past K = 7168 (132 SMs): M <= 16 under PDL and M <= 8 at N <= 384; M <= 48
   * at N = 256-384 to K = 10240, M <= 32 past it, M <= 64 under PDL to K = 8192; at N = 128-255
   * M <= 64 to K = 8192, under PDL to 10240, M <= 56 under PDL to 12288, M <= 56 plainly to 9728
   * and M <= 40 to 10240, M <= 32 under PDL past 12288, M <= 16 to 12288, M = 17-32 plainly to
   * 14336 and M = 17-24 past it (M <= 8 plainly to K = 14336 only); cuBLAS elsewhere at M <= 64;
   * K <= 7168 and other SM counts as the rule "narrow weights" has them */
  expect_rule("smallm", "sm_90", 132, PDL, dev, 16, 128, 16384);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 32, 128, 16384);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 33, 128, 16384);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 9, 128, 16384);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 8, 128, 16384);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 1, 192, 16384);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 1, 192, 16384);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 8, 128, 14336);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 8, 255, 14344);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 8, 256, 16384);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 48, 256, 8192);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 48, 384, 10240);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 33, 384, 10248);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 48, 256, 12288);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 32, 256, 10248);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 49, 256, 8192);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 33, 384, 12296);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 32, 384, 12296);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 32, 256, 40960);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 33, 256, 40960);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 64, 240, 8192);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 33, 240, 8200);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 56, 128, 9728);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 57, 192, 9728);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 41, 128, 9736);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 40, 192, 10240);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 49, 240, 10240);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 56, 256, 9728);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 56, 120, 9728);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 64, 128, 10240);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 49, 128, 10248);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 56, 192, 12288);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 57, 128, 10248);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 49, 128, 12296);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 64, 384, 8192);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 49, 256, 7176);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 49, 256, 8200);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 64, 400, 8192);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 64, 384, 8184);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 64, 320, 7168);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 49, 320, 7176);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 48, 256, 7176);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 9, 384, 7176);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 32, 128, 8192);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 32, 255, 7176);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 33, 128, 8192);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 32, 128, 8200);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 32, 192, 10240);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 32, 192, 10248);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 33, 192, 10248);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 16, 192, 12288);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 17, 192, 12288);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 16, 128, 12296);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 48, 128, 12288);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 48, 192, 8192);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 57, 128, 12288);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 48, 128, 12296);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 48, 128, 8184);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 48, 112, 8192);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 32, 120, 8192);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 64, 128, 7168);
  expect_rule("smallm", "sm_90", 114, PLAIN, dev, 64, 384, 8192);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 65, 256, 8192);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 16, 128, 8192);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 8, 128, 8192);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 16, 128, 40960);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 8, 128, 40960);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 16, 400, 16384);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 48, 400, 12288);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 24, 240, 16384);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 25, 240, 16384);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 32, 192, 14336);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 32, 192, 14344);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 33, 128, 14336);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 32, 240, 12288);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 33, 240, 12288);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 32, 400, 16384);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 16, 400, 8192);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 16, 8, 16384);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 8, 8, 16384);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 32, 8, 8192);
  /* plainly at M <= 32, N = 897-1024, K = 2560-3072, and at M <= 16, N = 1025-1280,
   * K = 1024-4096 */
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 32, 1024, 2560);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 32, 912, 3072);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 32, 1024, 2552);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 32, 1024, 3080);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 32, 1040, 3072);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 33, 1024, 3072);
  expect_rule("cublas", "sm_90", 114, PLAIN, dev, 32, 1024, 3072);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 16, 1040, 1024);
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 16, 1280, 4096);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 16, 1296, 4096);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 16, 1280, 1016);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 16, 1280, 4104);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 17, 1280, 2048);
  expect_rule("cublas", "sm_90", 114, PLAIN, dev, 16, 1280, 2048);
  /* Under PDL smallm goes on up to M = 48 on the DSV4 shapes, and to 64 at K = 4096 (2048x4096
   * too); not at M = 49-64 at K = 7168 but for the routers, nor above M = 64. */
  expect_rule("smallm", "sm_90", 132, PDL, dev, 48, 512, 7168);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 48, 2048, 7168);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 49, 512, 7168);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 64, 512, 7168);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 64, 512, 4096);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 64, 384, 7168);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 49, 1024, 7168);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 64, 2048, 7168);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 64, 2048, 7168);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 65, 2048, 7168);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 49, 2048, 4096);
  expect_rule("smallm", "sm_90", 132, PDL, dev, 64, 2048, 4096);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 65, 256, 4096);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 65, 256, 4096);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 128, 384, 7168);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 65, 2048, 4096);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 48, 2048, 4096);
  expect_rule("cublas", "sm_90", 114, PDL, dev, 33, 2048, 4096);
  expect_rule("cublas", "sm_90", 132, PDL, dev, 33, 1536, 7168);
  /* M <= 4 anywhere; up to 16 at N <= 1024 and K <= 4096; cuBLAS for wide weights above. */
  expect_rule("smallm", "sm_90", 132, PLAIN, dev, 4, 7168, 2048);
  expect_rule("smallm", "sm_90", 114, PLAIN, dev, 16, 1024, 4096);
  expect_rule("cublas", "sm_90", 132, PLAIN, dev, 16, 4096, 4096);
  /* Other GPUs and the host. */
  expect_rule("cublas", "cuda", 132, PLAIN, dev, 1, 256, 4096);
  expect_rule("cublas", "cuda", 132, PDL, dev, 33, 2048, 4096);
  expect_rule("cpu-simd", "sm_90", 132, PLAIN, BF16FP32_HOST, 1, 256, 4096);
  return testing_summary("test-rules");
}
