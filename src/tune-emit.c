/* Writes a tuning table as C source (src/tune-builtin.c): the header's identity and a static
 * const array of entries, so that measured results can ship as the built-in table. */
#include <stdio.h>
#include <stdlib.h>

#include "tune-file.h"

/* A C string literal: quotes, backslashes, '?' (trigraphs) and non-printable bytes escaped. */
static void c_string(bf16fp32__text *t, const char *s) {
  bf16fp32__text_printf(t, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\' || *p == '?')
      bf16fp32__text_printf(t, "\\%c", *p);
    else if (*p < 0x20 || *p >= 0x7f)
      bf16fp32__text_printf(t, "\\%03o", *p);
    else
      bf16fp32__text_printf(t, "%c", *p);
  }
  bf16fp32__text_printf(t, "\"");
}

bf16fp32_status bf16fp32__tune_emit_c(const bf16fp32__tune_header *h, const bf16fp32__tune_entry *e,
                                      int count, char **text, size_t *len) {
  bf16fp32__text t = {0};
  *text = NULL;
  *len = 0;
  bf16fp32__text_printf(&t,
      "/* The built-in tuning table: measurements shipped with the library, used for the (location,\n"
      " * N, K) pairs a user's tuning file does not cover when this machine's hardware matches.\n"
      " * Generated data: regenerate with `bf16fp32 tune --suite FILE --emit-c src/tune-builtin.c`. */\n"
      "#include \"tune-table.h\"\n\n");
  if (count > 0) {
    bf16fp32__text_printf(&t, "/* where, pdl, line, n, k, m (bucket), winner, us, runner-up, us */\n"
                              "static const bf16fp32__tune_entry entries[] = {\n");
    for (int i = 0; i < count; i++) {
      bf16fp32__text_printf(&t, "    {%s, %d, 0, %lld, %lld, %lld, ",
                            e[i].where == BF16FP32_DEVICE ? "BF16FP32_DEVICE" : "BF16FP32_HOST",
                            e[i].pdl ? 1 : 0, (long long)e[i].n, (long long)e[i].k, (long long)e[i].m);
      c_string(&t, e[i].winner);
      bf16fp32__text_printf(&t, ", ");
      bf16fp32__text_time(&t, e[i].winner_us);
      bf16fp32__text_printf(&t, ", ");
      c_string(&t, e[i].runner_up);
      bf16fp32__text_printf(&t, ", ");
      if (e[i].runner_up[0])
        bf16fp32__text_time(&t, e[i].runner_up_us);
      else
        bf16fp32__text_printf(&t, "-1");
      bf16fp32__text_printf(&t, "},\n");
    }
    bf16fp32__text_printf(&t, "};\n\n");
  }
  bf16fp32__text_printf(&t, "const bf16fp32__tune_builtin bf16fp32__tune_builtin_table = {\n"
                            "    .header =\n        {\n            .format = %d,\n"
                            "            .library = ", h->format);
  c_string(&t, h->library);
  bf16fp32__text_printf(&t, ",\n            .has_gpu = %s,\n            .has_cpu = %s,\n",
                        h->has_gpu ? "true" : "false", h->has_cpu ? "true" : "false");
  if (h->has_gpu) {
    bf16fp32__text_printf(&t, "            .gpu = {.name = ");
    c_string(&t, h->gpu.name);
    bf16fp32__text_printf(&t, ",\n                    .sm_count = %d,\n"
                              "                    .cc_major = %d,\n                    .cc_minor = %d,\n"
                              "                    .cuda_runtime = ", h->gpu.sm_count, h->gpu.cc_major,
                          h->gpu.cc_minor);
    c_string(&t, h->gpu.cuda_runtime);
    bf16fp32__text_printf(&t, ",\n                    .cuda_driver = ");
    c_string(&t, h->gpu.cuda_driver);
    bf16fp32__text_printf(&t, ",\n                    .cublas = ");
    c_string(&t, h->gpu.cublas);
    bf16fp32__text_printf(&t, "},\n");
  }
  if (h->has_cpu) {
    bf16fp32__text_printf(&t, "            .cpu = {.model = ");
    c_string(&t, h->cpu.model);
    bf16fp32__text_printf(&t, ",\n                    .features = ");
    c_string(&t, h->cpu.features);
    bf16fp32__text_printf(&t, ",\n                    .threads = %d},\n", h->cpu.threads);
  }
  bf16fp32__text_printf(&t, "        },\n");
  if (count > 0)
    bf16fp32__text_printf(&t, "    .entries = entries,\n"
                              "    .count = (int)(sizeof entries / sizeof entries[0]),\n};\n");
  else
    bf16fp32__text_printf(&t, "    .entries = NULL,\n    .count = 0,\n};\n");
  if (t.failed) {
    free(t.p);
    return bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "emit C: %d entries", count);
  }
  *text = t.p;
  *len = t.len;
  return BF16FP32_OK;
}
