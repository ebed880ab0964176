/* How many CPUs this process may use: the CPU backends' default thread count. */
#ifndef BF16FP32_CPU_COUNT_H
#define BF16FP32_CPU_COUNT_H

/* The smaller of the process's affinity mask (taskset, a container's cpuset, numactl; else the
 * online count) and its cgroup's CPU quota rounded up (a container's or pod's CPU limit); at
 * least 1. */
int bf16fp32__usable_cpus(void);

/* The CPU quota of the cgroup that /proc/self/cgroup's text names, found through
 * /proc/self/mountinfo's text: the smallest quota of that cgroup and its ancestors under the
 * mount (v2 cpu.max, v1 cpu.cfs_quota_us over cpu.cfs_period_us), in whole CPUs rounded up.
 * 0 when there is none or nothing can be read; files that do not parse are ignored. */
int bf16fp32__cgroup_cpu_limit(const char *cgroup, const char *mountinfo);

#endif
