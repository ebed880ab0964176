/* The tuning file: round trip, malformed and truncated lines, header (device, version)
 * mismatches as the context loads them, the default path, merging, the atomic write, and
 * the C emitter of the built-in table; the header's identities themselves (cleaning,
 * matching, describing). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tune-file.h"
#include "support.h"
#include "testing.h"


static char dir[512];

static void path_in_dir(char *buf, size_t len, const char *name) { snprintf(buf, len, "%s/%s", dir, name); }

/* --- warnings and log lines, collected --- */

typedef struct lines {
  int count;
  char text[64][512];
  int line[64];
} lines;

static void collect_warning(void *user, int line, const char *msg) {
  lines *l = user;
  if (l->count < 64) {
    l->line[l->count] = line;
    snprintf(l->text[l->count], sizeof l->text[0], "%s", msg);
  }
  l->count++;
}

static void collect_log(void *user, int level, const char *line) {
  (void)level;
  collect_warning(user, 0, line);
}

/* How many of the lines hold a, and b too where b is given. */
static int count_containing(const lines *l, const char *a, const char *b) {
  int n = 0;
  for (int i = 0; i < l->count && i < 64; i++)
    n += strstr(l->text[i], a) && (!b || strstr(l->text[i], b));
  return n;
}

/* The line number a line appended to text (whole lines) would have. */
static int next_line(const char *text) {
  int n = 1;
  for (const char *p = text; *p; p++) n += *p == '\n';
  return n;
}

static bool any_contains(const lines *l, const char *a, const char *b) {
  return count_containing(l, a, b) > 0;
}

static void dump(const char *what, const lines *l) {
  for (int i = 0; i < l->count && i < 64; i++) fprintf(stderr, "  %s[%d] line %d: %s\n", what, i, l->line[i], l->text[i]);
}

/* --- fixtures --- */

static bf16fp32__tune_header sample_header(void) {
  bf16fp32__tune_header h;
  memset(&h, 0, sizeof h);
  h.format = BF16FP32__TUNE_FORMAT;
  snprintf(h.library, sizeof h.library, "%s", BF16FP32_VERSION);
  h.has_gpu = true;
  snprintf(h.gpu.name, sizeof h.gpu.name, "NVIDIA H200");
  h.gpu.sm_count = 132;
  h.gpu.cc_major = 9;
  h.gpu.cc_minor = 0;
  snprintf(h.gpu.cuda_runtime, sizeof h.gpu.cuda_runtime, "13.0");
  snprintf(h.gpu.cuda_driver, sizeof h.gpu.cuda_driver, "13.0");
  snprintf(h.gpu.cublas, sizeof h.gpu.cublas, "13.1.0");
  h.has_cpu = true;
  bf16fp32__cpu_identity_query(3, &h.cpu);
  return h;
}

static int sample_entries(bf16fp32__tune_entry *e) {
  int n = 0;
  e[n++] = sup_tune_entry(BF16FP32_DEVICE, 256, 4096, 1, "smallm", 2.1, "cublas", 6.3, 0);
  e[n++] = sup_tune_entry(BF16FP32_DEVICE, 256, 4096, 32, "smallm", 2.875, "cublaslt", 6.4, 0);
  e[n++] = sup_tune_entry(BF16FP32_DEVICE, 2048, 7168, 16384, "cublas", 732.4, "cublaslt", 741.25, 0);
  e[n] = sup_tune_entry(BF16FP32_DEVICE, 256, 4096, 1, "smallm", 1.95, "cublas", 6.3, 0);
  e[n++].pdl = 1; /* the same (N, K, M) measured under PDL: a key of its own */
  e[n++] = sup_tune_entry(BF16FP32_HOST, 256, 4096, 1, "cpu-simd", 120.5, "cpu-ref", 9001.125, 0);
  e[n++] = sup_tune_entry(BF16FP32_HOST, 384, 7168, 7, "cpu-ref", 0.001, "", 0, 0);
  return n;
}

static bool same_entry(const bf16fp32__tune_entry *a, const bf16fp32__tune_entry *b) {
  return a->where == b->where && a->pdl == b->pdl && a->n == b->n && a->k == b->k && a->m == b->m &&
         strcmp(a->winner, b->winner) == 0 && strcmp(a->runner_up, b->runner_up) == 0 &&
         (long long)(a->winner_us * 1000 + 0.5) == (long long)(b->winner_us * 1000 + 0.5) &&
         (a->runner_up[0] ? (long long)(a->runner_up_us * 1000 + 0.5) == (long long)(b->runner_up_us * 1000 + 0.5)
                          : b->runner_up_us < 0);
}

static const bf16fp32__tune_entry *find(const bf16fp32__tune_table *t, int where, int pdl, int64_t n,
                                         int64_t k, int64_t m) {
  for (int i = 0; i < t->count; i++) {
    const bf16fp32__tune_entry *e = &t->entries[i];
    if (e->where == where && e->pdl == pdl && e->n == n && e->k == k && e->m == m) return e;
  }
  return NULL;
}

/* The sample as the library writes files: sorted by key. */
static char *format_sample(const bf16fp32__tune_header *h) {
  bf16fp32__tune_entry e[16];
  int n = sample_entries(e);
  bf16fp32__tune_table t;
  memset(&t, 0, sizeof t);
  for (int i = 0; i < n; i++) bf16fp32__tune_table_add(&t, &e[i]);
  bf16fp32__tune_table_finish(&t);
  char *text = NULL;
  size_t len = 0;
  bf16fp32_status st = bf16fp32__tune_file_format(h, t.entries, t.count, &text, &len);
  bf16fp32__tune_table_clear(&t);
  if (st != BF16FP32_OK || strlen(text) != len) {
    fprintf(stderr, "format failed\n");
    exit(1);
  }
  return text;
}

/* --- tests --- */

static void test_round_trip(void) {
  bf16fp32__tune_header h = sample_header();
  bf16fp32__tune_entry e[16];
  int n = sample_entries(e);
  char *text = format_sample(&h);
  lines w = {0};
  bf16fp32__tune_file f;
  EXPECT(bf16fp32__tune_file_parse(text, strlen(text), &f, collect_warning, &w) == BF16FP32_OK, "parse");
  EXPECT(w.count == 0 && f.skipped == 0, "no warnings (%d)", w.count);
  if (w.count) dump("warning", &w);
  EXPECT(f.header.format == 1 && strcmp(f.header.library, BF16FP32_VERSION) == 0, "format/library");
  EXPECT(f.header.has_gpu && f.header.has_cpu, "both sections");
  EXPECT(bf16fp32__gpu_identity_match(&f.header.gpu, &h.gpu, false), "gpu identity");
  EXPECT(bf16fp32__cpu_identity_match(&f.header.cpu, &h.cpu, false), "cpu identity");
  EXPECT(bf16fp32__tune_header_current(&f.header, NULL, 0), "current");
  EXPECT(f.table.count == n, "count %d of %d", f.table.count, n);
  for (int i = 0; i < n; i++) {
    const bf16fp32__tune_entry *g = find(&f.table, e[i].where, e[i].pdl, e[i].n, e[i].k, e[i].m);
    EXPECT(g && same_entry(g, &e[i]) && g->line > 0, "entry %d", i);
  }
  /* Writing what was read gives the same bytes. */
  char *again = NULL;
  size_t len = 0;
  bf16fp32__tune_file_format(&f.header, f.table.entries, f.table.count, &again, &len);
  EXPECT(again && strcmp(again, text) == 0, "format(parse(text)) == text");
  /* A person can read it: TSV lines, '#' header. */
  EXPECT(strstr(text, "# gpu.name\tNVIDIA H200\n") && strstr(text, "# library\t" BF16FP32_VERSION "\n") &&
             strstr(text, "device\t256\t4096\t1\tsmallm\t2.100\tcublas\t6.300\n") &&
             strstr(text, "device-pdl\t256\t4096\t1\tsmallm\t1.950\tcublas\t6.300\n") &&
             strstr(text, "host\t384\t7168\t7\tcpu-ref\t0.001\t-\t-\n"),
         "text:\n%s", text);
  free(again);
  free(text);
  bf16fp32__tune_file_clear(&f);

  /* Hand edits: spaces for tabs, CRLF, blank lines, comments, stray spaces in a header value. */
  const char *edited =
      "# format\t1\r\n# library\t" BF16FP32_VERSION "\r\n"
      "# gpu.name\t  NVIDIA   H200 \n# gpu.sm_count\t132\n# gpu.compute_capability\t9.0\n"
      "# gpu.cuda_runtime\t13.0\n# gpu.cuda_driver\t13.0\n# gpu.cublas\t13.1.0\n"
      "\n   \n# a comment line\n#another\n"
      "device 256  4096\t 2 smallm 2 cublas 3.5\r\n";
  memset(&w, 0, sizeof w);
  bf16fp32__tune_file_parse(edited, strlen(edited), &f, collect_warning, &w);
  EXPECT(w.count == 0, "edited: %d warnings", w.count);
  if (w.count) dump("warning", &w);
  EXPECT(f.table.count == 1 && f.table.entries[0].m == 2 && f.table.entries[0].winner_us == 2.0 &&
             f.table.entries[0].runner_up_us == 3.5 && f.table.entries[0].line == 13,
         "edited entry");
  EXPECT(strcmp(f.header.gpu.name, "NVIDIA H200") == 0 && f.header.has_gpu && !f.header.has_cpu,
         "cleaned name '%s'", f.header.gpu.name);
  bf16fp32__tune_file_clear(&f);

  /* The largest times the parser reads (12 integer digits) write back as times it reads: a
   * merge rewrites the file, and an entry it could not read back would be lost. */
  const char *huge = "host\t64\t64\t1\tcpu-ref\t999999999999.9999\tcpu-simd\t999999999999.999999999\n";
  bf16fp32__tune_file_parse(huge, strlen(huge), &f, NULL, NULL);
  EXPECT(f.table.count == 1, "huge times read");
  bf16fp32__tune_file_format(&h, f.table.entries, f.table.count, &again, &len);
  bf16fp32__tune_file g;
  memset(&w, 0, sizeof w);
  bf16fp32__tune_file_parse(again, len, &g, collect_warning, &w);
  EXPECT(w.count == 0 && g.table.count == 1 && g.table.entries[0].winner_us > 999999999999.99 &&
             g.table.entries[0].runner_up_us > 999999999999.99,
         "huge times written back readable (%d warnings)", w.count);
  if (w.count) dump("warning", &w);
  bf16fp32__tune_file_clear(&g);
  bf16fp32__tune_file_clear(&f);
  free(again);
}

static void test_malformed(void) {
  bf16fp32__tune_header h = sample_header();
  char *good = format_sample(&h);
  size_t cap = strlen(good) + 4096;
  char *text = testing_alloc(cap);
  snprintf(text, cap, "%s", good);
  const int first_bad = next_line(good);
  const char *bad[] = {
      "device\t256\t4096\t64\tsmallm\t2.1\tcublas\n",                  /* 7 fields */
      "device\t256\t4096\t64\tsmallm\t2.1\tcublas\t6.3\textra\n",      /* 9 fields */
      "gpu\t256\t4096\t64\tsmallm\t2.1\tcublas\t6.3\n",                /* where */
      "device\t-256\t4096\t64\tsmallm\t2.1\tcublas\t6.3\n",            /* sign */
      "device\t0\t4096\t64\tsmallm\t2.1\tcublas\t6.3\n",               /* zero */
      "device\t256\t4096\t44\tsmallm\t2.1\tcublas\t6.3\n",             /* not a bucket */
      "device\t256\t4096\t64\tsmall m\t2.1\tcublas\t6.3\n",            /* 9 fields by the space */
      "device\t256\t4096\t64\tsmallm\t2,1\tcublas\t6.3\n",             /* decimal comma */
      "device\t256\t4096\t64\tsmallm\t1e3\tcublas\t6.3\n",             /* exponent */
      "device\t256\t4096\t64\tsmallm\tnan\tcublas\t6.3\n",             /* nan */
      "device\t256\t4096\t64\tsmallm\t2.1\tsmallm\t6.3\n",             /* runner-up = winner */
      "device\t256\t4096\t64\tsmallm\t2.1\t-\t6.3\n",                  /* half a runner-up */
      "device\t99999999999999999999\t4096\t64\tsmallm\t2.1\tcublas\t6.3\n", /* overflow */
      "device\t256\t4096\t64\tsm@llm\t2.1\tcublas\t6.3\n",             /* name characters */
      "# gpu.sm_count\tmany\n",                                       /* header value */
  };
  int nbad = (int)(sizeof bad / sizeof bad[0]);
  for (int i = 0; i < nbad; i++) strncat(text, bad[i], cap - strlen(text) - 1);
  strncat(text, "host\t999\t4096\t1\tcpu-ref\t5\t-\t-\n", cap - strlen(text) - 1); /* good, after */
  lines w = {0};
  bf16fp32__tune_file f;
  bf16fp32__tune_file_parse(text, strlen(text), &f, collect_warning, &w);
  EXPECT(f.skipped == nbad, "skipped %d of %d", f.skipped, nbad);
  /* The first 10 one by one, the other 5 in one warning of the whole file (line 0). */
  EXPECT(nbad == 15 && w.count == 11, "warnings %d", w.count);
  for (int i = 0; i < 10 && i < w.count; i++)
    EXPECT(w.line[i] == first_bad + i, "warning %d at line %d, want %d: %s", i, w.line[i], first_bad + i, w.text[i]);
  EXPECT(w.count == 11 && w.line[10] == 0 && strstr(w.text[10], "5 more malformed lines skipped"),
         "the rest counted: %s", w.count == 11 ? w.text[10] : "-");
  EXPECT(f.table.count == 7 && find(&f.table, BF16FP32_HOST, 0, 999, 4096, 1), "the rest is kept (%d)", f.table.count);
  EXPECT(f.header.gpu.sm_count == 132 && f.header.has_gpu, "a bad header value keeps the earlier one");
  bf16fp32__tune_file_clear(&f);

  /* A NUL byte inside a line, and an over-long line. */
  size_t len = strlen(good);
  char *nul = testing_alloc(len + 64);
  memcpy(nul, good, len);
  static const char nul_line[] = "host\t1\t1\t1\tcpu-ref\t1\x00\t-\t-\n";
  memcpy(nul + len, nul_line, sizeof nul_line - 1);
  memset(&w, 0, sizeof w);
  bf16fp32__tune_file_parse(nul, len + sizeof nul_line - 1, &f, collect_warning, &w);
  EXPECT(f.skipped == 1 && f.table.count == 6 && any_contains(&w, "NUL", NULL), "NUL line");
  bf16fp32__tune_file_clear(&f);
  free(nul);
  char *lng = testing_alloc(len + 10000);
  memcpy(lng, good, len);
  memset(lng + len, 'x', 9000);
  lng[len + 9000] = '\n';
  memset(&w, 0, sizeof w);
  bf16fp32__tune_file_parse(lng, len + 9001, &f, collect_warning, &w);
  EXPECT(f.skipped == 1 && f.table.count == 6, "long line");
  bf16fp32__tune_file_clear(&f);
  free(lng);

  /* Incomplete GPU identity: said once, at line 0. */
  const char *partial = "# format\t1\n# gpu.name\tX\n# gpu.sm_count\t1\ndevice\t1\t1\t1\tsmallm\t1\t-\t-\n";
  memset(&w, 0, sizeof w);
  bf16fp32__tune_file_parse(partial, strlen(partial), &f, collect_warning, &w);
  EXPECT(!f.header.has_gpu && w.count == 1 && w.line[0] == 0 && any_contains(&w, "incomplete", NULL),
         "partial identity");
  bf16fp32__tune_file_clear(&f);
  /* The same of the CPU's. */
  const char *partial_cpu = "# cpu.model\tX\nhost\t1\t1\t1\tcpu-ref\t1\t-\t-\n";
  memset(&w, 0, sizeof w);
  bf16fp32__tune_file_parse(partial_cpu, strlen(partial_cpu), &f, collect_warning, &w);
  EXPECT(!f.header.has_cpu && w.count == 1 && w.line[0] == 0 &&
             any_contains(&w, "CPU", "incomplete"),
         "partial CPU identity");
  bf16fp32__tune_file_clear(&f);
  free(text);
  free(good);
}

/* One line parsed alone: whether it was kept (as an entry, or as a header value) rather than
 * skipped with a warning. */
static bool line_kept(const char *line) {
  bf16fp32__tune_file f;
  bf16fp32__tune_file_parse(line, strlen(line), &f, NULL, NULL);
  bool kept = f.skipped == 0;
  bf16fp32__tune_file_clear(&f);
  return kept;
}

/* Each field at its limit is read, and one past it refused: a value the writer never writes
 * (19 digits overflow, a format number past int wraps to 1, a name or header text one byte too
 * long overruns its field) must not slip in. */
static void test_field_limits(void) {
  char name63[64], name64[65], lib31[32], lib32[33];
  memset(name63, 'a', 63), name63[63] = '\0';
  memset(name64, 'a', 64), name64[64] = '\0';
  memset(lib31, '1', 31), lib31[31] = '\0';
  memset(lib32, '1', 32), lib32[32] = '\0';
  char name_ok[128], name_long[128], lib_ok[64], lib_long[64];
  snprintf(name_ok, sizeof name_ok, "host\t1\t1\t1\t%s\t1\t-\t-\n", name63);
  snprintf(name_long, sizeof name_long, "host\t1\t1\t1\t%s\t1\t-\t-\n", name64);
  snprintf(lib_ok, sizeof lib_ok, "# library\t%s\n", lib31);
  snprintf(lib_long, sizeof lib_long, "# library\t%s\n", lib32);
  const struct {
    const char *line;
    bool kept;
  } cases[] = {
      {"host\t999999999999999999\t1\t1\tcpu-ref\t1\t-\t-\n", true},  /* 18 digits */
      {"host\t9999999999999999999\t1\t1\tcpu-ref\t1\t-\t-\n", false}, /* 19: past int64 */
      {"host\t1\t1\t1\tcpu-ref\t999999999999\t-\t-\n", true},          /* 12 integer digits */
      {"host\t1\t1\t1\tcpu-ref\t1000000000000\t-\t-\n", false},        /* 13 */
      {"host\t1\t1\t1\tcpu-ref\t1.123456789\t-\t-\n", true},           /* 9 fraction digits */
      {"host\t1\t1\t1\tcpu-ref\t1.1234567891\t-\t-\n", false},         /* 10 */
      {"host\t1\t1\t1\tcpu-ref\t5.\t-\t-\n", false},
      {"host\t1\t1\t1\tcpu-ref\t.5\t-\t-\n", false},
      {"host\t1\t1\t1\tmy_backend.v2+x-y\t1\t-\t-\n", true}, /* every name character */
      {name_ok, true},
      {name_long, false},
      {lib_ok, true},
      {lib_long, false},
      {"# format\t4294967297\n", false}, /* 2^32 + 1: would wrap to format 1 as an int */
      {"# gpu.sm_count\t999999\n", true},
      {"# gpu.sm_count\t1000000\n", false},
      {"# cpu.threads\t1000000\n", false},
      {"# cpu.threads\t\n", false},
      {"# gpu.compute_capability\t999.999\n", true},
      {"# gpu.compute_capability\t1000.0\n", false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    EXPECT(line_kept(cases[i].line) == cases[i].kept, "%s: %.80s",
           cases[i].kept ? "kept" : "refused", cases[i].line);

  /* A header line may leave out the space after '#'. */
  bf16fp32__tune_file f;
  bf16fp32__tune_file_parse("#format\t1\n", 10, &f, NULL, NULL);
  EXPECT(f.header.format == 1 && f.skipped == 0, "'#format': format %d", f.header.format);
  bf16fp32__tune_file_clear(&f);

  /* A line of MAX_LINE (4096) bytes is read (trailing spaces pad it); one byte more is not. */
  static const char entry[] = "host\t1\t1\t1\tcpu-ref\t1\t-\t-";
  for (size_t len = 4096; len <= 4097; len++) {
    char *text = testing_alloc(len + 1);
    memset(text, ' ', len);
    memcpy(text, entry, sizeof entry - 1);
    text[len] = '\n';
    lines w = {0};
    bf16fp32__tune_file_parse(text, len + 1, &f, collect_warning, &w);
    bool kept = len == 4096;
    EXPECT(f.table.count == kept && f.skipped == !kept &&
               (kept || any_contains(&w, "longer", NULL)),
           "a line of %zu bytes: %d entries, %d skipped", len, f.table.count, f.skipped);
    bf16fp32__tune_file_clear(&f);
    free(text);
  }
}

/* Times outside what the tuner measures still write as times the parser reads: a merge
 * rewrites every entry of the file. */
static void test_time_written(void) {
  const struct {
    double us;
    const char *text;
  } cases[] = {{-1.0, "0.000"}, {NAN, "0.000"}, {1e20, "999999999999.999"},
               {INFINITY, "999999999999.999"}, {2.5, "2.500"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    bf16fp32__text t = {0};
    bf16fp32__text_time(&t, cases[i].us);
    EXPECT(t.p && strcmp(t.p, cases[i].text) == 0, "%g written as '%s', want '%s'", cases[i].us,
           t.p ? t.p : "(null)", cases[i].text);
    free(t.p);
  }
}

/* Every prefix of a valid file: no crash, a cut line never becomes an entry, every whole line
 * before the cut is kept as it was. */
static void test_truncated(void) {
  bf16fp32__tune_header h = sample_header();
  char *text = format_sample(&h);
  size_t len = strlen(text);
  bf16fp32__tune_file full;
  bf16fp32__tune_file_parse(text, len, &full, NULL, NULL);
  for (size_t cut = 0; cut <= len; cut++) {
    bf16fp32__tune_file f;
    lines w = {0};
    char *copy = testing_alloc(cut); /* exactly cut bytes, so ASan sees any over-read */
    memcpy(copy, text, cut);
    EXPECT(bf16fp32__tune_file_parse(copy, cut, &f, collect_warning, &w) == BF16FP32_OK, "cut %zu", cut);
    bool clean_cut = cut == 0 || text[cut - 1] == '\n';
    EXPECT(clean_cut ? f.skipped == 0 : f.skipped == 1, "cut %zu: skipped %d", cut, f.skipped);
    int whole = 0;
    for (size_t i = 0; i < cut; i++) whole += text[i] == '\n';
    for (int i = 0; i < f.table.count; i++) {
      const bf16fp32__tune_entry *e = &f.table.entries[i];
      const bf16fp32__tune_entry *o = find(&full.table, e->where, e->pdl, e->n, e->k, e->m);
      EXPECT(o && same_entry(e, o) && e->line <= whole, "cut %zu: entry at line %d", cut, e->line);
    }
    int want = 0;
    for (int i = 0; i < full.table.count; i++) want += full.table.entries[i].line <= whole;
    EXPECT(f.table.count == want, "cut %zu: %d entries, want %d", cut, f.table.count, want);
    bf16fp32__tune_file_clear(&f);
    free(copy);
  }
  bf16fp32__tune_file_clear(&full);
  free(text);
}

/* A file over the size limit (8 MiB: its parsed entries would take about 20 times that) is
 * refused before it is read; one at the limit is read. Sparse files: no disk is used. */
static void test_size_limit(void) {
  char path[1200];
  snprintf(path, sizeof path, "%s/big.tsv", dir);
  for (int over = 0; over <= 1; over++) {
    FILE *fp = fopen(path, "wb");
    CHECK(fp && ftruncate(fileno(fp), (off_t)(8 << 20) + over) == 0);
    if (fp) fclose(fp);
    bf16fp32__tune_file f;
    int err = -1;
    const bf16fp32_status st = bf16fp32__tune_file_read(path, &f, &err, NULL, NULL);
    if (over) {
      EXPECT(st == BF16FP32_TUNE_FILE && err == 0 && strstr(bf16fp32_last_error(), "larger than 8 MiB"),
             "over the limit: %s (%s)", bf16fp32_status_name(st), bf16fp32_last_error());
    } else {
      EXPECT(st == BF16FP32_OK && f.table.count == 0, "at the limit: %s", bf16fp32_status_name(st));
      if (st == BF16FP32_OK) bf16fp32__tune_file_clear(&f);
    }
  }
  remove(path);
}

/* --- the context's loading --- */

static bf16fp32__config test_config(const char *file, lines *log) {
  bf16fp32__config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.device = -1; /* CPU only: the tests run without a GPU */
  cfg.cpu_threads = 3;
  cfg.log_level = 2;
  cfg.log_fn = collect_log;
  cfg.log_user = log;
  snprintf(cfg.algo, sizeof cfg.algo, "auto");
  snprintf(cfg.tune_file, sizeof cfg.tune_file, "%s", file);
  return cfg;
}

static int level1_lines(const lines *l) {
  /* collect_log drops the level; the tests below use log_level 1 where it matters. */
  return l->count;
}

/* The loader's table for cfg, its status checked against want. */
static bf16fp32__tune_table *load(const bf16fp32__config *cfg, bf16fp32_status want) {
  bf16fp32__tune_table *t = NULL;
  const bf16fp32_status st = bf16fp32__tune_load_for_context(cfg, &t);
  EXPECT(st == want, "load %s: %s, want %s (%s)", cfg->tune_file, bf16fp32_status_name(st),
         bf16fp32_status_name(want), bf16fp32_last_error());
  return t;
}

static void test_load(void) {
  char path[1024];
  path_in_dir(path, sizeof path, "load.tsv");
  bf16fp32__tune_header h = sample_header(); /* cpu: this machine, 3 threads */
  char *text = format_sample(&h);
  sup_write_text(path, text);

  /* This CPU: the host entries apply; the device entries do not (no device here): one line. */
  lines log = {0};
  bf16fp32__config cfg = test_config(path, &log);
  cfg.log_level = 1;
  bf16fp32__tune_table *t = load(&cfg, BF16FP32_OK);
  EXPECT(t && t->count == 2, "host entries loaded (%d)", t ? t->count : -1);
  EXPECT(log.count == 1 && any_contains(&log, "device entries", "ignored"), "one line for the device part");
  if (log.count != 1) dump("log", &log);
  EXPECT(any_contains(&log, "device entries", "no CUDA device in this context"), "says why");
  bf16fp32__shape s;
  memset(&s, 0, sizeof s);
  s.where = BF16FP32_HOST, s.m = 1, s.n = 256, s.k = 4096;
  int b[2];
  char why[512];
  int n = bf16fp32__tune_choice(t, &s, false, b, NULL, why, sizeof why);
  EXPECT(strstr(why, path) && strstr(why, "line "), "why names the file and line: %s", why);
  for (int i = 0; i < n; i++) EXPECT(bf16fp32__registry[b[i]].where == BF16FP32_HOST, "host backend");
  EXPECT(n >= 1 && b[n - 1] == bf16fp32__registry_find("cpu-ref"), "cpu-ref among the choices");
  /* An entry without a runner-up: one choice. */
  s.n = 384, s.k = 7168, s.m = 7;
  EXPECT(bf16fp32__tune_choice(t, &s, false, b, NULL, why, sizeof why) == 1, "cpu-ref entry");
  bf16fp32__tune_free(t);

  /* Another CPU (other threads count): nothing applies, one line each part. */
  h.cpu.threads = 4;
  free(text);
  text = format_sample(&h);
  sup_write_text(path, text);
  memset(&log, 0, sizeof log);
  t = load(&cfg, BF16FP32_OK);
  EXPECT(!t, "other CPU: no table");
  EXPECT(log.count == 2 && any_contains(&log, "host entries measured on", "ignored (this is"),
         "one line per part: %d", log.count);
  if (log.count != 2) dump("log", &log);

  /* No CPU identity at all in the header (a hand-made file): the host entries are ignored, and
   * the log says so, as for an incomplete one. */
  h.cpu.threads = 3;
  h.has_cpu = false;
  free(text);
  text = format_sample(&h);
  sup_write_text(path, text);
  memset(&log, 0, sizeof log);
  t = load(&cfg, BF16FP32_OK);
  EXPECT(!t && log.count == 2 && any_contains(&log, "host entries", "ignored"),
         "no CPU section: one line per part: %d", log.count);
  if (log.count != 2) dump("log", &log);
  h.has_cpu = true;

  /* Another library version: all ignored, one line. */
  snprintf(h.library, sizeof h.library, "0.0.1");
  free(text);
  text = format_sample(&h);
  sup_write_text(path, text);
  memset(&log, 0, sizeof log);
  t = load(&cfg, BF16FP32_OK);
  EXPECT(!t && log.count == 1 && any_contains(&log, "0.0.1", "ignored"), "other version: %d lines", log.count);
  if (log.count != 1) dump("log", &log);

  /* A later format: all ignored, one line. */
  snprintf(h.library, sizeof h.library, "%s", BF16FP32_VERSION);
  h.format = 2;
  free(text);
  text = format_sample(&h);
  sup_write_text(path, text);
  memset(&log, 0, sizeof log);
  t = load(&cfg, BF16FP32_OK);
  EXPECT(!t && log.count == 1 && any_contains(&log, "format 2", NULL), "format 2: %d lines", log.count);
  h.format = 1;

  /* A malformed line: a warning naming file and line, the rest kept. */
  free(text);
  text = format_sample(&h);
  size_t len = strlen(text);
  char *bad = testing_alloc(len + 100);
  snprintf(bad, len + 100, "%shost\t5\t5\t5\tcpu-ref\tfast\t-\t-\nhost\t6\t6\t1\tcpu-ref\t1\t-\t-\n", text);
  sup_write_text(path, bad);
  char where[64];
  snprintf(where, sizeof where, "line %d", next_line(text));
  memset(&log, 0, sizeof log);
  t = load(&cfg, BF16FP32_TUNE_FILE);
  const char *e = bf16fp32_last_error();
  EXPECT(!t && strstr(e, path) && strstr(e, where) && strstr(e, "winner_us") &&
             strstr(e, "fix or remove it"),
         "malformed: refused, naming file, line and remedy: %s", e);
  EXPECT(any_contains(&log, path, where) && any_contains(&log, "winner_us", NULL), "logged too");
  if (!any_contains(&log, path, where)) dump("log", &log);
  free(bad);

  /* Logging off (the default): nothing is said. */
  sup_write_text(path, text);
  cfg.log_level = 0;
  memset(&log, 0, sizeof log);
  t = load(&cfg, BF16FP32_OK);
  EXPECT(t && log.count == 0, "silent unless asked");
  bf16fp32__tune_free(t);
  cfg.log_level = 1;

  /* A missing file at the default path is silent; a missing named file is not. */
  char home[1024];
  path_in_dir(home, sizeof home, "home");
  setenv("HOME", home, 1);
  unsetenv("XDG_CACHE_HOME");
  bf16fp32__config dcfg = test_config("", &log);
  dcfg.log_level = 1;
  bf16fp32__tune_default_path(dcfg.tune_file, sizeof dcfg.tune_file);
  memset(&log, 0, sizeof log);
  t = load(&dcfg, BF16FP32_OK);
  EXPECT(!t && log.count == 0, "missing default file: silent (%d)", log.count);
  char missing[1024];
  path_in_dir(missing, sizeof missing, "nope.tsv");
  dcfg = test_config(missing, &log);
  dcfg.log_level = 1;
  memset(&log, 0, sizeof log);
  t = load(&dcfg, BF16FP32_OK);
  EXPECT(!t && log.count == 1 && any_contains(&log, missing, "No such file"), "missing named file");
  EXPECT(bf16fp32_last_error()[0] == '\0', "a missing file leaves no error behind: %s",
         bf16fp32_last_error());
  /* "" = no file. */
  dcfg = test_config("", &log);
  memset(&log, 0, sizeof log);
  t = load(&dcfg, BF16FP32_OK);
  EXPECT(!t && level1_lines(&log) == 0, "no file");
  /* A directory given as the file. */
  dcfg = test_config(dir, &log);
  dcfg.log_level = 1;
  memset(&log, 0, sizeof log);
  t = load(&dcfg, BF16FP32_TUNE_FILE);
  EXPECT(!t && strstr(bf16fp32_last_error(), dir) && strstr(bf16fp32_last_error(), "not a regular file"),
         "a directory: %s", bf16fp32_last_error());
  /* A FIFO given as the file: refused at once (its open must not wait for a writer; the alarm
   * ends the test if it does). */
  char fifo[1024];
  path_in_dir(fifo, sizeof fifo, "fifo.tsv");
  EXPECT(mkfifo(fifo, 0600) == 0, "mkfifo: %s", strerror(errno));
  dcfg = test_config(fifo, &log);
  dcfg.log_level = 1;
  memset(&log, 0, sizeof log);
  alarm(60);
  t = load(&dcfg, BF16FP32_TUNE_FILE);
  alarm(0);
  EXPECT(!t && strstr(bf16fp32_last_error(), fifo) && strstr(bf16fp32_last_error(), "not a regular file"),
         "a FIFO: %s", bf16fp32_last_error());
  free(text);
}

/* What the loader logs: nothing of a section the file has no entries in; of a file it refuses
 * for malformed lines, the first 10 one by one, then how many more. */
static void test_load_log(void) {
  char path[1024];
  path_in_dir(path, sizeof path, "log.tsv");
  bf16fp32__tune_header h = sample_header();
  h.has_gpu = false;
  bf16fp32__tune_entry e[16];
  int n = sample_entries(e); /* 4 device, then 2 host */
  char *text = NULL;
  size_t len = 0;
  CHECK_OK(bf16fp32__tune_file_format(&h, e + 4, n - 4, &text, &len));
  sup_write_text(path, text);
  lines log = {0};
  bf16fp32__config cfg = test_config(path, &log);
  cfg.log_level = 1;
  bf16fp32__tune_table *t = load(&cfg, BF16FP32_OK);
  EXPECT(t && t->count == 2 && log.count == 0, "host entries only: %d entries, %d log lines",
         t ? t->count : -1, log.count);
  if (log.count) dump("log", &log);
  bf16fp32__tune_free(t);

  static const char bad_line[] = "host\t5\t5\t5\tcpu-ref\tfast\t-\t-\n";
  for (int bad = 10; bad <= 11; bad++) {
    char *damaged = testing_alloc(len + (size_t)bad * sizeof bad_line + 1);
    snprintf(damaged, len + 1, "%s", text);
    for (int i = 0; i < bad; i++) strcat(damaged, bad_line);
    sup_write_text(path, damaged);
    memset(&log, 0, sizeof log);
    t = load(&cfg, BF16FP32_TUNE_FILE);
    EXPECT(!t && count_containing(&log, ": malformed", NULL) == 10,
           "%d bad lines: %d said one by one", bad, count_containing(&log, ": malformed", NULL));
    EXPECT(bad == 10 ? count_containing(&log, "more malformed", NULL) == 0
                     : any_contains(&log, "1 more malformed lines skipped", NULL),
           "%d bad lines: the rest counted", bad);
    bf16fp32__tune_free(t);
    free(damaged);
  }
  free(text);
}

/* A built-in table fills the (location, N, K) pairs the file lacks, with all its buckets, and
 * leaves the file's pairs alone; its CPU matches loosely (another thread count). */
static void test_load_builtin(void) {
  char path[1024];
  path_in_dir(path, sizeof path, "with-builtin.tsv");
  bf16fp32__tune_header h = sample_header(); /* this CPU, 3 threads */
  h.has_gpu = false;
  bf16fp32__tune_entry mine = sup_tune_entry(BF16FP32_HOST, 256, 4096, 1, "cpu-ref", 5, "", 0, 0);
  char *text = NULL;
  size_t len = 0;
  CHECK_OK(bf16fp32__tune_file_format(&h, &mine, 1, &text, &len));
  sup_write_text(path, text);
  free(text);
  /* Lines other than 0 in the built-in entries: a loaded one must still say "built-in". */
  const bf16fp32__tune_entry entries[] = {
      sup_tune_entry(BF16FP32_HOST, 256, 4096, 1, "cpu-simd", 1, "", 0, 9),
      sup_tune_entry(BF16FP32_HOST, 256, 4096, 2, "cpu-simd", 1, "", 0, 9),
      sup_tune_entry(BF16FP32_HOST, 512, 4096, 1, "cpu-simd", 1, "", 0, 9),
      sup_tune_entry(BF16FP32_HOST, 512, 4096, 2, "cpu-simd", 1, "", 0, 9),
  };
  bf16fp32__tune_builtin builtin;
  memset(&builtin, 0, sizeof builtin);
  builtin.header = h;
  builtin.header.cpu.threads = 5;
  builtin.entries = entries;
  builtin.count = (int)(sizeof entries / sizeof entries[0]);
  lines log = {0};
  bf16fp32__config cfg = test_config(path, &log);
  cfg.tune_builtin = 1;
  bf16fp32__tune_table *t = NULL;
  CHECK_OK(bf16fp32__tune_load_with_builtin(&cfg, &builtin, &t));
  EXPECT(t && t->count == 3, "the file's entry and the built-in pair's two: %d", t ? t->count : -1);
  if (!t) return;
  const bf16fp32__tune_entry *kept = find(t, BF16FP32_HOST, 0, 256, 4096, 1);
  EXPECT(kept && strcmp(kept->winner, "cpu-ref") == 0 && kept->line > 0, "the file's entry");
  EXPECT(!find(t, BF16FP32_HOST, 0, 256, 4096, 2), "no built-in bucket in the file's pair");
  const bf16fp32__tune_entry *b1 = find(t, BF16FP32_HOST, 0, 512, 4096, 1);
  const bf16fp32__tune_entry *b2 = find(t, BF16FP32_HOST, 0, 512, 4096, 2);
  EXPECT(b1 && b2 && b1->line == 0 && b2->line == 0, "the built-in pair, both buckets, line 0");
  EXPECT(strcmp(t->builtin, h.cpu.model) == 0, "named by its CPU: '%s'", t->builtin);
  /* ... and the table is finished with them: the dispatcher's lookup finds each part */
  EXPECT(t->sorted && bf16fp32__tune_table_lookup(t, BF16FP32_HOST, 0, 512, 4096, 2) == b2 &&
             bf16fp32__tune_table_lookup(t, BF16FP32_HOST, 0, 256, 4096, 1) == kept,
         "lookups in the loaded table (sorted %d)", t->sorted);
  bf16fp32__tune_free(t);
  /* A built-in table measured on another CPU: the file's entry alone, and no built-in table named
   * (describe said "(FILE and the built-in table)") */
  snprintf(builtin.header.cpu.model, sizeof builtin.header.cpu.model, "another CPU");
  CHECK_OK(bf16fp32__tune_load_with_builtin(&cfg, &builtin, &t));
  EXPECT(t && t->count == 1 && t->builtin[0] == '\0', "another CPU's table: %d entries, named '%s'",
         t ? t->count : -1, t ? t->builtin : "-");
  bf16fp32__tune_free(t);
}

/* describe's tuned-table line: the entries a context loaded from its file, those measured under
 * PDL among them (the sample's one is a device entry, not loaded without its GPU), and whether
 * the context consults them. */
static void test_describe_table(void) {
  char path[1024];
  path_in_dir(path, sizeof path, "describe.tsv");
  bf16fp32__tune_header h = sample_header(); /* this CPU, 3 threads: the two host entries */
  /* a GPU no machine has, so that on a GPU too only the host entries load */
  snprintf(h.gpu.name, sizeof h.gpu.name, "no such GPU");
  char *text = format_sample(&h);
  sup_write_text(path, text);
  free(text);
  setenv("BF16FP32_TUNE_FILE", path, 1);
  setenv("BF16FP32_TUNE_BUILTIN", "0", 1);
  for (int pdl = 0; pdl < 2; pdl++) {
    bf16fp32_options opt;
    bf16fp32_options_init(&opt);
    opt.cpu_threads = 3;
    opt.use_pdl = pdl;
    bf16fp32_context *ctx = NULL;
    CHECK_OK(bf16fp32_create(&ctx, &opt));
    if (!ctx) break;
    char buf[4096], want[1200];
    CHECK_OK(bf16fp32_describe(ctx, buf, sizeof buf));
    snprintf(want, sizeof want, "\ntuned table: 2 entries, 0 measured under PDL (%s) (%s)\n",
             pdl ? "PDL on: consulted first" : "PDL off: unused", path);
    EXPECT(strstr(buf, want) != NULL, "expected '%s' in:\n%s", want + 1, buf);
    bf16fp32_destroy(ctx);
  }
  setenv("BF16FP32_TUNE_FILE", "", 1);
  unsetenv("BF16FP32_TUNE_BUILTIN");
}

/* Through the public API: create refuses a corrupt tuning file (TUNE_FILE, the context NULL,
 * last_error naming the file and line); a reset that meets one fails with nothing changed (the
 * table loaded before still decides); a missing file is none. */
static void test_context_refuses_corrupt(void) {
  char path[1024];
  path_in_dir(path, sizeof path, "context.tsv");
  bf16fp32__tune_header h = sample_header(); /* this CPU, 3 threads */
  snprintf(h.gpu.name, sizeof h.gpu.name, "no such GPU");
  char *good = format_sample(&h);
  size_t len = strlen(good);
  char *bad = testing_alloc(len + 64);
  snprintf(bad, len + 64, "%shost\t5\t5\t5\tcpu-ref\tfast\t-\t-\n", good);
  char where[64];
  snprintf(where, sizeof where, "line %d", next_line(good));
  setenv("BF16FP32_TUNE_FILE", path, 1);
  setenv("BF16FP32_TUNE_BUILTIN", "0", 1);
  bf16fp32_options opt;
  bf16fp32_options_init(&opt);
  opt.cpu_threads = 3;

  sup_write_text(path, bad);
  bf16fp32_context *ctx = (bf16fp32_context *)&opt; /* not NULL: create must clear it */
  bf16fp32_status st = bf16fp32_create(&ctx, &opt);
  const char *e = bf16fp32_last_error();
  EXPECT(st == BF16FP32_TUNE_FILE && !ctx && strstr(e, path) && strstr(e, where),
         "create on a corrupt file: %s (%s)", bf16fp32_status_name(st), e);

  sup_write_text(path, good);
  CHECK_OK(bf16fp32_create(&ctx, &opt));
  if (ctx) {
    const char *name = NULL;
    char why[600];
    /* the sample's host entry 256x4096 M = 1 */
    CHECK_OK(bf16fp32_select(ctx, BF16FP32_HOST, 1, 256, 4096, &name, why, sizeof why));
    EXPECT(strstr(why, "tuned") && strstr(why, path), "the good file decides: %s", why);
    sup_write_text(path, bad);
    st = bf16fp32_reset(ctx);
    e = bf16fp32_last_error();
    EXPECT(st == BF16FP32_TUNE_FILE && strstr(e, path) && strstr(e, where),
           "reset on a corrupt file: %s (%s)", bf16fp32_status_name(st), e);
    CHECK_OK(bf16fp32_select(ctx, BF16FP32_HOST, 1, 256, 4096, &name, why, sizeof why));
    EXPECT(strstr(why, "tuned") && strstr(why, path), "after the failed reset, as before: %s", why);
    /* tune refuses it as its output before measuring anything */
    const int64_t pair[] = {8, 8}, ms[] = {1};
    st = bf16fp32_tune(ctx, BF16FP32_HOST, pair, 1, ms, 1, path);
    e = bf16fp32_last_error();
    EXPECT(st == BF16FP32_TUNE_FILE && strstr(e, where) && strstr(e, "nothing measured"),
           "tune into a corrupt file: %s (%s)", bf16fp32_status_name(st), e);
    /* ... and a path that cannot be reached (a file for a directory) as no place to write */
    char beyond[1100];
    snprintf(beyond, sizeof beyond, "%s/t.tsv", path);
    st = bf16fp32_tune(ctx, BF16FP32_HOST, pair, 1, ms, 1, beyond);
    e = bf16fp32_last_error();
    EXPECT(st == BF16FP32_IO_ERROR && strstr(e, "nothing measured"),
           "tune into a path under a file: %s (%s)", bf16fp32_status_name(st), e);
    remove(path);
    CHECK_OK(bf16fp32_reset(ctx));
    CHECK_OK(bf16fp32_select(ctx, BF16FP32_HOST, 1, 256, 4096, &name, why, sizeof why));
    EXPECT(!strstr(why, "tuned"), "no file, no table: %s", why);
    bf16fp32_destroy(ctx);
  }
  /* Ways of having no file that are no corrupt file: /dev/null named, and a default path that
   * cannot be reached (HOME a regular file, as for a service account's /dev/null). */
  setenv("BF16FP32_TUNE_FILE", "/dev/null", 1);
  CHECK_OK(bf16fp32_create(&ctx, &opt));
  bf16fp32_destroy(ctx);
  char home[1024];
  path_in_dir(home, sizeof home, "home-is-a-file");
  sup_write_text(home, "");
  const char *old_home = getenv("HOME");
  char saved[1024] = "";
  if (old_home) snprintf(saved, sizeof saved, "%s", old_home);
  setenv("HOME", home, 1);
  unsetenv("XDG_CACHE_HOME");
  unsetenv("BF16FP32_TUNE_FILE");
  CHECK_OK(bf16fp32_create(&ctx, &opt));
  bf16fp32_destroy(ctx);
  if (old_home) setenv("HOME", saved, 1);
  else unsetenv("HOME");
  free(good);
  free(bad);
  setenv("BF16FP32_TUNE_FILE", "", 1);
  unsetenv("BF16FP32_TUNE_BUILTIN");
}

/* g with one field changed: 0 name, 1 SMs, 2 and 3 compute capability (the hardware), 4 CUDA
 * runtime, 5 driver, 6 cuBLAS (the software). */
static bf16fp32__gpu_identity gpu_changed(bf16fp32__gpu_identity g, int field) {
  switch (field) {
  case 0: g.name[0] = 'X'; break;
  case 1: g.sm_count++; break;
  case 2: g.cc_major++; break;
  case 3: g.cc_minor++; break;
  case 4: g.cuda_runtime[0] = 'X'; break;
  case 5: g.cuda_driver[0] = 'X'; break;
  default: g.cublas[0] = 'X'; break;
  }
  return g;
}

static void test_identity(void) {
  /* cleaning: control characters and DEL become spaces; cut to the buffer, NUL within it */
  char buf[16] = "x";
  bf16fp32__identity_clean(buf, 0, "abc");
  EXPECT(buf[0] == 'x', "no room: nothing written");
  bf16fp32__identity_clean(buf, sizeof buf, "a\x1f" "b\x7f" "c");
  EXPECT(strcmp(buf, "a b c") == 0, "control characters: '%s'", buf);
  memset(buf, 'z', sizeof buf);
  bf16fp32__identity_clean(buf, 8, "abcdefghij");
  EXPECT(strcmp(buf, "abcdefg") == 0 && buf[8] == 'z', "cut to 8 bytes: '%.8s'", buf);
  /* the CPU's name from /proc/cpuinfo's text (where cpuid gives none): the first line with a
   * key; x86's lower-case "processor" lines are no key */
  char name[16] = "x";
  bf16fp32__cpuinfo_model("processor\t: 0\nvendor_id\t: X\nmodel name\t: Chip 9\n"
                          "model name\t: Other\n", name, sizeof name);
  EXPECT(strcmp(name, " Chip 9") == 0, "model name: '%s'", name);
  bf16fp32__cpuinfo_model("processor\t: 0\nCPU part\t: 0xd4f\nProcessor : Old\n", name,
                          sizeof name);
  EXPECT(strcmp(name, " 0xd4f") == 0, "CPU part first: '%s'", name);
  bf16fp32__cpuinfo_model("Processor\t: AArch64 Processor rev 4 (aarch64)", name, sizeof name);
  EXPECT(strcmp(name, " AArch64 Proces") == 0, "no newline, cut to 16 bytes: '%s'", name);
  bf16fp32__cpuinfo_model("model name without colon\nflags : fpu\n", name, sizeof name);
  EXPECT(name[0] == '\0', "no key: '%s'", name);
  strcpy(name, "x");
  bf16fp32__cpuinfo_model(NULL, name, sizeof name);
  EXPECT(name[0] == '\0', "no text: '%s'", name);
  /* exact matching compares every field; loose matching the hardware's only */
  bf16fp32__gpu_identity g = sample_header().gpu;
  EXPECT(bf16fp32__gpu_identity_match(&g, &g, false), "the same GPU");
  for (int field = 0; field < 7; field++) {
    const bf16fp32__gpu_identity other = gpu_changed(g, field);
    EXPECT(!bf16fp32__gpu_identity_match(&g, &other, false) &&
               bf16fp32__gpu_identity_match(&g, &other, true) == (field >= 4),
           "GPU field %d changed", field);
  }
  const bf16fp32__cpu_identity c = {"AMD EPYC", "avx2 fma", 2};
  bf16fp32__cpu_identity d = c;
  d.features[0] = 'X';
  EXPECT(!bf16fp32__cpu_identity_match(&c, &d, false) &&
             !bf16fp32__cpu_identity_match(&c, &d, true),
         "other CPU features");
  d = c;
  d.threads++;
  EXPECT(!bf16fp32__cpu_identity_match(&c, &d, false) &&
             bf16fp32__cpu_identity_match(&c, &d, true),
         "other CPU threads");
  /* a line for each, every field in its place */
  char line[256];
  snprintf(g.cuda_driver, sizeof g.cuda_driver, "12.8");
  bf16fp32__gpu_identity_describe(&g, line, sizeof line);
  EXPECT(strcmp(line, "NVIDIA H200, 132 SMs, cc 9.0, CUDA runtime 13.0, driver 12.8, "
                       "cuBLAS 13.1.0") == 0,
         "%s", line);
  bf16fp32__cpu_identity_describe(&c, line, sizeof line);
  EXPECT(strcmp(line, "AMD EPYC [avx2 fma], 2 threads") == 0, "%s", line);
  /* no device (-1, a CPU-only context's): NO_DEVICE and a zeroed identity, with CUDA or not */
  memset(&g, 'x', sizeof g);
  EXPECT(bf16fp32__gpu_identity_query(-1, &g) == BF16FP32_NO_DEVICE && g.name[0] == '\0' &&
             g.sm_count == 0 && g.cublas[0] == '\0',
         "no device: '%.8s'", g.name);
}

static void test_default_path(void) {
  char buf[1024];
  setenv("XDG_CACHE_HOME", "/x/cache", 1);
  setenv("HOME", "/home/u", 1);
  bf16fp32__tune_default_path(buf, sizeof buf);
  EXPECT(strcmp(buf, "/x/cache/bf16fp32/tune.tsv") == 0, "%s", buf);
  setenv("XDG_CACHE_HOME", "relative", 1);
  bf16fp32__tune_default_path(buf, sizeof buf);
  EXPECT(strcmp(buf, "/home/u/.cache/bf16fp32/tune.tsv") == 0, "relative XDG ignored: %s", buf);
  setenv("XDG_CACHE_HOME", "", 1);
  bf16fp32__tune_default_path(buf, sizeof buf);
  EXPECT(strcmp(buf, "/home/u/.cache/bf16fp32/tune.tsv") == 0, "empty XDG ignored: %s", buf);
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  bf16fp32__tune_default_path(buf, sizeof buf);
  EXPECT(buf[0] == '\0', "no HOME: '%s'", buf);
  setenv("HOME", "/home/u", 1);
  char small[10];
  bf16fp32__tune_default_path(small, sizeof small);
  EXPECT(small[0] == '\0', "too small: never a cut path");
  /* One byte short of the path and its NUL is too small too; exactly enough is not. */
  const char *want = "/home/u/.cache/bf16fp32/tune.tsv";
  bf16fp32__tune_default_path(buf, strlen(want));
  EXPECT(buf[0] == '\0', "no room for the NUL: '%s'", buf);
  bf16fp32__tune_default_path(buf, strlen(want) + 1);
  EXPECT(strcmp(buf, want) == 0, "just enough room: '%s'", buf);
  setenv("HOME", "", 1); /* an empty HOME names no directory (not "/.cache") */
  bf16fp32__tune_default_path(buf, sizeof buf);
  EXPECT(buf[0] == '\0', "empty HOME: '%s'", buf);
}

static int count_temp_files(void) {
  int n = 0;
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (strstr(e->d_name, ".tmp.")) n++;
  if (d) closedir(d);
  return n;
}

static void test_merge(void) {
  char path[1024];
  path_in_dir(path, sizeof path, "sub/dir/merge.tsv"); /* the directories do not exist yet */
  bf16fp32__tune_header h = sample_header();
  bf16fp32__tune_header gpu_only = h, cpu_only = h;
  gpu_only.has_cpu = false;
  cpu_only.has_gpu = false;
  bf16fp32__tune_entry e[16];
  int n = sample_entries(e); /* 4 device, 2 host */
  lines w = {0};

  EXPECT(bf16fp32__tune_file_merge(path, &gpu_only, e, 4, collect_warning, &w) == BF16FP32_OK, "gpu merge: %s",
         bf16fp32_last_error());
  EXPECT(bf16fp32_last_error()[0] == '\0', "a new file leaves no error behind: %s",
         bf16fp32_last_error());
  EXPECT(bf16fp32__tune_file_merge(path, &cpu_only, e + 4, n - 4, collect_warning, &w) == BF16FP32_OK, "cpu merge");
  EXPECT(w.count == 0, "no notes (%d)", w.count);
  bf16fp32__tune_file f;
  int err = 0;
  EXPECT(bf16fp32__tune_file_read(path, &f, &err, NULL, NULL) == BF16FP32_OK, "read");
  EXPECT(f.table.count == n && f.header.has_gpu && f.header.has_cpu && f.skipped == 0, "both parts kept: %d",
         f.table.count);
  bf16fp32__tune_file_clear(&f);
  struct stat sb;
  EXPECT(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0644, "new file mode %o", sb.st_mode & 0777);

  /* Our entry replaces the file's for the same key; others stay. */
  bf16fp32__tune_entry upd = sup_tune_entry(BF16FP32_DEVICE, 256, 4096, 1, "cublas", 5.5, "smallm", 5.6, 0);
  EXPECT(bf16fp32__tune_file_merge(path, &gpu_only, &upd, 1, collect_warning, &w) == BF16FP32_OK, "update");
  bf16fp32__tune_file_read(path, &f, &err, NULL, NULL);
  const bf16fp32__tune_entry *g = find(&f.table, BF16FP32_DEVICE, 0, 256, 4096, 1);
  EXPECT(f.table.count == n && g && strcmp(g->winner, "cublas") == 0, "replaced");
  bf16fp32__tune_file_clear(&f);

  /* An entry marked line -1 fills a key the file lacks and leaves the file's own entry alone. */
  char fill_path[1100];
  snprintf(fill_path, sizeof fill_path, "%s.fill", path);
  EXPECT(bf16fp32__tune_file_merge(fill_path, &gpu_only, e, 4, collect_warning, &w) == BF16FP32_OK, "fill base");
  bf16fp32__tune_entry fill[2] = {
      sup_tune_entry(BF16FP32_DEVICE, 256, 4096, 1, "cublaslt", 7.5, "", 0, -1),
      sup_tune_entry(BF16FP32_DEVICE, 256, 4096, 8192, "cublaslt", 70.5, "", 0, -1)};
  EXPECT(bf16fp32__tune_file_merge(fill_path, &gpu_only, fill, 2, collect_warning, &w) == BF16FP32_OK, "fill");
  bf16fp32__tune_file_read(fill_path, &f, &err, NULL, NULL);
  const bf16fp32__tune_entry *kept = find(&f.table, BF16FP32_DEVICE, 0, 256, 4096, 1);
  const bf16fp32__tune_entry *added = find(&f.table, BF16FP32_DEVICE, 0, 256, 4096, 8192);
  EXPECT(f.table.count == 5 && kept && strcmp(kept->winner, e[0].winner) == 0 && added &&
             strcmp(added->winner, "cublaslt") == 0,
         "filled: %d entries, m=1 %s", f.table.count, kept ? kept->winner : "-");
  bf16fp32__tune_file_clear(&f);
  char fill_lock[1120];
  snprintf(fill_lock, sizeof fill_lock, "%s.lock", fill_path);
  unlink(fill_path);
  unlink(fill_lock);

  /* Another GPU (driver update) merging: the old device entries go, with a note; host stay. */
  chmod(path, 0600);
  bf16fp32__tune_header newer = gpu_only;
  snprintf(newer.gpu.cuda_driver, sizeof newer.gpu.cuda_driver, "13.1");
  memset(&w, 0, sizeof w);
  EXPECT(bf16fp32__tune_file_merge(path, &newer, &upd, 1, collect_warning, &w) == BF16FP32_OK, "newer");
  EXPECT(w.count == 1 && any_contains(&w, "4 device entries", "replaced"), "note: %d", w.count);
  if (w.count != 1) dump("note", &w);
  bf16fp32__tune_file_read(path, &f, &err, NULL, NULL);
  EXPECT(f.table.count == 3 && strcmp(f.header.gpu.cuda_driver, "13.1") == 0 && f.header.has_cpu,
         "1 device + 2 host: %d", f.table.count);
  bf16fp32__tune_file_clear(&f);
  EXPECT(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600, "mode kept %o", sb.st_mode & 0777);

  /* A file of another library version is replaced whole. */
  bf16fp32__tune_header older = h;
  snprintf(older.library, sizeof older.library, "0.0.0");
  char *old = format_sample(&older);
  sup_write_text(path, old);
  free(old);
  memset(&w, 0, sizeof w);
  bf16fp32__tune_file_merge(path, &cpu_only, e + 4, 1, collect_warning, &w);
  EXPECT(w.count == 1 && any_contains(&w, "written by bf16fp32 0.0.0", NULL), "version note");
  bf16fp32__tune_file_read(path, &f, &err, NULL, NULL);
  EXPECT(f.table.count == 1 && !f.header.has_gpu && strcmp(f.header.library, BF16FP32_VERSION) == 0,
         "replaced whole: %d", f.table.count);
  bf16fp32__tune_file_clear(&f);

  /* A device entry without a GPU identity is refused; nothing is written. */
  EXPECT(bf16fp32__tune_file_merge(path, &cpu_only, e, 1, NULL, NULL) == BF16FP32_INTERNAL, "refused");
  int tmp = count_temp_files();
  char sub[1100];
  snprintf(sub, sizeof sub, "%s/sub/dir", dir);
  DIR *d = opendir(sub);
  struct dirent *de;
  while (d && (de = readdir(d)))
    if (strstr(de->d_name, ".tmp.")) tmp++;
  if (d) closedir(d);
  EXPECT(tmp == 0, "no temporary file left");
  char lock[1100];
  snprintf(lock, sizeof lock, "%s.lock", path);
  EXPECT(access(lock, F_OK) == 0, "the lock file stays");

  /* Write to a path whose directory cannot be made: IO_ERROR, no crash. */
  char blocked[1100];
  snprintf(blocked, sizeof blocked, "%s/x/y.tsv", path); /* a file used as a directory */
  EXPECT(bf16fp32__tune_file_write_atomic(blocked, "x\n", 2) == BF16FP32_IO_ERROR, "blocked");
  /* The error names the directory that could not be made, not a later symptom. */
  EXPECT(strstr(bf16fp32_last_error(), "tune file directory"), "blocked: %s",
         bf16fp32_last_error());
  EXPECT(bf16fp32__tune_file_merge(blocked, &cpu_only, e + 4, 1, NULL, NULL) == BF16FP32_IO_ERROR, "blocked merge");
  /* Into a FIFO: TUNE_FILE (it cannot be read) at once, nothing waits for a writer (the alarm
   * ends the test if so). */
  char fifo[1100];
  snprintf(fifo, sizeof fifo, "%s/sub/fifo.tsv", dir);
  EXPECT(mkfifo(fifo, 0600) == 0, "mkfifo: %s", strerror(errno));
  alarm(60);
  EXPECT(bf16fp32__tune_file_merge(fifo, &cpu_only, e + 4, 1, NULL, NULL) == BF16FP32_TUNE_FILE,
         "FIFO merge");
  alarm(0);
}

/* The lines of a file that are not header lines. */
static int data_lines(const char *path) {
  char *text = sup_read_text(path);
  int n = 0;
  for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "")
    if (*p != '#' && *p != '\n') n++;
  free(text);
  return n;
}

/* Whether path is a symbolic link. */
static bool is_link(const char *path) {
  struct stat sb;
  return lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode);
}

/* What a merge will not do: replace a file that is not a tune file, write a file the reader
 * refuses, replace a symbolic link instead of its target, or say every malformed line of the
 * file it reads. */
static void test_merge_guards(void) {
  bf16fp32__tune_header cpu_only = sample_header();
  cpu_only.has_gpu = false;
  bf16fp32__tune_entry one = sup_tune_entry(BF16FP32_HOST, 256, 4096, 1, "cpu-ref", 5, "", 0, 0);
  char path[1200];
  bf16fp32__tune_file f;
  int err = 0;

  /* Text without a format line: refused, kept byte for byte; an empty file is no such text. */
  path_in_dir(path, sizeof path, "notes.txt");
  static const char notes[] = "shopping list\n# eggs\n";
  sup_write_text(path, notes);
  bf16fp32_status st = bf16fp32__tune_file_merge(path, &cpu_only, &one, 1, NULL, NULL);
  char *kept = sup_read_text(path);
  EXPECT(st == BF16FP32_TUNE_FILE && strstr(bf16fp32_last_error(), "not a tune file") && kept &&
             strcmp(kept, notes) == 0,
         "a file of notes: %s (%s)", bf16fp32_status_name(st), bf16fp32_last_error());
  free(kept);
  sup_write_text(path, "");
  EXPECT(bf16fp32__tune_file_merge(path, &cpu_only, &one, 1, NULL, NULL) == BF16FP32_OK,
         "an empty file: %s", bf16fp32_last_error());

  /* More entries than the reader's 8 MiB take: refused, the file as it was. */
  const int many = 130000; /* 75 bytes a line: 9.3 MiB */
  bf16fp32__tune_entry *big = testing_alloc((size_t)many * sizeof *big);
  for (int i = 0; i < many; i++)
    big[i] = sup_tune_entry(BF16FP32_HOST, 100000000 + i, 100000000, 8192, "cpu-simd", 999999999.5,
                            "cpu-ref", 999999999.5, 0);
  st = bf16fp32__tune_file_merge(path, &cpu_only, big, many, NULL, NULL);
  EXPECT(st == BF16FP32_IO_ERROR && strstr(bf16fp32_last_error(), "8 MiB"),
         "over the reader's limit: %s (%s)", bf16fp32_status_name(st), bf16fp32_last_error());
  EXPECT(bf16fp32__tune_file_read(path, &f, &err, NULL, NULL) == BF16FP32_OK && f.table.count == 1,
         "the file as it was: %d entries", f.table.count);
  bf16fp32__tune_file_clear(&f);
  free(big);

  /* Through a relative link to a file not there yet, then again: the link stays a link, the
   * target holds both entries, and the lock is the target's. */
  char shared[1200], link_dir[1200], link[1300], lock[1310];
  path_in_dir(shared, sizeof shared, "shared/tune.tsv");
  path_in_dir(link_dir, sizeof link_dir, "linked"); /* not "home", which HOME names here */
  snprintf(link, sizeof link, "%s/tune.tsv", link_dir);
  CHECK(mkdir(link_dir, 0755) == 0 && symlink("../shared/tune.tsv", link) == 0);
  bf16fp32__tune_entry two = sup_tune_entry(BF16FP32_HOST, 512, 4096, 1, "cpu-ref", 6, "", 0, 0);
  EXPECT(bf16fp32__tune_file_merge(link, &cpu_only, &one, 1, NULL, NULL) == BF16FP32_OK &&
             bf16fp32__tune_file_merge(link, &cpu_only, &two, 1, NULL, NULL) == BF16FP32_OK,
         "merges through the link: %s", bf16fp32_last_error());
  EXPECT(is_link(link), "the link is still a link");
  EXPECT(bf16fp32__tune_file_read(shared, &f, &err, NULL, NULL) == BF16FP32_OK && f.table.count == 2,
         "the target holds both: %d", f.table.count);
  bf16fp32__tune_file_clear(&f);
  snprintf(lock, sizeof lock, "%s.lock", link);
  EXPECT(access(lock, F_OK) != 0, "no lock beside the link");

  /* A stale file's malformed lines (no library line: another version's): ten said, the rest
   * counted, with the merge going on, since a stale file's entries are replaced anyway. */
  char *text = testing_alloc(4096);
  snprintf(text, 4096, "# format\t1\n");
  for (int i = 0; i < 25; i++) strcat(text, "host\tx\n");
  sup_write_text(path, text);
  lines w = {0};
  EXPECT(bf16fp32__tune_file_merge(path, &cpu_only, &one, 1, collect_warning, &w) == BF16FP32_OK &&
             count_containing(&w, "expected 8 fields", NULL) == 10 &&
             any_contains(&w, "15 more malformed lines skipped", NULL) && w.count == 11,
         "25 malformed lines: %d warnings", w.count);

  /* This version's file with a malformed line (edited by hand): refused, kept byte for byte,
   * the line named; its good lines are not dropped with it. */
  snprintf(text, 4096, "# format\t1\n# library\t%s\nhost\t8\t8\t1\tcpu-ref\t1.000\t-\t-\n"
           "host\t8\t8\t2\tcpu-ref\tfast\t-\t-\n", BF16FP32_VERSION);
  sup_write_text(path, text);
  st = bf16fp32__tune_file_merge(path, &cpu_only, &one, 1, NULL, NULL);
  kept = sup_read_text(path);
  EXPECT(st == BF16FP32_TUNE_FILE && strstr(bf16fp32_last_error(), "line 4: bad winner_us") &&
             strstr(bf16fp32_last_error(), "left as it was") && kept && strcmp(kept, text) == 0,
         "a malformed line: %s (%s)", bf16fp32_status_name(st), bf16fp32_last_error());
  free(kept);
  free(text);
}

/* The has_gpu / has_cpu flags alone say which sections mine brings: a zeroed identity in the
 * section mine lacks keeps the file's; another CPU's host entries go with a note; merging the
 * same entries again writes each key once. */
static void test_merge_sections(void) {
  char path[1024];
  path_in_dir(path, sizeof path, "sections.tsv");
  bf16fp32__tune_header h = sample_header();
  bf16fp32__tune_header gpu_only = h, cpu_only = h;
  gpu_only.has_cpu = false;
  memset(&gpu_only.cpu, 0, sizeof gpu_only.cpu);
  cpu_only.has_gpu = false;
  memset(&cpu_only.gpu, 0, sizeof cpu_only.gpu);
  bf16fp32__tune_entry e[16];
  int n = sample_entries(e); /* 4 device, 2 host */
  lines w = {0};
  EXPECT(bf16fp32__tune_file_merge(path, &h, e, n, collect_warning, &w) == BF16FP32_OK, "both");
  EXPECT(bf16fp32__tune_file_merge(path, &gpu_only, e, 1, collect_warning, &w) == BF16FP32_OK,
         "device only: %s", bf16fp32_last_error());
  EXPECT(bf16fp32__tune_file_merge(path, &cpu_only, e + 4, 1, collect_warning, &w) == BF16FP32_OK,
         "host only: %s", bf16fp32_last_error());
  EXPECT(w.count == 0, "no notes (%d)", w.count);
  if (w.count) dump("note", &w);
  bf16fp32__tune_file f;
  int err = 0;
  EXPECT(bf16fp32__tune_file_read(path, &f, &err, NULL, NULL) == BF16FP32_OK, "read");
  EXPECT(f.table.count == n && f.header.has_gpu && f.header.has_cpu, "all kept: %d", f.table.count);
  bf16fp32__tune_file_clear(&f);
  EXPECT(data_lines(path) == n, "each key once in the file: %d lines", data_lines(path));

  /* Another CPU model: the file's host entries go, with a note; its device entries stay. */
  bf16fp32__tune_header other = cpu_only;
  snprintf(other.cpu.model, sizeof other.cpu.model, "Another CPU");
  memset(&w, 0, sizeof w);
  EXPECT(bf16fp32__tune_file_merge(path, &other, e + 5, 1, collect_warning, &w) == BF16FP32_OK,
         "other CPU");
  EXPECT(w.count == 1 && any_contains(&w, "2 host entries", "replaced"), "host note: %d", w.count);
  if (w.count != 1 || !any_contains(&w, "2 host entries", "replaced")) dump("note", &w);
  bf16fp32__tune_file_read(path, &f, &err, NULL, NULL);
  EXPECT(f.table.count == 5 && strcmp(f.header.cpu.model, "Another CPU") == 0 &&
             find(&f.table, BF16FP32_HOST, 0, 384, 7168, 7) &&
             !find(&f.table, BF16FP32_HOST, 0, 256, 4096, 1),
         "4 device + 1 host: %d", f.table.count);
  bf16fp32__tune_file_clear(&f);

  /* A lock file this user may not write (another user's) is opened read-only: flock takes it.
   * Root may write any file, so only a test run by another user sees the difference. */
  char lock[1100];
  snprintf(lock, sizeof lock, "%s.lock", path);
  EXPECT(chmod(lock, 0444) == 0, "chmod: %s", strerror(errno));
  EXPECT(bf16fp32__tune_file_merge(path, &other, e + 5, 1, NULL, NULL) == BF16FP32_OK,
         "read-only lock file: %s", bf16fp32_last_error());
}

/* A rename that fails (the path is a directory) is an IO_ERROR and leaves no temporary file. */
static void test_write_over_directory(void) {
  char path[1024], inner[1100];
  path_in_dir(path, sizeof path, "a-directory.tsv");
  EXPECT(mkdir(path, 0755) == 0, "mkdir: %s", strerror(errno));
  snprintf(inner, sizeof inner, "%s/x", path);
  sup_write_text(inner, "x\n");
  EXPECT(bf16fp32__tune_file_write_atomic(path, "x\n", 2) == BF16FP32_IO_ERROR, "over a directory");
  EXPECT(strstr(bf16fp32_last_error(), "rename"), "says rename: %s", bf16fp32_last_error());
  EXPECT(count_temp_files() == 0, "no temporary file left");
  unlink(inner);
  rmdir(path);
}

static void test_emit_c(void) {
  bf16fp32__tune_header h = sample_header();
  snprintf(h.gpu.name, sizeof h.gpu.name, "Odd \"GPU\" \\ ?\?="); /* ?\? : no trigraph here */
  bf16fp32__tune_entry e[16];
  int n = sample_entries(e);
  char *text = NULL;
  size_t len = 0;
  /* every identity field its own value, so that one written in another's place shows */
  snprintf(h.gpu.cuda_runtime, sizeof h.gpu.cuda_runtime, "12.8");
  snprintf(h.gpu.cuda_driver, sizeof h.gpu.cuda_driver, "13.0");
  snprintf(h.gpu.cublas, sizeof h.gpu.cublas, "13.1.0");
  snprintf(h.cpu.model, sizeof h.cpu.model, "Test CPU");
  snprintf(h.cpu.features, sizeof h.cpu.features, "avx2 fma");
  h.gpu.cc_minor = 7;
  EXPECT(bf16fp32__tune_emit_c(&h, e, n, &text, &len) == BF16FP32_OK && text && strlen(text) == len, "emit");
  EXPECT(strstr(text, "            .has_gpu = true,\n            .has_cpu = true,\n") &&
             strstr(text, ".sm_count = 132,\n") && strstr(text, ".cc_major = 9,\n") &&
             strstr(text, ".cc_minor = 7,\n") && strstr(text, ".cuda_runtime = \"12.8\",\n") &&
             strstr(text, ".cuda_driver = \"13.0\",\n") && strstr(text, ".cublas = \"13.1.0\"},\n") &&
             strstr(text, ".cpu = {.model = \"Test CPU\",\n") && strstr(text, ".features = \"avx2 fma\",\n") &&
             strstr(text, ".threads = 3},\n") && strstr(text, ".library = \"" BF16FP32_VERSION "\",\n"),
         "emitted header:\n%s", text);
  EXPECT(strstr(text, "static const bf16fp32__tune_entry entries[] = {") &&
             strstr(text, "{BF16FP32_DEVICE, 0, 0, 256, 4096, 1, \"smallm\", 2.100, \"cublas\", 6.300},") &&
             strstr(text, "{BF16FP32_DEVICE, 1, 0, 256, 4096, 1, \"smallm\", 1.950, \"cublas\", 6.300},") &&
             strstr(text, "{BF16FP32_HOST, 0, 0, 384, 7168, 7, \"cpu-ref\", 0.001, \"\", -1},") &&
             strstr(text, ".name = \"Odd \\\"GPU\\\" \\\\ \\?\\?=\"") &&
             strstr(text, ".count = (int)(sizeof entries / sizeof entries[0])"),
         "emitted:\n%s", text);
  free(text);
  /* Bytes outside printable ASCII as three-digit octal escapes, so that a digit after one stays
   * a character of its own ("\0017" is two characters, "\17" one); DEL and bytes >= 0x80 too. */
  snprintf(h.gpu.name, sizeof h.gpu.name, "a\001" "7\037\177\303\251z");
  EXPECT(bf16fp32__tune_emit_c(&h, e, 0, &text, &len) == BF16FP32_OK, "emit escapes");
  EXPECT(text && strstr(text, ".name = \"a\\0017\\037\\177\\303\\251z\","), "escapes:\n%s", text);
  free(text);
  bf16fp32__tune_header empty;
  memset(&empty, 0, sizeof empty);
  empty.format = 1;
  EXPECT(bf16fp32__tune_emit_c(&empty, NULL, 0, &text, &len) == BF16FP32_OK, "empty");
  EXPECT(!strstr(text, "entries[]") && strstr(text, ".entries = NULL") && strstr(text, ".count = 0"),
         "empty:\n%s", text);
  free(text);
  /* The shipped table is the emitter's output, byte for byte: the compiled table emitted again
   * is src/tune-builtin.c (its header, every entry, its count). */
  const bf16fp32__tune_builtin *b = &bf16fp32__tune_builtin_table;
  char *shipped = sup_read_text(BF16FP32_SOURCE_DIR "/src/tune-builtin.c");
  EXPECT(shipped && strstr(shipped, "bf16fp32__tune_builtin_table"), "shipped file");
  EXPECT(bf16fp32__tune_emit_c(&b->header, b->entries, b->count, &text, &len) == BF16FP32_OK, "emit shipped");
  EXPECT(shipped && text && strcmp(shipped, text) == 0,
         "src/tune-builtin.c is not the emitter's text of its own table (%d entries)", b->count);
  free(shipped);
  free(text);
}

int main(void) {
  if (sup_temp_dir(dir, sizeof dir, "tune-file")) return 1;
  test_round_trip();
  test_malformed();
  test_field_limits();
  test_time_written();
  test_truncated();
  test_size_limit();
  test_load();
  test_load_log();
  test_load_builtin();
  test_describe_table();
  test_context_refuses_corrupt();
  test_identity();
  test_default_path();
  test_merge();
  test_merge_sections();
  test_merge_guards();
  test_write_over_directory();
  test_emit_c();
  sup_remove_tree(dir);
  return testing_summary("test-tune-file");
}
