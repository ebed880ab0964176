/* Shape suites (shapes/dsv4.txt format): "name N K calls" lines, one "M m1 m2 ..." line,
 * '#' comments. Shared by `bench`, `check`, `select` and the tuner. */
#ifndef BF16FP32_TOOLS_SUITE_H
#define BF16FP32_TOOLS_SUITE_H

#include <stddef.h>
#include <stdint.h>

#define SUITE_MAX_ENTRIES 128
#define SUITE_MAX_M 64
#define SUITE_NAME_LEN 64
/* Room for suite_load's messages: a path (PATH_MAX), a field of a line, what is wrong. A
 * smaller buffer kept a long path and cut off the line number and the reason. */
#define SUITE_ERR_LEN (4096 + 4096 + 256)

typedef struct suite_entry {
  char name[SUITE_NAME_LEN]; /* e.g. "flash.router" */
  int64_t n, k;              /* weight shape: out has n columns, the reduction is k long */
  int calls;                 /* calls per decode step (the 4th column) */
  int line;                  /* line number in the file, for messages */
} suite_entry;

typedef struct suite {
  char path[1024];           /* the file it was loaded from */
  suite_entry entries[SUITE_MAX_ENTRIES];
  int count;                 /* entries in file order */
  int64_t m[SUITE_MAX_M];    /* the M list, in file order */
  int m_count;               /* 0 when the file has no "M" line */
} suite;

/* Loads a suite file. Returns 0, or -1 with "path:line: what is wrong" (or "path: why it
 * cannot be read") in err. Rejects: lines that are neither an entry nor an "M" line, N, K or
 * M not integers in [1, 2^31), calls not in [0, 2^31), a second "M" line, duplicate entry
 * names, too many entries or M values, a file without entries. Text after '#' is a comment. */
int suite_load(const char *path, suite *out, char *err, size_t errlen);

/* Writes the default suite path: BF16FP32_SOURCE_DIR/../shared/shapes/dsv4.txt when it is
 * readable, else ./shapes/dsv4.txt, else BF16FP32_SOURCE_DIR/shapes/dsv4.txt. Returns buf. */
const char *suite_default_path(char *buf, size_t len);

/* Parses a comma-separated list of positive integers ("1,16,256") into vals (cap values).
 * Returns the count, or -1 with the reason in err. */
int suite_parse_int_list(const char *text, int64_t *vals, int cap, char *err, size_t errlen);

/* Index of the entry with this name, or -1. */
int suite_find(const suite *s, const char *name);

/* Keeps only the entries whose name starts with prefix (e.g. "flash."); returns how many. */
int suite_filter_prefix(suite *s, const char *prefix);

#endif
