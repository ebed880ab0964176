/* The dispatcher with fake backends, linked in place of the real registry: a backend that
 * fails on one shape only (only that shape is quarantined), one that declines, one that is
 * unavailable, one with a fatal error; reset brings them back; environment parsing; the plan
 * cache once full. Also `bf16fp32 check` (tools/cli-check.c, built in here) on these fakes: it
 * fails when one of them returns a wrong answer. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "cpu-count.h"
#include "device.h"
#include "internal.h"
#include "oracle.h"
#include "plan-cache.h"
#include "support.h"
#include "testing.h"

/* The check command itself, run on this file's registry (bench and the suite parser are
 * built into this test too, as separate sources: CMakeLists.txt). */
#include "../tools/cli-check.c"
#include "bench.h"

typedef struct fake_state {
  atomic_int runs;
  atomic_int prewarms;
} fake_state;

static bf16fp32_status fake_probe(const bf16fp32__config *cfg, void **state, char *why, size_t len) {
  (void)cfg, (void)why, (void)len;
  fake_state *s = calloc(1, sizeof *s);
  *state = s;
  return s ? BF16FP32_OK : BF16FP32_OUT_OF_MEMORY;
}
static bf16fp32_status fake_probe_unavailable(const bf16fp32__config *cfg, void **state, char *why,
                                              size_t len) {
  (void)cfg;
  *state = NULL;
  snprintf(why, len, "fake hardware is absent");
  return BF16FP32_BACKEND_UNAVAILABLE;
}
/* none supports n == 77: a shape select finds no backend for */
static bool fake_supports(const void *state, const bf16fp32__shape *s) {
  (void)state;
  return s->where == BF16FP32_HOST && s->n != 77;
}
/* fatal only claims the shape it breaks on, so select() skips it elsewhere */
static bool fatal_supports(const void *state, const bf16fp32__shape *s) {
  (void)state;
  return s->where == BF16FP32_HOST && s->n == 99;
}
/* every prewarm fails (recoverably, as a workspace's allocation might) at m == 3, n == 21 */
static bf16fp32_status fake_prewarm(void *state, const bf16fp32__shape *s, const char *variant,
                                    void *stream) {
  (void)variant; /* no variants */
  (void)stream;
  if (s->m == 3 && s->n == 21) return bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "fake: no workspace");
  atomic_fetch_add(&((fake_state *)state)->prewarms, 1);
  return BF16FP32_OK;
}
/* picky's prewarm declines odd k, as its run does */
static bf16fp32_status picky_prewarm(void *state, const bf16fp32__shape *s, const char *variant,
                                     void *stream) {
  if (s->k % 2) return BF16FP32_DECLINED;
  return fake_prewarm(state, s, variant, stream);
}
static void fake_reset(void *state) { free(state); }

static void compute(const bf16fp32__call *c) {
  const bf16fp32__shape *s = &c->shape;
  for (int64_t i = 0; i < s->m; i++)
    for (int64_t j = 0; j < s->n; j++)
      c->out[i * s->ldo + j] = (float)bf16fp32__dot_f64(c->x + i * s->ldx, c->w + j * s->ldw, s->k, NULL);
}

/* flaky: fails (recoverably) on n == 13, 23 and 31 only, after writing garbage, as a real
 * failure might; on n == 7 it needs a prewarm it did not get, as a backend met unprewarmed in a
 * capture. */
static bf16fp32_status flaky_run(void *state, const bf16fp32__call *c) {
  atomic_fetch_add(&((fake_state *)state)->runs, 1);
  if (c->shape.n == 7) return BF16FP32_NOT_PREWARMED;
  if (c->shape.n == 13 || c->shape.n == 23 || c->shape.n == 31) {
    c->out[0] = 12345.0f;
    return bf16fp32__fail(BF16FP32_CUDA_ERROR, "flaky: planted failure on n=%lld", (long long)c->shape.n);
  }
  compute(c);
  return BF16FP32_OK;
}
/* picky: declines odd k; on n == 31 it needs a prewarm it did not get. */
static bf16fp32_status picky_run(void *state, const bf16fp32__call *c) {
  atomic_fetch_add(&((fake_state *)state)->runs, 1);
  if (c->shape.k % 2) return BF16FP32_DECLINED;
  if (c->shape.n == 31) return BF16FP32_NOT_PREWARMED;
  compute(c);
  return BF16FP32_OK;
}
/* fatal: a sticky error on n == 99, which must reach the caller with no fallback. */
static bf16fp32_status fatal_run(void *state, const bf16fp32__call *c) {
  atomic_fetch_add(&((fake_state *)state)->runs, 1);
  if (c->shape.n == 99) return bf16fp32__fail(BF16FP32_CUDA_FATAL, "fatal: planted sticky error");
  return BF16FP32_DECLINED;
}
/* plain_wrong set: plain's first element is off by one (the check command must see it).
 * plain declines n == 7, 23 and 31 (so that no backend runs them, 23 with odd k), saying why
 * for n == 23. */
static atomic_int plain_wrong;
static bf16fp32_status plain_run(void *state, const bf16fp32__call *c) {
  atomic_fetch_add(&((fake_state *)state)->runs, 1);
  if (c->shape.n == 23) return bf16fp32__fail(BF16FP32_DECLINED, "no room for n=23");
  if (c->shape.n == 7 || c->shape.n == 31) return BF16FP32_DECLINED;
  compute(c);
  if (atomic_load(&plain_wrong)) c->out[0] += 1.0f;
  return BF16FP32_OK;
}

#define FAKE(nm, probe_fn, run_fn) \
  {nm, BF16FP32_HOST, fake_probe_fn_##probe_fn, fake_supports, fake_prewarm, run_fn, fake_reset, NULL, NULL}
#define fake_probe_fn_ok fake_probe
#define fake_probe_fn_absent fake_probe_unavailable

static const bf16fp32__backend fatal_ops = {"fatal", BF16FP32_HOST, fake_probe, fatal_supports,
                                            fake_prewarm, fatal_run, fake_reset, NULL, NULL};
static const bf16fp32__backend flaky_ops = FAKE("flaky", ok, flaky_run);
static const bf16fp32__backend absent_ops = FAKE("absent", absent, plain_run);
static const bf16fp32__backend picky_ops = {"picky", BF16FP32_HOST, fake_probe, fake_supports,
                                            picky_prewarm, picky_run, fake_reset, NULL, NULL};
static const bf16fp32__backend plain_ops = FAKE("plain", ok, plain_run);

/* Replaces src/registry.c at link time. */
const bf16fp32__registry_entry bf16fp32__registry[] = {
    {"fatal", BF16FP32_HOST, &fatal_ops, NULL, false, true, false},
    {"flaky", BF16FP32_HOST, &flaky_ops, NULL, false, true, false},
    {"absent", BF16FP32_HOST, &absent_ops, NULL, false, true, false},
    {"picky", BF16FP32_HOST, &picky_ops, NULL, false, true, false},
    {"plain", BF16FP32_HOST, &plain_ops, NULL, false, true, false},
    {"unbuilt", BF16FP32_HOST, NULL, "not built here", false, true, false},
};
const int bf16fp32__registry_count = 6;
enum { FATAL, FLAKY, ABSENT, PICKY, PLAIN, UNBUILT };

static uint64_t calls_of(bf16fp32_context *ctx, int b) {
  bf16fp32_backend_info info;
  CHECK_OK(bf16fp32_backend_info_get(ctx, b, &info));
  return info.calls;
}

/* Runs one host call of shape (m, n, k) and checks it against the oracle. */
static bf16fp32_status run_checked(bf16fp32_context *ctx, int64_t m, int64_t n, int64_t k) {
  uint16_t *x = malloc(sizeof *x * (size_t)(m * k)), *w = malloc(sizeof *w * (size_t)(n * k));
  float *out = malloc(sizeof *out * (size_t)(m * n));
  sup_fill_bf16(x, (size_t)(m * k), 1);
  sup_fill_bf16(w, (size_t)(n * k), 2);
  sup_poison_f32(out, (size_t)(m * n));
  bf16fp32_status st = bf16fp32_linear(ctx, BF16FP32_HOST, m, n, k, x, k, w, k, out, n, NULL);
  if (st == BF16FP32_OK) {
    sup_check_result r = sup_check(m, n, k, x, k, w, k, out, n);
    CHECK(sup_check_ok(&r));
  }
  free(x), free(w), free(out);
  return st;
}

static int log_lines;
static void *log_user_seen; /* the user pointer of the last line */
static void count_log(void *user, int level, const char *line) {
  (void)level, (void)line;
  log_user_seen = user;
  log_lines++;
}

static void test_quarantine_one_shape(void) {
  bf16fp32_context *ctx;
  bf16fp32_options opt;
  bf16fp32_options_init(&opt);
  opt.log_level = 1;
  opt.log_fn = count_log;
  opt.log_user = &log_lines;
  CHECK_OK(bf16fp32_create(&ctx, &opt));

  CHECK_OK(run_checked(ctx, 3, 12, 8)); /* flaky runs it */
  CHECK(calls_of(ctx, FLAKY) == 1);
  CHECK_OK(run_checked(ctx, 3, 13, 8)); /* flaky fails, picky takes over, result still right */
  CHECK(calls_of(ctx, PICKY) == 1);
  /* last_error as the header says: the failure fallen back from, until a create clears it */
  EXPECT(strstr(bf16fp32_last_error(), "flaky: planted failure on n=13"), "after the fallback: %s",
         bf16fp32_last_error());
  bf16fp32_context *other = NULL;
  CHECK_OK(bf16fp32_create(&other, NULL));
  EXPECT(bf16fp32_last_error()[0] == '\0', "after a create: %s", bf16fp32_last_error());
  bf16fp32_destroy(other);
  CHECK(log_lines == 1 && log_user_seen == &log_lines); /* the line reached the option's user */
  int count = -1;
  bf16fp32_quarantine_entry q[4];
  CHECK_OK(bf16fp32_quarantine_list(ctx, q, 4, &count));
  CHECK(count == 1);
  CHECK(strcmp(q[0].backend, "flaky") == 0 && q[0].n == 13 && q[0].m == 3 && q[0].k == 8);
  CHECK(q[0].status == BF16FP32_CUDA_ERROR);

  CHECK_OK(run_checked(ctx, 3, 13, 8)); /* quarantined: flaky is not even tried */
  CHECK(calls_of(ctx, PICKY) == 2);
  bf16fp32_backend_info info;
  CHECK_OK(bf16fp32_backend_info_get(ctx, FLAKY, &info));
  CHECK(info.failures == 1);
  CHECK_OK(run_checked(ctx, 5, 12, 8)); /* other shapes still use flaky */
  CHECK(calls_of(ctx, FLAKY) == 2);
  /* the same m, n, k with padded x, w and out is another shape: flaky is tried (and fails) there
   * too, and its entry lists those leading dimensions */
  {
    enum { LDX = 10, LDW = 9, LDO = 14 };
    uint16_t x[3 * LDX], w[13 * LDW];
    float out[3 * LDO];
    sup_fill_bf16(x, 3 * LDX, 3);
    sup_fill_bf16(w, 13 * LDW, 4);
    sup_poison_f32(out, 3 * LDO);
    CHECK_OK(bf16fp32_linear(ctx, BF16FP32_HOST, 3, 13, 8, x, LDX, w, LDW, out, LDO, NULL));
    CHECK_OK(bf16fp32_backend_info_get(ctx, FLAKY, &info));
    CHECK(info.failures == 2);
    CHECK_OK(bf16fp32_quarantine_list(ctx, q, 4, &count));
    const bf16fp32_quarantine_entry *e = count == 2 ? &q[q[0].ldx == LDX ? 0 : 1] : NULL;
    EXPECT(e && e->ldx == LDX && e->ldw == LDW && e->ldo == LDO && e->where == BF16FP32_HOST,
           "%d entries; ld %lld %lld %lld", count, e ? (long long)e->ldx : -1, e ? (long long)e->ldw : -1,
           e ? (long long)e->ldo : -1);
    sup_check_result r = sup_check(3, 13, 8, x, LDX, w, LDW, out, LDO);
    CHECK(sup_check_ok(&r));
  }

  const char *name = NULL;
  char why[256];
  CHECK_OK(bf16fp32_select(ctx, BF16FP32_HOST, 3, 13, 8, &name, why, sizeof why));
  CHECK(strcmp(name, "picky") == 0);
  CHECK(strstr(why, "quarantined") != NULL);
  /* a why of no length is not read, not even for the quarantine's note (the guard byte stays) */
  memset(why, 'z', sizeof why);
  CHECK_OK(bf16fp32_select(ctx, BF16FP32_HOST, 3, 13, 8, &name, why, 0));
  CHECK(strcmp(name, "picky") == 0 && why[0] == 'z');
  CHECK_OK(bf16fp32_select(ctx, BF16FP32_HOST, 3, 12, 8, &name, why, sizeof why));
  CHECK(strcmp(name, "flaky") == 0);

  /* odd k: picky declines (no quarantine), plain takes it */
  CHECK_OK(run_checked(ctx, 2, 13, 7));
  CHECK(calls_of(ctx, PLAIN) == 1);
  CHECK_OK(bf16fp32_quarantine_list(ctx, NULL, 0, &count));
  CHECK(count == 3); /* flaky on (2, 13, 7) too: a new shape */

  /* reset: every backend back, quarantine and counters (calls and failures) cleared */
  CHECK_OK(bf16fp32_reset(ctx));
  /* and leaves the context unlocked: another call (any thread's) may take the lock */
  CHECK(pthread_rwlock_trywrlock(&ctx->lock) == 0);
  pthread_rwlock_unlock(&ctx->lock);
  CHECK_OK(bf16fp32_quarantine_list(ctx, NULL, 0, &count));
  CHECK(count == 0);
  CHECK(calls_of(ctx, PICKY) == 0);
  CHECK_OK(bf16fp32_backend_info_get(ctx, FLAKY, &info));
  CHECK(info.failures == 0);
  CHECK_OK(run_checked(ctx, 3, 12, 8));
  CHECK(calls_of(ctx, FLAKY) == 1);
  bf16fp32_destroy(ctx);
}

static void test_fatal_is_returned(void) {
  bf16fp32_context *ctx;
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  CHECK(run_checked(ctx, 1, 99, 4) == BF16FP32_CUDA_FATAL);
  CHECK(strstr(bf16fp32_last_error(), "planted sticky") != NULL);
  CHECK(calls_of(ctx, FLAKY) == 0); /* no fallback after a fatal error */
  int count = -1;
  CHECK_OK(bf16fp32_quarantine_list(ctx, NULL, 0, &count));
  CHECK(count == 0);
  bf16fp32_destroy(ctx);
}

static void test_unavailable_and_forcing(void) {
  bf16fp32_context *ctx;
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  bf16fp32_backend_info info;
  CHECK_OK(bf16fp32_backend_info_get(ctx, ABSENT, &info));
  CHECK(!info.available && strstr(info.reason, "fake hardware is absent"));
  CHECK_OK(bf16fp32_backend_info_get(ctx, UNBUILT, &info));
  CHECK(!info.available && strstr(info.reason, "not built here"));
  CHECK(bf16fp32_backend_info_get(ctx, 6, &info) == BF16FP32_BAD_SIZE);
  /* `bf16fp32 info` says why a backend is unavailable */
  char text[4096];
  CHECK_OK(bf16fp32_describe(ctx, text, sizeof text));
  CHECK(strstr(text, "absent    host   unavailable: fake hardware is absent\n") != NULL);
  CHECK(strstr(text, "unbuilt   host   unavailable: not built here\n") != NULL);
  CHECK(strstr(text, "plain     host   available\n") != NULL);
  CHECK(bf16fp32_force_backend(ctx, "absent") == BF16FP32_BACKEND_UNAVAILABLE);
  CHECK(bf16fp32_force_backend(ctx, "nosuch") == BF16FP32_UNKNOWN_BACKEND);
  /* one backend asked by index (check, bench, tune) names itself when it does not run */
  const bf16fp32__call one = {.shape = {.where = BF16FP32_HOST, .m = 4, .n = 12, .k = 8}};
  CHECK(bf16fp32__run_one(ctx, FATAL, &one) == BF16FP32_DECLINED &&
        strcmp(bf16fp32_last_error(), "fatal does not run this shape") == 0);
  CHECK(bf16fp32__prewarm_one(ctx, ABSENT, &one.shape, NULL, NULL) == BF16FP32_DECLINED &&
        strcmp(bf16fp32_last_error(), "absent is unavailable: fake hardware is absent") == 0);
  /* a call it runs counts among its calls (backend_info), not its failures */
  {
    uint16_t x[4 * 8], w[12 * 8];
    float out[4 * 12];
    sup_fill_bf16(x, 4 * 8, 5);
    sup_fill_bf16(w, 12 * 8, 6);
    const bf16fp32__call c = {.shape = bf16fp32__make_shape(BF16FP32_HOST, 4, 12, 8, 8, 8, 12, x, w, out),
                              .x = x, .w = w, .out = out};
    CHECK_OK(bf16fp32__run_one(ctx, PICKY, &c));
    CHECK_OK(bf16fp32_backend_info_get(ctx, PICKY, &info));
    CHECK(info.calls == 1 && info.failures == 0);
  }

  CHECK_OK(bf16fp32_force_backend(ctx, "plain"));
  const char *name = NULL;
  char why[256];
  CHECK_OK(bf16fp32_select(ctx, BF16FP32_HOST, 4, 12, 8, &name, why, sizeof why));
  CHECK(strcmp(name, "plain") == 0 && strstr(why, "forced"));
  CHECK_OK(run_checked(ctx, 4, 12, 8));
  CHECK(calls_of(ctx, PLAIN) == 1 && calls_of(ctx, FLAKY) == 0);
  /* a forced backend that declines falls back like auto */
  CHECK_OK(bf16fp32_force_backend(ctx, "picky"));
  CHECK_OK(run_checked(ctx, 4, 12, 9));
  CHECK(calls_of(ctx, FLAKY) == 1);
  /* a forced backend that does not run the shape: select says so, naming it, besides the reason
   * of the backend it gives (here the registry's; on a GPU a rule's, such as the catch-all
   * "cuBLAS: smallm is slower at this size ..." for an M smallm cannot run) */
  CHECK_OK(bf16fp32_force_backend(ctx, "fatal"));
  CHECK_OK(bf16fp32_select(ctx, BF16FP32_HOST, 4, 12, 8, &name, why, sizeof why));
  CHECK(strcmp(name, "flaky") == 0 && strstr(why, "registry order") &&
        strstr(why, "fatal (forced) does not run this shape"));
  memset(why, 'z', sizeof why); /* a why of no length is still not read */
  CHECK_OK(bf16fp32_select(ctx, BF16FP32_HOST, 4, 12, 8, &name, why, 0));
  CHECK(why[0] == 'z');
  /* a forced backend that fails is quarantined for the shape like any other: not tried again */
  CHECK_OK(bf16fp32_force_backend(ctx, "flaky"));
  CHECK_OK(run_checked(ctx, 4, 13, 8));
  CHECK_OK(run_checked(ctx, 4, 13, 8));
  bf16fp32_backend_info fi;
  CHECK_OK(bf16fp32_backend_info_get(ctx, FLAKY, &fi));
  CHECK(fi.failures == 1);
  CHECK_OK(bf16fp32_select(ctx, BF16FP32_HOST, 4, 13, 8, &name, why, sizeof why));
  CHECK(strcmp(name, "flaky") != 0 && strstr(why, "quarantined"));
  CHECK_OK(bf16fp32_force_backend(ctx, "auto"));
  CHECK_OK(bf16fp32_select(ctx, BF16FP32_HOST, 4, 12, 8, &name, why, sizeof why));
  CHECK(strcmp(name, "flaky") == 0 && strstr(why, "registry order"));
  /* no CUDA device in this process: a device select says so, as a device call does */
  CHECK(bf16fp32_select(ctx, BF16FP32_DEVICE, 4, 12, 8, &name, why, sizeof why) ==
        (bf16fp32__device_count() > 0 ? BF16FP32_UNSUPPORTED : BF16FP32_NO_DEVICE));
  /* a shape no backend runs (n = 77): UNSUPPORTED and no name (none read at registry[-1]) */
  name = "stale";
  const bf16fp32_status none = bf16fp32_select(ctx, BF16FP32_HOST, 4, 77, 8, &name, why, sizeof why);
  EXPECT(none == BF16FP32_UNSUPPORTED && name == NULL, "%s, name %p", bf16fp32_status_name(none),
         (const void *)name);
  bf16fp32_destroy(ctx);
}

static void test_environment(void) {
  bf16fp32_context *ctx = (bf16fp32_context *)1;
  setenv("BF16FP32_ALGO", "bogus", 1);
  CHECK(bf16fp32_create(&ctx, NULL) == BF16FP32_BAD_ENV);
  CHECK(ctx == NULL);
  /* the valid names: auto, then the registry's, its first and last included */
  EXPECT(strstr(bf16fp32_last_error(), "valid: auto, fatal, flaky, absent, picky, plain, unbuilt"),
         "%s", bf16fp32_last_error());
  setenv("BF16FP32_ALGO", "plain", 1);
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  /* `bf16fp32 info` names the algo it was given */
  char text[4096];
  CHECK_OK(bf16fp32_describe(ctx, text, sizeof text));
  EXPECT(strstr(text, "algo: plain;") != NULL, "%s", text);
  const char *name = NULL;
  CHECK_OK(bf16fp32_select(ctx, BF16FP32_HOST, 1, 12, 8, &name, NULL, 0));
  CHECK(strcmp(name, "plain") == 0);

  static const struct { const char *var, *value; } bad[] = {
      {"BF16FP32_THREADS", "abc"}, {"BF16FP32_THREADS", "-1"}, {"BF16FP32_THREADS", "4x"},
      {"BF16FP32_THREADS", ""},    {"BF16FP32_LOG", "3"},      {"BF16FP32_PDL", "yes"},
      {"BF16FP32_WORKSPACE_MB", "0"}, {"BF16FP32_ALGO", "cpu ref"}, {"BF16FP32_CPU_ISA", "avx3"},
      {"BF16FP32_CPU_ISA", "AMX"}, {"BF16FP32_ALGO", ""}, {"BF16FP32_CPU_ISA", ""},
      {"BF16FP32_THREADS", "\t1"}, {"BF16FP32_LOG", "\n1"},
      /* one past each range's end */
      {"BF16FP32_THREADS", "1025"}, {"BF16FP32_WORKSPACE_MB", "65537"}, {"BF16FP32_PDL", "2"},
      {"BF16FP32_TUNE_BUILTIN", "2"}, {"BF16FP32_TUNE_BUILTIN", "-1"}, {"BF16FP32_PDL", "-1"},
      {"BF16FP32_LOG", "-1"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    bf16fp32_context *c2 = NULL;
    setenv(bad[i].var, bad[i].value, 1);
    CHECK(bf16fp32_create(&c2, NULL) == BF16FP32_BAD_ENV);
    CHECK(strstr(bf16fp32_last_error(), bad[i].var) != NULL);
    /* reset with a bad environment fails and leaves the context as it was */
    CHECK(bf16fp32_reset(ctx) == BF16FP32_BAD_ENV);
    CHECK_OK(run_checked(ctx, 1, 12, 8));
    unsetenv(bad[i].var);
    if (strcmp(bad[i].var, "BF16FP32_ALGO") == 0) setenv("BF16FP32_ALGO", "plain", 1);
  }
  /* the environment is read again at reset */
  setenv("BF16FP32_ALGO", "auto", 1);
  CHECK_OK(bf16fp32_reset(ctx));
  CHECK_OK(bf16fp32_select(ctx, BF16FP32_HOST, 1, 12, 8, &name, NULL, 0));
  CHECK(strcmp(name, "flaky") == 0);
  unsetenv("BF16FP32_ALGO");
  /* forced by the environment but unavailable: auto runs, and select says why */
  setenv("BF16FP32_ALGO", "absent", 1);
  CHECK_OK(bf16fp32_reset(ctx));
  char why[256];
  CHECK_OK(bf16fp32_select(ctx, BF16FP32_HOST, 1, 12, 8, &name, why, sizeof why));
  CHECK(strcmp(name, "flaky") == 0 &&
        strstr(why, "absent (forced) is unavailable: fake hardware is absent"));
  unsetenv("BF16FP32_ALGO");
  CHECK_OK(bf16fp32_reset(ctx));
  /* a backend forced through the API is forgotten at reset (header: bf16fp32_reset) */
  CHECK_OK(bf16fp32_force_backend(ctx, "plain"));
  CHECK_OK(bf16fp32_select(ctx, BF16FP32_HOST, 1, 12, 8, &name, NULL, 0));
  CHECK(strcmp(name, "plain") == 0);
  CHECK_OK(bf16fp32_reset(ctx));
  CHECK_OK(bf16fp32_select(ctx, BF16FP32_HOST, 1, 12, 8, &name, NULL, 0));
  CHECK(strcmp(name, "flaky") == 0);
  bf16fp32_destroy(ctx);

  bf16fp32_options opt;
  bf16fp32_options_init(&opt);
  opt.cpu_threads = -1; /* 0 (every usable CPU) at least */
  CHECK(bf16fp32_create(&ctx, &opt) == BF16FP32_BAD_OPTION);
  opt.cpu_threads = 1025; /* 1024 at most, as BF16FP32_THREADS */
  CHECK(bf16fp32_create(&ctx, &opt) == BF16FP32_BAD_OPTION);
  bf16fp32_options_init(&opt);
  opt.log_level = 3;
  CHECK(bf16fp32_create(&ctx, &opt) == BF16FP32_BAD_OPTION);
  bf16fp32_options_init(&opt);
  opt.algo = "nosuch";
  CHECK(bf16fp32_create(&ctx, &opt) == BF16FP32_UNKNOWN_BACKEND);
  bf16fp32_options_init(&opt);
  opt.device = -2; /* only -1 means "the current device" */
  CHECK(bf16fp32_create(&ctx, &opt) == BF16FP32_BAD_OPTION);
  /* a device past the last one: NO_DEVICE where there is none, BAD_OPTION where there are some */
  const int devices = bf16fp32__device_count();
  opt.device = devices;
  EXPECT(bf16fp32_create(&ctx, &opt) == (devices ? BF16FP32_BAD_OPTION : BF16FP32_NO_DEVICE),
         "device %d of %d: %s", opt.device, devices, bf16fp32_last_error());
  /* log_level and use_pdl: one past each end of their ranges (0..2, 0..1) */
  static const struct { int log_level, use_pdl; } out_of_range[] = {{-1, 0}, {0, -1}, {0, 2}};
  for (size_t i = 0; i < sizeof out_of_range / sizeof out_of_range[0]; i++) {
    bf16fp32_options_init(&opt);
    opt.log_level = out_of_range[i].log_level, opt.use_pdl = out_of_range[i].use_pdl;
    EXPECT(bf16fp32_create(&ctx, &opt) == BF16FP32_BAD_OPTION, "log_level %d use_pdl %d", opt.log_level,
           opt.use_pdl);
  }
}

/* create keeps its own copies of the option strings: the caller's buffers may change or go
 * once it returns, and reset reads the copies. A forced backend that is available logs no
 * warning. */
static void test_option_copies(void) {
  char algo[16] = "plain", tune[64] = "/nonexistent/bf16fp32-a.tsv";
  bf16fp32_options opt;
  bf16fp32_options_init(&opt);
  opt.algo = algo;
  opt.log_level = 1;
  opt.log_fn = count_log;
  log_lines = 0;
  bf16fp32_context *ctx = NULL;
  CHECK_OK(bf16fp32_create(&ctx, &opt));
  if (!ctx) return;
  EXPECT(log_lines == 0, "%d log lines for an available forced backend", log_lines);
  snprintf(algo, sizeof algo, "absent");
  const char *name = NULL;
  CHECK_OK(bf16fp32_reset(ctx));
  CHECK_OK(bf16fp32_select(ctx, BF16FP32_HOST, 1, 12, 8, &name, NULL, 0));
  CHECK(name && strcmp(name, "plain") == 0);
  bf16fp32_destroy(ctx);
  unsetenv("BF16FP32_TUNE_FILE"); /* the option is read only without the variable */
  bf16fp32_options_init(&opt);
  opt.tune_file = tune;
  ctx = NULL;
  CHECK_OK(bf16fp32_create(&ctx, &opt));
  if (ctx) {
    snprintf(tune, sizeof tune, "/nonexistent/bf16fp32-b.tsv");
    CHECK_OK(bf16fp32_reset(ctx));
    char text[4096];
    CHECK_OK(bf16fp32_describe(ctx, text, sizeof text));
    EXPECT(strstr(text, "tune file: /nonexistent/bf16fp32-a.tsv\n") != NULL, "%s", text);
    bf16fp32_destroy(ctx);
  }
  setenv("BF16FP32_TUNE_FILE", "", 1);
}

/* What create resolves from the options and the environment over them (README's table), read
 * back from the context: each variable's value reaches it, the ends of its range included. */
static void test_environment_values(void) {
  bf16fp32_context *ctx = NULL;
  CHECK_OK(bf16fp32_create(&ctx, NULL)); /* the defaults */
  if (ctx) {
    const bf16fp32__config *c = &ctx->cfg;
    EXPECT(c->cpu_threads == bf16fp32__usable_cpus() && c->use_pdl == 0 && c->log_level == 0 &&
               c->workspace_bytes == (size_t)32 << 20 && c->tune_builtin == 1 && !c->cpu_isa[0],
           "defaults: threads %d pdl %d log %d workspace %zu builtin %d isa '%s'", c->cpu_threads,
           c->use_pdl, c->log_level, c->workspace_bytes, c->tune_builtin, c->cpu_isa);
    bf16fp32_destroy(ctx);
  }
  bf16fp32_options opt;
  bf16fp32_options_init(&opt);
  opt.cpu_threads = 2, opt.log_level = 1, opt.workspace_bytes = (size_t)8 << 20;
  opt.log_fn = count_log; /* log level 2 below: lines to the counter, not stderr */
  /* threads 0: one per usable CPU */
  static const struct {
    const char *var, *value;
    int threads, pdl, log, builtin;
    size_t workspace_mb;
  } good[] = {
      {NULL, NULL, 2, 0, 1, 1, 8}, /* the options alone */
      {"BF16FP32_THREADS", "1024", 1024, 0, 1, 1, 8}, {"BF16FP32_THREADS", "0", 0, 0, 1, 1, 8},
      {"BF16FP32_PDL", "1", 2, 1, 1, 1, 8},           {"BF16FP32_LOG", "0", 2, 0, 0, 1, 8},
      {"BF16FP32_LOG", "2", 2, 0, 2, 1, 8},           {"BF16FP32_WORKSPACE_MB", "1", 2, 0, 1, 1, 1},
      {"BF16FP32_WORKSPACE_MB", "65536", 2, 0, 1, 1, 65536},
      {"BF16FP32_TUNE_BUILTIN", "0", 2, 0, 1, 0, 8},
      /* the ends not above: taken (the values the options give anyway) */
      {"BF16FP32_PDL", "0", 2, 0, 1, 1, 8},           {"BF16FP32_TUNE_BUILTIN", "1", 2, 0, 1, 1, 8},
      {"BF16FP32_LOG", "-0", 2, 0, 0, 1, 8}, /* a whole number, though signed */
  };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    if (good[i].var) setenv(good[i].var, good[i].value, 1);
    ctx = NULL;
    CHECK_OK(bf16fp32_create(&ctx, &opt));
    if (ctx) {
      const bf16fp32__config *c = &ctx->cfg;
      const int threads = good[i].threads ? good[i].threads : bf16fp32__usable_cpus();
      EXPECT(c->cpu_threads == threads && c->use_pdl == good[i].pdl && c->log_level == good[i].log &&
                 c->tune_builtin == good[i].builtin && c->workspace_bytes == good[i].workspace_mb << 20,
             "%s=%s: threads %d pdl %d log %d builtin %d workspace %zu", good[i].var ? good[i].var : "",
             good[i].value ? good[i].value : "", c->cpu_threads, c->use_pdl, c->log_level,
             c->tune_builtin, c->workspace_bytes);
      bf16fp32_destroy(ctx);
    }
    if (good[i].var) unsetenv(good[i].var);
  }
  /* the options at the top of their ranges are taken as they are */
  bf16fp32_options top = opt;
  top.cpu_threads = 1024, top.log_level = 2, top.use_pdl = 1;
  ctx = NULL;
  CHECK_OK(bf16fp32_create(&ctx, &top));
  EXPECT(ctx && ctx->cfg.cpu_threads == 1024 && ctx->cfg.log_level == 2 && ctx->cfg.use_pdl == 1,
         "options at the top of their ranges: %s", bf16fp32_last_error());
  bf16fp32_destroy(ctx);
  /* a stale errno of the caller's (ERANGE from its own strtol) is not taken for an overflow */
  setenv("BF16FP32_LOG", "1", 1);
  errno = ERANGE;
  ctx = NULL;
  EXPECT(bf16fp32_create(&ctx, &opt) == BF16FP32_OK, "errno ERANGE before: %s",
         bf16fp32_last_error());
  bf16fp32_destroy(ctx);
  unsetenv("BF16FP32_LOG");
  /* BF16FP32_ALGO over the option algo; the registry's first backend is named like the others */
  setenv("BF16FP32_ALGO", "fatal", 1);
  opt.algo = "plain";
  ctx = NULL;
  CHECK_OK(bf16fp32_create(&ctx, &opt));
  EXPECT(ctx && strcmp(ctx->cfg.algo, "fatal") == 0, "algo '%s'",
         ctx ? ctx->cfg.algo : "(no context)");
  bf16fp32_destroy(ctx);
  unsetenv("BF16FP32_ALGO");
  opt.algo = NULL;
  /* BF16FP32_CPU_ISA: auto (the default's own name) leaves no cap; a level's name, of any
   * architecture, is kept for cpu-simd to apply or refuse */
  static const struct { const char *value, *cap; } isa[] = {
      {"auto", ""}, {"avx2", "avx2"}, {"neon", "neon"}};
  for (size_t i = 0; i < sizeof isa / sizeof isa[0]; i++) {
    setenv("BF16FP32_CPU_ISA", isa[i].value, 1);
    ctx = NULL;
    CHECK_OK(bf16fp32_create(&ctx, &opt));
    EXPECT(ctx && strcmp(ctx->cfg.cpu_isa, isa[i].cap) == 0, "BF16FP32_CPU_ISA=%s: cap '%s'", isa[i].value,
           ctx ? ctx->cfg.cpu_isa : "(no context)");
    bf16fp32_destroy(ctx);
  }
  unsetenv("BF16FP32_CPU_ISA");
  /* BF16FP32_TUNE_FILE: a path of 1023 bytes is taken whole; one of 1024 is refused, not cut
   * short (names of 99 bytes in directories that are not there: a missing file) */
  char path[1025];
  memset(path, 'a', sizeof path - 1);
  for (int i = 0; i < 1024; i += 100) path[i] = '/';
  path[1024] = '\0';
  setenv("BF16FP32_TUNE_FILE", path, 1);
  EXPECT(bf16fp32_create(&ctx, &opt) == BF16FP32_BAD_ENV &&
             strstr(bf16fp32_last_error(), "BF16FP32_TUNE_FILE"),
         "a tune file path of 1024 bytes: %s", bf16fp32_last_error());
  path[1023] = '\0';
  setenv("BF16FP32_TUNE_FILE", path, 1);
  ctx = NULL;
  CHECK_OK(bf16fp32_create(&ctx, &opt));
  EXPECT(ctx && strcmp(ctx->cfg.tune_file, path) == 0, "a tune file path of 1023 bytes: %zu kept",
         ctx ? strlen(ctx->cfg.tune_file) : 0);
  bf16fp32_destroy(ctx);
  /* the tune file: the environment's (empty: none) over the option's, else the per-user cache */
  static const struct { const char *env, *option, *want; } tune[] = {
      {"/nonexistent/env.tsv", "/nonexistent/option.tsv", "/nonexistent/env.tsv"},
      {"", "/nonexistent/option.tsv", ""},
      {NULL, "/nonexistent/option.tsv", "/nonexistent/option.tsv"},
      {NULL, NULL, "/nonexistent/cache/bf16fp32/tune.tsv"},
  };
  setenv("XDG_CACHE_HOME", "/nonexistent/cache", 1);
  for (size_t i = 0; i < sizeof tune / sizeof tune[0]; i++) {
    if (tune[i].env)
      setenv("BF16FP32_TUNE_FILE", tune[i].env, 1);
    else
      unsetenv("BF16FP32_TUNE_FILE");
    opt.tune_file = tune[i].option;
    ctx = NULL;
    CHECK_OK(bf16fp32_create(&ctx, &opt));
    EXPECT(ctx && strcmp(ctx->cfg.tune_file, tune[i].want) == 0, "env %s, option %s: '%s'",
           tune[i].env ? tune[i].env : "unset", tune[i].option ? tune[i].option : "none",
           ctx ? ctx->cfg.tune_file : "(no context)");
    bf16fp32_destroy(ctx);
  }
  unsetenv("XDG_CACHE_HOME");
  opt.tune_file = NULL;
  setenv("BF16FP32_TUNE_FILE", "", 1); /* as main set it */
  /* the options' strings too: a tune file path of 1024 bytes, an algo name of 32, are refused */
  path[1023] = 'a';
  opt.tune_file = path;
  EXPECT(bf16fp32_create(&ctx, &opt) == BF16FP32_BAD_OPTION, "tune_file of 1024 bytes: %s",
         bf16fp32_last_error());
  opt.tune_file = NULL;
  opt.algo = path + 1024 - 32;
  EXPECT(bf16fp32_create(&ctx, &opt) == BF16FP32_BAD_OPTION, "algo of 32 bytes: %s", bf16fp32_last_error());
  /* BF16FP32_ALGO of 32 bytes is said to be too long; one of 31 is looked up (and not found) */
  setenv("BF16FP32_ALGO", opt.algo, 1);
  opt.algo = NULL;
  EXPECT(bf16fp32_create(&ctx, &opt) == BF16FP32_BAD_ENV &&
             strstr(bf16fp32_last_error(), "too long"),
         "BF16FP32_ALGO of 32 bytes: %s", bf16fp32_last_error());
  setenv("BF16FP32_ALGO", path + 1024 - 31, 1);
  EXPECT(bf16fp32_create(&ctx, &opt) == BF16FP32_BAD_ENV &&
             strstr(bf16fp32_last_error(), "not a backend"),
         "BF16FP32_ALGO of 31 bytes: %s", bf16fp32_last_error());
  unsetenv("BF16FP32_ALGO");
}

/* Seconds per plan_get of `count` keys from m = first, the least of three rounds. */
static double get_time(bf16fp32__plan_cache *c, bf16fp32__plan *p, int64_t first, int count) {
  double best = 1e9;
  bf16fp32__plan out;
  for (int round = 0; round < 3; round++) {
    const double t0 = sup_now();
    for (int i = 0; i < count; i++) {
      p->key.m = first + i;
      bf16fp32__plan_get(c, &p->key, &out);
    }
    const double t = (sup_now() - t0) / count;
    if (t < best) best = t;
  }
  return best;
}

/* More shapes than slots (an engine's prefill M varies call by call): a shape the full cache
 * does not hold is looked up in a bounded number of slots, not all of them under the mutex
 * (which took 16 us per call, 45x a cached one's, other threads waiting). */
static void test_plan_cache_full(void) {
  bf16fp32__plan_cache c;
  CHECK_OK(bf16fp32__plan_cache_init(&c));
  bf16fp32__plan p;
  memset(&p, 0, sizeof p);
  p.key.n = p.key.k = p.key.ldx = p.key.ldw = p.key.ldo = 64, p.key.align = 16;
  int stored = 0;
  for (int m = 1; m <= 3 * BF16FP32__PLAN_SLOTS; m++) {
    p.key.m = m;
    stored += bf16fp32__plan_put(&c, &p);
  }
  CHECK(stored > BF16FP32__PLAN_SLOTS * 9 / 10); /* the bound leaves few slots unused */
  bf16fp32__plan out;
  p.key.m = 1;
  CHECK(bf16fp32__plan_get(&c, &p.key, &out) == 1);
  p.key.m = 5 * BF16FP32__PLAN_SLOTS;
  CHECK(bf16fp32__plan_get(&c, &p.key, &out) == 0 && bf16fp32__plan_put(&c, &p) == 0);
  /* Hits are found within a few slots; misses compare at most the bound's (64): the whole
   * table's 4096 made them 90-500x a hit's time here (also under the sanitizers). */
  const double hit = get_time(&c, &p, 1, 256), miss = get_time(&c, &p, 1 << 20, 256);
  CHECK(miss < 30 * hit);
  if (miss >= 30 * hit) fprintf(stderr, "miss %.3f us, hit %.3f us\n", miss * 1e6, hit * 1e6);
  bf16fp32__plan_cache_destroy(&c);
}

/* A cache half full holds every key put: a key whose slot another holds goes to the next free one
 * of its window, and is found there. */
static void test_plan_cache_collisions(void) {
  bf16fp32__plan_cache c;
  CHECK_OK(bf16fp32__plan_cache_init(&c));
  bf16fp32__plan p, out;
  memset(&p, 0, sizeof p);
  p.key.n = p.key.k = p.key.ldx = p.key.ldw = p.key.ldo = 64, p.key.align = 16;
  int stored = 0, found = 0;
  for (int m = 1; m <= BF16FP32__PLAN_SLOTS / 2; m++) {
    p.key.m = m;
    p.order_len = (uint8_t)(m % 5);
    stored += bf16fp32__plan_put(&c, &p);
  }
  for (int m = 1; m <= BF16FP32__PLAN_SLOTS / 2; m++) {
    p.key.m = m;
    found += bf16fp32__plan_get(&c, &p.key, &out) && out.order_len == m % 5;
  }
  EXPECT(stored == BF16FP32__PLAN_SLOTS / 2 && found == stored, "stored %d, found %d", stored, found);
  bf16fp32__plan_cache_destroy(&c);
}

/* A failure met once the cache is full still quarantines its backend for that shape: it takes
 * the slot of a cached order (which is only recomputed), not one that holds a quarantine. */
static void test_quarantine_in_full_cache(void) {
  bf16fp32_context *ctx;
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  uint16_t x[64] = {0}, w[13 * 8] = {0};
  float out[13];
  for (int64_t ldx = 8; ldx < 8 + 2 * BF16FP32__PLAN_SLOTS; ldx++) /* a new shape each */
    CHECK(bf16fp32_linear(ctx, BF16FP32_HOST, 1, 12, 8, x, ldx, w, 8, out, 12, NULL) == BF16FP32_OK);
  int count = -1;
  for (int i = 0; i < 3; i++) CHECK_OK(run_checked(ctx, 3, 13, 8)); /* flaky fails, picky runs */
  bf16fp32_backend_info info;
  CHECK_OK(bf16fp32_backend_info_get(ctx, FLAKY, &info));
  CHECK_OK(bf16fp32_quarantine_list(ctx, NULL, 0, &count));
  CHECK(count == 1 && info.failures == 1);
  if (count != 1 || info.failures != 1)
    fprintf(stderr, "quarantined %d, flaky failed %llu times\n", count, (unsigned long long)info.failures);
  bf16fp32_destroy(ctx);
}

/* select names every backend it passes over for a quarantine, not the first alone */
static void test_select_names_quarantined(void) {
  bf16fp32_context *ctx;
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  const bf16fp32__shape s = {.m = 2, .n = 12, .k = 8, .ldx = 8, .ldw = 8, .ldo = 12,
                             .where = BF16FP32_HOST, .align = 16}; /* select's key */
  CHECK(bf16fp32__plan_quarantine(&ctx->plans, &s, FLAKY, BF16FP32_CUDA_ERROR));
  CHECK(bf16fp32__plan_quarantine(&ctx->plans, &s, PICKY, BF16FP32_CUDA_ERROR));
  const char *name = NULL;
  char why[256];
  CHECK_OK(bf16fp32_select(ctx, BF16FP32_HOST, 2, 12, 8, &name, why, sizeof why));
  CHECK(strcmp(name, "plain") == 0 && strstr(why, "flaky is quarantined") &&
        strstr(why, "picky is quarantined"));
  /* auto's first two, as the step tuner asks for them: the quarantined pass over too */
  int first[2] = {-1, -1};
  char variant[2][BF16FP32__VARIANT_LEN];
  const int n = bf16fp32__auto_order(ctx, &s, first, variant);
  EXPECT(n == 1 && first[0] == PLAIN, "auto's order: %d backends, the first %d", n, first[0]);
  bf16fp32_destroy(ctx);
}

/* A shape that one backend could run once prewarmed and the others decline or fail on is
 * NOT_PREWARMED, whichever order the others come in (not UNSUPPORTED because a later backend
 * declined or failed). */
static void test_not_prewarmed_kept(void) {
  bf16fp32_context *ctx;
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  /* flaky: not prewarmed; picky declines odd k; plain declines n == 7 */
  CHECK(run_checked(ctx, 2, 7, 9) == BF16FP32_NOT_PREWARMED);
  int count = -1;
  CHECK_OK(bf16fp32_quarantine_list(ctx, NULL, 0, &count));
  CHECK(count == 0);
  /* n == 31: picky not prewarmed, flaky fails, plain declines; auto tries flaky first, picky
   * forced comes first: both NOT_PREWARMED, with flaky's failure in the detail */
  for (int forced = 0; forced < 2; forced++) {
    CHECK_OK(bf16fp32_reset(ctx));
    if (forced) CHECK_OK(bf16fp32_force_backend(ctx, "picky"));
    const bf16fp32_status st = run_checked(ctx, 2, 31, 8);
    EXPECT(st == BF16FP32_NOT_PREWARMED && strstr(bf16fp32_last_error(), "the last failure: flaky: CUDA_ERROR"),
           "%s: %s: %s", forced ? "picky first" : "flaky first", bf16fp32_status_name(st),
           bf16fp32_last_error());
  }
  bf16fp32_destroy(ctx);
}

static int prewarms_of(bf16fp32_context *ctx, int b) {
  return atomic_load(&((fake_state *)ctx->slot[b].state)->prewarms);
}

/* prewarm readies auto's first backend and one fallback (for a fallback during capture), and a
 * backend that declines a prewarm is passed over, not quarantined. */
static void test_prewarm_two(void) {
  bf16fp32_context *ctx;
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  const int64_t ms[] = {2};
  CHECK_OK(bf16fp32_prewarm(ctx, BF16FP32_HOST, 12, 8, ms, 1, NULL)); /* flaky, picky, plain */
  CHECK(prewarms_of(ctx, FLAKY) == 1 && prewarms_of(ctx, PICKY) == 1 && prewarms_of(ctx, PLAIN) == 0);
  CHECK_OK(bf16fp32_prewarm(ctx, BF16FP32_HOST, 12, 9, ms, 1, NULL)); /* picky declines odd k */
  CHECK(prewarms_of(ctx, FLAKY) == 2 && prewarms_of(ctx, PICKY) == 1 && prewarms_of(ctx, PLAIN) == 1);
  /* m, n or k zero: calls that compute nothing, so no backend is handed such a shape to ready */
  const int64_t zero[] = {0};
  CHECK_OK(bf16fp32_prewarm(ctx, BF16FP32_HOST, 12, 8, zero, 1, NULL));
  CHECK_OK(bf16fp32_prewarm(ctx, BF16FP32_HOST, 0, 8, ms, 1, NULL));
  CHECK_OK(bf16fp32_prewarm(ctx, BF16FP32_HOST, 12, 0, ms, 1, NULL));
  EXPECT(prewarms_of(ctx, FLAKY) == 2 && prewarms_of(ctx, PICKY) == 1 && prewarms_of(ctx, PLAIN) == 1,
         "prewarms %d %d %d", prewarms_of(ctx, FLAKY), prewarms_of(ctx, PICKY), prewarms_of(ctx, PLAIN));
  int count = -1;
  CHECK_OK(bf16fp32_quarantine_list(ctx, NULL, 0, &count));
  CHECK(count == 0);
  bf16fp32_destroy(ctx);
}

/* A call that no backend runs after one failed keeps that backend's own detail in last_error,
 * and a decline's reason (flaky fails n = 23; picky declines odd k, plain n = 23 saying why);
 * once flaky is quarantined, the detail counts it. */
static void test_failure_detail_kept(void) {
  bf16fp32_context *ctx;
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  CHECK(run_checked(ctx, 1, 23, 7) == BF16FP32_UNSUPPORTED);
  EXPECT(strstr(bf16fp32_last_error(), "flaky: planted failure on n=23") &&
             strstr(bf16fp32_last_error(), "(1 failed, 2 declined, 0 quarantined for this shape; "
                                           "the last failure: flaky: CUDA_ERROR") &&
             strstr(bf16fp32_last_error(), "; the last decline: plain: no room for n=23"),
         "last_error: %s", bf16fp32_last_error());
  /* again: flaky is quarantined now, and the detail says so */
  CHECK(run_checked(ctx, 1, 23, 7) == BF16FP32_UNSUPPORTED);
  EXPECT(strstr(bf16fp32_last_error(), "(0 failed, 2 declined, 1 quarantined for this shape; "
                                       "the last decline: plain: no room for n=23)"),
         "again: %s", bf16fp32_last_error());
  bf16fp32_destroy(ctx);
}

/* A prewarm that readies no backend for an M fails with the backends' status and detail, after
 * readying the other M values; the ones that failed are quarantined for that shape alone and
 * counted as failures; reset clears it. */
static void test_prewarm_failure(void) {
  bf16fp32_context *ctx;
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  const int64_t ms[] = {3, 5}; /* at m = 3 (n = 21, odd k) flaky and plain fail, picky declines */
  const bf16fp32_status st = bf16fp32_prewarm(ctx, BF16FP32_HOST, 21, 9, ms, 2, NULL);
  EXPECT(st == BF16FP32_OUT_OF_MEMORY && strstr(bf16fp32_last_error(), "m=3 n=21 k=9") &&
             strstr(bf16fp32_last_error(), "fake: no workspace"),
         "%s: %s", bf16fp32_status_name(st), bf16fp32_last_error());
  EXPECT(prewarms_of(ctx, FLAKY) == 1 && prewarms_of(ctx, PLAIN) == 1, "m = 5 readied: %d %d",
         prewarms_of(ctx, FLAKY), prewarms_of(ctx, PLAIN));
  bf16fp32_backend_info info;
  CHECK_OK(bf16fp32_backend_info_get(ctx, FLAKY, &info));
  CHECK(info.failures == 1);
  int count = -1;
  CHECK_OK(bf16fp32_quarantine_list(ctx, NULL, 0, &count));
  CHECK(count == 2);
  CHECK(run_checked(ctx, 3, 21, 9) == BF16FP32_UNSUPPORTED);
  CHECK_OK(run_checked(ctx, 5, 21, 9));
  /* one backend run alone (bench, tune): its decline is no failure, its failure is */
  {
    uint16_t x[9] = {0}, w[21 * 9] = {0};
    float out[21];
    bf16fp32__call call;
    memset(&call, 0, sizeof call);
    call.shape = bf16fp32__make_shape(BF16FP32_HOST, 1, 21, 9, 9, 9, 21, x, w, out);
    call.x = x, call.w = w, call.out = out;
    CHECK(bf16fp32__run_one(ctx, PICKY, &call) == BF16FP32_DECLINED);
    CHECK_OK(bf16fp32_backend_info_get(ctx, PICKY, &info));
    CHECK(info.failures == 0);
    call.shape = bf16fp32__make_shape(BF16FP32_HOST, 1, 23, 9, 9, 9, 23, x, w, out);
    CHECK(bf16fp32__run_one(ctx, FLAKY, &call) == BF16FP32_CUDA_ERROR);
    CHECK_OK(bf16fp32_backend_info_get(ctx, FLAKY, &info));
    CHECK(info.failures == 2);
  }
  /* a shape no backend takes (n = 77) is no prewarm's success either */
  EXPECT(bf16fp32_prewarm(ctx, BF16FP32_HOST, 77, 8, ms, 1, NULL) == BF16FP32_UNSUPPORTED, "n = 77");
  CHECK_OK(bf16fp32_reset(ctx));
  CHECK_OK(run_checked(ctx, 3, 21, 9));
  bf16fp32_destroy(ctx);
}

/* The command-line tools on the fakes. `bf16fp32 check` runs every available backend (here
 * flaky, picky, plain; fatal declines) and auto on a suite: exit 0 when all are within the bound,
 * 1 when one is not. `select` exits 1 when a shape has no backend (it exited 0 after printing
 * "(none)"). `bench --cpu` exits 0 when each backend timed or declined, 1 when one gave a wrong
 * result or failed a shape (flaky at n = 13; it exited 0 with the error in its row), and its rows
 * say which (declined, WRONG, the error) with no check value; one unavailable is not timed. */
static void test_cli(void) {
  char dir[512], path[600];
  if (sup_temp_dir(dir, sizeof dir, "dispatcher-cli")) {
    CHECK(0);
    return;
  }
  snprintf(path, sizeof path, "%s/suite.txt", dir);
  sup_write_text(path, "tiny 64 96 1\n");
  /* --cpu: the fakes are host backends (with a GPU, auto on the device would find none) */
  char *argv[] = {"check", "--cpu", "--suite", path, "--m", "1,3", NULL};
  CHECK(cli_check(6, argv) == 0);
  atomic_store(&plain_wrong, 1);
  CHECK(cli_check(6, argv) == 1);
  atomic_store(&plain_wrong, 0);
  char *select_argv[] = {"select", "--cpu", "--suite", path, "--m", "1,3", NULL};
  CHECK(cli_select(6, select_argv) == 0);
  sup_write_text(path, "tiny 64 96 1\nnone 77 96 1\n");
  CHECK(cli_select(6, select_argv) == 1);

  sup_write_text(path, "tiny 64 96 1\nodd 64 97 1\n");
  char csv_path[600];
  snprintf(csv_path, sizeof csv_path, "%s/bench.csv", dir);
  /* absent is named but unavailable: not timed, no failure */
  char *bench_argv[] = {"bench", "--cpu", "--suite", path, "--m", "3", "--replays", "1", "--backends",
                        "flaky,picky,plain,absent", "--csv", csv_path, NULL};
  EXPECT(bench_main(12, bench_argv) == 0, "%s", "flaky, picky (declining k = 97), plain: exit 0");
  /* rows without a time say why, with no check column: a decline */
  char *csv = sup_read_text(csv_path);
  EXPECT(csv && strstr(csv, ",picky,") && strstr(csv, ",declined,,") && !strstr(csv, ",absent,"),
         "declined row:\n%s", csv ? csv : "(no file)");
  free(csv);
  atomic_store(&plain_wrong, 1);
  EXPECT(bench_main(12, bench_argv) == 1, "%s", "plain wrong: exit 1");
  csv = sup_read_text(csv_path);
  EXPECT(csv && strstr(csv, "WRONG: wrong result"), "wrong row:\n%s", csv ? csv : "(no file)");
  free(csv);
  atomic_store(&plain_wrong, 0);
  sup_write_text(path, "tiny 64 96 1\nflaky 13 96 1\n");
  EXPECT(bench_main(12, bench_argv) == 1, "%s", "flaky failing n = 13: exit 1");
  csv = sup_read_text(csv_path);
  EXPECT(csv && strstr(csv, "planted failure on n=13,,"), "failed row:\n%s",
         csv ? csv : "(no file)");
  free(csv);
  sup_remove_tree(dir);
}

int main(void) {
  setenv("BF16FP32_TUNE_FILE", "", 1); /* no tuned table: the fakes alone decide */
  test_plan_cache_full();
  test_plan_cache_collisions();
  test_quarantine_in_full_cache();
  test_select_names_quarantined();
  test_quarantine_one_shape();
  test_fatal_is_returned();
  test_not_prewarmed_kept();
  test_prewarm_two();
  test_prewarm_failure();
  test_failure_detail_kept();
  test_unavailable_and_forcing();
  test_environment();
  test_option_copies();
  test_environment_values();
  test_cli();
  return testing_summary("test-dispatcher");
}
