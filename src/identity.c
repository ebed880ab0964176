/* The CPU's identity (brand string, instruction sets, threads), identity matching and
 * description; the GPU query lives in cuda-identity.c (a NO_DEVICE stub here without CUDA). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arm-features.h"
#include "identity.h"
#include "read-text.h"
#include "x86-features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

void bf16fp32__identity_clean(char *dst, size_t len, const char *src) {
  if (len == 0) return;
  size_t o = 0;
  bool space = true; /* drops leading spaces */
  for (const unsigned char *p = (const unsigned char *)src; *p && o + 1 < len; p++) {
    unsigned char c = *p < 0x20 || *p == 0x7f ? ' ' : *p;
    if (c == ' ') {
      if (space) continue;
      space = true;
    } else {
      space = false;
    }
    dst[o++] = (char)c;
  }
  while (o > 0 && dst[o - 1] == ' ') o--;
  dst[o] = '\0';
}

void bf16fp32__cpuinfo_model(const char *text, char *buf, size_t len) {
  static const char *const keys[] = {"model name", "Processor", "CPU part"};
  if (len == 0) return;
  buf[0] = '\0';
  for (const char *line = text; line && *line;) {
    const char *end = strchr(line, '\n');
    const size_t n = end ? (size_t)(end - line) : strlen(line);
    const char *colon = memchr(line, ':', n);
    for (size_t i = 0; colon && i < sizeof keys / sizeof keys[0]; i++)
      if (strncmp(line, keys[i], strlen(keys[i])) == 0) {
        const size_t v = (size_t)(line + n - colon - 1); /* the value: after ':' to the line end */
        const size_t cut = v < len - 1 ? v : len - 1;
        memcpy(buf, colon + 1, cut);
        buf[cut] = '\0';
        return;
      }
    line = end ? end + 1 : line + n;
  }
}

/* The brand string: cpuid on x86 (no file access, works in any container), else
 * /proc/cpuinfo's (bf16fp32__cpuinfo_model). */
static void cpu_model(char *buf, size_t len) {
  char raw[128] = "";
#if defined(__x86_64__) || defined(__i386__)
  unsigned int r[12] = {0};
  /* unsigned: gcc's cpuid.h returns it so, clang's as int */
  if ((unsigned)__get_cpuid_max(0x80000000u, NULL) >= 0x80000004u) {
    for (unsigned int i = 0; i < 3; i++)
      __get_cpuid(0x80000002u + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
    memcpy(raw, r, sizeof r);
    raw[sizeof r] = '\0';
  }
#endif
  if (!raw[0]) {
    char *text = bf16fp32__read_text("/proc/cpuinfo", 1 << 22);
    bf16fp32__cpuinfo_model(text, raw, sizeof raw);
    free(text);
  }
  bf16fp32__identity_clean(buf, len, raw[0] ? raw : "unknown");
  if (!buf[0]) snprintf(buf, len, "unknown");
}

static void cpu_features(char *buf, size_t len) {
  bf16fp32__x86_features x;
  bf16fp32__x86_features_query(&x);
  bf16fp32__arm_features arm;
  bf16fp32__arm_features_query(&arm);
  /* A fixed order, so that the same CPU always writes the same string (one architecture's
   * names appear on a machine: the other's are all false). */
  const struct { const char *name; bool have; } f[] = {
      {"avx2", x.avx2},
      {"fma", x.fma},
      {"f16c", x.f16c},
      {"avx512f", x.avx512f},
      {"avx512bw", x.avx512bw},
      {"avx512vl", x.avx512vl},
      {"avx512bf16", x.avx512bf16},
      {"amx-bf16", x.amx_bf16},
      {"asimd", arm.asimd},
      {"bf16", arm.bf16},
  };
  buf[0] = '\0';
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
    if (!f[i].have) continue;
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "%s%s", used ? " " : "", f[i].name);
  }
  if (!buf[0]) snprintf(buf, len, "none");
}

void bf16fp32__cpu_identity_query(int threads, bf16fp32__cpu_identity *id) {
  memset(id, 0, sizeof *id);
  cpu_model(id->model, sizeof id->model);
  cpu_features(id->features, sizeof id->features);
  id->threads = threads;
}

bool bf16fp32__gpu_identity_match(const bf16fp32__gpu_identity *a, const bf16fp32__gpu_identity *b,
                                  bool loose) {
  if (strcmp(a->name, b->name) != 0 || a->sm_count != b->sm_count || a->cc_major != b->cc_major ||
      a->cc_minor != b->cc_minor)
    return false;
  return loose || (strcmp(a->cuda_runtime, b->cuda_runtime) == 0 &&
                   strcmp(a->cuda_driver, b->cuda_driver) == 0 && strcmp(a->cublas, b->cublas) == 0);
}

bool bf16fp32__cpu_identity_match(const bf16fp32__cpu_identity *a, const bf16fp32__cpu_identity *b,
                                  bool loose) {
  if (strcmp(a->model, b->model) != 0 || strcmp(a->features, b->features) != 0) return false;
  return loose || a->threads == b->threads;
}

void bf16fp32__gpu_identity_describe(const bf16fp32__gpu_identity *id, char *buf, size_t len) {
  snprintf(buf, len, "%s, %d SMs, cc %d.%d, CUDA runtime %s, driver %s, cuBLAS %s", id->name,
           id->sm_count, id->cc_major, id->cc_minor, id->cuda_runtime, id->cuda_driver, id->cublas);
}

void bf16fp32__cpu_identity_describe(const bf16fp32__cpu_identity *id, char *buf, size_t len) {
  snprintf(buf, len, "%s [%s], %d thread%s", id->model, id->features, id->threads,
           id->threads == 1 ? "" : "s");
}

#ifndef BF16FP32_HAVE_CUDA
bf16fp32_status bf16fp32__gpu_identity_query(int device, bf16fp32__gpu_identity *id) {
  (void)device;
  memset(id, 0, sizeof *id);
  return bf16fp32__fail(BF16FP32_NO_DEVICE, "this library was built without CUDA");
}
#endif
