/* A minimal check macro set for the tests: failures are counted and reported with file:line. */
#ifndef BF16FP32_TESTING_H
#define BF16FP32_TESTING_H

#include <stddef.h>
#include <stdio.h>

#include "bf16fp32.h"

extern int testing_failures;
extern int testing_checks;

#define CHECK(cond)                                                               \
  do {                                                                            \
    testing_checks++;                                                             \
    if (!(cond)) {                                                                \
      testing_failures++;                                                         \
      fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s)\n", __FILE__,      \
              __LINE__, #cond, bf16fp32_last_error());                            \
    }                                                                             \
  } while (0)

#define CHECK_OK(expr)                                                            \
  do {                                                                            \
    bf16fp32_status testing_st = (expr);                                          \
    testing_checks++;                                                             \
    if (testing_st != BF16FP32_OK) {                                              \
      testing_failures++;                                                         \
      fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #expr,    \
              bf16fp32_status_name(testing_st), bf16fp32_last_error());           \
    }                                                                             \
  } while (0)

/* CHECK with a printf-style explanation; only the first 50 failures are printed. */
#define EXPECT(cond, ...)                                                         \
  do {                                                                            \
    testing_checks++;                                                             \
    if (!(cond) && ++testing_failures <= 50) {                                    \
      fprintf(stderr, "%s:%d: EXPECT failed: %s: ", __FILE__, __LINE__, #cond);    \
      fprintf(stderr, __VA_ARGS__);                                               \
      fputc('\n', stderr);                                                        \
    }                                                                             \
  } while (0)

/* Prints "name: N passed, N failed" and returns the exit code (1 on any failure). */
int testing_summary(const char *name);
/* Exit code 77 (skipped) with a reason. */
int testing_skip(const char *name, const char *why);
/* malloc that ends the test (exit 1, with a message) when it fails: a test's own buffers. */
void *testing_alloc(size_t bytes);

#endif
