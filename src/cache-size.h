/* The machine's last-level cache, for the host measure's rotation (measure.c): the operand
 * copies a timing walks must exceed what the caches hold, or the timing measures the cache. */
#ifndef BF16FP32_CACHE_SIZE_H
#define BF16FP32_CACHE_SIZE_H

#include <stddef.h>

/* The bytes of the highest-level data or unified cache that Linux lists under cpu_root (normally
 * /sys/devices/system/cpu: cpuN/cache/indexM/{level,type,size,shared_cpu_list}), summed over its
 * distinct instances (one per socket or per slice, each counted once however many CPUs share
 * it). 0 when nothing can be read. */
size_t bf16fp32__llc_bytes(const char *cpu_root);

#endif
