/* Look-ups in the registry (kept apart from its data: see registry.c). */
#include <string.h>

#include "internal.h"

int bf16fp32__registry_find(const char *name) {
  for (int i = 0; i < bf16fp32__registry_count; i++)
    if (strcmp(bf16fp32__registry[i].name, name) == 0) return i;
  return -1;
}

int bf16fp32_backend_count(void) { return bf16fp32__registry_count; }
