/* What a `bf16fp32 bench` table run times (bench-plan.h). */
#include "bench-plan.h"

#include <stdio.h>
#include <string.h>

#include "bench-dnnl.h"

bf16fp32_status bench_lib_run(void *u, const bf16fp32__call *call) {
  lib_cand *l = (lib_cand *)u;
  return l->index < 0 ? bf16fp32__dispatch(l->ctx, call) : bf16fp32__run_one(l->ctx, l->index, call);
}

bf16fp32_status bench_lib_prewarm(void *u, const bf16fp32__shape *s, void *stream) {
  lib_cand *l = (lib_cand *)u;
  if (l->index >= 0) return bf16fp32__prewarm_one(l->ctx, l->index, s, NULL, stream);
  int64_t m = s->m;
  return bf16fp32_prewarm(l->ctx, (bf16fp32_location)s->where, s->n, s->k, &m, 1, stream);
}

int bench_check_backend_names(const char *list) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (strcmp(t, "auto") == 0 || bf16fp32__registry_find(t) >= 0) continue;
    char known[512] = "";
    size_t used = 0;
    for (int i = 0; i < bf16fp32__registry_count && used < sizeof known; i++)
      used += (size_t)snprintf(known + used, sizeof known - used, "%s, ", bf16fp32__registry[i].name);
    bench_errorf("unknown backend \"%s\" in --backends (known: %sauto)", t, known);
    return 2;
  }
  return 0;
}

static int name_in_list(const char *list, const char *name) {
  size_t len = strlen(name);
  for (const char *p = list; p && *p;) {
    const char *comma = strchr(p, ',');
    size_t l = comma ? (size_t)(comma - p) : strlen(p);
    if (l == len && strncmp(p, name, len) == 0) return 1;
    p = comma ? comma + 1 : NULL;
  }
  return 0;
}

void bench_build_plan(bench_plan *p, bf16fp32_context *ctx, const bench_opts *o,
                      bf16fp32_location where) {
  memset(p, 0, sizeof *p);
  p->where = where;
  for (int b = 0; b < bf16fp32__registry_count; b++) {
    const bf16fp32__registry_entry *e = &bf16fp32__registry[b];
    int wanted = !o->backends_given || name_in_list(o->backends, e->name);
    if (!wanted) continue;
    if (e->where != where) {
      if (o->backends_given)
        fprintf(stderr, "bf16fp32 bench: %s is a %s backend: not timed in %s mode%s\n", e->name,
                e->where == BF16FP32_HOST ? "CPU" : "GPU", where == BF16FP32_HOST ? "CPU" : "GPU",
                e->where == BF16FP32_HOST ? " (add --cpu)" : "");
      continue;
    }
    if (!bf16fp32__backend_available(ctx, b)) {
      bf16fp32_backend_info info;
      if (bf16fp32_backend_info_get(ctx, b, &info) != BF16FP32_OK) info.reason[0] = '\0';
      fprintf(stderr, "bf16fp32 bench: %s not available: %s\n", e->name,
              info.reason[0] ? info.reason : (e->not_built ? e->not_built : "probe failed"));
      continue;
    }
    p->name[p->count] = e->name;
    p->lib[p->count] = (lib_cand){ctx, b};
    p->count++;
  }
  if (!o->backends_given || name_in_list(o->backends, "auto")) {
    p->name[p->count] = "auto";
    p->lib[p->count] = (lib_cand){ctx, -1};
    p->count++;
    p->has_auto = 1;
  }
  if (where == BF16FP32_DEVICE) {
    p->baseline_name = BENCH_BASELINE_NAME;
    p->cublas = bench_baseline_create(p->baseline_why, sizeof p->baseline_why);
  } else {
    p->baseline_name = BENCH_ONEDNN_NAME;
    p->dnnl = bench_dnnl_available(p->baseline_why, sizeof p->baseline_why);
  }
}

static int shape_selected(const char *filter, const char *name) {
  if (!filter[0]) return 1;
  char buf[512];
  snprintf(buf, sizeof buf, "%s", filter);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    size_t l = strlen(t);
    if (l && t[l - 1] == '*' ? strncmp(name, t, l - 1) == 0 : strcmp(name, t) == 0) return 1;
  }
  return 0;
}

int bench_collect_shapes(const suite *s, const char *filter, bench_shape *out) {
  int count = 0;
  if (filter[0]) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", filter);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
      int any = 0;
      for (int i = 0; i < s->count && !any; i++) any = shape_selected(t, s->entries[i].name);
      if (!any) {
        bench_errorf("--shapes: no entry \"%s\" in %s", t, s->path);
        return -1;
      }
    }
  }
  for (int i = 0; i < s->count; i++) {
    const suite_entry *e = &s->entries[i];
    if (!shape_selected(filter, e->name)) continue;
    int j = 0;
    while (j < count && !(out[j].n == e->n && out[j].k == e->k)) j++;
    if (j == count) {
      out[count].n = e->n;
      out[count].k = e->k;
      snprintf(out[count].label, sizeof out[count].label, "%s", e->name);
      count++;
    } else {
      size_t used = strlen(out[j].label);
      if (used + strlen(e->name) + 2 < sizeof out[j].label)
        snprintf(out[j].label + used, sizeof out[j].label - used, "/%s", e->name);
    }
  }
  return count;
}
