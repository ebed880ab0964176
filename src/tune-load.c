/* The context's tuned table: the user's file for this machine's identity, then the built-in
 * table for the (location, N, K) pairs the file does not cover. A file that exists but cannot
 * be read or is corrupt fails create and reset (TUNE_FILE): the user's tuning would otherwise be
 * lost without a word. A missing file, or one measured elsewhere or by another version, is
 * normal: logged (level 1), and the dispatcher's rules decide those shapes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tune-file.h"

typedef struct loader {
  const bf16fp32__config *cfg;
  const char *path;
  /* This machine, queried only when a section needs it. */
  int gpu_state, cpu_state; /* 0 not asked, 1 known, -1 unavailable */
  bf16fp32__gpu_identity gpu;
  bf16fp32__cpu_identity cpu;
} loader;

static void line_warning(void *user, int line, const char *msg) {
  loader *l = user;
  if (line > 0)
    bf16fp32__log(l->cfg, 1, "tune file %s, line %d: %s: malformed", l->path, line, msg);
  else
    bf16fp32__log(l->cfg, 1, "tune file %s: %s", l->path, msg);
}

static const bf16fp32__gpu_identity *this_gpu(loader *l) {
  if (l->gpu_state == 0)
    l->gpu_state = l->cfg->device >= 0 &&
                   bf16fp32__gpu_identity_query(l->cfg->device, &l->gpu) == BF16FP32_OK ? 1 : -1;
  return l->gpu_state > 0 ? &l->gpu : NULL;
}

static const bf16fp32__cpu_identity *this_cpu(loader *l) {
  if (l->cpu_state == 0) {
    bf16fp32__cpu_identity_query(l->cfg->cpu_threads, &l->cpu);
    l->cpu_state = 1;
  }
  return &l->cpu;
}

static int count_at(const bf16fp32__tune_table *t, int where) {
  int n = 0;
  for (int i = 0; i < t->count; i++) n += t->entries[i].where == where;
  return n;
}

/* Whether the section of h for `where` applies here; if not, one log line at `level`. */
static bool section_applies(loader *l, const bf16fp32__tune_header *h, int where, bool loose,
                            int level, const char *source) {
  char theirs[320], ours[320];
  /* Without the section (the parser warns only of one begun and left incomplete) the entries
   * were measured on a machine the header does not name: said like any other. */
  static const char unnamed[] = "a machine the header does not name (no complete identity)";
  if (where == BF16FP32_DEVICE) {
    const bf16fp32__gpu_identity *g = this_gpu(l);
    if (h->has_gpu && g && bf16fp32__gpu_identity_match(&h->gpu, g, loose)) return true;
    if (h->has_gpu)
      bf16fp32__gpu_identity_describe(&h->gpu, theirs, sizeof theirs);
    else
      snprintf(theirs, sizeof theirs, "%s", unnamed);
    if (g)
      bf16fp32__gpu_identity_describe(g, ours, sizeof ours);
    else
      snprintf(ours, sizeof ours, "no CUDA device in this context");
  } else {
    const bf16fp32__cpu_identity *c = this_cpu(l);
    if (h->has_cpu && bf16fp32__cpu_identity_match(&h->cpu, c, loose)) return true;
    if (h->has_cpu)
      bf16fp32__cpu_identity_describe(&h->cpu, theirs, sizeof theirs);
    else
      snprintf(theirs, sizeof theirs, "%s", unnamed);
    bf16fp32__cpu_identity_describe(c, ours, sizeof ours);
  }
  bf16fp32__log(l->cfg, level, "%s: %s entries measured on %s ignored (this is %s)", source,
                where == BF16FP32_DEVICE ? "device" : "host", theirs, ours);
  return false;
}

/* What a TUNE_FILE failure tells the caller to do. */
#define REMEDY "fix or remove it, or name another file with BF16FP32_TUNE_FILE (empty: none)"

/* The user's file into t (entries keep their line numbers). */
static bf16fp32_status load_file(loader *l, bf16fp32__tune_table *t) {
  bf16fp32__tune_file f;
  struct stat sb;
  int err = 0;
  char source[1100], why[256];
  /* No file, or no way to one (HOME=/dev/null, a directory we may not enter), is no table:
   * said where someone named the file or the default path is unreachable. A character device
   * (/dev/null) is the usual way to say none. */
  if (stat(l->path, &sb) != 0) {
    const int e = errno;
    char def[1024];
    bf16fp32__tune_default_path(def, sizeof def);
    if (e != ENOENT || strcmp(def, l->path) != 0)
      bf16fp32__log(l->cfg, 1, "tune file %s: %s: using the built-in choices", l->path, strerror(e));
    return BF16FP32_OK;
  }
  if (S_ISCHR(sb.st_mode)) return BF16FP32_OK;
  bf16fp32_status st = bf16fp32__tune_file_read_checked(l->path, &f, &err, line_warning, l, REMEDY);
  if (st != BF16FP32_OK || err == ENOENT) return st; /* ENOENT: removed since the stat */
  snprintf(source, sizeof source, "tune file %s", l->path);
  if (!bf16fp32__tune_header_current(&f.header, why, sizeof why)) {
    bf16fp32__log(l->cfg, 1, "%s: %s: its %d entries are ignored", source, why, f.table.count);
  } else {
    bool use[2] = {false, false};
    for (int where = 0; where < 2; where++)
      use[where] = count_at(&f.table, where) > 0 &&
                   section_applies(l, &f.header, where, false, 1, source);
    for (int i = 0; i < f.table.count && st == BF16FP32_OK; i++)
      if (use[f.table.entries[i].where]) st = bf16fp32__tune_table_add(t, &f.table.entries[i]);
  }
  if (st == BF16FP32_OK) snprintf(t->file, sizeof t->file, "%s", l->path);
  bf16fp32__tune_file_clear(&f);
  return st;
}

/* The built-in entries whose (where, pdl, n, k) the user's entries (t, finished) do not cover. */
static void load_builtin(loader *l, bf16fp32__tune_table *t, const bf16fp32__tune_builtin *b) {
  if (b->count == 0) return;
  bool use[2] = {false, false};
  for (int where = 0; where < 2; where++) {
    bool any = false;
    for (int i = 0; i < b->count && !any; i++) any = b->entries[i].where == where;
    /* Most machines are not the one the table was measured on: level 2, not a warning. */
    use[where] = any && section_applies(l, &b->header, where, true, 2, "built-in table");
  }
  if (!use[0] && !use[1]) return;
  int user_count = t->count;
  for (int i = 0; i < b->count; i++) {
    const bf16fp32__tune_entry *e = &b->entries[i];
    if (e->where < 0 || e->where > 1 || !use[e->where]) continue;
    /* has_pair looks only at the sorted user part: [0, user_count). */
    bf16fp32__tune_table user = *t;
    user.count = user_count;
    if (bf16fp32__tune_table_has_pair(&user, e->where, e->pdl, e->n, e->k)) continue;
    bf16fp32__tune_entry copy = *e;
    copy.line = 0;
    if (bf16fp32__tune_table_add(t, &copy) != BF16FP32_OK) break;
  }
  snprintf(t->builtin, sizeof t->builtin, "%.127s",
           use[BF16FP32_DEVICE] ? b->header.gpu.name : b->header.cpu.model);
}

bf16fp32_status bf16fp32__tune_load_for_context(const bf16fp32__config *cfg,
                                                bf16fp32__tune_table **out) {
  return bf16fp32__tune_load_with_builtin(cfg, &bf16fp32__tune_builtin_table, out);
}

bf16fp32_status bf16fp32__tune_load_with_builtin(const bf16fp32__config *cfg,
                                                const bf16fp32__tune_builtin *builtin,
                                                bf16fp32__tune_table **out) {
  loader l;
  memset(&l, 0, sizeof l);
  l.cfg = cfg;
  l.path = cfg->tune_file;
  *out = NULL;
  bf16fp32__tune_table *t = calloc(1, sizeof *t);
  if (!t) return bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "tuned table");
  bf16fp32_status st = cfg->tune_file[0] ? load_file(&l, t) : BF16FP32_OK;
  if (st != BF16FP32_OK) {
    bf16fp32__tune_free(t);
    return st;
  }
  bf16fp32__tune_table_finish(t);
  if (cfg->tune_builtin) {
    load_builtin(&l, t, builtin);
    bf16fp32__tune_table_finish(t);
  }
  bf16fp32__clear_error(); /* a missing file fails nothing: leave no detail behind */
  if (t->count == 0) {
    bf16fp32__tune_free(t);
    return BF16FP32_OK;
  }
  bf16fp32__log(cfg, 2, "tuned table: %d entries (%s%s%s)", t->count, t->file[0] ? t->file : "",
                t->file[0] && t->builtin[0] ? " and " : "", t->builtin[0] ? "built-in table" : "");
  *out = t;
  return BF16FP32_OK;
}
