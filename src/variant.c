/* The text form of a backend variant (variant.h). */
#include <stdio.h>

#include "variant.h"

#define FIELD_MAX (((int64_t)1 << 31) - 1)

int bf16fp32__variant_parse(const char *text, int64_t fields[BF16FP32__VARIANT_FIELDS]) {
  int count = 0;
  size_t len = 0;
  const char *p = text;
  if (!p) return -1;
  for (;;) {
    int64_t v = 0;
    int digits = 0;
    while (*p >= '0' && *p <= '9') {
      v = v * 10 + (*p++ - '0');
      if (v > FIELD_MAX) return -1;
      digits++;
    }
    if (digits == 0 || count == BF16FP32__VARIANT_FIELDS) return -1;
    fields[count++] = v;
    if (*p == '\0') break;
    if (*p++ != '.') return -1;
  }
  len = (size_t)(p - text);
  return len < BF16FP32__VARIANT_LEN ? count : -1;
}

int bf16fp32__variant_format(const int64_t *fields, int count, char out[BF16FP32__VARIANT_LEN]) {
  size_t used = 0;
  if (count < 1 || count > BF16FP32__VARIANT_FIELDS) return -1;
  for (int i = 0; i < count; i++) {
    if (fields[i] < 0 || fields[i] > FIELD_MAX) return -1;
    int w = snprintf(out + used, BF16FP32__VARIANT_LEN - used, "%s%lld", i ? "." : "", (long long)fields[i]);
    if (w < 0 || (size_t)w >= BF16FP32__VARIANT_LEN - used) return -1;
    used += (size_t)w;
  }
  return 0;
}
