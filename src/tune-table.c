/* The tuned table in memory: M buckets, adding and sorting entries, the lookup by
 * (location, N, K, bucket) and the dispatcher's question "which backends, and why". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune-table.h"

int64_t bf16fp32__tune_bucket(int64_t m) {
  if (m <= 16) return m < 1 ? 1 : m;
  if (m <= 64) return (m + 7) / 8 * 8;
  if (m > ((int64_t)1 << 62)) return (int64_t)1 << 62; /* no real call gets here */
  int64_t b = 128;
  while (b < m) b <<= 1;
  return b;
}

bool bf16fp32__tune_is_bucket(int64_t m) {
  return m >= 1 && bf16fp32__tune_bucket(m) == m;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

int bf16fp32__tune_buckets(const int64_t *ms, int count, int64_t *out) {
  for (int i = 0; i < count; i++) out[i] = bf16fp32__tune_bucket(ms[i]);
  qsort(out, (size_t)count, sizeof *out, cmp_i64);
  int n = 0;
  for (int i = 0; i < count; i++)
    if (n == 0 || out[n - 1] != out[i]) out[n++] = out[i];
  return n;
}

const char *bf16fp32__tune_where_name(const bf16fp32__tune_entry *e) {
  return e->where != BF16FP32_DEVICE ? "host" : e->pdl ? "device-pdl" : "device";
}

bf16fp32_status bf16fp32__tune_table_add(bf16fp32__tune_table *t, const bf16fp32__tune_entry *e) {
  if (t->count == t->cap) {
    int cap = t->cap ? 2 * t->cap : 64;
    bf16fp32__tune_entry *p = realloc(t->entries, (size_t)cap * sizeof *p);
    if (!p) return bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "tune table: %d entries", cap);
    t->entries = p;
    t->cap = cap;
  }
  t->entries[t->count++] = *e;
  t->sorted = false;
  return BF16FP32_OK;
}

static int cmp_key(int where, int pdl, int64_t n, int64_t k, int64_t m, const bf16fp32__tune_entry *e) {
  if (where != e->where) return where < e->where ? -1 : 1;
  if (pdl != e->pdl) return pdl < e->pdl ? -1 : 1;
  if (n != e->n) return n < e->n ? -1 : 1;
  if (k != e->k) return k < e->k ? -1 : 1;
  if (m != e->m) return m < e->m ? -1 : 1;
  return 0;
}

bool bf16fp32__tune_table_has_key(const bf16fp32__tune_table *t, const bf16fp32__tune_entry *e) {
  for (int i = 0; i < t->count; i++)
    if (cmp_key(e->where, e->pdl, e->n, e->k, e->m, &t->entries[i]) == 0) return true;
  return false;
}

/* qsort is not stable: each entry carries its order of addition through the sort. */
typedef struct keyed {
  bf16fp32__tune_entry e;
  int order;
} keyed;

static int cmp_keyed(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  int c = cmp_key(x->e.where, x->e.pdl, x->e.n, x->e.k, x->e.m, &y->e);
  if (c) return c;
  return x->order < y->order ? -1 : x->order > y->order;
}

void bf16fp32__tune_table_finish(bf16fp32__tune_table *t) {
  if (t->sorted || t->count == 0) {
    t->sorted = true;
    return;
  }
  keyed *k = malloc((size_t)t->count * sizeof *k);
  if (k) {
    for (int i = 0; i < t->count; i++) k[i] = (keyed){t->entries[i], i};
    qsort(k, (size_t)t->count, sizeof *k, cmp_keyed);
    int out = 0;
    for (int i = 0; i < t->count; i++) {
      /* The last of a run of equal keys is the one added last. */
      const bf16fp32__tune_entry *e = &k[i].e;
      if (i + 1 < t->count && cmp_key(e->where, e->pdl, e->n, e->k, e->m, &k[i + 1].e) == 0)
        continue;
      t->entries[out++] = k[i].e;
    }
    t->count = out;
    free(k);
  } else {
    /* Out of memory for the scratch copy: an insertion sort in place, same result. */
    for (int i = 1; i < t->count; i++) {
      bf16fp32__tune_entry e = t->entries[i];
      int j = i;
      while (j > 0 && cmp_key(e.where, e.pdl, e.n, e.k, e.m, &t->entries[j - 1]) < 0) {
        t->entries[j] = t->entries[j - 1];
        j--;
      }
      t->entries[j] = e;
    }
    int out = 0;
    for (int i = 0; i < t->count; i++) {
      const bf16fp32__tune_entry *e = &t->entries[i];
      if (out > 0 && cmp_key(e->where, e->pdl, e->n, e->k, e->m, &t->entries[out - 1]) == 0)
        t->entries[out - 1] = *e; /* equal keys keep their addition order: the later wins */
      else
        t->entries[out++] = *e;
    }
    t->count = out;
  }
  t->sorted = true;
}

/* Index of the first entry not below the key (count when none). */
static int lower_bound(const bf16fp32__tune_table *t, int where, int pdl, int64_t n, int64_t k,
                       int64_t m) {
  int lo = 0, hi = t->count;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (cmp_key(where, pdl, n, k, m, &t->entries[mid]) > 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static bool same_pair(const bf16fp32__tune_entry *e, int where, int pdl, int64_t n, int64_t k) {
  return e->where == where && e->pdl == pdl && e->n == n && e->k == k;
}

bool bf16fp32__tune_table_has_pair(const bf16fp32__tune_table *t, int where, int pdl, int64_t n,
                                   int64_t k) {
  if (!t || t->count == 0) return false;
  int i = lower_bound(t, where, pdl, n, k, 0);
  return i < t->count && same_pair(&t->entries[i], where, pdl, n, k);
}

const bf16fp32__tune_entry *bf16fp32__tune_table_lookup(const bf16fp32__tune_table *t, int where,
                                                        int pdl, int64_t n, int64_t k, int64_t m) {
  if (!t || !t->sorted || t->count == 0) return NULL;
  int i = lower_bound(t, where, pdl, n, k, bf16fp32__tune_bucket(m));
  if (i < t->count && same_pair(&t->entries[i], where, pdl, n, k)) return &t->entries[i];
  if (i > 0 && same_pair(&t->entries[i - 1], where, pdl, n, k)) return &t->entries[i - 1];
  return NULL;
}

void bf16fp32__tune_table_clear(bf16fp32__tune_table *t) {
  free(t->entries);
  t->entries = NULL;
  t->count = t->cap = 0;
  t->sorted = false;
}

void bf16fp32__tune_free(bf16fp32__tune_table *t) {
  if (!t) return;
  bf16fp32__tune_table_clear(t);
  free(t);
}

/* The registry index of a tuned name ("backend" or "backend@variant") if this build runs it at
 * `where`, else -1; *variant as bf16fp32__registry_find_tuned. */
static int resolve(const char *name, int where, const char **variant) {
  *variant = NULL;
  if (!name[0]) return -1;
  int b = bf16fp32__registry_find_tuned(name, variant);
  if (b < 0 || (int)bf16fp32__registry[b].where != where || !bf16fp32__registry[b].ops) return -1;
  return b;
}

/* The lead a winner needs over the baseline (tune-table.h). */
static double margin_of(const char *winner) {
  const char *variant;
  const int w = bf16fp32__registry_find_tuned(winner, &variant);
  return w >= 0 && bf16fp32__registry[w].own ? BF16FP32__TUNE_OWN_MARGIN
                                             : BF16FP32__TUNE_BASELINE_MARGIN;
}

bool bf16fp32__tune_within_margin(const char *winner, double winner_us, double baseline_us) {
  return baseline_us > 0 && winner_us > baseline_us * (1.0 - margin_of(winner));
}

bool bf16fp32__tune_baseline_first(const bf16fp32__tune_entry *e) {
  return strcmp(e->runner_up, BF16FP32__TUNE_BASELINE) == 0 &&
         bf16fp32__tune_within_margin(e->winner, e->winner_us, e->runner_up_us);
}

/* The baseline's time in the plain entry of pe's own key and bucket, or -1. */
static double plain_baseline_us(const bf16fp32__tune_table *t, const bf16fp32__tune_entry *pe) {
  const bf16fp32__tune_entry *q = bf16fp32__tune_table_lookup(t, pe->where, 0, pe->n, pe->k, pe->m);
  if (!q || q->pdl || q->m != pe->m) return -1;
  if (strcmp(q->winner, BF16FP32__TUNE_BASELINE) == 0) return q->winner_us;
  if (strcmp(q->runner_up, BF16FP32__TUNE_BASELINE) == 0) return q->runner_up_us;
  return -1;
}

int bf16fp32__tune_choice(const bf16fp32__tune_table *t, const bf16fp32__shape *s, bool pdl,
                          int backends[2], const char *variants[2], char *why, size_t why_len) {
  const char *wv, *rv;
  backends[0] = backends[1] = -1;
  if (variants) variants[0] = variants[1] = NULL;
  /* Under PDL the device-pdl entries decide up to their largest bucket. Above it (PDL tuning
   * stops where our kernels do, M = 256) the plain entries were timed at the call's own bucket,
   * with nothing launched under PDL, so they decide where the pair has them. */
  const bool device_pdl = pdl && s->where == BF16FP32_DEVICE;
  const bf16fp32__tune_entry *pe =
      device_pdl ? bf16fp32__tune_table_lookup(t, s->where, 1, s->n, s->k, s->m) : NULL;
  const int under_pdl = pe && (pe->m >= bf16fp32__tune_bucket(s->m) ||
                               !bf16fp32__tune_table_has_pair(t, s->where, 0, s->n, s->k));
  const bf16fp32__tune_entry *e = bf16fp32__tune_table_lookup(t, s->where, under_pdl, s->n, s->k, s->m);
  if (!e) {
    if (why && why_len) snprintf(why, why_len, "not tuned");
    return 0;
  }
  int count = 0;
  int w = resolve(e->winner, e->where, &wv), r = resolve(e->runner_up, e->where, &rv);
  bool swap = bf16fp32__tune_baseline_first(e);
  /* Under PDL the baseline was timed in turns with our kernel, and so paid for following it. Our
   * PDL time is a best case (the previous call, of the same shape, hid our start); in an engine's
   * step other kernels sit between, and cuBLAS costs its own plain time there. Where even our best
   * case is not shorter than that, cuBLAS goes first: pro's decode step with a 4 MB kernel before
   * every GEMM, batch 56-64, took 32-227 us less so, and the one-shape bench has cuBLAS 1.5-2 %
   * ahead at 1024x7168 and 2048x7168 M = 64; back to back it took 68-90 us more. A lead of 1-2 %
   * (M = 48) is kept: there cuBLAS first lost back to back and with an early-triggering kernel
   * between (docs/smallm-notes.md, session 56). */
  const double plain_us = under_pdl && !swap ? plain_baseline_us(t, e) : -1;
  bool yields_plain = plain_us > 0 && w >= 0 && bf16fp32__registry[w].own && e->winner_us >= plain_us;
  if (yields_plain) {
    const char *bv;
    const int base = resolve(BF16FP32__TUNE_BASELINE, e->where, &bv);
    yields_plain = base >= 0; /* else the entry's own order */
    if (yields_plain) r = base, rv = bv, swap = true;
  }
  /* A variant was timed at its bucket's own M only, and may lose at the bucket's other M:
   * cuBLASLt's algorithm tuned at M = 256 took 1.25-1.56x cuBLAS's time at M = 160-192
   * (docs/h200-results.md, session 50), and bucket 32's smallm stagings fitted to M = 28 cost the
   * flash step 155 us. There variants run their backend's default: smallm's tables choose one for
   * each M, so a smallm winner stays first; another yields to a plain runner-up. Yielding put
   * cuBLAS first at up to 1.6x smallm's time (up to 251 us per step; smallm-notes, session 57). */
  const bool exact = e->m == s->m;
  const bool variant_elsewhere =
      !exact && wv && w >= 0 && !bf16fp32__registry[w].default_per_m && !rv && r >= 0 && !swap;
  if (variant_elsewhere) swap = true;
  const bool default_here = !exact && (wv || rv) && !variant_elsewhere;
  if (!exact) wv = rv = NULL;
  if (swap) {
    int tmp = w;
    const char *tv = wv;
    w = r, r = tmp;
    wv = rv, rv = tv;
  }
  if (w >= 0) {
    if (variants) variants[count] = wv;
    backends[count++] = w;
  }
  if (r >= 0 && r != w) {
    if (variants) variants[count] = rv;
    backends[count++] = r;
  }
  if (why && why_len) {
    char source[1200];
    if (e->line > 0)
      snprintf(source, sizeof source, "file %s line %d", t->file, (int)e->line);
    else
      snprintf(source, sizeof source, "built-in table (%s)", t->builtin);
    char runner[BF16FP32__TUNE_NAME_LEN + 64] = "", bucket[64] = "";
    if (e->runner_up[0])
      snprintf(runner, sizeof runner, ", runner-up %s %.2f us", e->runner_up, e->runner_up_us);
    if (e->m != bf16fp32__tune_bucket(s->m))
      snprintf(bucket, sizeof bucket, " (nearest tuned for M=%lld)", (long long)s->m);
    char note[160] = "";
    if (count == 0)
      snprintf(note, sizeof note, " (not in this build: the rules decide)");
    else if (variant_elsewhere)
      snprintf(note, sizeof note, " (the winner's variant was timed at M=%lld only: the runner-up first)",
               (long long)e->m);
    else if (swap && yields_plain)
      snprintf(note, sizeof note, " (not shorter than %s's plain %.2f us: %s first)",
               BF16FP32__TUNE_BASELINE, plain_us, BF16FP32__TUNE_BASELINE);
    else if (swap)
      snprintf(note, sizeof note, " (within %.0f %% of the %s baseline: %s first)",
               100 * margin_of(e->winner), BF16FP32__TUNE_BASELINE, BF16FP32__TUNE_BASELINE);
    else if (w < 0)
      snprintf(note, sizeof note, " (the winner is not in this build)");
    else if (default_here)
      snprintf(note, sizeof note, " (a variant timed at M=%lld only: the default here)", (long long)e->m);
    snprintf(why, why_len, "tuned: %s: %sM bucket %lld%s: %s %.2f us%s%s", source,
             under_pdl ? "under PDL: " : "", (long long)e->m, bucket, e->winner, e->winner_us, runner,
             note);
  }
  return count;
}
