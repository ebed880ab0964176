/* How many CPUs this process may use (cpu-count.h): the affinity mask, and the CPU quota that a
 * container or a Kubernetes pod's CPU limit sets through its cgroup, so that a process given 4
 * CPUs' time on a 64-CPU machine does not start 63 workers that spin between calls. */
#include "cpu-count.h"
#include "read-text.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PATH_LEN 1024

/* Whether comma-separated list names word (len bytes of list). */
static bool has_word(const char *list, size_t len, const char *word) {
  const size_t w = strlen(word);
  for (size_t i = 0; i < len;) {
    size_t j = i;
    while (j < len && list[j] != ',') j++;
    if (j - i == w && strncmp(list + i, word, w) == 0) return true;
    i = j + 1;
  }
  return false;
}

/* Copies the n bytes at s into dst (cap bytes) as a string; false when they do not fit. */
static bool copy_span(char *dst, size_t cap, const char *s, size_t n) {
  if (n >= cap) return false;
  memcpy(dst, s, n);
  dst[n] = '\0';
  return true;
}

/* From /proc/self/cgroup ("id:controllers:path" lines): the v2 path ("0::path") when v2 is
 * true, else the path of the v1 hierarchy whose controllers include cpu. */
static bool cgroup_path(const char *text, bool v2, char *path, size_t cap) {
  for (const char *line = text; line && *line;) {
    const char *end = strchr(line, '\n');
    const size_t len = end ? (size_t)(end - line) : strlen(line);
    const char *c1 = memchr(line, ':', len);
    const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
    if (c2) {
      const size_t ctl_len = (size_t)(c2 - c1 - 1);
      const bool is_v2 = c1 - line == 1 && line[0] == '0' && ctl_len == 0;
      const bool match = v2 ? is_v2 : !is_v2 && has_word(c1 + 1, ctl_len, "cpu");
      if (match) return copy_span(path, cap, c2 + 1, len - (size_t)(c2 + 1 - line));
    }
    line = end ? end + 1 : NULL;
  }
  return false;
}

/* From /proc/self/mountinfo: the root and mount point of the cgroup2 mount (v2) or of the v1
 * cgroup mount with the cpu controller. Fields: id parent dev root mountpoint options
 * [optional...] - fstype source superoptions. */
static bool cgroup_mount(const char *text, bool v2, char *root, char *mnt, size_t cap) {
  for (const char *line = text; line && *line;) {
    const char *end = strchr(line, '\n');
    const size_t len = end ? (size_t)(end - line) : strlen(line);
    const char *field[6] = {0}, *after[3] = {0};
    size_t flen[6] = {0}, alen[3] = {0};
    int nf = 0, na = 0;
    bool dash = false;
    for (size_t i = 0; i < len;) {
      while (i < len && line[i] == ' ') i++;
      const size_t s = i;
      while (i < len && line[i] != ' ') i++;
      if (i == s) break;
      if (!dash && i - s == 1 && line[s] == '-') {
        dash = true;
      } else if (!dash && nf < 6) {
        field[nf] = line + s, flen[nf++] = i - s;
      } else if (dash && na < 3) {
        after[na] = line + s, alen[na++] = i - s;
      }
    }
    if (nf >= 5 && na == 3) {
      const bool match = v2 ? alen[0] == 7 && strncmp(after[0], "cgroup2", 7) == 0
                            : alen[0] == 6 && strncmp(after[0], "cgroup", 6) == 0 &&
                                  has_word(after[2], alen[2], "cpu");
      if (match)
        return copy_span(root, cap, field[3], flen[3]) && copy_span(mnt, cap, field[4], flen[4]);
    }
    line = end ? end + 1 : NULL;
  }
  return false;
}

/* The decimal integer at *s (after spaces) into *v, *s moved past it; false when there is none
 * or it is out of range. */
static bool parse_ll(const char **s, long long *v) {
  char *end;
  errno = 0;
  *v = strtoll(*s, &end, 10);
  if (end == *s || errno == ERANGE) return false;
  *s = end;
  return true;
}

/* A quota in whole CPUs, rounded up; 0 for none or a value that does not parse. */
static int quota_cpus(long long quota, long long period) {
  if (quota <= 0 || period <= 0) return 0;
  const long long cpus = quota / period + (quota % period != 0);
  return cpus > INT_MAX ? INT_MAX : (int)cpus;
}

/* The quota set in one cgroup directory, 0 for none. */
static int dir_quota(const char *dir, bool v2) {
  char path[2 * PATH_LEN + 32]; /* dir (hierarchy_limit's) and a file name */
  long long quota = 0, period = 0;
  if (v2) {
    snprintf(path, sizeof path, "%s/cpu.max", dir);
    char *t = bf16fp32__read_text(path, 64);
    const char *at = t;
    if (!t || !parse_ll(&at, &quota) || !parse_ll(&at, &period)) quota = 0; /* "max": none */
    free(t);
  } else {
    snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir);
    char *q = bf16fp32__read_text(path, 64);
    snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
    char *p = bf16fp32__read_text(path, 64);
    const char *qa = q, *pa = p;
    if (!q || !p || !parse_ll(&qa, &quota) || !parse_ll(&pa, &period)) quota = 0;
    free(q);
    free(p);
  }
  return quota_cpus(quota, period);
}

/* The smallest quota of the cgroup at path and its ancestors up to the mount. */
static int hierarchy_limit(const char *cgroup, const char *mountinfo, bool v2) {
  char path[PATH_LEN], root[PATH_LEN], mnt[PATH_LEN], dir[2 * PATH_LEN];
  if (!cgroup_path(cgroup, v2, path, sizeof path) ||
      !cgroup_mount(mountinfo, v2, root, mnt, PATH_LEN))
    return 0;
  /* The mount shows the hierarchy from `root` down; a path outside it (another namespace's
   * view) is read at the mount point itself. */
  const size_t rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
  const bool inside = strncmp(path, root, rl) == 0 && (path[rl] == '/' || path[rl] == '\0');
  const char *rel = inside ? path + rl : "";
  snprintf(dir, sizeof dir, "%s%s", mnt, strcmp(rel, "/") == 0 ? "" : rel);
  const size_t mnt_len = strlen(mnt);
  int limit = 0;
  for (;;) {
    const int q = dir_quota(dir, v2);
    if (q > 0 && (limit == 0 || q < limit)) limit = q;
    char *slash = strrchr(dir, '/');
    if (strlen(dir) <= mnt_len || !slash || (size_t)(slash - dir) < mnt_len) break;
    *slash = '\0';
  }
  return limit;
}

int bf16fp32__cgroup_cpu_limit(const char *cgroup, const char *mountinfo) {
  if (!cgroup || !mountinfo) return 0;
  const int v2 = hierarchy_limit(cgroup, mountinfo, true);
  const int v1 = hierarchy_limit(cgroup, mountinfo, false);
  return v2 > 0 && (v1 == 0 || v2 < v1) ? v2 : v1;
}

int bf16fp32__usable_cpus(void) {
  int cpus = 0;
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = CPU_COUNT(&set);
#endif
  if (cpus <= 0) { /* more CPUs than a cpu_set_t holds, or no mask */
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    cpus = n > 0 && n < INT_MAX ? (int)n : 1;
  }
  char *cgroup = bf16fp32__read_text("/proc/self/cgroup", 1 << 16);
  char *mountinfo = bf16fp32__read_text("/proc/self/mountinfo", 1 << 22);
  const int limit = bf16fp32__cgroup_cpu_limit(cgroup, mountinfo);
  free(cgroup);
  free(mountinfo);
  return limit > 0 && limit < cpus ? limit : cpus;
}
