/* Small system files (sysfs, /proc) read whole: the one file reader of the host code that
 * inspects the machine (cpu-count.c, cache-size.c, identity.c). */
#ifndef BF16FP32_READ_TEXT_H
#define BF16FP32_READ_TEXT_H

#include <stddef.h>

/* The whole of the file at path, NUL-terminated (malloc'd; the caller frees it); NULL when it
 * cannot be read, memory runs out, or it holds more than max bytes. */
char *bf16fp32__read_text(const char *path, size_t max);

#endif
