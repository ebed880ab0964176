/* The installed library from a C program (tests/test-install.py): one host call whose result
 * is exact, [1 2] . [[3 4] [5 6]]^T = [11 17]; exit 0 when it is. */
#include <bf16fp32.h>
#include <stdio.h>
int main(void) {
  /* bf16 bit patterns of x = [1 2] and w = [3 4; 5 6] */
  const uint16_t x[2] = {0x3f80, 0x4000}, w[4] = {0x4040, 0x4080, 0x40a0, 0x40c0};
  float out[2] = {0, 0};
  bf16fp32_context *ctx;
  if (bf16fp32_create(&ctx, NULL) != BF16FP32_OK) return 2;
  bf16fp32_status st = bf16fp32_linear(ctx, BF16FP32_HOST, 1, 2, 2, x, 2, w, 2, out, 2, NULL);
  bf16fp32_destroy(ctx);
  printf("%s %g %g\n", bf16fp32_status_name(st), out[0], out[1]);
  return st == BF16FP32_OK && out[0] == 11.0f && out[1] == 17.0f ? 0 : 1;
}
