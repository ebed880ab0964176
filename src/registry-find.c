/* Look-ups in the registry (kept apart from its data: see registry.c). */
#include <string.h>

#include "internal.h"

int bf16fp32__registry_find(const char *name) {
  const char *variant;
  const int b = bf16fp32__registry_find_tuned(name, &variant);
  return variant ? -1 : b;
}

int bf16fp32__registry_find_tuned(const char *name, const char **variant) {
  const char *at = strchr(name, '@');
  *variant = at ? at + 1 : NULL;
  size_t len = at ? (size_t)(at - name) : strlen(name);
  for (int i = 0; i < bf16fp32__registry_count; i++)
    if (strlen(bf16fp32__registry[i].name) == len && strncmp(bf16fp32__registry[i].name, name, len) == 0)
      return i;
  return -1;
}

int bf16fp32_backend_count(void) { return bf16fp32__registry_count; }
