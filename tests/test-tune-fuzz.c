/* Parser fuzz test: a bounded, seeded random-mutation loop over a valid tuning file. The
 * parser must never crash, read out of bounds or leak (the ASan+UBSan build runs this too),
 * and never misparse: every accepted entry says exactly what its line says (checked with an
 * independent reading of the line), intact lines are kept, and what is accepted writes and
 * reads back the same, its PDL flag (device-pdl lines) and backend@variant names included.
 * BF16FP32_FUZZ_SEED / BF16FP32_FUZZ_ITERS override the defaults. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tune-file.h"
#include "variant.h"
#include "support.h"
#include "testing.h"


static uint64_t rng_state;
static uint64_t rnd(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

/* --- the valid file mutated --- */

static char *base_text(void) {
  bf16fp32__tune_header h;
  memset(&h, 0, sizeof h);
  h.format = BF16FP32__TUNE_FORMAT;
  snprintf(h.library, sizeof h.library, "%s", BF16FP32_VERSION);
  h.has_gpu = h.has_cpu = true;
  snprintf(h.gpu.name, sizeof h.gpu.name, "NVIDIA H200");
  h.gpu.sm_count = 132, h.gpu.cc_major = 9, h.gpu.cc_minor = 0;
  snprintf(h.gpu.cuda_runtime, sizeof h.gpu.cuda_runtime, "13.0");
  snprintf(h.gpu.cuda_driver, sizeof h.gpu.cuda_driver, "13.0");
  snprintf(h.gpu.cublas, sizeof h.gpu.cublas, "13.1.0");
  bf16fp32__cpu_identity_query(2, &h.cpu);
  /* Variant names (as cublaslt's algorithms and smallm's stagings are written), and one of a
   * backend beside its own plain name. */
  const char *dev[] = {"smallm", "cublas", "cublaslt@21.18.1.0.0.0.0.0.1", "fp32", "smallm@2.3"};
  const char *host[] = {"cpu-simd", "cpu-ref"};
  const int64_t nk[][2] = {{256, 4096}, {2048, 7168}, {384, 7168}};
  const int64_t ms[] = {1, 2, 7, 16, 32, 1024, 16384};
  bf16fp32__tune_entry e[64];
  int n = 0;
  /* 21 plain entries, then 8 device-pdl ones, most on an (n, k, m) that a device entry also has
   * (a parser that lost the flag would merge them). */
  for (int p = 0; p < 5; p++)
    for (int i = 0; i < 7; i++) {
      bool pdl = p >= 3;
      if (pdl && i % 2) continue;
      bf16fp32__tune_entry *x = &e[n++];
      memset(x, 0, sizeof *x);
      x->where = pdl || (n % 5) ? BF16FP32_DEVICE : BF16FP32_HOST;
      x->pdl = pdl;
      x->n = nk[p % 3][0], x->k = nk[p % 3][1], x->m = ms[i];
      const char **names = x->where == BF16FP32_DEVICE ? dev : host;
      int count = x->where == BF16FP32_DEVICE ? 5 : 2;
      snprintf(x->winner, sizeof x->winner, "%s", names[n % count]);
      x->winner_us = 0.5 + n * 1.37;
      if (n % 7) {
        snprintf(x->runner_up, sizeof x->runner_up, "%s", names[(n + 1) % count]);
        x->runner_up_us = x->winner_us * 1.8;
      } else {
        x->runner_up_us = -1;
      }
    }
  char *text = NULL;
  size_t len = 0;
  if (bf16fp32__tune_file_format(&h, e, n, &text, &len) != BF16FP32_OK) exit(1);
  return text;
}

static const char *tokens[] = {
    "device", "host", "\t", "\n", " ", "-", "\t-\t-", "# format\t", "# format\t2\n", "# library\t",
    "# gpu.name\t", "# gpu.sm_count\t", "# cpu.threads\t", "# gpu.compute_capability\t9.",
    "99999999999999999999", "0", "1", "16", "48", "1024", "2.5", ".5", "5.", "1e3", "nan", "inf",
    "\r", "#", "smallm", "cpu-ref", "\xff\xfe", "123456789012.123456789", "0.0000000001",
    "device-pdl", "-pdl", "@", "@7", "smallm@", "cublaslt@1.2.3", ".", "@2147483648",
    "@0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0", /* 17 fields: one too many */
};

/* One random change to buf (len bytes, cap bytes of room); returns the new length. */
static size_t mutate(char *buf, size_t len, size_t cap) {
  static const char interesting[] = {'\t', '\n', '\r', '\0', '#', ' ', '-', '.', '0', '9', 'a', (char)0xff};
  switch (below(8)) {
    case 0: /* flip a bit */
      if (len) buf[below(len)] ^= (char)(1u << below(8));
      return len;
    case 1: /* replace a byte */
      if (len) buf[below(len)] = interesting[below(sizeof interesting)];
      return len;
    case 2: { /* insert a byte */
      if (len + 1 > cap) return len;
      size_t at = below(len + 1);
      memmove(buf + at + 1, buf + at, len - at);
      buf[at] = interesting[below(sizeof interesting)];
      return len + 1;
    }
    case 3: { /* delete a range */
      if (!len) return len;
      size_t at = below(len), n = 1 + below(20);
      if (n > len - at) n = len - at;
      memmove(buf + at, buf + at + n, len - at - n);
      return len - n;
    }
    case 4: { /* duplicate a range (repeated lines, repeated keys) */
      if (!len) return len;
      size_t at = below(len), n = 1 + below(80);
      if (n > len - at) n = len - at;
      if (len + n > cap) return len;
      size_t to = below(len + 1);
      char tmp[80];
      memcpy(tmp, buf + at, n);
      memmove(buf + to + n, buf + to, len - to);
      memcpy(buf + to, tmp, n);
      return len + n;
    }
    case 5: /* truncate */
      return below(len + 1);
    case 6: { /* insert a token */
      const char *t = tokens[below(sizeof tokens / sizeof tokens[0])];
      size_t n = strlen(t);
      if (len + n > cap) return len;
      size_t at = below(len + 1);
      memmove(buf + at + n, buf + at, len - at);
      memcpy(buf + at, t, n);
      return len + n;
    }
    default: { /* overwrite a field-sized run with digits */
      if (!len) return len;
      size_t at = below(len), n = 1 + below(6);
      for (size_t i = 0; i < n && at + i < len; i++) buf[at + i] = (char)('0' + below(10));
      return len;
    }
  }
}

/* --- the checks --- */

/* A backend name, optionally "@" and a variant text (test-variants checks that text's rule). */
static bool name_ok(const char *s) {
  size_t n = strlen(s);
  const char *at = strchr(s, '@');
  int64_t fields[BF16FP32__VARIANT_FIELDS];
  if (n == 0 || n >= BF16FP32__TUNE_NAME_LEN || at == s) return false;
  if (at && bf16fp32__variant_parse(at + 1, fields) < 0) return false;
  for (size_t i = 0; i < (at ? (size_t)(at - s) : n); i++)
    if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-", s[i])) return false;
  return true;
}

static bool text_ok(const char *s, size_t cap) {
  size_t n = strnlen(s, cap);
  if (n == cap) return false;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) return false;
  return n == 0 || (s[0] != ' ' && s[n - 1] != ' ');
}

/* Line `no` (1-based) of text: start and length without the newline; false when it has none. */
static bool line_of(const char *text, size_t len, int no, const char **start, size_t *n) {
  size_t begin = 0;
  int line = 1;
  for (size_t i = 0; i < len; i++) {
    if (text[i] != '\n') continue;
    if (line == no) {
      *start = text + begin;
      *n = i - begin;
      return true;
    }
    line++;
    begin = i + 1;
  }
  *start = text;
  *n = 0;
  return false;
}

/* An independent reading of a data line: strtoll / strtod on whitespace-split fields. */
static bool line_says(const char *start, size_t n, const bf16fp32__tune_entry *e) {
  char line[5000];
  if (n >= sizeof line) return false;
  memcpy(line, start, n);
  line[n] = '\0';
  if (n && line[n - 1] == '\r') line[n - 1] = '\0';
  char *f[9];
  int c = 0;
  for (char *tok = strtok(line, " \t"); tok && c < 9; tok = strtok(NULL, " \t")) f[c++] = tok;
  if (c != 8) return false;
  const char *where = e->where == BF16FP32_HOST ? "host" : e->pdl ? "device-pdl" : "device";
  if (strcmp(f[0], where) != 0) return false;
  if (strtoll(f[1], NULL, 10) != e->n || strtoll(f[2], NULL, 10) != e->k || strtoll(f[3], NULL, 10) != e->m)
    return false;
  if (strcmp(f[4], e->winner) != 0 || fabs(strtod(f[5], NULL) - e->winner_us) > 1e-9 * (1 + e->winner_us))
    return false;
  if (!e->runner_up[0]) return strcmp(f[6], "-") == 0 && strcmp(f[7], "-") == 0;
  return strcmp(f[6], e->runner_up) == 0 && fabs(strtod(f[7], NULL) - e->runner_up_us) <= 1e-9 * (1 + e->runner_up_us);
}

static bool same(const bf16fp32__tune_entry *a, const bf16fp32__tune_entry *b) {
  return a->where == b->where && a->pdl == b->pdl && a->n == b->n && a->k == b->k && a->m == b->m &&
         strcmp(a->winner, b->winner) == 0 && strcmp(a->runner_up, b->runner_up) == 0 &&
         fabs(a->winner_us - b->winner_us) < 0.0006 &&
         (a->runner_up[0] ? fabs(a->runner_up_us - b->runner_up_us) < 0.0006 : b->runner_up_us < 0);
}

static void count_warning(void *user, int line, const char *msg) {
  (void)line;
  (void)msg;
  ++*(int *)user;
}

static void check_one(const char *text, size_t len, const bf16fp32__tune_file *orig, const char *orig_text,
                      size_t orig_len, uint64_t iter) {
  bf16fp32__tune_file f;
  int warnings = 0;
  EXPECT(bf16fp32__tune_file_parse(text, len, &f, count_warning, &warnings) == BF16FP32_OK, "iter %llu",
         (unsigned long long)iter);
  EXPECT(warnings >= f.skipped, "iter %llu: %d warnings for %d skipped", (unsigned long long)iter, warnings,
         f.skipped);
  const bf16fp32__tune_header *h = &f.header;
  EXPECT(text_ok(h->library, sizeof h->library) && text_ok(h->gpu.name, sizeof h->gpu.name) &&
             text_ok(h->gpu.cublas, sizeof h->gpu.cublas) && text_ok(h->cpu.model, sizeof h->cpu.model) &&
             text_ok(h->cpu.features, sizeof h->cpu.features),
         "iter %llu: header strings clean", (unsigned long long)iter);
  EXPECT(!h->has_gpu || (h->gpu.name[0] && h->gpu.sm_count > 0 && h->gpu.cuda_runtime[0] &&
                         h->gpu.cuda_driver[0] && h->gpu.cublas[0]),
         "iter %llu: complete gpu identity", (unsigned long long)iter);
  EXPECT(!h->has_cpu || (h->cpu.model[0] && h->cpu.features[0] && h->cpu.threads > 0),
         "iter %llu: complete cpu identity", (unsigned long long)iter);

  for (int i = 0; i < f.table.count; i++) {
    const bf16fp32__tune_entry *e = &f.table.entries[i];
    bool fields = (e->where == 0 || e->where == 1) && (e->pdl == 0 || (e->pdl == 1 && e->where == 1)) &&
                  e->n >= 1 && e->k >= 1 && bf16fp32__tune_is_bucket(e->m) &&
                  name_ok(e->winner) && isfinite(e->winner_us) && e->winner_us >= 0 && e->winner_us < 1e13 &&
                  (e->runner_up[0] ? name_ok(e->runner_up) && strcmp(e->runner_up, e->winner) != 0 &&
                                         isfinite(e->runner_up_us) && e->runner_up_us >= 0
                                   : e->runner_up_us < 0);
    EXPECT(fields, "iter %llu: entry %d fields", (unsigned long long)iter, i);
    const char *start;
    size_t n;
    bool has = line_of(text, len, e->line, &start, &n);
    EXPECT(has && line_says(start, n, e), "iter %llu: entry %d is not what line %d says: %.*s",
           (unsigned long long)iter, i, e->line, has ? (int)n : 0, has ? start : "");
    if (i > 0) {
      const bf16fp32__tune_entry *p = &f.table.entries[i - 1];
      int c = p->where != e->where ? p->where - e->where : p->pdl - e->pdl;
      bool ordered = c < 0 || (c == 0 && (p->n < e->n || (p->n == e->n && (p->k < e->k || (p->k == e->k && p->m < e->m)))));
      EXPECT(ordered, "iter %llu: sorted, unique", (unsigned long long)iter);
    }
  }

  /* Intact original data lines are kept (or replaced by a later line of the same key). */
  const char *os[64], *start = text, *nl;
  size_t on[64];
  int count = orig->table.count < 64 ? orig->table.count : 64;
  for (int j = 0; j < count; j++) line_of(orig_text, orig_len, orig->table.entries[j].line, &os[j], &on[j]);
  /* One walk over the lines (line_of for each would make the check quadratic in the lines). */
  for (int no = 1; (nl = memchr(start, '\n', (size_t)(text + len - start))) != NULL; no++, start = nl + 1) {
    size_t n = (size_t)(nl - start);
    for (int j = 0; j < count; j++) {
      if (on[j] != n || memcmp(os[j], start, n) != 0) continue;
      const bf16fp32__tune_entry *o = &orig->table.entries[j];
      bool kept = false;
      for (int i = 0; i < f.table.count && !kept; i++) {
        const bf16fp32__tune_entry *e = &f.table.entries[i];
        kept = e->where == o->where && e->pdl == o->pdl && e->n == o->n && e->k == o->k && e->m == o->m && e->line >= no;
      }
      EXPECT(kept, "iter %llu: intact line %d lost", (unsigned long long)iter, no);
    }
  }

  /* What was accepted writes and reads back the same, without a warning. */
  char *again = NULL;
  size_t again_len = 0;
  bf16fp32__tune_header hh = f.header;
  if (hh.format == 0) hh.format = 1;             /* a missing line is written as a value: */
  if (!hh.library[0]) snprintf(hh.library, sizeof hh.library, "x"); /* give them one */
  EXPECT(bf16fp32__tune_file_format(&hh, f.table.entries, f.table.count, &again, &again_len) == BF16FP32_OK,
         "format");
  bf16fp32__tune_file g;
  int w2 = 0;
  bf16fp32__tune_file_parse(again, again_len, &g, count_warning, &w2);
  EXPECT(w2 == 0 && g.table.count == f.table.count, "iter %llu: re-read %d warnings, %d of %d",
         (unsigned long long)iter, w2, g.table.count, f.table.count);
  for (int i = 0; i < g.table.count && i < f.table.count; i++)
    EXPECT(same(&g.table.entries[i], &f.table.entries[i]), "iter %llu: re-read entry %d", (unsigned long long)iter, i);
  EXPECT(g.header.has_gpu == f.header.has_gpu && g.header.has_cpu == f.header.has_cpu &&
             (!g.header.has_gpu || bf16fp32__gpu_identity_match(&g.header.gpu, &f.header.gpu, false)) &&
             (!g.header.has_cpu || bf16fp32__cpu_identity_match(&g.header.cpu, &f.header.cpu, false)),
         "iter %llu: header re-read", (unsigned long long)iter);
  bf16fp32__tune_file_clear(&g);
  free(again);
  bf16fp32__tune_file_clear(&f);
}

/* Whether the file at path holds exactly the len bytes of text. */
static bool file_holds(const char *path, const char *text, size_t len) {
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  char *got = testing_alloc(len + 1);
  const size_t n = fread(got, 1, len + 1, f);
  fclose(f);
  const bool same_bytes = n == len && memcmp(got, text, len) == 0;
  free(got);
  return same_bytes;
}

static void ignore_log(void *user, int level, const char *line) {
  (void)level;
  (void)line;
  ++*(int *)user;
}

int main(void) {
  const char *seed_env = getenv("BF16FP32_FUZZ_SEED"), *iters_env = getenv("BF16FP32_FUZZ_ITERS");
  uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) : 0x7e57f11eULL;
  long iters = iters_env ? strtol(iters_env, NULL, 10) : 4000;
  rng_state = seed;

  char dir[512], path[600];
  if (sup_temp_dir(dir, sizeof dir, "tune-fuzz")) return 1;
  snprintf(path, sizeof path, "%s/fuzz.tsv", dir);

  char *base = base_text();
  size_t base_len = strlen(base);
  bf16fp32__tune_file orig;
  bf16fp32__tune_file_parse(base, base_len, &orig, NULL, NULL);
  int pdl = 0, variants = 0;
  for (int i = 0; i < orig.table.count; i++) {
    pdl += orig.table.entries[i].pdl;
    variants += strchr(orig.table.entries[i].winner, '@') != NULL;
  }
  if (orig.table.count != 29 || orig.skipped || pdl != 8 || variants < 4) {
    fprintf(stderr, "base file: %d entries (%d device-pdl, %d variant winners), %d skipped\n",
            orig.table.count, pdl, variants, orig.skipped);
    return 1;
  }
  /* The base itself reads as written and round-trips (PDL flags and variants included). */
  check_one(base, base_len, &orig, base, base_len, 0);
  size_t cap = base_len * 2 + 256;
  char *work = testing_alloc(cap);
  int logged = 0;
  for (long it = 0; it < iters; it++) {
    memcpy(work, base, base_len);
    size_t len = base_len;
    int rounds = 1 + (int)below(4);
    for (int r = 0; r < rounds; r++) len = mutate(work, len, cap);
    /* An exact-size copy, so that any read past the end is an ASan error. */
    char *exact = testing_alloc(len);
    memcpy(exact, work, len);
    check_one(exact, len, &orig, base, base_len, (uint64_t)it);

    if (it % 16 == 0) {
      /* The context's loader on the mutated file: no crash, only host entries (no device). */
      FILE *f = fopen(path, "wb");
      if (f) {
        fwrite(exact, 1, len, f);
        fclose(f);
      }
      bf16fp32__config cfg;
      memset(&cfg, 0, sizeof cfg);
      cfg.device = -1;
      cfg.cpu_threads = 2;
      cfg.log_level = 2;
      cfg.log_fn = ignore_log;
      cfg.log_user = &logged;
      snprintf(cfg.tune_file, sizeof cfg.tune_file, "%s", path);
      bf16fp32__tune_table *t = NULL;
      const bf16fp32_status loaded = bf16fp32__tune_load_for_context(&cfg, &t);
      EXPECT(loaded == BF16FP32_OK || (loaded == BF16FP32_TUNE_FILE && !t), "iter %ld: load %s", it,
             bf16fp32_status_name(loaded));
      for (int i = 0; t && i < t->count; i++)
        EXPECT(t->entries[i].where == BF16FP32_HOST, "iter %ld: loaded a device entry without a device", it);
      bf16fp32__tune_free(t);
    }
    if (it % 64 == 0) {
      /* Merging into the damaged file gives a clean file holding the new entry where it is
       * still sound (a stale one is); a corrupt one (no format line, or this version's with a
       * malformed line) is refused and left as it is. */
      bf16fp32__tune_file damaged;
      bf16fp32__tune_file_parse(exact, len, &damaged, NULL, NULL);
      const bool tune_file = bf16fp32__tune_file_check(&damaged, path, "") == BF16FP32_OK;
      bf16fp32__tune_file_clear(&damaged);
      bf16fp32__tune_header mine;
      memset(&mine, 0, sizeof mine);
      mine.has_cpu = true;
      bf16fp32__cpu_identity_query(2, &mine.cpu);
      bf16fp32__tune_entry e;
      memset(&e, 0, sizeof e);
      e.where = BF16FP32_HOST, e.n = 7, e.k = 7, e.m = 7, e.winner_us = 1, e.runner_up_us = -1;
      snprintf(e.winner, sizeof e.winner, "cpu-ref");
      const bf16fp32_status merged = bf16fp32__tune_file_merge(path, &mine, &e, 1, NULL, NULL);
      if (!tune_file) {
        EXPECT(merged == BF16FP32_TUNE_FILE && file_holds(path, exact, len),
               "iter %ld: corrupt: refused (%s), file kept", it, bf16fp32_status_name(merged));
      } else {
        EXPECT(merged == BF16FP32_OK, "iter %ld: merge", it);
        bf16fp32__tune_file g;
        int err = 0, w = 0;
        EXPECT(bf16fp32__tune_file_read(path, &g, &err, count_warning, &w) == BF16FP32_OK && w == 0 &&
                   bf16fp32__tune_table_lookup(&g.table, BF16FP32_HOST, 0, 7, 7, 7),
               "iter %ld: merged file clean (%d warnings)", it, w);
        bf16fp32__tune_file_clear(&g);
      }
    }
    free(exact);
  }
  free(work);
  free(base);
  bf16fp32__tune_file_clear(&orig);
  sup_remove_tree(dir);
  printf("test-tune-fuzz: seed %#llx, %ld iterations\n", (unsigned long long)seed, iters);
  return testing_summary("test-tune-fuzz");
}
