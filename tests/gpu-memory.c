/* A device call on memory it cannot use fails before anything runs: host memory, and another
 * GPU's memory (WRONG_MEMORY: our kernels would fault there, which ends the CUDA context); the
 * device's own memory and managed memory run. A stream of another GPU is BAD_OPTION (launches
 * there would fail in every backend and quarantine the shape). The other-GPU cases need two
 * devices. A workspace the GPU has no memory for is declined, not a failure. */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "gpu-case.h"
#include "support.h"
#include "testing.h"

static bf16fp32_status call_with_x(bf16fp32_context *ctx, sup_gcase *c, const uint16_t *x) {
  return bf16fp32_linear(ctx, BF16FP32_DEVICE, c->m, c->n, c->k, x, c->k, c->dw, c->k, c->dout,
                         c->n, NULL);
}

/* out on the device still holds the poison everywhere. */
static int out_untouched(sup_gcase *c) {
  size_t count = (size_t)(c->m * c->n);
  return sup_gpu_sync() == 0 && sup_gpu_download(c->hout, c->dout, count * 4) == 0 &&
         sup_poisoned(c->hout, count);
}

/* A workspace no GPU has memory for (4 TiB): the cuBLAS-based backends decline the stream,
 * forced or not; the call falls back and runs, and no shape is quarantined or failure counted,
 * since what was missing is the stream's, not the shape's. */
static void no_workspace_memory(sup_gcase *c) {
  bf16fp32_options opt;
  bf16fp32_options_init(&opt);
  opt.workspace_bytes = (size_t)1 << 42;
  bf16fp32_context *ctx = NULL;
  CHECK_OK(bf16fp32_create(&ctx, &opt));
  if (!ctx) return;
  static const char *const names[] = {"cublas", "cublaslt", "fp32"};
  for (int i = 0; i < 3; i++) {
    const int b = sup_backend_index(ctx, names[i]);
    bf16fp32_backend_info info;
    if (b < 0 || bf16fp32_backend_info_get(ctx, b, &info) != BF16FP32_OK || !info.available) continue;
    CHECK_OK(bf16fp32_force_backend(ctx, names[i]));
    CHECK(sup_gcase_poison(c, c->dout) == 0);
    const bf16fp32_status st = call_with_x(ctx, c, c->dx);
    EXPECT(st == BF16FP32_OK, "%s forced, no workspace memory: %s (%s)", names[i],
           bf16fp32_status_name(st), bf16fp32_last_error());
    CHECK(sup_gpu_sync() == 0);
    sup_gcase_check(c, c->dout, names[i]);
    CHECK_OK(bf16fp32_backend_info_get(ctx, b, &info));
    EXPECT(info.calls == 0 && info.failures == 0, "%s: %llu calls, %llu failures", names[i],
           (unsigned long long)info.calls, (unsigned long long)info.failures);
    const char *name = NULL;
    CHECK_OK(bf16fp32_select(ctx, BF16FP32_DEVICE, c->m, c->n, c->k, &name, NULL, 0));
    EXPECT(name && strcmp(name, names[i]) == 0, "%s still first: %s", names[i], name ? name : "-");
  }
  int quarantined = -1;
  CHECK_OK(bf16fp32_quarantine_list(ctx, NULL, 0, &quarantined));
  EXPECT(quarantined == 0, "%d shapes quarantined", quarantined);
  CHECK(cudaGetLastError() == cudaSuccess);
  bf16fp32_destroy(ctx);
}

int main(void) {
  if (!sup_gpu_available()) return testing_skip("gpu-memory", "no CUDA device");
  bf16fp32_context *ctx = NULL;
  CHECK_OK(bf16fp32_create(&ctx, NULL));
  if (!ctx) return testing_summary("gpu-memory");
  sup_gcase c = {.m = 4, .n = 256, .k = 512};
  const size_t xbytes = (size_t)(c.m * c.k) * 2;
  CHECK(sup_gcase_alloc(&c, 1) == 0);

  CHECK(sup_gcase_poison(&c, c.dout) == 0);
  CHECK_OK(call_with_x(ctx, &c, c.dx));
  CHECK(sup_gpu_sync() == 0);
  sup_gcase_check(&c, c.dout, "device memory");

  CHECK(sup_gcase_poison(&c, c.dout) == 0);
  CHECK(call_with_x(ctx, &c, c.hx) == BF16FP32_WRONG_MEMORY);
  CHECK(out_untouched(&c));

  uint16_t *managed = NULL;
  CHECK(cudaMallocManaged((void **)&managed, xbytes, cudaMemAttachGlobal) == cudaSuccess);
  if (managed) {
    memcpy(managed, c.hx, xbytes);
    CHECK(sup_gcase_poison(&c, c.dout) == 0);
    CHECK_OK(call_with_x(ctx, &c, managed));
    CHECK(sup_gpu_sync() == 0);
    sup_gcase_check(&c, c.dout, "managed memory");
    CHECK(cudaFree(managed) == cudaSuccess);
  }

  int count = 0, dev = 0;
  CHECK(cudaGetDeviceCount(&count) == cudaSuccess && cudaGetDevice(&dev) == cudaSuccess);
  if (count >= 2) {
    const int other = dev == 0 ? 1 : 0;
    void *far = NULL;
    CHECK(cudaSetDevice(other) == cudaSuccess);
    CHECK(cudaMalloc(&far, xbytes) == cudaSuccess);
    CHECK(cudaSetDevice(dev) == cudaSuccess);
    CHECK(sup_gcase_poison(&c, c.dout) == 0);
    CHECK(call_with_x(ctx, &c, far) == BF16FP32_WRONG_MEMORY);
    CHECK(strstr(bf16fp32_last_error(), "memory of CUDA device") != NULL);
    CHECK(out_untouched(&c));
    cudaStream_t far_stream = NULL;
    CHECK(cudaSetDevice(other) == cudaSuccess);
    CHECK(cudaFree(far) == cudaSuccess);
    CHECK(cudaStreamCreate(&far_stream) == cudaSuccess);
    CHECK(cudaSetDevice(dev) == cudaSuccess);
    CHECK(bf16fp32_linear(ctx, BF16FP32_DEVICE, c.m, c.n, c.k, c.dx, c.k, c.dw, c.k, c.dout, c.n,
                          far_stream) == BF16FP32_BAD_OPTION);
    CHECK(out_untouched(&c));
    bf16fp32_quarantine_entry q[4];
    int quarantined = -1;
    CHECK_OK(bf16fp32_quarantine_list(ctx, q, 4, &quarantined));
    CHECK(quarantined == 0); /* the shape still runs on every backend */
    CHECK(cudaStreamDestroy(far_stream) == cudaSuccess);
  } else {
    printf("gpu-memory: one CUDA device, so another device's memory is not tried\n");
  }
  CHECK(cudaGetLastError() == cudaSuccess);
  bf16fp32_destroy(ctx);
  no_workspace_memory(&c);
  sup_gcase_free(&c);
  return testing_summary("gpu-memory");
}
