/* cpu-simd against the fp64 oracle: odd shapes, padded strides, 2-byte-aligned pointers, k tails,
 * NaN/Inf, 1 and several threads, every ISA level the CPU has (on x86 also the AVX-512 BF16 and
 * AMX kernels on a model of their instructions, whatever the CPU has); plus determinism,
 * thread-count and batch invariance, the w-copy path and two callers sharing one state. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu-simd/cpu-simd.h"
#if BF16FP32_X86_MODEL
#include "model-kernels.h"
#endif
#include "identity.h"
#include "internal.h"
#include "support.h"
#include "testing.h"

extern const bf16fp32__backend bf16fp32__backend_cpu_simd;
static const bf16fp32__backend *const be = &bf16fp32__backend_cpu_simd;

/* Guard elements around every buffer: they must keep their poison / pattern. */
#define GUARD 64

typedef struct operands {
  int64_t m, n, k, ldx, ldw, ldo;
  uint16_t *xbuf, *wbuf; /* with guards; x and w start `shift` elements in (2-byte aligned) */
  float *obuf;
  const uint16_t *x, *w;
  float *out;
} operands;

static void operands_free(operands *o) {
  free(o->xbuf);
  free(o->wbuf);
  free(o->obuf);
  memset(o, 0, sizeof *o);
}

/* shift 1 makes x, w 2-byte aligned and out 4-byte aligned (odd element offsets). */
static int operands_make(operands *o, int64_t m, int64_t n, int64_t k, int64_t padx, int64_t padw,
                         int64_t pado, int shift, uint64_t seed) {
  memset(o, 0, sizeof *o);
  o->m = m, o->n = n, o->k = k;
  o->ldx = k + padx, o->ldw = k + padw, o->ldo = n + pado;
  const size_t xs = (size_t)(m * o->ldx) + 2 * GUARD, ws = (size_t)(n * o->ldw) + 2 * GUARD;
  const size_t os = (size_t)(m * o->ldo) + 2 * GUARD;
  /* Page-aligned: x and w then share their offset in a page, as large tensors usually do (the
   * case where their rows compete for L1 sets and the kernels copy one of them). */
  o->xbuf = aligned_alloc(4096, (xs * 2 + 4095) / 4096 * 4096);
  o->wbuf = aligned_alloc(4096, (ws * 2 + 4095) / 4096 * 4096);
  o->obuf = aligned_alloc(4096, (os * 4 + 4095) / 4096 * 4096);
  if (!o->xbuf || !o->wbuf || !o->obuf) return -1;
  sup_fill_bf16(o->xbuf, xs, seed * 3 + 1);
  sup_fill_bf16(o->wbuf, ws, seed * 3 + 2);
  o->x = o->xbuf + GUARD + shift;
  o->w = o->wbuf + GUARD + shift;
  sup_nan_outside(o->xbuf, xs, o->x, m, k, o->ldx);
  sup_nan_outside(o->wbuf, ws, o->w, n, k, o->ldw);
  o->out = o->obuf + GUARD + shift;
  return 0;
}

static void poison(operands *o) {
  sup_poison_f32(o->obuf, (size_t)(o->m * o->ldo) + 2 * GUARD);
}

/* The guards before and after out still hold the poison (sup_check sees the padding columns). */
static int guards_ok(const operands *o) {
  const float *end = o->out + o->m * o->ldo, *lim = o->obuf + (size_t)(o->m * o->ldo) + 2 * GUARD;
  return sup_poisoned(o->obuf, (size_t)(o->out - o->obuf)) && sup_poisoned(end, (size_t)(lim - end));
}

static bf16fp32_status run(void *state, const operands *o) {
  bf16fp32__call c;
  memset(&c, 0, sizeof c);
  c.shape = (bf16fp32__shape){o->m, o->n, o->k, o->ldx, o->ldw, o->ldo, BF16FP32_HOST, 2};
  c.x = o->x;
  c.w = o->w;
  c.out = o->out;
  return be->run(state, &c);
}

static void *probe(int threads) {
  bf16fp32__config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.device = -1;
  cfg.cpu_threads = threads;
  void *state = NULL;
  char why[256] = "";
  if (be->probe(&cfg, &state, why, sizeof why) != BF16FP32_OK) {
    fprintf(stderr, "probe failed: %s\n", why);
    return NULL;
  }
  /* `info` says which kernel and how many threads this machine gets (the pool keeps to its cap). */
  int shown = threads < BF16FP32__SIMD_MAX_THREADS ? threads : BF16FP32__SIMD_MAX_THREADS;
  char expect[64];
  snprintf(expect, sizeof expect, "%s kernel, %d thread",
           bf16fp32__simd_isa_name(bf16fp32__simd_detect()), shown);
  EXPECT(strstr(why, expect) == why, "probe's detail '%s', expected '%s...'", why, expect);
  return state;
}

/* Runs and checks against the oracle; prints the case on failure. */
static int check_case(void *state, operands *o, const char *what) {
  poison(o);
  bf16fp32_status st = run(state, o);
  CHECK(st == BF16FP32_OK);
  sup_check_result r = sup_check(o->m, o->n, o->k, o->x, o->ldx, o->w, o->ldw, o->out, o->ldo);
  int ok = sup_check_ok(&r) && guards_ok(o);
  CHECK(ok);
  if (!ok)
    fprintf(stderr,
            "  %s [%s, %d threads] m=%lld n=%lld k=%lld ldx=%lld ldw=%lld ldo=%lld: "
            "violations %lld "
            "unwritten %lld overwritten %lld guards %d worst %.3g at (%lld,%lld)\n",
            what, bf16fp32__simd_isa_name(bf16fp32__cpu_simd_isa(state)),
            bf16fp32__cpu_simd_threads(state), (long long)o->m, (long long)o->n, (long long)o->k,
            (long long)o->ldx, (long long)o->ldw, (long long)o->ldo, (long long)r.violations,
            (long long)r.unwritten, (long long)r.overwritten, guards_ok(o), r.worst_ratio,
            (long long)r.worst_i, (long long)r.worst_j);
  return ok;
}

static void test_shapes(void *state, uint64_t seed) {
  static const int64_t ms[] = {1, 2, 3, 4, 5, 7, 9, 13, 17, 33};
  static const int64_t ns[] = {1, 2, 3, 5, 7, 8, 9, 13, 23, 24, 25, 49, 97};
  static const int64_t ks[] = {1, 2, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 257, 1000};
  uint64_t rng = seed;
  for (size_t a = 0; a < sizeof ms / sizeof ms[0]; a++)
    for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b += 1 + (a & 1))
      for (size_t c = 0; c < sizeof ks / sizeof ks[0]; c += 1 + (b & 1)) {
        uint64_t r = sup_rng_next(&rng);
        operands o;
        int64_t padx = (r & 1) ? (int64_t)(r >> 8) % 19 : 0;
        int64_t padw = (r & 2) ? (int64_t)(r >> 16) % 23 : 0;
        int64_t pado = (r & 4) ? 1 + (int64_t)(r >> 24) % 7 : 0;
        int shift = (r >> 32) & 1;
        if (operands_make(&o, ms[a], ns[b], ks[c], padx, padw, pado, shift, r) != 0) {
          CHECK(!"out of memory");
          return;
        }
        check_case(state, &o, "shape");
        operands_free(&o);
      }
}

/* Larger cases: DSV4-like (M = 1, 16), the w-copy path (>= 32 rows, w stride a multiple of
 * 4 KiB, with k shorter than it), the x-copy path (<= 16 rows, both strides multiples of 4 KiB),
 * M split (few columns, many rows), several x sweeps (> 256 rows). */
static void test_large(void *state) {
  static const int64_t cases[][6] = {
      /* m, n, k, padx, padw, pado */
      {1, 256, 4096, 0, 0, 0},  {1, 203, 4096, 3, 5, 1}, {16, 384, 7168, 0, 0, 0},
      {3, 77, 4100, 1, 1, 1},   {70, 50, 2048, 0, 0, 2}, {67, 61, 3000, 5, 1096, 3},
      {300, 30, 2048, 0, 0, 0}, {257, 9, 129, 2, 3, 4},  {129, 200, 4096, 0, 0, 0},
      {520, 48, 96, 1, 2, 3},   {16, 100, 2048, 0, 0, 0}, {5, 33, 4096, 0, 0, 1},
      {83, 100, 4100, 3, 5, 1}, /* first-pass x prefetch: rows not a multiple of 4, k tail */
      /* k past 8160: an L2 block of w holds fewer than 24 rows (the blocking takes 24), in
       * place and copied */
      {20, 30, 8200, 0, 0, 0},  {40, 50, 8192, 0, 0, 0},
      /* AMX: panels in two k blocks, the sums of a half of 15 columns reloaded between them */
      {40, 47, 2100, 0, 0, 0},
  };
  int copied_x = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    operands o;
    const int64_t *c = cases[i];
    if (operands_make(&o, c[0], c[1], c[2], c[3], c[4], c[5], (int)(i & 1), 100 + i) != 0) {
      CHECK(!"out of memory");
      return;
    }
    check_case(state, &o, "large");
    copied_x += o.m <= 16 && bf16fp32__simd_should_copy_x(o.m, o.x, o.ldx, o.w, o.ldw);
    operands_free(&o);
  }
  CHECK(copied_x > 0); /* the x-copy path ran at least once */
}

static void put(uint16_t *p, float v) { *p = bf16fp32__float_to_bf16(v); }

/* NaN and Inf as IEEE says: Inf * finite, Inf * 0 = NaN, Inf - Inf = NaN, NaN anywhere, products
 * that overflow fp32, in the k tail and in the body. */
static void test_special(void *state) {
  const int64_t k = 77; /* a tail of 13 after two 32-blocks (and 5 after 16-blocks) */
  operands o;
  if (operands_make(&o, 5, 9, k, 3, 1, 2, 1, 7) != 0) {
    CHECK(!"out of memory");
    return;
  }
  uint16_t *x = (uint16_t *)o.x, *w = (uint16_t *)o.w;
  put(&x[0 * o.ldx + 3], INFINITY);   /* row 0: +Inf times w: +-Inf per column sign */
  put(&x[1 * o.ldx + 70], -INFINITY); /* row 1: -Inf in the tail */
  put(&w[2 * o.ldw + 70], 0.0f);      /* ... times 0 in column 2: NaN */
  put(&x[2 * o.ldx + 10], INFINITY);  /* row 2: +Inf and -Inf: NaN where w has one sign there */
  put(&x[2 * o.ldx + 40], -INFINITY);
  put(&w[0 * o.ldw + 10], 0.25f);
  put(&w[0 * o.ldw + 40], 0.25f);
  put(&w[4 * o.ldw + 50], NAN);       /* column 4: NaN for every row */
  put(&w[5 * o.ldw + 76], NAN);       /* column 5: NaN in the last element */
  for (int64_t i = 0; i < k; i++) {   /* row 3 x column 6: every product above FLT_MAX; */
    put(&x[3 * o.ldx + i], 1.0e36f);  /* row 3 x the others: large, no partial sum overflows */
    put(&w[6 * o.ldw + i], 1.0e4f);
  }
  check_case(state, &o, "special");
  /* Spot the classes directly as well. */
  const float *out = o.out;
  CHECK(isinf(out[0 * o.ldo + 0]));
  CHECK(isnan(out[1 * o.ldo + 2]));
  CHECK(isnan(out[2 * o.ldo + 0]));
  for (int64_t i = 0; i < o.m; i++) CHECK(isnan(out[i * o.ldo + 4]) && isnan(out[i * o.ldo + 5]));
  CHECK(isinf(out[3 * o.ldo + 6]) && out[3 * o.ldo + 6] > 0);
  operands_free(&o);
}

/* Runs each row of o alone (M = 1) into o's output and counts the rows whose bits, padding
 * columns included, differ from whole (the output of the call on all of them). */
static int64_t rows_alone_differ(void *state, const operands *o, const float *whole) {
  int64_t differ = 0;
  for (int64_t i = 0; i < o->m; i++) {
    operands row = *o;
    row.m = 1, row.x = o->x + i * o->ldx, row.out = o->out + i * o->ldo;
    CHECK(run(state, &row) == BF16FP32_OK);
    differ += memcmp(whole + i * o->ldo, o->out + i * o->ldo, (size_t)o->ldo * 4) != 0;
  }
  return differ;
}

/* bf16 subnormals as IEEE says: VDPBF16PS and TDPBF16PS take them as zeros, and a subnormal
 * times a large value (2^-127 * 2^127 = 1) is far above the error bound. In x and in w, in
 * the body and the k tail, on shares of columns and of rows; each row's bits as when alone.
 * The kernels find w's as they read w: the AVX-512 BF16 one in the first row tile of a sweep
 * (copying w too at m = 40, ldw = 2048, on one thread), so w's here meet large x only in later
 * row tiles; the AMX one as it packs w, in panels above 32 rows and in each pass below. Cases
 * without x's (the 4th number 0) leave w's alone to find, as most M = 1 calls do. x is scanned
 * by each thread after its kernel: 1 x 300 x 1000 is large enough for threads to share the
 * columns, each of which must find x's. */
static void test_subnormal(void *state) {
  static const int64_t cases[][4] = {{37, 50, 77, 1},  {300, 9, 100, 1},   {1, 200, 64, 1},
                                     {1, 300, 1000, 1}, {1, 200, 100, 0}, {20, 70, 130, 0},
                                     {40, 30, 2045, 0}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    operands o;
    if (operands_make(&o, cases[c][0], cases[c][1], cases[c][2], 1, 3, 1, 1, 90 + c) != 0) {
      CHECK(!"out of memory");
      return;
    }
    uint16_t *x = (uint16_t *)o.x, *w = (uint16_t *)o.w;
    const int64_t k = o.k;
    if (cases[c][3]) {
      x[0 * o.ldx + 1] = 0x0040, put(&w[3 * o.ldw + 1], 0x1p127f); /* body: 2^-127 * 2^127 */
      x[(o.m - 1) * o.ldx + k - 1] = 0x807f;                       /* tail, negative: about -1 */
      put(&w[(o.n - 1) * o.ldw + k - 1], 0x1p126f);
    }
    w[(o.n / 2) * o.ldw + k / 2] = 0x0001;                       /* in w: 2^-133 * 2^126 */
    put(&x[(o.m / 2) * o.ldx + k / 2], 0x1p126f);
    w[(o.n / 4) * o.ldw + k - 2] = 0x807f;                       /* w's tail: about -1 */
    put(&x[(3 * o.m / 4) * o.ldx + k - 2], 0x1p126f);
    /* At m = 1 one x row holds both large values: neither w row meets the other. */
    w[(o.n / 2) * o.ldw + k - 2] = w[(o.n / 4) * o.ldw + k / 2] = 0;
    check_case(state, &o, "subnormal");
    const size_t cnt = (size_t)(o.m * o.ldo);
    float *whole = malloc(cnt * 4);
    if (whole) {
      memcpy(whole, o.out, cnt * 4);
      const int64_t differ = rows_alone_differ(state, &o, whole);
      EXPECT(differ == 0, "subnormal m=%lld: %lld rows differ alone", (long long)o.m,
             (long long)differ);
    }
    free(whole);
    operands_free(&o);
  }
}

/* Same bits: twice on one state, on another thread count, and row by row (M = 1 calls). */
static void test_invariance(void *state, void *other) {
  operands o;
  if (operands_make(&o, 37, 131, 1111, 5, 7, 3, 1, 42) != 0) {
    CHECK(!"out of memory");
    return;
  }
  const size_t cnt = (size_t)(o.m * o.ldo);
  float *first = malloc(cnt * 4), *again = malloc(cnt * 4);
  if (!first || !again) {
    CHECK(!"out of memory");
    goto done;
  }
  poison(&o);
  CHECK(run(state, &o) == BF16FP32_OK);
  memcpy(first, o.out, cnt * 4);
  poison(&o);
  CHECK(run(state, &o) == BF16FP32_OK);
  CHECK(memcmp(first, o.out, cnt * 4) == 0); /* repeated run */
  poison(&o);
  CHECK(run(other, &o) == BF16FP32_OK);
  CHECK(memcmp(first, o.out, cnt * 4) == 0); /* other thread count */
  memcpy(again, first, cnt * 4);
  CHECK(rows_alone_differ(state, &o, again) == 0); /* each row alone */
done:
  free(first);
  free(again);
  operands_free(&o);
}

/* Two host threads calling into one state: one gets the pool, the other runs alone. */
typedef struct racer {
  void *state;
  operands *o;
  int ok;
} racer;

static void *race(void *arg) {
  racer *r = arg;
  r->ok = 1;
  for (int i = 0; i < 20 && r->ok; i++) {
    poison(r->o);
    if (run(r->state, r->o) != BF16FP32_OK) r->ok = 0;
    const operands *o = r->o;
    sup_check_result c = sup_check(o->m, o->n, o->k, o->x, o->ldx, o->w, o->ldw, o->out, o->ldo);
    if (!sup_check_ok(&c)) r->ok = 0;
  }
  return NULL;
}

static void test_two_callers(void *state) {
  operands a, b;
  if (operands_make(&a, 72, 40, 2048, 0, 0, 0, 0, 5) != 0 ||
      operands_make(&b, 9, 300, 513, 1, 2, 3, 1, 6) != 0) {
    CHECK(!"out of memory");
    return;
  }
  racer ra = {state, &a, 0}, rb = {state, &b, 0};
  pthread_t t;
  int started = pthread_create(&t, NULL, race, &ra) == 0;
  race(&rb);
  if (started) pthread_join(t, NULL);
  else race(&ra);
  CHECK(ra.ok && rb.ok);
  operands_free(&a);
  operands_free(&b);
}

/* Whether the space-separated list names `name` as a whole word. */
static int names(const char *list, const char *name) {
  const size_t len = strlen(name);
  for (const char *p = strstr(list, name); p; p = strstr(p + 1, name))
    if ((p == list || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0')) return 1;
  return 0;
}

/* The CPU identity (the tuning file's) lists what the detected level needs, and the level's
 * instruction sets only where detection found them: both read the same queries
 * (x86-features.h, arm-features.h). A machine lists its own architecture's names alone. */
static void identity_agrees(bf16fp32__simd_isa top) {
  bf16fp32__cpu_identity id;
  bf16fp32__cpu_identity_query(1, &id);
  const char *f = id.features;
  EXPECT(f[0] != '\0', "empty feature list");
  const int x86 = BF16FP32__ISA_LOWEST == BF16FP32__ISA_AVX2;
  const int arm = BF16FP32__ISA_LOWEST == BF16FP32__ISA_NEON;
  EXPECT((x86 && top >= BF16FP32__ISA_AVX2) == (names(f, "avx2") && names(f, "fma")),
         "detected %s, identity '%s'", bf16fp32__simd_isa_name(top), f);
  if (top == BF16FP32__ISA_AVX512BF16 || top == BF16FP32__ISA_AMX)
    EXPECT(names(f, "avx512f") && names(f, "avx512bw") && names(f, "avx512vl") &&
               names(f, "avx512bf16"),
           "detected %s, identity '%s'", bf16fp32__simd_isa_name(top), f);
  if (top == BF16FP32__ISA_AMX) EXPECT(names(f, "amx-bf16"), "detected amx, identity '%s'", f);
  EXPECT((arm && top == BF16FP32__ISA_NEON) == names(f, "asimd"), "detected %s, identity '%s'",
         bf16fp32__simd_isa_name(top), f);
  EXPECT(arm || !names(f, "bf16"), "an Arm name on another architecture: '%s'", f);
  EXPECT(names("avx512bf16 avx2", "avx2") && !names("avx512bf16", "avx512bf") &&
             !names("xavx2", "avx2"),
         "the word match itself");
}

/* On Linux x86 the detected level is at least what the kernel's own CPU flags promise (it lists
 * a feature only where the CPU reports it and the OS saves its registers): a second reading of
 * cpuid and XCR0, not this library's. Only this direction: a kernel may hide flags the CPU has
 * (clearcpuid=), and then the library may rightly detect more. */
static void flags_agree(bf16fp32__simd_isa top) {
#if defined(__linux__) && (defined(__x86_64__) || defined(__i386__))
  char *info = sup_read_text("/proc/cpuinfo");
  char *at = info ? strstr(info, "\nflags\t") : NULL;
  char *colon = at ? strchr(at, ':') : NULL, *end = colon ? strchr(colon, '\n') : NULL;
  if (!end) {
    free(info);
    return;
  }
  *end = '\0'; /* the first CPU's flags line alone, read in place */
  const char *flags = colon + 1;
  while (*flags == ' ') flags++;
  const int avx2 = names(flags, "avx2") && names(flags, "fma");
  const int bf16 = avx2 && names(flags, "avx512f") && names(flags, "avx512dq") &&
                   names(flags, "avx512bw") && names(flags, "avx512vl") &&
                   names(flags, "avx512_bf16");
  EXPECT(!avx2 || top >= BF16FP32__ISA_AVX2, "detected %s; avx2 and fma in the flags",
         bf16fp32__simd_isa_name(top));
  EXPECT(!bf16 || top >= BF16FP32__ISA_AVX512BF16, "detected %s; the AVX-512 five in the flags",
         bf16fp32__simd_isa_name(top));
  free(info);
#else
  (void)top;
#endif
}

/* BF16FP32_CPU_ISA (cfg.cpu_isa) caps the level: the lowest level runs when named, a level
 * above the machine's leaves it at its best, another architecture's makes the backend say so. */
static void test_cap(bf16fp32__simd_isa top) {
  static const char *const names_all[] = {"avx2", "avx512bf16", "amx", "neon"};
  for (size_t i = 0; i < sizeof names_all / sizeof names_all[0]; i++) {
    const bf16fp32__simd_isa cap = bf16fp32__simd_isa_from_name(names_all[i]);
    CHECK(cap != BF16FP32__ISA_NONE && !strcmp(bf16fp32__simd_isa_name(cap), names_all[i]));
    bf16fp32__config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.device = -1;
    cfg.cpu_threads = 1;
    snprintf(cfg.cpu_isa, sizeof cfg.cpu_isa, "%s", names_all[i]);
    void *state = NULL;
    char why[256] = "";
    const bf16fp32_status st = be->probe(&cfg, &state, why, sizeof why);
    if (cap < BF16FP32__ISA_LOWEST || cap > BF16FP32__ISA_HIGHEST) {
      EXPECT(st == BF16FP32_BACKEND_UNAVAILABLE && strstr(why, "BF16FP32_CPU_ISA"), "cap %s: %s",
             names_all[i], why);
    } else {
      const bf16fp32__simd_isa want = cap < top ? cap : top;
      EXPECT(st == BF16FP32_OK && bf16fp32__cpu_simd_isa(state) == want &&
                 (cap < top) == (strstr(why, "BF16FP32_CPU_ISA") != NULL),
             "cap %s on %s: %s", names_all[i], bf16fp32__simd_isa_name(top), why);
    }
    if (state) be->reset(state);
  }
  CHECK(bf16fp32__simd_isa_from_name("avx") == BF16FP32__ISA_NONE &&
        bf16fp32__simd_isa_from_name(NULL) == BF16FP32__ISA_NONE);
  /* no level has a name too, which the messages above print where a machine has none; it is
   * no name a cap takes */
  CHECK(!strcmp(bf16fp32__simd_isa_name(BF16FP32__ISA_NONE), "none") &&
        bf16fp32__simd_isa_from_name("none") == BF16FP32__ISA_NONE);
}

/* A kernel called directly, as the backend does not: without scratch where it would have some
 * (the path when the pool cannot allocate it: the AMX kernel streams w for every pass of rows,
 * the AVX-512 one reads w where it lies), and on a block inside the operands (nothing written
 * outside it). The same bits as the whole call with scratch, which the oracle checks. */
static void test_block_paths(bf16fp32__simd_block_fn block) {
  static const int64_t cases[][3] = {{70, 50, 2048}, {45, 37, 1111}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    operands o;
    const int64_t k = cases[c][2];
    const int made = operands_make(&o, cases[c][0], cases[c][1], k, 0, 0, 3, 0, 60 + c) == 0;
    const size_t cnt = (size_t)(o.m * o.ldo);
    uint16_t *scratch = bf16fp32__simd_scratch_alloc(bf16fp32__simd_scratch_elems(k));
    float *whole = malloc(cnt * 4);
    if (!made || !scratch || !whole) {
      CHECK(!"out of memory");
      free(scratch), free(whole);
      operands_free(&o);
      return;
    }
    bf16fp32__simd_args a = {o.x, o.w, o.out, o.m, o.n, o.k, o.ldx, o.ldw, o.ldo, 1};
    poison(&o);
    block(&a, 0, o.m, 0, o.n, scratch);
    sup_check_result r = sup_check(o.m, o.n, k, o.x, o.ldx, o.w, o.ldw, o.out, o.ldo);
    EXPECT(sup_check_ok(&r) && guards_ok(&o), "block with scratch, m=%lld k=%lld",
           (long long)o.m, (long long)k);
    memcpy(whole, o.out, cnt * 4);
    poison(&o);
    block(&a, 0, o.m, 0, o.n, NULL);
    EXPECT(!memcmp(whole, o.out, cnt * 4), "block without scratch, m=%lld k=%lld: other bits",
           (long long)o.m, (long long)k);
    const int64_t m0 = 5, m1 = o.m - 3, n0 = 9, n1 = o.n - 4;
    poison(&o);
    block(&a, m0, m1, n0, n1, scratch);
    int64_t wrong = 0;
    for (int64_t i = 0; i < o.m; i++)
      for (int64_t j = 0; j < o.ldo; j++) {
        const int inside = i >= m0 && i < m1 && j >= n0 && j < n1;
        const float *e = o.out + i * o.ldo + j;
        wrong += inside ? memcmp(e, whole + i * o.ldo + j, 4) != 0 : !sup_poisoned(e, 1);
      }
    EXPECT(wrong == 0 && guards_ok(&o), "block [%lld,%lld) x [%lld,%lld): %lld elements wrong",
           (long long)m0, (long long)m1, (long long)n0, (long long)n1, (long long)wrong);
    free(scratch), free(whole);
    operands_free(&o);
  }
}

/* What a kernel reports, on which the redo of subnormals hangs: nonzero for a w row holding a
 * bf16 subnormal (either sign, in the body or the k tail) on the levels whose instructions take
 * them as zero, else zero; never for zeros or the smallest normals, which would send the whole
 * share to the AVX2 kernel again. */
static void test_reports(bf16fp32__simd_isa isa, bf16fp32__simd_block_fn block) {
  enum { M = 5, N = 9, K = 77 };
  static const uint16_t normals[] = {0x0000, 0x8000, 0x0080, 0x8080, 0x00ff, 0x80ff, 0x3f80};
  static const uint16_t subnormals[] = {0x0001, 0x0040, 0x007f, 0x8001, 0x807f};
  static const int64_t at[] = {0, 40, K - 1};
  const int daz = isa == BF16FP32__ISA_AVX512BF16 || isa == BF16FP32__ISA_AMX;
  uint16_t x[M * K], w[N * K];
  float out[M * N];
  sup_fill_bf16(x, M * K, 11);
  for (int64_t i = 0; i < N * K; i++) w[i] = normals[i % (int64_t)(sizeof normals / 2)];
  const bf16fp32__simd_args a = {x, w, out, M, N, K, K, K, N, 1};
  EXPECT(block(&a, 0, M, 0, N, NULL) == 0, "%s: a report without a subnormal",
         bf16fp32__simd_isa_name(isa));
  for (size_t p = 0; p < sizeof at / sizeof at[0]; p++)
    for (size_t s = 0; s < sizeof subnormals / 2; s++) {
      uint16_t *e = &w[(int64_t)(p + s) % N * K + at[p]];
      const uint16_t keep = *e;
      *e = subnormals[s];
      EXPECT((block(&a, 0, M, 0, N, NULL) != 0) == daz, "%s: subnormal %#x at k = %lld",
             bf16fp32__simd_isa_name(isa), (unsigned)subnormals[s], (long long)at[p]);
      *e = keep;
    }
}

#if defined(__x86_64__) || defined(__i386__)
/* The scan of x rows and of the w rows a kernel reported: a subnormal anywhere in k, through the
 * vector body or the scalar tail, and nothing else (zeros are common in real data, and each row
 * it names is computed again). */
static void test_subnormal_scan(void) {
  static const uint16_t normals[] = {0x0000, 0x8000, 0x0080, 0x8080, 0x00ff, 0x7f80, 0x7fc0};
  static const uint16_t subnormals[] = {0x0001, 0x007f, 0x8001, 0x807f};
  static const int64_t ks[] = {1, 16, 31, 32, 33, 64, 77};
  uint16_t row[77];
  for (size_t c = 0; c < sizeof ks / sizeof ks[0]; c++) {
    const int64_t k = ks[c];
    for (int64_t i = 0; i < k; i++) row[i] = normals[i % (int64_t)(sizeof normals / 2)];
    EXPECT(!bf16fp32__simd_subnormal_avx2(row, k), "k = %lld: found one in none", (long long)k);
    for (int64_t i = 0; i < k; i++)
      for (size_t s = 0; s < sizeof subnormals / 2; s++) {
        const uint16_t keep = row[i];
        row[i] = subnormals[s];
        EXPECT(bf16fp32__simd_subnormal_avx2(row, k), "k = %lld: %#x at %lld missed",
               (long long)k, (unsigned)subnormals[s], (long long)i);
        row[i] = keep;
      }
  }
}
#endif

/* More threads asked for than cpu-simd uses (its cap, the size of a call's per-share arrays):
 * the pool keeps to the cap, and a call with columns for more shares than that is right. */
static void test_thread_cap(void) {
  void *state = probe(BF16FP32__SIMD_MAX_THREADS + 36);
  CHECK(state != NULL);
  if (!state) return;
  EXPECT(bf16fp32__cpu_simd_threads(state) <= BF16FP32__SIMD_MAX_THREADS, "%d threads",
         bf16fp32__cpu_simd_threads(state));
  operands o;
  CHECK(operands_make(&o, 1, 1100, 256, 0, 0, 0, 0, 77) == 0);
  if (o.out) check_case(state, &o, "threads past the cap");
  operands_free(&o);
  be->reset(state);
}

/* Every case, on both states (1 and 3 threads), as they are set: a level and its kernel (block),
 * which is also called directly. */
static void test_level(void *states[2], bf16fp32__simd_isa isa, bf16fp32__simd_block_fn block,
                       const char *kind) {
  const int before = testing_failures;
  test_block_paths(block);
  test_reports(isa, block);
  for (int t = 0; t < 2; t++) {
    test_shapes(states[t], 1000 + 17 * (uint64_t)isa + (uint64_t)t);
    test_large(states[t]);
    test_special(states[t]);
    test_subnormal(states[t]);
  }
  test_invariance(states[1], states[0]);
  test_two_callers(states[1]);
  printf("test-cpu-simd: %s%s %s\n", bf16fp32__simd_isa_name(isa), kind,
         testing_failures == before ? "ok" : "FAILED");
}

#if BF16FP32_X86_MODEL
/* On a CPU that has the level: in how many rows of one call the model and the hardware give
 * different bits (printed, not checked: the model follows the SDM's pseudo-code, and the tests
 * hold each to the oracle's bound alone). */
static void model_against_hardware(void *state, bf16fp32__simd_isa isa,
                                   bf16fp32__simd_block_fn block) {
  operands o;
  if (operands_make(&o, 37, 131, 1111, 5, 7, 3, 1, 43) != 0) {
    CHECK(!"out of memory");
    return;
  }
  const size_t cnt = (size_t)(o.m * o.ldo);
  float *hw = malloc(cnt * 4);
  if (hw && bf16fp32__cpu_simd_force_isa(state, isa) == 0 && run(state, &o) == BF16FP32_OK) {
    memcpy(hw, o.out, cnt * 4);
    CHECK(bf16fp32__cpu_simd_force_kernel(state, isa, block) == 0);
    CHECK(run(state, &o) == BF16FP32_OK);
    int64_t differ = 0;
    for (int64_t i = 0; i < o.m; i++)
      differ += memcmp(hw + i * o.ldo, o.out + i * o.ldo, (size_t)o.n * 4) != 0;
    printf("test-cpu-simd: %s model against the hardware: %lld of %lld rows differ in bits\n",
           bf16fp32__simd_isa_name(isa), (long long)differ, (long long)o.m);
  }
  free(hw);
  operands_free(&o);
}

/* The AVX-512 BF16 and AMX kernels on the instruction model (tests/x86-model), through the rest
 * of the backend, whatever this CPU has: the same cases, and no instruction the hardware would
 * refuse. */
static void test_models(void *states[2], bf16fp32__simd_isa top) {
  static const struct {
    bf16fp32__simd_isa isa;
    bf16fp32__simd_block_fn block;
  } models[] = {{BF16FP32__ISA_AVX512BF16, bf16fp32__model_block_avx512bf16},
                {BF16FP32__ISA_AMX, bf16fp32__model_block_amx}};
  CHECK(bf16fp32__cpu_simd_force_kernel(states[0], BF16FP32__ISA_NONE, models[0].block) != 0);
  CHECK(bf16fp32__cpu_simd_force_kernel(states[0], BF16FP32__ISA_NEON, models[0].block) != 0);
  CHECK(bf16fp32__cpu_simd_force_kernel(states[0], BF16FP32__ISA_AMX, NULL) != 0);
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
    for (int t = 0; t < 2; t++)
      CHECK(bf16fp32__cpu_simd_force_kernel(states[t], models[i].isa, models[i].block) == 0);
    CHECK(bf16fp32__cpu_simd_isa(states[0]) == models[i].isa);
    test_level(states, models[i].isa, models[i].block, " (model)");
    if (top >= models[i].isa) model_against_hardware(states[0], models[i].isa, models[i].block);
  }
  EXPECT(x86_model_faults() == 0, "%ld tile instructions faulted, the first: %s",
         x86_model_faults(), x86_model_first_fault());
}
#endif

int main(void) {
  const bf16fp32__simd_isa top = bf16fp32__simd_detect();
  printf("test-cpu-simd: detected %s\n", bf16fp32__simd_isa_name(top));
  identity_agrees(top);
  flags_agree(top);
  if (top == BF16FP32__ISA_NONE) {
    char why[256] = "";
    void *state = NULL;
    bf16fp32__config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.cpu_threads = 1;
    CHECK(be->probe(&cfg, &state, why, sizeof why) == BF16FP32_BACKEND_UNAVAILABLE && why[0]);
    if (testing_failures) return testing_summary("test-cpu-simd");
    return testing_skip("test-cpu-simd", "no vector level of this build on this CPU");
  }
  test_cap(top);
  test_thread_cap();
#if defined(__x86_64__) || defined(__i386__)
  test_subnormal_scan();
#endif
  static const int thread_counts[] = {1, 3};
  void *states[2];
  for (int t = 0; t < 2; t++) {
    states[t] = probe(thread_counts[t]);
    CHECK(states[t] != NULL);
    if (!states[t]) return testing_summary("test-cpu-simd");
    CHECK(bf16fp32__cpu_simd_isa(states[t]) == top);
    CHECK(bf16fp32__cpu_simd_threads(states[t]) == thread_counts[t]);
  }
  bf16fp32__shape host = {1, 1, 1, 1, 1, 1, BF16FP32_HOST, 2}, dev = host;
  dev.where = BF16FP32_DEVICE;
  CHECK(be->supports(states[0], &host) && !be->supports(states[0], &dev));
  CHECK(be->prewarm(states[0], &host, NULL, NULL) == BF16FP32_OK);
  /* A level above the detected one is refused, one of another architecture too; NONE too. */
  CHECK(bf16fp32__cpu_simd_force_isa(states[0], BF16FP32__ISA_NONE) != 0);
  if (top < BF16FP32__ISA_AVX512BF16)
    CHECK(bf16fp32__cpu_simd_force_isa(states[0], BF16FP32__ISA_AVX512BF16) != 0);
  if (top != BF16FP32__ISA_AMX)
    CHECK(bf16fp32__cpu_simd_force_isa(states[0], BF16FP32__ISA_AMX) != 0);
  CHECK(bf16fp32__cpu_simd_force_isa(states[0], top == BF16FP32__ISA_NEON ? BF16FP32__ISA_AVX2
                                                                          : BF16FP32__ISA_NEON) != 0);

  for (int isa = top; isa >= BF16FP32__ISA_LOWEST; isa--) {
    for (int t = 0; t < 2; t++)
      CHECK(bf16fp32__cpu_simd_force_isa(states[t], (bf16fp32__simd_isa)isa) == 0);
    test_level(states, (bf16fp32__simd_isa)isa, bf16fp32__simd_block_for((bf16fp32__simd_isa)isa),
               "");
  }
#if BF16FP32_X86_MODEL
  test_models(states, top);
#endif
  for (int t = 0; t < 2; t++) be->reset(states[t]);
  return testing_summary("test-cpu-simd");
}
