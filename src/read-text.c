/* Small system files read whole (read-text.h). */
#include "read-text.h"

#include <stdio.h>
#include <stdlib.h>

char *bf16fp32__read_text(const char *path, size_t max) {
  FILE *f = fopen(path, "re"); /* e: not inherited by a child the process starts */
  if (!f) return NULL;
  char *buf = malloc(max + 1);
  /* max + 1: a file that fills more than max is refused, not cut */
  const size_t n = buf ? fread(buf, 1, max + 1, f) : 0;
  const int failed = ferror(f); /* a directory opens, and its read fails */
  fclose(f);
  if (!buf || n > max || failed) {
    free(buf);
    return NULL;
  }
  buf[n] = '\0';
  return buf;
}
