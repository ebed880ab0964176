/* Resolves a context's configuration: the options, then the environment variables over them.
 * Read at create and at reset only. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu-simd/cpu-simd.h"
#include "context.h"
#include "cpu-count.h"
#include "device.h"
#include "tune-table.h"

void bf16fp32_options_init(bf16fp32_options *opt) {
  if (!opt) return; /* no status to give: nothing to fill */
  memset(opt, 0, sizeof *opt);
  opt->device = -1;
}

/* A whole decimal integer in [lo, hi], nothing else around it. */
static int parse_int(const char *s, long lo, long hi, long *out) {
  char *end = NULL;
  if (!s || !*s) return 0;
  errno = 0;
  long v = strtol(s, &end, 10);
  /* strtol would also take leading white space and a plus sign */
  if (errno || *end != '\0' || v < lo || v > hi || !(isdigit((unsigned char)s[0]) || s[0] == '-'))
    return 0;
  *out = v;
  return 1;
}

static bf16fp32_status env_int(const char *name, long lo, long hi, long *value) {
  const char *s = getenv(name);
  if (!s) return BF16FP32_OK; /* unset: keep the option's value */
  if (!parse_int(s, lo, hi, value))
    return bf16fp32__fail(BF16FP32_BAD_ENV, "%s='%.64s': expected an integer from %ld to %ld", name, s,
                          lo, hi);
  return BF16FP32_OK;
}

/* "auto" gives -1; a registry name its index; anything else UNKNOWN_BACKEND listing the names. */
static bf16fp32_status resolve_algo(const char *algo, const char *source, int *forced) {
  *forced = -1;
  if (!algo || strcmp(algo, "auto") == 0) return BF16FP32_OK;
  int i = bf16fp32__registry_find(algo);
  if (i >= 0) {
    *forced = i;
    return BF16FP32_OK;
  }
  char names[256] = "auto";
  for (int b = 0; b < bf16fp32__registry_count; b++) {
    size_t used = strlen(names);
    snprintf(names + used, sizeof names - used, ", %s", bf16fp32__registry[b].name);
  }
  return bf16fp32__fail(BF16FP32_UNKNOWN_BACKEND, "%s '%.64s' is not a backend; valid: %s", source,
                        algo, names);
}

bf16fp32_status bf16fp32__config_resolve(const bf16fp32_options *opt, bf16fp32__config *cfg,
                                         int *forced, int with_device) {
  bf16fp32_status st;
  memset(cfg, 0, sizeof *cfg);
  if (opt->cpu_threads < 0 || opt->cpu_threads > BF16FP32__MAX_CPU_THREADS)
    return bf16fp32__fail(BF16FP32_BAD_OPTION, "cpu_threads=%d: expected 0 (every usable CPU) to %d",
                          opt->cpu_threads, BF16FP32__MAX_CPU_THREADS);
  if (opt->device < -1)
    return bf16fp32__fail(BF16FP32_BAD_OPTION,
                          "device=%d: expected -1 (the current one) or an ordinal", opt->device);
  if (opt->log_level < 0 || opt->log_level > 2 || opt->use_pdl < 0 || opt->use_pdl > 1)
    return bf16fp32__fail(BF16FP32_BAD_OPTION, "log_level must be 0..2 and use_pdl 0 or 1");
  if (opt->algo && strlen(opt->algo) >= sizeof cfg->algo)
    return bf16fp32__fail(BF16FP32_BAD_OPTION, "algo name too long");
  if (opt->tune_file && strlen(opt->tune_file) >= sizeof cfg->tune_file)
    return bf16fp32__fail(BF16FP32_BAD_OPTION, "tune_file path too long");

  long threads = opt->cpu_threads, pdl = opt->use_pdl, log = opt->log_level, builtin = 1;
  long ws_mb = opt->workspace_bytes ? (long)(opt->workspace_bytes >> 20) : 32;
  if ((st = env_int("BF16FP32_THREADS", 0, BF16FP32__MAX_CPU_THREADS, &threads)) != BF16FP32_OK) return st;
  if ((st = env_int("BF16FP32_PDL", 0, 1, &pdl)) != BF16FP32_OK) return st;
  if ((st = env_int("BF16FP32_LOG", 0, 2, &log)) != BF16FP32_OK) return st;
  if ((st = env_int("BF16FP32_WORKSPACE_MB", 1, 65536, &ws_mb)) != BF16FP32_OK) return st;
  if ((st = env_int("BF16FP32_TUNE_BUILTIN", 0, 1, &builtin)) != BF16FP32_OK) return st;
  cfg->tune_builtin = (int)builtin;
  /* cpu-simd's cap: a level name of any architecture (the backend says when it is not its own). */
  const char *isa = getenv("BF16FP32_CPU_ISA");
  if (isa && strcmp(isa, "auto") != 0) { /* set but empty is a bad value, as elsewhere */
    if (bf16fp32__simd_isa_from_name(isa) == BF16FP32__ISA_NONE)
      return bf16fp32__fail(BF16FP32_BAD_ENV,
                            "BF16FP32_CPU_ISA='%.32s': expected auto, avx2, avx512bf16, amx or neon",
                            isa);
    snprintf(cfg->cpu_isa, sizeof cfg->cpu_isa, "%s", isa);
  }
  cfg->cpu_threads = threads ? (int)threads : bf16fp32__usable_cpus();
  cfg->use_pdl = (int)pdl;
  cfg->log_level = (int)log;
  cfg->log_fn = opt->log_fn;
  cfg->log_user = opt->log_user;
  cfg->workspace_bytes = opt->workspace_bytes && !getenv("BF16FP32_WORKSPACE_MB")
                             ? opt->workspace_bytes
                             : (size_t)ws_mb << 20;

  const char *algo = getenv("BF16FP32_ALGO");
  const char *source = "BF16FP32_ALGO";
  if (!algo) {
    algo = opt->algo;
    source = "option algo";
  }
  if (algo && strlen(algo) >= sizeof cfg->algo)
    return bf16fp32__fail(BF16FP32_BAD_ENV, "BF16FP32_ALGO: name too long");
  if ((st = resolve_algo(algo, source, forced)) != BF16FP32_OK)
    return st == BF16FP32_UNKNOWN_BACKEND && source[0] == 'B' ? BF16FP32_BAD_ENV : st;
  snprintf(cfg->algo, sizeof cfg->algo, "%s", algo ? algo : "auto");

  /* Tune file: the environment (empty = none), else the option, else the per-user cache. */
  const char *tune = getenv("BF16FP32_TUNE_FILE");
  if (tune && strlen(tune) >= sizeof cfg->tune_file)
    return bf16fp32__fail(BF16FP32_BAD_ENV, "BF16FP32_TUNE_FILE: path longer than %zu bytes",
                          sizeof cfg->tune_file - 1);
  if (tune)
    snprintf(cfg->tune_file, sizeof cfg->tune_file, "%s", tune);
  else if (opt->tune_file)
    snprintf(cfg->tune_file, sizeof cfg->tune_file, "%s", opt->tune_file);
  else
    bf16fp32__tune_default_path(cfg->tune_file, sizeof cfg->tune_file);

  /* Device: the given ordinal, or the current one; -1 when there is none (CPU only). */
  if (!with_device) {
    cfg->device = -1;
    return BF16FP32_OK;
  }
  int count = bf16fp32__device_count();
  if (opt->device >= 0 && opt->device >= count)
    return bf16fp32__fail(count ? BF16FP32_BAD_OPTION : BF16FP32_NO_DEVICE,
                          "device %d requested, %d CUDA device(s) usable", opt->device, count);
  cfg->device = opt->device >= 0 ? opt->device : (count > 0 ? bf16fp32__device_current() : -1);
  return BF16FP32_OK;
}
