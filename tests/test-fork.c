/* A context made before fork, used in the child (Python's fork-started workers, for example):
 * the child's host calls are right, and its destroy returns, though the pool's workers stayed
 * in the parent asleep on their condition variable; its device calls get NO_DEVICE (CUDA's state
 * stays in the parent: with a GPU, the context's device is not the child's); a reset there
 * leaves a working host context; the parent's context is unharmed. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "support.h"
#include "testing.h"

enum { M = 16, N = 512, K = 1000 };

/* One host call of the context, checked against the oracle (poisoned output first). */
static int call_ok(bf16fp32_context *ctx, const uint16_t *x, const uint16_t *w, float *out) {
  sup_poison_f32(out, (size_t)M * N);
  if (bf16fp32_linear(ctx, BF16FP32_HOST, M, N, K, x, K, w, K, out, N, NULL) != BF16FP32_OK)
    return 0;
  sup_check_result r = sup_check(M, N, K, x, K, w, K, out, N);
  return sup_check_ok(&r);
}

int main(void) {
  bf16fp32_options opt;
  bf16fp32_options_init(&opt);
  opt.cpu_threads = 3; /* workers even on a one-CPU machine */
  bf16fp32_context *ctx = NULL;
  CHECK_OK(bf16fp32_create(&ctx, &opt));
  uint16_t *x = malloc((size_t)M * K * 2), *w = malloc((size_t)N * K * 2);
  float *out = malloc((size_t)M * N * 4);
  if (!ctx || !x || !w || !out) return testing_summary("test-fork");
  sup_fill_bf16(x, (size_t)M * K, 1);
  sup_fill_bf16(w, (size_t)N * K, 2);
  CHECK(call_ok(ctx, x, w, out));
  /* Long past the workers' spin: they sleep on the pool's condition variable. */
  const struct timespec pause = {0, 50 * 1000 * 1000};
  nanosleep(&pause, NULL);
  fflush(NULL);
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(30); /* a hang ends the child by SIGALRM, which the parent reports */
    int ok = call_ok(ctx, x, w, out) && call_ok(ctx, x, w, out);
    ok = ok && bf16fp32_linear(ctx, BF16FP32_DEVICE, M, N, K, x, K, w, K, out, N, NULL) ==
                   BF16FP32_NO_DEVICE;
    /* One thread after the reset: no workers start in the child (ThreadSanitizer does not
     * follow a process that starts threads after a multi-threaded fork). */
    setenv("BF16FP32_THREADS", "1", 1);
    ok = ok && bf16fp32_reset(ctx) == BF16FP32_OK && call_ok(ctx, x, w, out);
    /* the reset takes no device in the child, not even the parent's ordinal */
    char text[4096];
    ok = ok && bf16fp32_describe(ctx, text, sizeof text) == BF16FP32_OK &&
         strstr(text, "device: none") != NULL;
    bf16fp32_destroy(ctx);
    _exit(ok ? 0 : 1);
  }
  CHECK(pid > 0);
  int status = 0;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
  EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: %s %d",
         WIFSIGNALED(status) ? "signal" : "exit",
         WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
  CHECK(call_ok(ctx, x, w, out));
  bf16fp32_destroy(ctx);
  free(x), free(w), free(out);
  return testing_summary("test-fork");
}
