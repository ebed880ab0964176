/* Tuned choices in memory: entries keyed by (location, N, K, M bucket), the M buckets, the
 * lookup the dispatcher asks, and the context's loading of them (tune-load.c). */
#ifndef BF16FP32_TUNE_TABLE_H
#define BF16FP32_TUNE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "identity.h"
#include "internal.h"

#define BF16FP32__TUNE_NAME_LEN 64 /* "backend@variant" (variant.h) */

/* One measured (location, launch, N, K, M bucket): the fastest backend and the second, by
 * name (as in the registry), with their median times per call in microseconds. */
typedef struct bf16fp32__tune_entry {
  int32_t where;                            /* bf16fp32_location */
  int32_t pdl;                              /* 1: measured with the context's PDL option on
                                               (device only; file token "device-pdl") */
  int32_t line;                             /* line in the source file; 0: built-in or new;
                                               -1 (new, to merge): only where the file has no
                                               entry of that key (the step tuner's carried ones) */
  int64_t n, k;
  int64_t m;                                /* the bucket (its representative, upper M) */
  char winner[BF16FP32__TUNE_NAME_LEN];
  double winner_us;
  char runner_up[BF16FP32__TUNE_NAME_LEN];  /* "" when only one backend was measured */
  double runner_up_us;                      /* < 0 when there is no runner-up */
} bf16fp32__tune_entry;

/* Who the entries were measured on: the header of a file or of the built-in table. */
typedef struct bf16fp32__tune_header {
  int format;                 /* 0: the file says none */
  char library[32];           /* BF16FP32_VERSION of the writer */
  bool has_gpu, has_cpu;      /* the section's identity is complete */
  bf16fp32__gpu_identity gpu; /* for the entries at DEVICE */
  bf16fp32__cpu_identity cpu; /* for the entries at HOST */
} bf16fp32__tune_header;

#define BF16FP32__TUNE_FORMAT 1

/* The built-in table (tune-builtin.c, emitted by `bf16fp32 tune --emit-c`). */
typedef struct bf16fp32__tune_builtin {
  bf16fp32__tune_header header;
  const bf16fp32__tune_entry *entries;
  int count;
} bf16fp32__tune_builtin;
extern const bf16fp32__tune_builtin bf16fp32__tune_builtin_table;

/* The bucket of a call's M: every M up to 16 is its own bucket, then the next multiple of 8 up
 * to 64 (17..24 -> 24, 57..64 -> 64), then the next power of two (65..128 -> 128). m < 1 gives
 * 1. Buckets of 8 from 17 to 64: a bucket is timed at its largest M, and across 33..64 the
 * faster of smallm and cuBLAS changes with M (512x7168 under PDL: smallm 0.94x cuBLAS's time at
 * M = 33, 1.12x at 64; docs/smallm-notes.md, session 48). A file without an entry for a bucket
 * uses the next larger bucket of the same (N, K), so files tuned before keep their meaning. */
int64_t bf16fp32__tune_bucket(int64_t m);
/* True when m is a bucket's representative (its own bucket: 1..16, 24..64 in steps of 8, or a
 * power of two). */
bool bf16fp32__tune_is_bucket(int64_t m);
/* The buckets of ms[0..count), each once, ascending, into out (room for count). Returns how
 * many. */
int bf16fp32__tune_buckets(const int64_t *ms, int count, int64_t *out);
/* An entry's location as the tuning file writes it: "host", "device" or "device-pdl". */
const char *bf16fp32__tune_where_name(const bf16fp32__tune_entry *e);

/* The context's tuned choices: entries sorted by key (where, pdl, n, k, m), unique, and where
 * they came from. */
typedef struct bf16fp32__tune_table bf16fp32__tune_table;
struct bf16fp32__tune_table {
  bf16fp32__tune_entry *entries;
  int count, cap;
  bool sorted;
  char file[1024];     /* the user file the entries with line > 0 came from */
  char builtin[160];   /* the built-in table's device, for entries with line == 0 */
};

/* Appends a copy of e (OUT_OF_MEMORY on failure). Later additions of a key replace earlier
 * ones at bf16fp32__tune_table_finish. */
bf16fp32_status bf16fp32__tune_table_add(bf16fp32__tune_table *t, const bf16fp32__tune_entry *e);
/* Sorts by (where, pdl, n, k, m) and keeps the last added entry of each key. */
void bf16fp32__tune_table_finish(bf16fp32__tune_table *t);
/* Whether the table (finished or not) has an entry of e's key (where, pdl, n, k, m). */
bool bf16fp32__tune_table_has_key(const bf16fp32__tune_table *t, const bf16fp32__tune_entry *e);
/* Whether the (finished) table has any entry for (where, pdl, n, k). */
bool bf16fp32__tune_table_has_pair(const bf16fp32__tune_table *t, int where, int pdl, int64_t n,
                                   int64_t k);
/* The entry for a call: the smallest tuned bucket at or above bucket(m) for (where, pdl, n, k);
 * beyond the largest tuned bucket, the largest. NULL when (where, pdl, n, k) was not tuned. */
const bf16fp32__tune_entry *bf16fp32__tune_table_lookup(const bf16fp32__tune_table *t, int where,
                                                        int pdl, int64_t n, int64_t k, int64_t m);
/* Frees the entries only (for tables that live on the stack or in a struct). */
void bf16fp32__tune_table_clear(bf16fp32__tune_table *t);

/* --- what the context and the dispatcher call --- */

/* Loads cfg->tune_file ("" = none) for this machine (cfg->device, -1 = CPU only) into *out; the
 * built-in table fills the (location, N, K) pairs the file does not cover. *out is NULL when
 * nothing applies. TUNE_FILE where the file exists but cannot be read or is corrupt
 * (bf16fp32__tune_file_check), OUT_OF_MEMORY. A missing file, and entries measured on another
 * machine or by another version, are logged through bf16fp32__log (level 1), not failures. */
bf16fp32_status bf16fp32__tune_load_for_context(const bf16fp32__config *cfg,
                                                bf16fp32__tune_table **out);
/* The same with another built-in table in place of the shipped one (the tests give one made for
 * this machine's CPU, which the shipped table, measured on a GPU, never is). */
bf16fp32_status bf16fp32__tune_load_with_builtin(const bf16fp32__config *cfg,
                                                const bf16fp32__tune_builtin *builtin,
                                                bf16fp32__tune_table **out);
/* A tuned winner must beat the cuBLAS baseline by more than a margin to be tried before it,
 * and cuBLAS is what the caller would have had without us. A vendor library's winner (cuBLASLt,
 * the fp32 path) needs 5 %: smaller leads are within its run-to-run spread on the H200
 * (2048x4096 M = 128: cuBLASLt 3.0 % ahead in one tune, 7 % behind in the next bench of the
 * same session; docs/h200-results.md). One of our kernels needs 2 %: smallm's lead at the two
 * shipped entries between 2 and 5 % (512x4096 M = 33-64, 1024x7168 M = 17-32) was 2.7-5.2 % in
 * each of 17 benches (the 14 of docs/bench-h200.csv's history and session 48's 3), and a bucket
 * is timed at its largest M, where smallm's lead is the smallest (1.25x at 512x4096 M = 40);
 * with cuBLAS first there the plain decode steps took 12-48 us longer (docs/smallm-notes.md,
 * session 48). */
#define BF16FP32__TUNE_BASELINE_MARGIN 0.05
#define BF16FP32__TUNE_OWN_MARGIN 0.02
#define BF16FP32__TUNE_BASELINE "cublas"

/* Whether a winner's lead over the baseline's time (<= 0: not timed) is within the winner's
 * margin: the one rule behind baseline_first and the tuner's choice of runner-up. */
bool bf16fp32__tune_within_margin(const char *winner, double winner_us, double baseline_us);
/* Whether e's runner-up goes first: it is the baseline and the winner's lead is within the
 * winner's margin. */
bool bf16fp32__tune_baseline_first(const bf16fp32__tune_entry *e);

/* Registry indices of the tuned winner and runner-up for s (where, n, k, bucket(m)), in that
 * order unless bf16fp32__tune_baseline_first, skipping names this build does not know or that
 * run elsewhere; returns how many (0..2). variants (may be NULL) gets each one's variant: NULL
 * for a plain name, the text after '@' in the table's entry for "name@variant" when s->m is the
 * entry's own M; at the bucket's other M no variant (it was timed at that M only), and a winner
 * with one yields to a plain runner-up unless its backend chooses its default per M (smallm).
 * With pdl (the context's PDL option, device calls) the entries measured under PDL decide where
 * the table has them for (n, k) and M up to their largest bucket, the plain ones otherwise: PDL
 * shortens our kernels' calls and not cuBLAS's, so the winners differ. why (may be NULL) says
 * where the choice came from and the measured times. */
int bf16fp32__tune_choice(const bf16fp32__tune_table *t, const bf16fp32__shape *s, bool pdl,
                          int backends[2], const char *variants[2], char *why, size_t why_len);
void bf16fp32__tune_free(bf16fp32__tune_table *t);
/* $XDG_CACHE_HOME/bf16fp32/tune.tsv, else $HOME/.cache/bf16fp32/tune.tsv; "" without either. */
void bf16fp32__tune_default_path(char *buf, size_t len);

#endif
