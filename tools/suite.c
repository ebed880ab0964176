/* Shape suite files: parsing and the default path (format in suite.h). */
#include "suite.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef BF16FP32_SOURCE_DIR
#define BF16FP32_SOURCE_DIR "."
#endif

#define SUITE_INT_MAX 2147483647LL

static void set_err(char *err, size_t len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void set_err(char *err, size_t len, const char *fmt, ...) {
  if (!err || len == 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, len, fmt, ap);
  va_end(ap);
}

/* Whole token as an integer in [lo, SUITE_INT_MAX]; 0 on success. */
static int parse_int(const char *tok, int64_t lo, int64_t *v) {
  if (!tok || !*tok) return -1;
  if (!isdigit((unsigned char)tok[0])) return -1; /* no sign, no spaces, no hex */
  errno = 0;
  char *end = NULL;
  long long x = strtoll(tok, &end, 10);
  if (errno != 0 || *end != '\0' || x < lo || x > SUITE_INT_MAX) return -1;
  *v = (int64_t)x;
  return 0;
}

/* Splits a line in place into at most cap whitespace-separated tokens; returns the count
 * (cap + 1 when there are more). */
static int tokenize(char *line, char **tok, int cap) {
  int n = 0;
  char *p = line;
  for (;;) {
    while (*p && isspace((unsigned char)*p)) p++;
    if (!*p) break;
    if (n == cap) return cap + 1;
    tok[n++] = p;
    while (*p && !isspace((unsigned char)*p)) p++;
    if (*p) *p++ = '\0';
  }
  return n;
}

/* The "M m1 m2 ..." line's values (tok[1..nt-1]) into out. Returns 0, or -1 with err set. */
static int parse_m_line(suite *out, char **tok, int nt, const char *path, int lineno, char *err,
                        size_t errlen) {
  if (nt == 1) {
    set_err(err, errlen, "%s:%d: \"M\" line without values", path, lineno);
    return -1;
  }
  if (nt > SUITE_MAX_M + 1) {
    set_err(err, errlen, "%s:%d: more than %d M values", path, lineno, SUITE_MAX_M);
    return -1;
  }
  for (int i = 1; i < nt; i++) {
    if (parse_int(tok[i], 1, &out->m[out->m_count]) != 0) {
      set_err(err, errlen, "%s:%d: M value \"%s\" is not an integer in [1, 2^31)", path, lineno,
              tok[i]);
      return -1;
    }
    out->m_count++;
  }
  return 0;
}

/* A "name N K calls" line (nt tokens) appended to out. Returns 0, or -1 with err set. */
static int parse_entry(suite *out, char **tok, int nt, const char *path, int lineno, char *err,
                       size_t errlen) {
  if (nt != 4) {
    set_err(err, errlen,
            "%s:%d: expected \"name N K calls\" or \"M m1 m2 ...\", got %d field%s", path,
            lineno, nt > SUITE_MAX_M + 1 ? SUITE_MAX_M + 1 : nt, nt == 1 ? "" : "s");
    return -1;
  }
  if (strlen(tok[0]) >= SUITE_NAME_LEN) {
    set_err(err, errlen, "%s:%d: name \"%s\" longer than %d characters", path, lineno, tok[0],
            SUITE_NAME_LEN - 1);
    return -1;
  }
  if (isdigit((unsigned char)tok[0][0])) {
    set_err(err, errlen, "%s:%d: the first field must be a name, got \"%s\"", path, lineno,
            tok[0]);
    return -1;
  }
  if (out->count == SUITE_MAX_ENTRIES) {
    set_err(err, errlen, "%s:%d: more than %d entries", path, lineno, SUITE_MAX_ENTRIES);
    return -1;
  }
  suite_entry *e = &out->entries[out->count];
  int64_t calls = 0;
  const char *what = NULL;
  const char *bad = NULL;
  if (parse_int(tok[1], 1, &e->n) != 0) {
    what = "N";
    bad = tok[1];
  } else if (parse_int(tok[2], 1, &e->k) != 0) {
    what = "K";
    bad = tok[2];
  } else if (parse_int(tok[3], 0, &calls) != 0) {
    what = "calls";
    bad = tok[3];
  }
  if (what) {
    set_err(err, errlen, "%s:%d: %s \"%s\" is not an integer in [%d, 2^31)", path, lineno, what,
            bad, strcmp(what, "calls") == 0 ? 0 : 1);
    return -1;
  }
  if (suite_find(out, tok[0]) >= 0) {
    set_err(err, errlen, "%s:%d: entry \"%s\" appears twice", path, lineno, tok[0]);
    return -1;
  }
  snprintf(e->name, sizeof e->name, "%s", tok[0]);
  e->calls = (int)calls;
  e->line = lineno;
  out->count++;
  return 0;
}

int suite_load(const char *path, suite *out, char *err, size_t errlen) {
  if (!path || !out) {
    set_err(err, errlen, "suite: no file given");
    return -1;
  }
  memset(out, 0, sizeof *out);
  snprintf(out->path, sizeof out->path, "%s", path);
  FILE *f = fopen(path, "r");
  if (!f) {
    set_err(err, errlen, "%s: cannot read the suite: %s", path, strerror(errno));
    return -1;
  }
  char *buf = NULL;
  size_t cap = 0;
  ssize_t got;
  int lineno = 0, rc = -1;
  int seen_m = 0;
  while ((got = getline(&buf, &cap, f)) >= 0) {
    lineno++;
    if (got >= 4096) {
      set_err(err, errlen, "%s:%d: line too long", path, lineno);
      goto done;
    }
    if (strlen(buf) != (size_t)got) { /* the string would end there, and the rest go unread */
      set_err(err, errlen, "%s:%d: a NUL byte in the line", path, lineno);
      goto done;
    }
    char *hash = strchr(buf, '#');
    if (hash) *hash = '\0';
    char *tok[SUITE_MAX_M + 2];
    int nt = tokenize(buf, tok, SUITE_MAX_M + 1);
    if (nt == 0) continue;
    if (strcmp(tok[0], "M") == 0) {
      if (seen_m) {
        set_err(err, errlen, "%s:%d: a second \"M\" line", path, lineno);
        goto done;
      }
      seen_m = 1;
      if (parse_m_line(out, tok, nt, path, lineno, err, errlen) != 0) goto done;
    } else if (parse_entry(out, tok, nt, path, lineno, err, errlen) != 0) {
      goto done;
    }
  }
  if (ferror(f)) {
    set_err(err, errlen, "%s: read error: %s", path, strerror(errno));
    goto done;
  }
  if (out->count == 0) {
    set_err(err, errlen, "%s: no \"name N K calls\" entries", path);
    goto done;
  }
  rc = 0;
done:
  free(buf);
  fclose(f);
  return rc;
}

const char *suite_default_path(char *buf, size_t len) {
  const char *candidates[] = {BF16FP32_SOURCE_DIR "/../shared/shapes/dsv4.txt",
                              "shapes/dsv4.txt", BF16FP32_SOURCE_DIR "/shapes/dsv4.txt"};
  const size_t count = sizeof candidates / sizeof candidates[0];
  size_t pick = count - 1; /* none readable: the source tree's own, named in the error */
  for (size_t i = 0; i < count; i++) {
    if (access(candidates[i], R_OK) == 0) {
      pick = i;
      break;
    }
  }
  snprintf(buf, len, "%s", candidates[pick]);
  return buf;
}

int suite_parse_int_list(const char *text, int64_t *vals, int cap, char *err, size_t errlen) {
  if (!text || !*text) {
    set_err(err, errlen, "empty list");
    return -1;
  }
  int n = 0;
  const char *p = text;
  for (;;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    char tok[32];
    if (len == 0 || len >= sizeof tok) {
      set_err(err, errlen, "\"%s\": expected comma-separated positive integers", text);
      return -1;
    }
    memcpy(tok, p, len);
    tok[len] = '\0';
    if (n == cap) {
      set_err(err, errlen, "\"%s\": more than %d values", text, cap);
      return -1;
    }
    if (parse_int(tok, 1, &vals[n]) != 0) {
      set_err(err, errlen, "\"%s\": \"%s\" is not an integer in [1, 2^31)", text, tok);
      return -1;
    }
    n++;
    if (!comma) break;
    p = comma + 1;
  }
  return n;
}

int suite_find(const suite *s, const char *name) {
  for (int i = 0; i < s->count; i++)
    if (strcmp(s->entries[i].name, name) == 0) return i;
  return -1;
}

int suite_filter_prefix(suite *s, const char *prefix) {
  size_t plen = strlen(prefix);
  int kept = 0;
  for (int i = 0; i < s->count; i++) {
    if (strncmp(s->entries[i].name, prefix, plen) == 0) {
      if (kept != i) s->entries[kept] = s->entries[i];
      kept++;
    }
  }
  s->count = kept;
  return kept;
}
