/* Test and tool support: random operands, poison, the oracle check, GPU memory helpers. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dispatch.h"
#include "internal.h"
#include "measure.h"
#include "support.h"
#include "tune-file.h"

#ifdef BF16FP32_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

uint64_t sup_rng_next(uint64_t *state) {
  /* splitmix64: small, fast, and good enough for test data */
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void sup_fill_bf16(uint16_t *p, size_t count, uint64_t seed) { bf16fp32__fill_random_bf16(p, count, seed); }

void sup_poison_f32(float *p, size_t count) { bf16fp32__poison_f32(p, count); }

void sup_nan_outside(uint16_t *buf, size_t size, const uint16_t *start, int64_t rows, int64_t cols,
                     int64_t ld) {
  for (size_t i = 0; i < size; i++) {
    const int64_t at = (int64_t)i - (start - buf);
    if (at < 0 || at >= rows * ld || at % ld >= cols) buf[i] = 0x7fc0;
  }
}

void sup_plant_subnormals(uint16_t *x, int64_t ldx, uint16_t *w, int64_t ldw, int64_t k) {
  const uint16_t tiny = 0x0040, huge = 0x7f00; /* 2^-127 (subnormal) and 2^127 */
  for (int64_t i = 0; i < k; i++) x[3 * ldx + i] = w[4 * ldw + i] = w[5 * ldw + i] = 0;
  x[3 * ldx + 0] = huge, x[3 * ldx + k - 1] = tiny;
  w[4 * ldw + k - 1] = huge, w[5 * ldw + 0] = tiny;
}

typedef struct oracle_part {
  int64_t m0, m1, n, k, ldx, ldw;
  const uint16_t *x, *w;
  double *ref, *absdot;
} oracle_part;

static void *oracle_rows(void *arg) {
  oracle_part *p = arg;
  bf16fp32__oracle(p->m1 - p->m0, p->n, p->k, p->x + p->m0 * p->ldx, p->ldx, p->w, p->ldw,
                   p->ref + p->m0 * p->n, p->absdot + p->m0 * p->n);
  return NULL;
}

int sup_oracle(int64_t m, int64_t n, int64_t k, const uint16_t *x, int64_t ldx, const uint16_t *w,
               int64_t ldw, double *ref, double *absdot, int threads) {
  enum { MAX_THREADS = 64 };
  pthread_t tid[MAX_THREADS];
  oracle_part part[MAX_THREADS];
  if (threads < 1) threads = 1;
  if (threads > MAX_THREADS) threads = MAX_THREADS;
  if (threads > m) threads = (int)m;
  int joinable[MAX_THREADS] = {0}, failed = 0;
  for (int t = 0; t < threads; t++) {
    part[t] = (oracle_part){m * t / threads, m * (t + 1) / threads, n, k, ldx, ldw, x, w, ref, absdot};
    joinable[t] = t < threads - 1 && pthread_create(&tid[t], NULL, oracle_rows, &part[t]) == 0;
    if (!joinable[t]) oracle_rows(&part[t]); /* the last part, or one whose thread failed */
  }
  for (int t = 0; t < threads; t++)
    if (joinable[t]) failed |= pthread_join(tid[t], NULL) != 0;
  return failed;
}

static int is_poison_bits(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  return bits == SUP_POISON_BITS;
}

int sup_poisoned(const float *p, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (!is_poison_bits(p[i])) return 0;
  return 1;
}

sup_check_result sup_compare(int64_t m, int64_t n, int64_t k, const double *ref, const double *absdot,
                             const float *out, int64_t ldo) {
  sup_check_result r;
  memset(&r, 0, sizeof r);
  r.worst_i = r.worst_j = -1;
  bf16fp32__rounding_tally tally = {0, 0};
  for (int64_t i = 0; i < m; i++) {
    for (int64_t j = 0; j < n; j++) {
      float got = out[i * ldo + j];
      double want = ref[i * n + j], ad = absdot[i * n + j];
      if (is_poison_bits(got)) {
        r.unwritten++;
        continue;
      }
      if (!bf16fp32__within_bound(got, want, ad, k)) r.violations++;
      bf16fp32__rounding_add(&tally, got, want);
      if (isfinite(want) && isfinite(got)) {
        double err = fabs((double)got - want), bound = bf16fp32__error_bound(k, ad);
        if (r.worst_i < 0 || err / bound > r.worst_ratio) {
          r.worst_ratio = err / bound;
          r.worst_err = err, r.worst_bound = bound;
          r.worst_i = i, r.worst_j = j;
        }
      }
    }
    for (int64_t j = n; j < ldo; j++)
      if (!is_poison_bits(out[i * ldo + j])) r.overwritten++;
  }
  if (bf16fp32__rounding_seen(&tally)) r.stored_short = tally.cleared;
  return r;
}

sup_check_result sup_check(int64_t m, int64_t n, int64_t k, const uint16_t *x, int64_t ldx,
                           const uint16_t *w, int64_t ldw, const float *out, int64_t ldo) {
  sup_check_result r;
  double *ref = malloc(sizeof(double) * (size_t)(m * n));
  double *absdot = malloc(sizeof(double) * (size_t)(m * n));
  if (!ref || !absdot) {
    memset(&r, 0, sizeof r);
    r.violations = -1; /* could not check: counts as a failure */
  } else {
    bf16fp32__oracle(m, n, k, x, ldx, w, ldw, ref, absdot);
    r = sup_compare(m, n, k, ref, absdot, out, ldo);
  }
  free(ref);
  free(absdot);
  return r;
}

int sup_check_ok(const sup_check_result *r) {
  return r->violations == 0 && r->unwritten == 0 && r->overwritten == 0 && r->stored_short == 0;
}

bf16fp32_status sup_create_pdl(bf16fp32_context **ctx, int pdl) {
  bf16fp32_options opt;
  bf16fp32_options_init(&opt);
  opt.use_pdl = pdl;
  return bf16fp32_create(ctx, &opt);
}

int sup_backend_index(bf16fp32_context *ctx, const char *name) {
  for (int i = 0; i < bf16fp32_backend_count(); i++) {
    bf16fp32_backend_info info;
    if (bf16fp32_backend_info_get(ctx, i, &info) == BF16FP32_OK && strcmp(info.name, name) == 0)
      return i;
  }
  return -1;
}

bf16fp32__tune_entry sup_tune_entry(int where, int64_t n, int64_t k, int64_t m, const char *winner,
                                    double us, const char *runner, double runner_us, int line) {
  bf16fp32__tune_entry e;
  memset(&e, 0, sizeof e);
  e.where = where;
  e.n = n, e.k = k, e.m = m;
  snprintf(e.winner, sizeof e.winner, "%s", winner);
  e.winner_us = us;
  snprintf(e.runner_up, sizeof e.runner_up, "%s", runner);
  e.runner_up_us = runner[0] ? runner_us : -1;
  e.line = line;
  return e;
}

int sup_temp_dir(char *dir, size_t len, const char *name) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, len, "%s/bf16fp32-%s-XXXXXX", tmp && tmp[0] ? tmp : "/tmp", name);
  if (mkdtemp(dir)) return 0;
  perror("mkdtemp");
  return 1;
}

void sup_remove_tree(const char *path) {
  struct stat st;
  /* lstat: a link is removed, never followed */
  DIR *d = lstat(path, &st) == 0 && S_ISDIR(st.st_mode) ? opendir(path) : NULL;
  if (!d) {
    unlink(path);
    return;
  }
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char sub[2048];
    snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
    sup_remove_tree(sub);
  }
  closedir(d);
  rmdir(path);
}

void sup_make_dirs(const char *path) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s", path);
  for (char *p = dir + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) perror(dir);
    *p = '/';
  }
  if (mkdir(dir, 0700) != 0 && errno != EEXIST) perror(dir);
}

void sup_write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  fputs(text, f);
  fclose(f);
}

char *sup_read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  /* In chunks, not by the file's size: /proc files report a size of 0. */
  size_t len = 0, cap = 4096;
  char *text = calloc(1, cap + 1);
  for (size_t got; text && (got = fread(text + len, 1, cap - len, f)) > 0;) {
    len += got;
    if (len < cap) continue;
    char *more = realloc(text, 2 * cap + 1);
    if (!more) free(text);
    text = more, cap *= 2;
  }
  fclose(f);
  if (text) text[len] = '\0';
  return text;
}

double sup_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int trace_on;
static double trace_t0;

void sup_trace_start(const char *var) {
  const char *v = getenv(var);
  trace_on = v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
  trace_t0 = sup_now();
}

void sup_trace(const char *fmt, ...) {
  if (!trace_on) return;
  printf("%.1f s: ", sup_now() - trace_t0);
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  putchar('\n');
  fflush(stdout);
}

#ifdef BF16FP32_HAVE_CUDA
int sup_gpu_available(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n > 0;
}
void *sup_gpu_alloc(size_t bytes) {
  void *p = NULL;
  return cudaMalloc(&p, bytes) == cudaSuccess ? p : NULL;
}
void sup_gpu_free(void *p) { (void)cudaFree(p); }
/* A copy from pageable host memory may return before its last bytes reach the device; the
 * tests then launch on non-blocking streams, which do not wait for it (on the H200 a kernel on
 * such a stream found the poison of a 512 KB upload landing after its own writes in 297 of 300
 * tries): so the upload waits for the default stream, which carries the copy. */
int sup_gpu_upload(void *dst, const void *src, size_t bytes) {
  return cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
         cudaStreamSynchronize(0) != cudaSuccess;
}
int sup_gpu_download(void *dst, const void *src, size_t bytes) {
  return cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost) != cudaSuccess;
}
int sup_gpu_sync(void) { return cudaDeviceSynchronize() != cudaSuccess; }
void *sup_gpu_stream_create(void) {
  cudaStream_t s = NULL;
  return cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess ? (void *)s : NULL;
}
void sup_gpu_stream_destroy(void *stream) { (void)cudaStreamDestroy((cudaStream_t)stream); }
int sup_gpu_stream_sync(void *stream) { return cudaStreamSynchronize((cudaStream_t)stream) != cudaSuccess; }
int sup_gpu_begin_capture(void *stream) {
  return (int)cudaStreamBeginCapture((cudaStream_t)stream, cudaStreamCaptureModeThreadLocal);
}
int sup_gpu_capturing(void *stream) {
  enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  return cudaStreamIsCapturing((cudaStream_t)stream, &cs) == cudaSuccess && cs == cudaStreamCaptureStatusActive;
}
int sup_gpu_end_capture_and_replay(void *stream, int replays) {
  cudaStream_t s = (cudaStream_t)stream;
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  cudaError_t e = cudaStreamEndCapture(s, &graph);
  if (e == cudaSuccess && !graph) e = cudaErrorStreamCaptureInvalidated;
  if (e == cudaSuccess && replays > 0) e = cudaGraphInstantiate(&exec, graph, 0);
  for (int i = 0; i < replays && e == cudaSuccess; i++) e = cudaGraphLaunch(exec, s);
  if (e == cudaSuccess && replays > 0) e = cudaStreamSynchronize(s);
  if (exec) (void)cudaGraphExecDestroy(exec);
  if (graph) (void)cudaGraphDestroy(graph);
  return (int)e;
}
#else
int sup_gpu_available(void) { return 0; }
void *sup_gpu_alloc(size_t bytes) {
  (void)bytes;
  return NULL;
}
void sup_gpu_free(void *p) { (void)p; }
int sup_gpu_upload(void *dst, const void *src, size_t bytes) {
  (void)dst, (void)src, (void)bytes;
  return 1;
}
int sup_gpu_download(void *dst, const void *src, size_t bytes) {
  (void)dst, (void)src, (void)bytes;
  return 1;
}
int sup_gpu_sync(void) { return 1; }
void *sup_gpu_stream_create(void) { return NULL; }
void sup_gpu_stream_destroy(void *stream) { (void)stream; }
int sup_gpu_stream_sync(void *stream) {
  (void)stream;
  return 1;
}
int sup_gpu_begin_capture(void *stream) {
  (void)stream;
  return 1;
}
int sup_gpu_capturing(void *stream) {
  (void)stream;
  return 0;
}
int sup_gpu_end_capture_and_replay(void *stream, int replays) {
  (void)stream, (void)replays;
  return 1;
}
#endif

int sup_tune_file_naming(bf16fp32_context *ctx, const char *path, int64_t n, int64_t k, int64_t m,
                         const char *winner) {
  const bf16fp32__config *cfg = bf16fp32__context_config(ctx);
  bf16fp32__tune_header mine;
  memset(&mine, 0, sizeof mine);
  if (bf16fp32__gpu_identity_query(cfg->device, &mine.gpu) != BF16FP32_OK) return 1;
  mine.has_gpu = true;
  bf16fp32__tune_entry e[2];
  const int count = cfg->use_pdl ? 2 : 1;
  for (int i = 0; i < count; i++) {
    e[i] = sup_tune_entry(BF16FP32_DEVICE, n, k, bf16fp32__tune_bucket(m), winner, 1.0, "cublas",
                          2.0, 0);
    e[i].pdl = i;
  }
  return bf16fp32__tune_file_merge(path, &mine, e, count, NULL, NULL) != BF16FP32_OK;
}
