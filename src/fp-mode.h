/* The calling thread's floating-point mode around host arithmetic that must keep subnormals
 * and must not trap: flush-to-zero and denormals-as-zero off, round to nearest, every
 * exception masked, as IEEE fp32 accumulation and the fp64 oracle assume. A caller built with
 * -ffast-math, or PyTorch after torch.set_flush_denormal(True), runs with flushing on, and bf16
 * subnormal inputs then count as zero; one that unmasked an exception (feenableexcept) would
 * take SIGFPE from an Inf x 0 in its data; the pool's threads keep whatever mode the thread
 * that made them had. */
#ifndef BF16FP32_FP_MODE_H
#define BF16FP32_FP_MODE_H

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>

typedef unsigned int bf16fp32__fp_mode;
/* MXCSR: FTZ (bit 15), rounding (bits 13-14), the exception masks (bits 7-12, set: masked),
 * DAZ (bit 6); bits 0-5 are the sticky flags. */
#define BF16FP32__FP_MODE_CONTROL 0xffc0u
#define BF16FP32__FP_MODE_IEEE 0x1f80u
#define BF16FP32__FP_MODE_FLAGS 0x3fu
static inline bf16fp32__fp_mode bf16fp32__fp_mode_get(void) { return _mm_getcsr(); }
static inline void bf16fp32__fp_mode_set(bf16fp32__fp_mode m) { _mm_setcsr(m); }
#elif defined(__aarch64__)
typedef unsigned long bf16fp32__fp_mode;
/* FPCR: FZ (bit 24), RMode (bits 22-23), FZ16 (bit 19), the trap enables IDE (bit 15) and
 * IXE..IOE (bits 8-12; most cores have none); it holds no flags. */
#define BF16FP32__FP_MODE_CONTROL ((1ul << 24) | (3ul << 22) | (1ul << 19) | (1ul << 15) | (0x1ful << 8))
#define BF16FP32__FP_MODE_IEEE 0ul
#define BF16FP32__FP_MODE_FLAGS 0ul
static inline bf16fp32__fp_mode bf16fp32__fp_mode_get(void) {
  unsigned long v;
  __asm__ volatile("mrs %0, fpcr" : "=r"(v));
  return v;
}
static inline void bf16fp32__fp_mode_set(bf16fp32__fp_mode m) { __asm__ volatile("msr fpcr, %0" : : "r"(m)); }
#else
typedef unsigned int bf16fp32__fp_mode; /* elsewhere: the mode is left as it is */
#define BF16FP32__FP_MODE_CONTROL 0u
#define BF16FP32__FP_MODE_IEEE 0u
#define BF16FP32__FP_MODE_FLAGS 0u
static inline bf16fp32__fp_mode bf16fp32__fp_mode_get(void) { return 0u; }
static inline void bf16fp32__fp_mode_set(bf16fp32__fp_mode m) { (void)m; }
#endif

/* Whether m's control bits differ from the IEEE defaults. */
static inline int bf16fp32__fp_mode_changed(bf16fp32__fp_mode m) {
  return (m & BF16FP32__FP_MODE_CONTROL) != BF16FP32__FP_MODE_IEEE;
}

/* Switches this thread to the IEEE mode; returns the mode to restore. */
static inline bf16fp32__fp_mode bf16fp32__fp_mode_ieee(void) {
  const bf16fp32__fp_mode old = bf16fp32__fp_mode_get();
  if (bf16fp32__fp_mode_changed(old))
    bf16fp32__fp_mode_set((old & ~BF16FP32__FP_MODE_CONTROL) | BF16FP32__FP_MODE_IEEE);
  return old;
}

/* Puts the caller's mode back, keeping the flags raised meanwhile (they are sticky; an SSE flag
 * raised while masked does not trap when its exception is unmasked again). */
static inline void bf16fp32__fp_mode_restore(bf16fp32__fp_mode old) {
  if (bf16fp32__fp_mode_changed(old))
    bf16fp32__fp_mode_set((old & ~BF16FP32__FP_MODE_FLAGS) |
                          (bf16fp32__fp_mode_get() & BF16FP32__FP_MODE_FLAGS));
}

#endif
