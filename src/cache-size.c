/* The last-level cache's size from Linux's sysfs (cache-size.h). */
#include "cache-size.h"
#include "read-text.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One cache as one CPU lists it: its level, its size, and the first CPU that shares it, which
 * names the instance (every CPU sharing it lists the same set). */
typedef struct cache_seen {
  int level, first_cpu;
  size_t bytes;
} cache_seen;

/* The first line of dir/name into buf, cut to len - 1 bytes (shared_cpu_list's first CPU is
 * all that is read of a long list); 0 when it cannot be read. A sysfs file holds a page at most:
 * 64 KiB covers the largest pages (arm64's). */
static int read_line(const char *dir, const char *name, char *buf, size_t len) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  char *text = bf16fp32__read_text(path, (size_t)1 << 16);
  if (!text) return 0;
  size_t n = strcspn(text, "\n");
  if (n >= len) n = len - 1;
  memcpy(buf, text, n);
  buf[n] = '\0';
  free(text);
  return 1;
}

/* "32768K", "32M" or bytes; 0 when it does not parse. */
static size_t parse_size(const char *s) {
  char *end;
  const unsigned long long v = strtoull(s, &end, 10);
  if (end == s) return 0;
  const unsigned long long unit = *end == 'K' ? 1ull << 10 : *end == 'M' ? 1ull << 20
                                  : *end == 'G' ? 1ull << 30 : *end == '\0' ? 1 : 0;
  return (size_t)(v * unit);
}

/* The caches of cpu_root/cpu_name appended to *seen (grown as needed); 0 when out of memory. */
static int add_cpu(const char *cpu_root, const char *cpu_name, cache_seen **seen, size_t *count,
                   size_t *cap) {
  for (int i = 0;; i++) {
    char dir[768], level[32], type[32], size[32], shared[64];
    snprintf(dir, sizeof dir, "%s/%s/cache/index%d", cpu_root, cpu_name, i);
    if (!read_line(dir, "level", level, sizeof level)) return 1; /* no more caches */
    if (!read_line(dir, "type", type, sizeof type) || strcmp(type, "Instruction") == 0 ||
        !read_line(dir, "size", size, sizeof size) ||
        !read_line(dir, "shared_cpu_list", shared, sizeof shared) ||
        !isdigit((unsigned char)shared[0]))
      continue;
    if (*count == *cap) {
      const size_t grown = *cap ? 2 * *cap : 64;
      cache_seen *p = realloc(*seen, grown * sizeof *p);
      if (!p) return 0;
      *seen = p, *cap = grown;
    }
    (*seen)[(*count)++] = (cache_seen){atoi(level), atoi(shared), parse_size(size)};
  }
}

size_t bf16fp32__llc_bytes(const char *cpu_root) {
  DIR *d = opendir(cpu_root);
  if (!d) return 0;
  cache_seen *seen = NULL;
  size_t count = 0, cap = 0;
  int ok = 1;
  for (struct dirent *e; ok && (e = readdir(d)) != NULL;)
    if (strncmp(e->d_name, "cpu", 3) == 0 && isdigit((unsigned char)e->d_name[3]))
      ok = add_cpu(cpu_root, e->d_name, &seen, &count, &cap);
  closedir(d);
  int top = 0;
  for (size_t i = 0; i < count; i++)
    if (seen[i].level > top) top = seen[i].level;
  size_t total = 0;
  for (size_t i = 0; ok && i < count; i++) {
    if (seen[i].level != top) continue;
    int counted = 0; /* an instance already met under another CPU */
    for (size_t j = 0; j < i && !counted; j++)
      counted = seen[j].level == top && seen[j].first_cpu == seen[i].first_cpu;
    if (!counted) total += seen[i].bytes;
  }
  free(seen);
  return ok ? total : 0;
}
