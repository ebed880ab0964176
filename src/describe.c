/* bf16fp32_describe: the machine and each backend's availability, for `bf16fp32 info`; and
 * bf16fp32_version. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "context.h"
#include "identity.h"
#include "tune-table.h"

/* Appends to buf (len bytes), never past its end. */
static void append(char *buf, size_t len, const char *fmt, ...) {
  size_t used = strlen(buf);
  if (used + 1 >= len) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + used, len - used, fmt, ap);
  va_end(ap);
}

bf16fp32_status bf16fp32_describe(bf16fp32_context *ctx, char *buf, size_t len) {
  if (!ctx || !buf) return bf16fp32__fail(BF16FP32_NULL_POINTER, "ctx or buf is NULL");
  if (len == 0) return bf16fp32__fail(BF16FP32_BAD_SIZE, "len is 0");
  char line[512];
  buf[0] = '\0';
  /* A concurrent reset frees the tuned table and rewrites the configuration and the slots. */
  bf16fp32__context_read_lock(ctx);
  append(buf, len, "bf16fp32 %s\n", BF16FP32_VERSION);
  if (ctx->cfg.device >= 0 && bf16fp32__context_device(ctx) < 0) {
    append(buf, len, "device %d: not usable in this process (the context was created before fork)\n",
           ctx->cfg.device);
  } else if (ctx->cfg.device >= 0) {
    bf16fp32__gpu_identity gpu;
    if (bf16fp32__gpu_identity_query(ctx->cfg.device, &gpu) == BF16FP32_OK) {
      bf16fp32__gpu_identity_describe(&gpu, line, sizeof line);
      append(buf, len, "device %d: %s (rule family %s)\n", ctx->cfg.device, line, ctx->family);
    } else {
      append(buf, len, "device %d: not readable: %s\n", ctx->cfg.device, bf16fp32_last_error());
    }
  } else {
    append(buf, len, "device: none (host backends only)\n");
  }
  bf16fp32__cpu_identity cpu;
  bf16fp32__cpu_identity_query(ctx->cfg.cpu_threads, &cpu);
  bf16fp32__cpu_identity_describe(&cpu, line, sizeof line);
  append(buf, len, "cpu: %s\n", line);
  append(buf, len, "algo: %s; tune file: %s\n", ctx->cfg.algo,
         ctx->cfg.tune_file[0] ? ctx->cfg.tune_file : "(none)");
  if (ctx->tune) {
    int pdl = 0;
    for (int i = 0; i < ctx->tune->count; i++) pdl += ctx->tune->entries[i].pdl != 0;
    append(buf, len, "tuned table: %d entries, %d measured under PDL (%s) (%s%s%s)\n",
           ctx->tune->count, pdl, ctx->cfg.use_pdl ? "PDL on: consulted first" : "PDL off: unused",
           ctx->tune->file, ctx->tune->file[0] && ctx->tune->builtin[0] ? " and " : "",
           ctx->tune->builtin[0] ? "the built-in table" : "");
  } else {
    append(buf, len, "tuned table: none (built-in rules decide)\n");
  }
  append(buf, len, "backends (registry order):\n");
  for (int b = 0; b < bf16fp32__registry_count; b++) {
    const bf16fp32__backend_slot *s = &ctx->slot[b];
    append(buf, len, "  %-9s %-6s %s%s%s\n", bf16fp32__registry[b].name,
           bf16fp32__registry[b].where == BF16FP32_HOST ? "host" : "device",
           s->available ? "available" : "unavailable", s->why[0] ? ": " : "", s->why);
  }
  bf16fp32__context_read_unlock(ctx);
  return BF16FP32_OK;
}

const char *bf16fp32_version(void) { return BF16FP32_VERSION; }
