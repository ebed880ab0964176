/* Counters behind the check macros of testing.h. */
#include "testing.h"

#include <stdlib.h>

int testing_failures;
int testing_checks;

int testing_summary(const char *name) {
  printf("%s: %d passed, %d failed\n", name, testing_checks - testing_failures, testing_failures);
  return testing_failures ? 1 : 0;
}

int testing_skip(const char *name, const char *why) {
  printf("%s: skipped: %s\n", name, why);
  return 77;
}

void *testing_alloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "test: out of memory for %zu bytes\n", bytes);
    exit(1);
  }
  return p;
}
