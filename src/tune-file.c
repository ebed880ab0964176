/* The tuning file's text: parsing (line by line, skipping and reporting malformed lines)
 * and formatting. Numbers are read and written by hand so that the process's locale (a
 * decimal comma) cannot change the file. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune-file.h"
#include "variant.h"

#define MAX_LINE 4096

/* --- text buffer --- */

void bf16fp32__text_printf(bf16fp32__text *t, const char *fmt, ...) {
  if (t->failed) return;
  for (;;) {
    size_t room = t->cap - t->len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->p ? t->p + t->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n < 0) {
      t->failed = true;
      return;
    }
    if ((size_t)n < room) {
      t->len += (size_t)n;
      return;
    }
    size_t cap = t->cap ? t->cap : 4096;
    while (cap - t->len <= (size_t)n) cap *= 2;
    char *p = realloc(t->p, cap);
    if (!p) {
      t->failed = true;
      return;
    }
    t->p = p;
    t->cap = cap;
  }
}

void bf16fp32__text_time(bf16fp32__text *t, double us) {
  if (!(us >= 0)) us = 0;     /* NaN or negative: never written by the tuner */
  if (us > 1e12) us = 1e12;   /* keeps the fixed-point value in range */
  long long milli = (long long)(us * 1000.0 + 0.5);
  /* At most the 12 integer digits parse_time reads: what is written must read back. */
  if (milli > 999999999999999LL) milli = 999999999999999LL;
  bf16fp32__text_printf(t, "%lld.%03lld", milli / 1000, milli % 1000);
}

/* --- parsing --- */

enum {
  GPU_NAME = 1 << 0, GPU_SMS = 1 << 1, GPU_CC = 1 << 2, GPU_RUNTIME = 1 << 3, GPU_DRIVER = 1 << 4,
  GPU_CUBLAS = 1 << 5, GPU_ALL = (1 << 6) - 1,
  CPU_MODEL = 1 << 0, CPU_FEATURES = 1 << 1, CPU_THREADS = 1 << 2, CPU_ALL = (1 << 3) - 1,
};

/* A binary file given by mistake would otherwise flood the log: after this many, the
 * malformed lines are only counted. */
#define MAX_LINE_WARNINGS 10

typedef struct parser {
  bf16fp32__tune_file *f;
  bf16fp32__tune_warn_fn warn;
  void *user;
  int line;
  int line_warnings; /* warnings about a line, said or counted */
  unsigned gpu_seen, cpu_seen;
} parser;

static void warn(parser *p, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void warn(parser *p, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (!p->f->problem[0]) { /* the first, for the status a reader returns */
    if (p->line > 0)
      snprintf(p->f->problem, sizeof p->f->problem, "line %d: %s", p->line, msg);
    else
      snprintf(p->f->problem, sizeof p->f->problem, "%s", msg);
  }
  if (p->line > 0 && ++p->line_warnings > MAX_LINE_WARNINGS) return;
  if (p->warn) p->warn(p->user, p->line, msg);
}

/* A positive decimal integer, no sign, no leading zero, at most 18 digits (no overflow). */
static bool parse_count(const char *s, int64_t *v) {
  size_t n = strlen(s);
  if (n == 0 || n > 18 || s[0] == '0') return false;
  int64_t x = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    x = x * 10 + (s[i] - '0');
  }
  *v = x;
  return true;
}

/* A non-negative decimal "123" or "123.456" (at most 12 and 9 digits). */
static bool parse_time(const char *s, double *v) {
  const char *dot = strchr(s, '.');
  size_t ip = dot ? (size_t)(dot - s) : strlen(s);
  size_t fp = dot ? strlen(dot + 1) : 0;
  if (ip == 0 || ip > 12 || (dot && (fp == 0 || fp > 9))) return false;
  double x = 0, scale = 1;
  for (size_t i = 0; i < ip; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    x = x * 10 + (s[i] - '0');
  }
  for (size_t i = 0; i < fp; i++) {
    char c = dot[1 + i];
    if (c < '0' || c > '9') return false;
    scale /= 10;
    x += (c - '0') * scale;
  }
  *v = x;
  return true;
}

/* A backend name as the registry spells them ([A-Za-z0-9_.+-]), or "name@variant" with a variant
 * text (variant.h); shorter than BF16FP32__TUNE_NAME_LEN in all. */
static bool parse_name(const char *s, char *out) {
  size_t n = strlen(s);
  const char *at = strchr(s, '@');
  int64_t fields[BF16FP32__VARIANT_FIELDS];
  if (n == 0 || n >= BF16FP32__TUNE_NAME_LEN || at == s) return false;
  if (at && bf16fp32__variant_parse(at + 1, fields) < 0) return false;
  for (const char *c = s; c < (at ? at : s + n); c++) {
    bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_' || *c == '.' || *c == '+' || *c == '-';
    if (!ok) return false;
  }
  memcpy(out, s, n + 1);
  return true;
}

/* "9.0" -> 9, 0: digits '.' digits, each at most 3. */
static bool parse_cc(const char *s, int *major, int *minor) {
  int64_t a, b;
  const char *dot = strchr(s, '.');
  char left[8], right[8];
  if (!dot || dot == s || dot - s > 3 || strlen(dot + 1) == 0 || strlen(dot + 1) > 3) return false;
  memcpy(left, s, (size_t)(dot - s));
  left[dot - s] = '\0';
  snprintf(right, sizeof right, "%s", dot + 1);
  /* "0" is a valid part here (cc 9.0), unlike in counts. */
  if (strcmp(right, "0") == 0) {
    b = 0;
  } else if (!parse_count(right, &b)) {
    return false;
  }
  if (!parse_count(left, &a)) return false;
  *major = (int)a;
  *minor = (int)b;
  return true;
}

/* A header value, cleaned as the writer cleans it (so stray spaces from an edit do not
 * change the identity); empty, or longer than the field the writer fills, is not ours. */
static bool set_text(char *dst, size_t len, const char *value) {
  char clean[MAX_LINE + 1];
  bf16fp32__identity_clean(clean, sizeof clean, value);
  size_t n = strlen(clean);
  if (n == 0 || n >= len) return false;
  memcpy(dst, clean, n + 1);
  return true;
}

static void header_line(parser *p, const char *key, const char *value) {
  bf16fp32__tune_header *h = &p->f->header;
  int64_t v = 0;
  bool ok = true;
  if (strcmp(key, "format") == 0) {
    ok = parse_count(value, &v) && v < 1000000;
    if (ok) h->format = (int)v;
  } else if (strcmp(key, "library") == 0) {
    ok = set_text(h->library, sizeof h->library, value);
  } else if (strcmp(key, "gpu.name") == 0) {
    ok = set_text(h->gpu.name, sizeof h->gpu.name, value);
    if (ok) p->gpu_seen |= GPU_NAME;
  } else if (strcmp(key, "gpu.sm_count") == 0) {
    ok = parse_count(value, &v) && v < 1000000;
    if (ok) h->gpu.sm_count = (int)v, p->gpu_seen |= GPU_SMS;
  } else if (strcmp(key, "gpu.compute_capability") == 0) {
    ok = parse_cc(value, &h->gpu.cc_major, &h->gpu.cc_minor);
    if (ok) p->gpu_seen |= GPU_CC;
  } else if (strcmp(key, "gpu.cuda_runtime") == 0) {
    ok = set_text(h->gpu.cuda_runtime, sizeof h->gpu.cuda_runtime, value);
    if (ok) p->gpu_seen |= GPU_RUNTIME;
  } else if (strcmp(key, "gpu.cuda_driver") == 0) {
    ok = set_text(h->gpu.cuda_driver, sizeof h->gpu.cuda_driver, value);
    if (ok) p->gpu_seen |= GPU_DRIVER;
  } else if (strcmp(key, "gpu.cublas") == 0) {
    ok = set_text(h->gpu.cublas, sizeof h->gpu.cublas, value);
    if (ok) p->gpu_seen |= GPU_CUBLAS;
  } else if (strcmp(key, "cpu.model") == 0) {
    ok = set_text(h->cpu.model, sizeof h->cpu.model, value);
    if (ok) p->cpu_seen |= CPU_MODEL;
  } else if (strcmp(key, "cpu.features") == 0) {
    ok = set_text(h->cpu.features, sizeof h->cpu.features, value);
    if (ok) p->cpu_seen |= CPU_FEATURES;
  } else if (strcmp(key, "cpu.threads") == 0) {
    ok = parse_count(value, &v) && v < 1000000;
    if (ok) h->cpu.threads = (int)v, p->cpu_seen |= CPU_THREADS;
  }
  /* Other keys ("columns", or ones a later version adds) are for people. */
  if (!ok) {
    warn(p, "header '%s': bad value '%.64s'", key, value);
    p->f->skipped++;
  }
}

/* Splits s in place on runs of tabs and spaces; returns the field count (up to max + 1). */
static int split_fields(char *s, char **fields, int max) {
  int n = 0;
  char *q = s;
  while (*q) {
    while (*q == '\t' || *q == ' ') *q++ = '\0';
    if (!*q) break;
    if (n == max) return max + 1;
    fields[n++] = q;
    while (*q && *q != '\t' && *q != ' ') q++;
  }
  return n;
}

static bf16fp32_status data_line(parser *p, char *s) {
  char *f[8];
  int n = split_fields(s, f, 8);
  if (n != 8) {
    warn(p, "expected 8 fields (where n k m winner winner_us runner_up runner_up_us), found %s%d",
         n > 8 ? "more than " : "", n > 8 ? 8 : n);
    p->f->skipped++;
    return BF16FP32_OK;
  }
  bf16fp32__tune_entry e;
  memset(&e, 0, sizeof e);
  e.line = p->line;
  const char *bad = NULL;
  if (strcmp(f[0], "host") == 0)
    e.where = BF16FP32_HOST;
  else if (strcmp(f[0], "device") == 0)
    e.where = BF16FP32_DEVICE;
  else if (strcmp(f[0], "device-pdl") == 0)
    e.where = BF16FP32_DEVICE, e.pdl = 1;
  else
    bad = "where (host, device or device-pdl)";
  if (!bad && !parse_count(f[1], &e.n)) bad = "n";
  if (!bad && !parse_count(f[2], &e.k)) bad = "k";
  if (!bad && !(parse_count(f[3], &e.m) && bf16fp32__tune_is_bucket(e.m)))
    bad = "m (a bucket: 1 to 16, 24 to 64 in steps of 8, or a power of two)";
  if (!bad && !parse_name(f[4], e.winner)) bad = "winner (a backend name, or name@variant)";
  if (!bad && !parse_time(f[5], &e.winner_us)) bad = "winner_us (microseconds)";
  if (!bad) {
    bool none = strcmp(f[6], "-") == 0, none_us = strcmp(f[7], "-") == 0;
    if (none != none_us)
      bad = "runner_up and runner_up_us (both '-' or neither)";
    else if (none)
      e.runner_up_us = -1;
    else if (!parse_name(f[6], e.runner_up) || strcmp(e.runner_up, e.winner) == 0)
      bad = "runner_up (a backend name or name@variant other than the winner)";
    else if (!parse_time(f[7], &e.runner_up_us))
      bad = "runner_up_us (microseconds)";
  }
  if (bad) {
    warn(p, "bad %s", bad);
    p->f->skipped++;
    return BF16FP32_OK;
  }
  return bf16fp32__tune_table_add(&p->f->table, &e);
}

static bf16fp32_status one_line(parser *p, char *s, size_t len) {
  if (len > 0 && s[len - 1] == '\r') s[--len] = '\0'; /* a file saved with CRLF */
  if (memchr(s, '\0', len)) {
    warn(p, "NUL byte in line");
    p->f->skipped++;
    return BF16FP32_OK;
  }
  if (s[0] == '#') {
    /* "# key<TAB>value" is a header line; any other '#' line is a comment. */
    const char *key = s[1] == ' ' ? s + 2 : s + 1;
    char *tab = strchr(key, '\t');
    if (!tab) return BF16FP32_OK;
    for (const char *c = key; c < tab; c++)
      if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_' || *c == '.'))
        return BF16FP32_OK;
    *tab = '\0';
    header_line(p, key, tab + 1);
    return BF16FP32_OK;
  }
  size_t i = 0;
  while (i < len && (s[i] == ' ' || s[i] == '\t')) i++;
  if (i == len) return BF16FP32_OK; /* blank */
  return data_line(p, s);
}

bf16fp32_status bf16fp32__tune_file_parse(const char *text, size_t len, bf16fp32__tune_file *f,
                                          bf16fp32__tune_warn_fn warn_fn, void *user) {
  memset(f, 0, sizeof *f);
  parser p = {f, warn_fn, user, 0, 0, 0, 0};
  f->bytes = len;
  char *buf = malloc(MAX_LINE + 1);
  if (!buf) return bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "tune file: line buffer");
  bf16fp32_status st = BF16FP32_OK;
  size_t pos = 0;
  while (pos < len && st == BF16FP32_OK) {
    const char *nl = memchr(text + pos, '\n', len - pos);
    size_t end = nl ? (size_t)(nl - text) : len;
    size_t n = end - pos;
    p.line++;
    if (!nl) {
      /* Every line we write ends in a newline: a last line without one was cut short. */
      warn(&p, "no newline at the end of the file (truncated?)");
      f->skipped++;
    } else if (n > MAX_LINE) {
      warn(&p, "line longer than %d bytes", MAX_LINE);
      f->skipped++;
    } else {
      memcpy(buf, text + pos, n);
      buf[n] = '\0';
      st = one_line(&p, buf, n);
    }
    pos = nl ? end + 1 : len;
  }
  free(buf);
  if (p.line_warnings > MAX_LINE_WARNINGS) {
    p.line = 0;
    warn(&p, "%d more malformed lines skipped", p.line_warnings - MAX_LINE_WARNINGS);
  }
  f->header.has_gpu = p.gpu_seen == GPU_ALL;
  f->header.has_cpu = p.cpu_seen == CPU_ALL;
  if (p.gpu_seen && !f->header.has_gpu) {
    p.line = 0;
    warn(&p, "the GPU identity in the header is incomplete: device entries do not apply");
  }
  if (p.cpu_seen && !f->header.has_cpu) {
    p.line = 0;
    warn(&p, "the CPU identity in the header is incomplete: host entries do not apply");
  }
  if (st != BF16FP32_OK) {
    bf16fp32__tune_file_clear(f);
    return st;
  }
  bf16fp32__tune_table_finish(&f->table);
  return BF16FP32_OK;
}

void bf16fp32__tune_file_clear(bf16fp32__tune_file *f) {
  bf16fp32__tune_table_clear(&f->table);
  memset(f, 0, sizeof *f);
}

bool bf16fp32__tune_header_current(const bf16fp32__tune_header *h, char *why, size_t why_len) {
  if (h->format != BF16FP32__TUNE_FORMAT) {
    if (why)
      snprintf(why, why_len, h->format ? "format %d (this library reads format %d)"
                                       : "no '# format' header line (format %d expected)",
               h->format ? h->format : BF16FP32__TUNE_FORMAT, BF16FP32__TUNE_FORMAT);
    return false;
  }
  if (strcmp(h->library, BF16FP32_VERSION) != 0) {
    if (why)
      snprintf(why, why_len, "written by bf16fp32 %s (this is %s)",
               h->library[0] ? h->library : "(unknown version)", BF16FP32_VERSION);
    return false;
  }
  return true;
}

bf16fp32_status bf16fp32__tune_file_check(const bf16fp32__tune_file *f, const char *path,
                                          const char *then) {
  if (f->bytes > 0 && f->header.format == 0)
    return bf16fp32__fail(BF16FP32_TUNE_FILE,
                          "tune file %s: no valid '# format' line, so not a tune file: %s", path, then);
  if (f->problem[0] && bf16fp32__tune_header_current(&f->header, NULL, 0))
    return bf16fp32__fail(BF16FP32_TUNE_FILE, "tune file %s: %s%s: %s", path, f->problem,
                          f->skipped > 1 ? " (and more malformed lines)" : "", then);
  return BF16FP32_OK;
}

/* --- formatting --- */

bf16fp32_status bf16fp32__tune_file_format(const bf16fp32__tune_header *h,
                                           const bf16fp32__tune_entry *e, int count, char **text,
                                           size_t *len) {
  bf16fp32__text t = {0};
  *text = NULL;
  *len = 0;
  bf16fp32__text_printf(&t,
                        "# bf16fp32 tuning file: the fastest backends for each (location, N, K, M bucket)\n"
                        "# measured on the machine described below, written by `bf16fp32 tune`.\n"
                        "# Entries apply only to that GPU (device) or CPU (host) and library version;\n"
                        "# device-pdl entries were measured with the context's PDL option on, a backend\n"
                        "# that launches plainly in turns with one of ours (its time: the pair's less ours).\n"
                        "# M buckets: each M up to 16, multiples of 8 up to 64 (M 17..24 uses 24),\n"
                        "# then powers of two (M 65..128 uses 128).\n"
                        "# A name backend@variant is one configuration of that backend (for cublaslt its\n"
                        "# algorithm: id.tile.stages.splitk.reduction.swizzle.custom.inner.cluster;\n"
                        "# for smallm its staging, as src/backends/smallm/smallm-variant.h says).\n"
                        "# Times: median microseconds per call (GPU: graph replay, cold L2).\n");
  bf16fp32__text_printf(&t, "# format\t%d\n# library\t%s\n", h->format, h->library);
  if (h->has_gpu)
    bf16fp32__text_printf(&t,
                          "# gpu.name\t%s\n# gpu.sm_count\t%d\n# gpu.compute_capability\t%d.%d\n"
                          "# gpu.cuda_runtime\t%s\n# gpu.cuda_driver\t%s\n# gpu.cublas\t%s\n",
                          h->gpu.name, h->gpu.sm_count, h->gpu.cc_major, h->gpu.cc_minor,
                          h->gpu.cuda_runtime, h->gpu.cuda_driver, h->gpu.cublas);
  if (h->has_cpu)
    bf16fp32__text_printf(&t, "# cpu.model\t%s\n# cpu.features\t%s\n# cpu.threads\t%d\n",
                          h->cpu.model, h->cpu.features, h->cpu.threads);
  bf16fp32__text_printf(&t,
                        "# columns\twhere\tn\tk\tm\twinner\twinner_us\trunner_up\trunner_up_us\n");
  for (int i = 0; i < count; i++) {
    bf16fp32__text_printf(&t, "%s\t%lld\t%lld\t%lld\t%s\t", bf16fp32__tune_where_name(&e[i]),
                          (long long)e[i].n, (long long)e[i].k, (long long)e[i].m, e[i].winner);
    bf16fp32__text_time(&t, e[i].winner_us);
    if (e[i].runner_up[0]) {
      bf16fp32__text_printf(&t, "\t%s\t", e[i].runner_up);
      bf16fp32__text_time(&t, e[i].runner_up_us);
      bf16fp32__text_printf(&t, "\n");
    } else {
      bf16fp32__text_printf(&t, "\t-\t-\n");
    }
  }
  if (t.failed) {
    free(t.p);
    return bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "tune file: formatting %d entries", count);
  }
  *text = t.p;
  *len = t.len;
  return BF16FP32_OK;
}
