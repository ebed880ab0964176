/* The CPUs a process may use: the cgroup CPU quota read from fake /proc/self/cgroup and
 * mountinfo texts over a fake cgroup tree (v2 cpu.max, v1 cfs quota and period, ancestors,
 * a namespaced root, malformed files); this process's count, also pinned to one CPU, and a
 * context's default threads then. */
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu-count.h"
#include "support.h"
#include "testing.h"

static char tmp[512];

/* Creates tmp/rel and its parents. */
static void make_dir(const char *rel) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", tmp, rel);
  sup_make_dirs(path);
}

static void write_file(const char *rel, const char *text) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", tmp, rel);
  sup_write_text(path, text);
}

/* A mountinfo line for a cgroup mount at tmp/dir: v2 (cgroup2) or v1 with superoptions. */
static void mount_line(char *buf, size_t len, const char *root, const char *dir, int v2,
                       const char *super) {
  snprintf(buf, len, "30 23 0:26 %s %s/%s rw,nosuid shared:9 - %s %s %s\n", root, tmp, dir,
           v2 ? "cgroup2" : "cgroup", v2 ? "cgroup2" : "cgroup", super);
}

static void test_v2(void) {
  char mi[2048], two[4096];
  make_dir("v2/a/b");
  mount_line(mi, sizeof mi, "/", "v2", 1, "rw");
  write_file("v2/a/b/cpu.max", "max 100000\n");
  EXPECT(bf16fp32__cgroup_cpu_limit("0::/a/b\n", mi) == 0, "no quota anywhere");
  write_file("v2/a/cpu.max", "250000 100000\n");
  EXPECT(bf16fp32__cgroup_cpu_limit("0::/a/b\n", mi) == 3, "an ancestor's 2.5 CPUs, rounded up");
  write_file("v2/a/b/cpu.max", "100000 100000\n");
  EXPECT(bf16fp32__cgroup_cpu_limit("0::/a/b\n", mi) == 1, "the smaller of the two");
  write_file("v2/cpu.max", "50000 100000\n");
  EXPECT(bf16fp32__cgroup_cpu_limit("0::/a/b\n", mi) == 1, "half a CPU is still one");
  write_file("v2/cpu.max", "max 100000\n");
  /* A namespaced view: the mount's root is /a, the process's path /a/b. */
  mount_line(mi, sizeof mi, "/a", "v2", 1, "rw");
  make_dir("v2/b");
  write_file("v2/b/cpu.max", "400000 100000\n");
  EXPECT(bf16fp32__cgroup_cpu_limit("0::/a/b\n", mi) == 4, "path below the mount's root");
  /* Other lines around it, and a v1 hierarchy without cpu. */
  mount_line(mi, sizeof mi, "/", "v2", 1, "rw");
  snprintf(two, sizeof two, "25 1 8:1 / / rw - ext4 /dev/sda1 rw\n%s", mi);
  EXPECT(bf16fp32__cgroup_cpu_limit("4:memory:/x\n0::/a/b\n", two) == 1, "among other lines");
}

static void test_v1(void) {
  char mi[2048];
  make_dir("v1cpu/x");
  mount_line(mi, sizeof mi, "/", "v1cpu", 0, "rw,cpu,cpuacct");
  write_file("v1cpu/x/cpu.cfs_quota_us", "-1\n");
  write_file("v1cpu/x/cpu.cfs_period_us", "100000\n");
  EXPECT(bf16fp32__cgroup_cpu_limit("3:cpu,cpuacct:/x\n", mi) == 0, "quota -1: none");
  write_file("v1cpu/x/cpu.cfs_quota_us", "150000\n");
  EXPECT(bf16fp32__cgroup_cpu_limit("3:cpu,cpuacct:/x\n", mi) == 2, "1.5 CPUs, rounded up");
  EXPECT(bf16fp32__cgroup_cpu_limit("3:cpuacct:/x\n", mi) == 0, "cpuacct is not cpu");
  char other[2048];
  mount_line(other, sizeof other, "/", "v1cpu", 0, "rw,cpuacct");
  EXPECT(bf16fp32__cgroup_cpu_limit("3:cpu,cpuacct:/x\n", other) == 0, "no mount with cpu");
}

static void test_malformed(void) {
  char mi[2048];
  make_dir("bad/y");
  mount_line(mi, sizeof mi, "/", "bad", 1, "rw");
  static const char *const texts[] = {"garbage\n", "", "0 100000\n", "100000 0\n", "-5 100000\n",
                                      "99999999999999999999999 1\n", "12"};
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
    write_file("bad/y/cpu.max", texts[i]);
    const int got = bf16fp32__cgroup_cpu_limit("0::/y\n", mi);
    EXPECT(got == 0, "cpu.max '%s': %d", texts[i], got);
  }
  EXPECT(bf16fp32__cgroup_cpu_limit("0::/y\n", "") == 0, "empty mountinfo");
  EXPECT(bf16fp32__cgroup_cpu_limit("", mi) == 0, "empty cgroup list");
  EXPECT(bf16fp32__cgroup_cpu_limit("0::/nonexistent/z\n", mi) == 0, "no such directory");
  EXPECT(bf16fp32__cgroup_cpu_limit("garbage", "- - -\n-\n") == 0, "garbage texts");
  EXPECT(bf16fp32__cgroup_cpu_limit(NULL, NULL) == 0, "NULL texts");
}

/* Edges: a quota at the mount's root only, a path outside the mount's root (or only sharing a
 * prefix with it) read at the mount point, only "0::" as v2's line, a quota past INT_MAX CPUs,
 * and v1 and v2 together (the smaller quota). */
static void test_edges(void) {
  char mi[2048], v1[2048], both[4096];
  make_dir("e2/a/b");
  make_dir("e2/d");
  make_dir("e2/h");
  make_dir("e2/x");
  make_dir("e1/x");
  mount_line(mi, sizeof mi, "/", "e2", 1, "rw");
  write_file("e2/cpu.max", "300000 100000\n");
  EXPECT(bf16fp32__cgroup_cpu_limit("0::/a/b\n", mi) == 3, "the mount's root alone");
  EXPECT(bf16fp32__cgroup_cpu_limit("1::/a/b\n", mi) == 0, "1:: is no v2 line");
  write_file("e2/d/cpu.max", "100000 100000\n");
  mount_line(mi, sizeof mi, "/a", "e2", 1, "rw");
  EXPECT(bf16fp32__cgroup_cpu_limit("0::/c/d\n", mi) == 3, "outside the root: the mount point");
  EXPECT(bf16fp32__cgroup_cpu_limit("0::/ab\n", mi) == 3, "/ab is not below /a");
  write_file("e2/cpu.max", "max 100000\n");
  write_file("e2/h/cpu.max", "9000000000000 1\n");
  mount_line(mi, sizeof mi, "/", "e2", 1, "rw");
  EXPECT(bf16fp32__cgroup_cpu_limit("0::/h\n", mi) == INT_MAX, "past INT_MAX CPUs");
  write_file("e2/x/cpu.max", "200000 100000\n");
  write_file("e1/x/cpu.cfs_quota_us", "300000\n");
  write_file("e1/x/cpu.cfs_period_us", "100000\n");
  mount_line(v1, sizeof v1, "/", "e1", 0, "rw,cpu");
  snprintf(both, sizeof both, "%s%s", mi, v1);
  EXPECT(bf16fp32__cgroup_cpu_limit("3:cpu:/x\n0::/x\n", both) == 2, "v2's 2 under v1's 3");
  write_file("e2/x/cpu.max", "400000 100000\n");
  EXPECT(bf16fp32__cgroup_cpu_limit("3:cpu:/x\n0::/x\n", both) == 3, "v1's 3 under v2's 4");
  EXPECT(bf16fp32__cgroup_cpu_limit("0::/x\n", NULL) == 0, "NULL mountinfo");
  make_dir("e1/q");
  write_file("e1/q/cpu.cfs_quota_us", "300000\n"); /* and no period file */
  EXPECT(bf16fp32__cgroup_cpu_limit("3:cpu:/q\n", v1) == 0, "v1 quota without a period");
}

/* This process: the smaller of its affinity mask and its cgroup's quota. Pinned to one CPU, it
 * may use one, and a context's default threads (cpu_threads 0) follow: a container given 4 CPUs
 * of 64 would otherwise start 63 spinning workers. */
static void test_this_process(void) {
  const int cpus = bf16fp32__usable_cpus();
  printf("test-cpu-count: this process may use %d CPU%s\n", cpus, cpus == 1 ? "" : "s");
  CHECK(cpus >= 1);
#if defined(__linux__)
  cpu_set_t mine, one;
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) return;
  char *cgroup = sup_read_text("/proc/self/cgroup");
  char *mountinfo = sup_read_text("/proc/self/mountinfo");
  const int limit = bf16fp32__cgroup_cpu_limit(cgroup, mountinfo);
  free(cgroup);
  free(mountinfo);
  const int mask = CPU_COUNT(&mine);
  EXPECT(cpus == (limit > 0 && limit < mask ? limit : mask), "%d CPUs; mask %d, quota %d", cpus,
         mask, limit);
  /* unpinned, a context's default threads are every usable CPU (1 only where that is all) */
  bf16fp32_context *all = NULL;
  char described[4096], want[64];
  CHECK_OK(bf16fp32_create(&all, NULL));
  if (all) {
    CHECK_OK(bf16fp32_describe(all, described, sizeof described));
    snprintf(want, sizeof want, "], %d thread%s\n", cpus, cpus == 1 ? "" : "s");
    EXPECT(strstr(described, want) != NULL, "expected '%s' in:\n%s", want, described);
    bf16fp32_destroy(all);
  }
  int first = 0;
  while (!CPU_ISSET(first, &mine)) first++;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) return;
  CHECK(bf16fp32__usable_cpus() == 1);
  bf16fp32_context *ctx = NULL;
  char text[4096];
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  if (ctx) {
    CHECK_OK(bf16fp32_describe(ctx, text, sizeof text));
    CHECK(strstr(text, "], 1 thread\n") != NULL);
    bf16fp32_destroy(ctx);
  }
  CHECK(sched_setaffinity(0, sizeof mine, &mine) == 0);
#endif
}

int main(void) {
  if (sup_temp_dir(tmp, sizeof tmp, "cpu-count")) return 1;
  test_v2();
  test_v1();
  test_malformed();
  test_edges();
  sup_remove_tree(tmp);
  test_this_process();
  return testing_summary("test-cpu-count");
}
