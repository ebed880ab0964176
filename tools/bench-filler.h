/* `bench --decode-step --filler-kb N`: a memory-bound kernel before every GEMM of the step, as an
 * engine runs attention, norms and experts between them. Each filler reads its own N KB (cold,
 * as the step's weights are) and writes one word per block. Under PDL it is launched as an
 * engine's PDL-aware kernel is (--filler-trigger): it waits for its predecessor at entry and lets
 * its dependent launch once its reads are done (end) or right after its wait (entry); or it is
 * launched plainly (none). */
#ifndef BF16FP32_TOOLS_BENCH_FILLER_H
#define BF16FP32_TOOLS_BENCH_FILLER_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bench_filler_trigger {
  BENCH_FILLER_END,   /* PDL: trigger once its reads are done */
  BENCH_FILLER_ENTRY, /* PDL: trigger right after its wait */
  BENCH_FILLER_PLAIN  /* no PDL attribute: waits for its predecessor's end, as a plain launch */
} bench_filler_trigger;

typedef struct bench_filler {
  char *buf;         /* device: count slices of bytes_each */
  unsigned *sink;    /* device: one word per block */
  size_t bytes_each; /* a multiple of 16 */
  int count, blocks;
  int trigger;       /* bench_filler_trigger, where the context uses PDL */
} bench_filler;

/* Allocates count slices of kb KB each (kb >= 1) and fills them. 0, or -1 with why set. */
int bench_filler_create(bench_filler *f, size_t kb, int count, int trigger, char *why, size_t len);
void bench_filler_free(bench_filler *f);
/* Launches filler i (0 <= i < count) on stream (a cudaStream_t); where pdl (the context's
 * option), as f->trigger says. 0, or -1 with why set. */
int bench_filler_launch(const bench_filler *f, int i, bool pdl, void *stream, char *why,
                        size_t len);

#ifdef __cplusplus
}
#endif

#endif
