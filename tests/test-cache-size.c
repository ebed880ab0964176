/* The last-level cache read from fake sysfs trees (two sockets, private caches only, a malformed
 * size, a CPU whose sharers are not listed, sharer lists longer than the line kept, no tree),
 * the reader of such files (a directory, a file over its limit), and the host rotation: twice the last-level cache, at least 256 MiB, at most an eighth of
 * memory above that; this machine's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache-size.h"
#include "measure.h"
#include "read-text.h"
#include "support.h"
#include "testing.h"

static char tmp[512];

/* Creates tmp/rel and its parents. */
static void make_dir(const char *rel) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", tmp, rel);
  sup_make_dirs(path);
}

/* tree/cpuN/cache/indexI with its four files. */
static void cache(const char *tree, int cpu, int index, int level, const char *type,
                  const char *size, const char *shared) {
  char dir[1024], path[1100], text[4][512];
  snprintf(dir, sizeof dir, "%s/%s/cpu%d/cache/index%d", tmp, tree, cpu, index);
  sup_make_dirs(dir);
  const char *const names[] = {"level", "type", "size", "shared_cpu_list"};
  snprintf(text[0], sizeof text[0], "%d\n", level);
  snprintf(text[1], sizeof text[1], "%s\n", type);
  snprintf(text[2], sizeof text[2], "%s\n", size);
  snprintf(text[3], sizeof text[3], "%s\n", shared);
  for (int i = 0; i < 4; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    sup_write_text(path, text[i]);
  }
}

static size_t llc(const char *tree) {
  char root[1024];
  snprintf(root, sizeof root, "%s/%s", tmp, tree);
  return bf16fp32__llc_bytes(root);
}

int main(void) {
  if (sup_temp_dir(tmp, sizeof tmp, "cache-size")) return 1;
  /* two sockets of two CPUs: private L1 and L2, one 32 MiB L3 per socket; a machine without a
   * shared cache, whose private L2s add up (an instruction cache never counts) */
  static const struct {
    const char *tree;
    int cpu, index, level;
    const char *type, *size, *shared;
  } rows[] = {
      {"two", 0, 0, 1, "Data", "48K", "0"},          {"two", 0, 1, 1, "Instruction", "64K", "0"},
      {"two", 0, 2, 2, "Unified", "2048K", "0"},     {"two", 0, 3, 3, "Unified", "32768K", "0-1"},
      {"two", 1, 0, 1, "Data", "48K", "1"},          {"two", 1, 1, 2, "Unified", "2048K", "1"},
      {"two", 1, 2, 3, "Unified", "32768K", "0-1"},  {"two", 2, 0, 2, "Unified", "2048K", "2"},
      {"two", 2, 1, 3, "Unified", "32768K", "2-3"},  {"two", 3, 0, 3, "Unified", "32768K", "2-3"},
      {"private", 0, 0, 1, "Data", "32K", "0"},      {"private", 0, 1, 2, "Unified", "1M", "0"},
      {"private", 0, 2, 3, "Instruction", "8M", "0"}, {"private", 1, 0, 2, "Unified", "1M", "1"},
      {"private", 2, 0, 2, "Unified", "1M", "2"},    {"private", 2, 1, 3, "Instruction", "8M", "2"},
  };
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
    cache(rows[r].tree, rows[r].cpu, rows[r].index, rows[r].level, rows[r].type, rows[r].size,
          rows[r].shared);
  make_dir("two/cpufreq"); /* not a CPU */
  EXPECT(llc("two") == (size_t)64 << 20, "two sockets: %zu bytes", llc("two"));
  EXPECT(llc("private") == (size_t)3 << 20, "private L2s: %zu bytes", llc("private"));
  /* the first sharer offline (no cpu0 here): the instance still counts once */
  cache("offline", 1, 0, 3, "Unified", "16M", "0-1");
  cache("offline", 2, 0, 3, "Unified", "16M", "2");
  EXPECT(llc("offline") == (size_t)32 << 20, "first sharer missing: %zu bytes", llc("offline"));
  /* sharers listed one by one, longer than the line the reader keeps: the first still names
   * the instance (even and odd CPUs, one 16 MiB L3 each) */
  char even[512] = "", odd[512] = "";
  for (int c = 0; c < 100; c += 2) {
    snprintf(even + strlen(even), sizeof even - strlen(even), "%s%d", c ? "," : "", c);
    snprintf(odd + strlen(odd), sizeof odd - strlen(odd), "%s%d", c ? "," : "", c + 1);
  }
  cache("listed", 0, 0, 3, "Unified", "16M", even);
  cache("listed", 2, 0, 3, "Unified", "16M", even);
  cache("listed", 1, 0, 3, "Unified", "16M", odd);
  EXPECT(llc("listed") == (size_t)32 << 20, "long sharer lists: %zu bytes", llc("listed"));
  /* a size that does not parse counts nothing; no tree at all: 0 */
  cache("bad", 0, 0, 3, "Unified", "lots", "0");
  EXPECT(llc("bad") == 0, "malformed size: %zu bytes", llc("bad"));
  EXPECT(llc("none") == 0, "no tree: %zu bytes", llc("none"));

  /* the reader: a file whole up to its limit, nothing past it, nothing from a directory */
  char path[1024];
  snprintf(path, sizeof path, "%s/two/cpu0/cache/index0/size", tmp);
  char *text = bf16fp32__read_text(path, 4);
  EXPECT(text && strcmp(text, "48K\n") == 0, "a file at the limit: %s", text ? text : "NULL");
  free(text);
  text = bf16fp32__read_text(path, 3);
  EXPECT(!text, "a file over the limit: %s", text ? text : "NULL");
  free(text);
  snprintf(path, sizeof path, "%s/two", tmp);
  text = bf16fp32__read_text(path, 64);
  EXPECT(!text, "a directory: \"%s\"", text ? text : "NULL");
  free(text);
  sup_remove_tree(tmp);

  /* the rotation: twice the cache, at least 256 MiB, at most an eighth of memory above that */
  const size_t mib = (size_t)1 << 20, gib = (size_t)1 << 30;
  CHECK(bf16fp32__host_rotate_bytes_for(0, 0) == 256 * mib);
  CHECK(bf16fp32__host_rotate_bytes_for(32 * mib, 64 * gib) == 256 * mib);
  CHECK(bf16fp32__host_rotate_bytes_for(480 * mib, 64 * gib) == 960 * mib);
  CHECK(bf16fp32__host_rotate_bytes_for(480 * mib, 0) == 960 * mib); /* memory not known */
  CHECK(bf16fp32__host_rotate_bytes_for(1152 * mib, 8 * gib) == gib);
  CHECK(bf16fp32__host_rotate_bytes_for(480 * mib, gib) == 256 * mib);
  /* this machine, as the measure takes it */
  const size_t cache_bytes = bf16fp32__llc_bytes("/sys/devices/system/cpu");
  const size_t rotate = bf16fp32__host_rotate_bytes();
  printf("last-level cache %zu MiB, host rotation %zu MiB\n", cache_bytes >> 20, rotate >> 20);
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  CHECK(rotate == bf16fp32__host_rotate_bytes_for(
                      cache_bytes, pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0));
  return testing_summary("test-cache-size");
}
