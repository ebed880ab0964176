/* The host backends and the oracle keep bf16 subnormal inputs whatever floating-point mode the
 * caller runs in: with flush-to-zero and denormals-as-zero on (-ffast-math, or PyTorch's
 * set_flush_denormal), set before the context made its threads too, x = 2^-127 (a bf16
 * subnormal) times w = 2^127 still adds 1 per row; and they do not trap where the caller
 * unmasked an exception. The caller's mode is as it was after (its sticky flags aside). */
#include <stdio.h>
#include <string.h>

#include "fp-mode.h"
#include "internal.h"
#include "support.h"
#include "testing.h"

enum { M = 64, N = 512, K = 64 };

/* Every element of out is exactly 1: row i of x holds 2^-127 at k = i % K and w's row j holds
 * 2^127 there too (w[j][k] = 2^127 for all k), everything else zero. */
static void fill(uint16_t *x, uint16_t *w) {
  memset(x, 0, sizeof(uint16_t) * M * K);
  for (int i = 0; i < M; i++) x[i * K + i % K] = 0x0040; /* 2^-127: below bf16's normals */
  for (int j = 0; j < N * K; j++) w[j] = 0x7f00;         /* 2^127 */
}

int main(void) {
  if (BF16FP32__FP_MODE_CONTROL == 0) return testing_skip("test-fp-mode", "no known floating-point mode here");
  static uint16_t x[M * K], w[N * K];
  static float out[M * N];
  fill(x, w);
  const bf16fp32__fp_mode ieee = bf16fp32__fp_mode_get();
  /* flush-to-zero and denormals-as-zero on (x86: FTZ | DAZ; aarch64: FZ) */
#if defined(__x86_64__) || defined(__i386__)
  const bf16fp32__fp_mode flushing = ieee | 0x8040u;
#else
  const bf16fp32__fp_mode flushing = ieee | (1ul << 24);
#endif
  bf16fp32__fp_mode_set(flushing);

  double ref = 0.0;
  bf16fp32__oracle(1, 1, K, x, K, w, K, &ref, NULL);
  EXPECT(ref == 1.0, "the oracle under the caller's flushing mode: %g", ref);

  bf16fp32_options opt;
  bf16fp32_options_init(&opt);
  opt.cpu_threads = 2; /* its threads made in the flushing mode */
  bf16fp32_context *ctx = NULL;
  CHECK_OK(bf16fp32_create(&ctx, &opt));
  const char *names[] = {"cpu-ref", "cpu-simd", "auto"};
  for (int b = 0; ctx && b < 3; b++) {
    if (bf16fp32_force_backend(ctx, names[b]) != BF16FP32_OK) continue; /* cpu-simd absent */
    sup_poison_f32(out, M * N);
    CHECK_OK(bf16fp32_linear(ctx, BF16FP32_HOST, M, N, K, x, K, w, K, out, N, NULL));
    int wrong = 0;
    for (int i = 0; i < M * N; i++) wrong += out[i] != 1.0f;
    EXPECT(wrong == 0, "%s: %d of %d elements not 1 (out[0] = %g)", names[b], wrong, M * N, out[0]);
    /* its control bits: the sticky flags may have gained what the call raised */
    const bf16fp32__fp_mode now = bf16fp32__fp_mode_get() & ~BF16FP32__FP_MODE_FLAGS;
    EXPECT(now == (flushing & ~BF16FP32__FP_MODE_FLAGS), "%s: the caller's mode kept (%#lx, was %#lx)",
           names[b], (unsigned long)now, (unsigned long)flushing);
  }
  bf16fp32_destroy(ctx);

  /* The invalid-operation exception unmasked, as feenableexcept(FE_INVALID) does (aarch64: its
   * trap enable, which most cores ignore): an infinity times a zero in row 0 gives NaN there,
   * not SIGFPE, and the caller's mode is as it was after. */
#if defined(__x86_64__) || defined(__i386__)
  bf16fp32__fp_mode_set(ieee & ~0x80u);
#else
  bf16fp32__fp_mode_set(ieee | (1ul << 8));
#endif
  const bf16fp32__fp_mode trapping = bf16fp32__fp_mode_get(); /* as the core took it */
  x[0] = 0x7f80; /* +Inf at k = 0 of row 0 */
  for (int j = 0; j < N; j++) w[j * K] = 0;
  bf16fp32__oracle(1, 1, K, x, K, w, K, &ref, NULL);
  EXPECT(ref != ref, "the oracle with invalid unmasked: %g", ref);
  CHECK_OK(bf16fp32_create(&ctx, &opt));
  for (int b = 0; ctx && b < 3; b++) {
    if (bf16fp32_force_backend(ctx, names[b]) != BF16FP32_OK) continue;
    sup_poison_f32(out, M * N);
    CHECK_OK(bf16fp32_linear(ctx, BF16FP32_HOST, M, N, K, x, K, w, K, out, N, NULL));
    int wrong = 0;
    for (int i = 0; i < M * N; i++) wrong += i < N ? out[i] == out[i] : out[i] != 1.0f;
    EXPECT(wrong == 0, "%s, invalid unmasked: %d elements wrong", names[b], wrong);
    const bf16fp32__fp_mode now = bf16fp32__fp_mode_get() & ~BF16FP32__FP_MODE_FLAGS;
    EXPECT(now == (trapping & ~BF16FP32__FP_MODE_FLAGS), "%s: the caller's mode kept (%#lx, was %#lx)",
           names[b], (unsigned long)now, (unsigned long)trapping);
  }
  bf16fp32_destroy(ctx);
  bf16fp32__fp_mode_set(ieee);
  return testing_summary("test-fp-mode");
}
