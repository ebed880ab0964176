/* Who a tuning file was measured on: the GPU (name, SMs, compute capability, CUDA runtime,
 * driver and cuBLAS versions) or the CPU (model, features, threads). Entries apply only there. */
#ifndef BF16FP32_IDENTITY_H
#define BF16FP32_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>

#include "internal.h"

typedef struct bf16fp32__gpu_identity {
  char name[128];         /* "NVIDIA H200" */
  int sm_count;
  int cc_major, cc_minor;
  char cuda_runtime[16];  /* "13.0" */
  char cuda_driver[16];   /* the CUDA version the driver supports, "13.0" */
  char cublas[24];        /* "13.0.2" */
} bf16fp32__gpu_identity;

typedef struct bf16fp32__cpu_identity {
  char model[128];        /* brand string, spaces collapsed */
  char features[160];     /* the instruction sets the CPU backends use, space-separated */
  int threads;            /* CPU backends' threads the entries were timed with */
} bf16fp32__cpu_identity;

/* cuda-identity.c (or a NO_DEVICE stub without CUDA). Makes no allocation; not for capture. */
bf16fp32_status bf16fp32__gpu_identity_query(int device, bf16fp32__gpu_identity *id);
/* Always succeeds ("unknown" where the CPU does not say). */
void bf16fp32__cpu_identity_query(int threads, bf16fp32__cpu_identity *id);

/* Exact match compares every field. Loose match (the built-in table, which ships with the
 * library and so outlives driver and cuBLAS updates) compares the hardware only: GPU name,
 * SMs and compute capability; CPU model and features. */
bool bf16fp32__gpu_identity_match(const bf16fp32__gpu_identity *a, const bf16fp32__gpu_identity *b,
                                  bool loose);
bool bf16fp32__cpu_identity_match(const bf16fp32__cpu_identity *a, const bf16fp32__cpu_identity *b,
                                  bool loose);

/* One line for a person: "NVIDIA H200, 132 SMs, cc 9.0, CUDA runtime 13.0, driver 13.0,
 * cuBLAS 13.0.2" / "AMD EPYC [avx2 fma], 2 threads". */
void bf16fp32__gpu_identity_describe(const bf16fp32__gpu_identity *id, char *buf, size_t len);
void bf16fp32__cpu_identity_describe(const bf16fp32__cpu_identity *id, char *buf, size_t len);

/* Copies src into dst (size len) as one tab- and newline-free line: control characters
 * become spaces, runs of spaces collapse, ends are trimmed. Header values go through it so
 * that what is written reads back the same. */
void bf16fp32__identity_clean(char *dst, size_t len, const char *src);

/* The value of the first "model name", "Processor" or "CPU part" line of /proc/cpuinfo's text
 * (NULL: none) into buf (len bytes, cut to fit), raw: the caller cleans it; "" when no line
 * names one. The CPU's name where cpuid cannot give it (ARM). */
void bf16fp32__cpuinfo_model(const char *text, char *buf, size_t len);

#endif
