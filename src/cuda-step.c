/* A workload step's operands on the device, its oracle and its checks (step.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cuda-check.h"
#include "dispatch.h"
#include "step.h"

#define STEP_ALIGN 256

static size_t align_up(size_t v) { return (v + STEP_ALIGN - 1) / STEP_ALIGN * STEP_ALIGN; }

/* Calls in layer order: layer l issues every GEMM that has more than l calls per step. */
static bf16fp32_status build_calls(bf16fp32__step *s) {
  int64_t total = 0;
  int layers = 0;
  for (int g = 0; g < s->gemm_count; g++) {
    if (s->gemm[g].calls < 0) return bf16fp32__fail(BF16FP32_BAD_SIZE, "step: GEMM %d has %d calls", g, s->gemm[g].calls);
    total += s->gemm[g].calls;
    if (s->gemm[g].calls > layers) layers = s->gemm[g].calls;
  }
  if (total == 0 || total > BF16FP32__STEP_MAX_CALLS)
    return bf16fp32__fail(BF16FP32_BAD_SIZE, "step: %lld calls per step (1 to %d)", (long long)total, BF16FP32__STEP_MAX_CALLS);
  s->call = calloc((size_t)total, sizeof *s->call);
  if (!s->call) return bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "step: %lld calls", (long long)total);
  int i = 0;
  for (int l = 0; l < layers; l++)
    for (int g = 0; g < s->gemm_count; g++)
      if (l < s->gemm[g].calls) {
        s->call[i].gemm = g;
        s->call[i].first = l == 0;
        s->call[i].last = l == s->gemm[g].calls - 1;
        i++;
      }
  s->call_count = (int)total;
  return BF16FP32_OK;
}

/* The library's one mapping (a sticky error is CUDA_FATAL, not a failure to retry), with the
 * caller's line in the message. */
#define cuda_fail(what, e) bf16fp32__cuda_status((e), "step: " what, __FILE__, __LINE__)

/* Every call owns its weight, input and output: weights are read cold, as in a model's step. */
static bf16fp32_status place_operands(bf16fp32__step *s) {
  size_t total = 0;
  for (int i = 0; i < s->call_count; i++) {
    const bf16fp32__step_gemm *g = &s->gemm[s->call[i].gemm];
    total += align_up((size_t)g->n * (size_t)g->k * 2) + align_up((size_t)s->max_m * (size_t)g->k * 2) +
             align_up((size_t)s->max_m * (size_t)g->n * 4);
    s->weight_bytes += (size_t)g->n * (size_t)g->k * 2;
  }
  cudaError_t e = cudaMalloc((void **)&s->base, total);
  if (e != cudaSuccess) return cuda_fail("device memory for the operands", e);
  size_t off = 0;
  for (int i = 0; i < s->call_count; i++) {
    const bf16fp32__step_gemm *g = &s->gemm[s->call[i].gemm];
    s->call[i].w = (uint16_t *)(s->base + off);
    off += align_up((size_t)g->n * (size_t)g->k * 2);
    s->call[i].x = (uint16_t *)(s->base + off);
    off += align_up((size_t)s->max_m * (size_t)g->k * 2);
    s->call[i].out = (float *)(s->base + off);
    off += align_up((size_t)s->max_m * (size_t)g->n * 4);
  }
  return BF16FP32_OK;
}

/* Random operands: one host copy per GEMM, uploaded to its first call, copied to the rest. A
 * GEMM without calls gets none (nor an oracle: bf16fp32__step_set_m). */
static bf16fp32_status fill_operands(bf16fp32__step *s, uint64_t seed) {
  for (int g = 0; g < s->gemm_count; g++) {
    const bf16fp32__step_gemm *gm = &s->gemm[g];
    if (gm->calls == 0) continue;
    size_t wn = (size_t)gm->n * (size_t)gm->k, xn = (size_t)s->max_m * (size_t)gm->k;
    s->wh[g] = malloc(wn * 2);
    s->xh[g] = malloc(xn * 2);
    if (!s->wh[g] || !s->xh[g]) return bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "step: host operands");
    bf16fp32__fill_random_bf16(s->wh[g], wn, seed + 2 * (uint64_t)g);
    bf16fp32__fill_random_bf16(s->xh[g], xn, seed + 2 * (uint64_t)g + 1);
    const bf16fp32__step_call *first = NULL;
    for (int i = 0; i < s->call_count; i++) {
      const bf16fp32__step_call *c = &s->call[i];
      if (c->gemm != g) continue;
      cudaError_t e;
      if (!first) {
        first = c;
        e = cudaMemcpy(c->w, s->wh[g], wn * 2, cudaMemcpyHostToDevice);
        if (e == cudaSuccess) e = cudaMemcpy(c->x, s->xh[g], xn * 2, cudaMemcpyHostToDevice);
      } else {
        e = cudaMemcpy(c->w, first->w, wn * 2, cudaMemcpyDeviceToDevice);
        if (e == cudaSuccess) e = cudaMemcpy(c->x, first->x, xn * 2, cudaMemcpyDeviceToDevice);
      }
      if (e != cudaSuccess) return cuda_fail("filling the operands", e);
    }
  }
  /* The copies ran on the legacy stream, which a capture stream does not wait for. */
  cudaError_t e = cudaDeviceSynchronize();
  return e == cudaSuccess ? BF16FP32_OK : cuda_fail("filling the operands", e);
}

bf16fp32_status bf16fp32__step_create(bf16fp32__step *s, const bf16fp32__step_gemm *gemm,
                                      int gemm_count, int64_t max_m, uint64_t seed) {
  bf16fp32_status st = BF16FP32_OK;
  memset(s, 0, sizeof *s);
  if (gemm_count < 1 || max_m < 1)
    return bf16fp32__fail(BF16FP32_BAD_SIZE, "step: %d GEMMs, max_m=%lld", gemm_count, (long long)max_m);
  s->gemm_count = gemm_count;
  s->max_m = max_m;
  s->gemm = malloc((size_t)gemm_count * sizeof *s->gemm);
  s->wh = calloc((size_t)gemm_count, sizeof *s->wh);
  s->xh = calloc((size_t)gemm_count, sizeof *s->xh);
  s->ref = calloc((size_t)gemm_count, sizeof *s->ref);
  int64_t max_n = 0;
  for (int g = 0; g < gemm_count; g++)
    if (gemm[g].n > max_n) max_n = gemm[g].n;
  s->outh = malloc((size_t)max_m * (size_t)max_n * sizeof(float));
  if (!s->gemm || !s->wh || !s->xh || !s->ref || !s->outh) {
    st = bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "step: host tables");
    goto cleanup;
  }
  memcpy(s->gemm, gemm, (size_t)gemm_count * sizeof *s->gemm);
  BF16FP32__TRY(build_calls(s));
  BF16FP32__TRY(place_operands(s));
  BF16FP32__TRY(fill_operands(s, seed));
cleanup:
  if (st != BF16FP32_OK) bf16fp32__step_free(s);
  return st;
}

static void free_fillers(bf16fp32__step *s) {
  if (s->filler) cudaFree(s->filler);
  if (s->filler_sink) cudaFree(s->filler_sink);
  s->filler = NULL, s->filler_sink = NULL, s->filler_bytes = 0, s->filler_blocks = 0;
}

bf16fp32_status bf16fp32__step_set_fillers(bf16fp32__step *s, int kb, int trigger) {
  const bf16fp32_status st = bf16fp32__step_check_fillers("step", kb, trigger);
  if (st != BF16FP32_OK) return st;
  free_fillers(s);
  if (kb == 0) return BF16FP32_OK;
  int dev = 0, sms = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  if (e != cudaSuccess) return cuda_fail("fillers", e);
  const size_t total = (size_t)kb * 1024 * (size_t)s->call_count;
  s->filler_blocks = sms * BF16FP32__FILLER_BLOCKS_PER_SM;
  s->filler_trigger = trigger;
  e = cudaMalloc((void **)&s->filler, total);
  if (e == cudaSuccess) e = cudaMalloc((void **)&s->filler_sink, sizeof(unsigned) * (size_t)s->filler_blocks);
  if (e == cudaSuccess) e = cudaMemset(s->filler, 0x5a, total);
  /* The fill ran on the legacy stream, which a capture stream does not wait for. */
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    free_fillers(s);
    return cuda_fail("device memory for the fillers", e);
  }
  s->filler_bytes = (size_t)kb * 1024;
  return BF16FP32_OK;
}

bf16fp32_status bf16fp32__step_filler(const bf16fp32__step *s, int i, bool pdl, void *stream) {
  if (!s->filler) return BF16FP32_OK;
  const int e = bf16fp32__filler_launch(s->filler + s->filler_bytes * (size_t)i, s->filler_bytes,
                                        s->filler_sink, s->filler_blocks, s->filler_trigger, pdl,
                                        stream);
  return e == cudaSuccess ? BF16FP32_OK : cuda_fail("filler launch", (cudaError_t)e);
}

int bf16fp32__step_min_nodes(const bf16fp32__step *s, bool gemms, int skip) {
  int nodes = s->filler ? s->call_count : 0;
  for (int i = 0; gemms && i < s->call_count; i++) nodes += s->call[i].gemm != skip;
  return nodes;
}

void bf16fp32__step_free(bf16fp32__step *s) {
  free_fillers(s);
  for (int g = 0; g < s->gemm_count; g++) {
    if (s->ref) bf16fp32__check_ref_free(&s->ref[g]);
    if (s->wh) free(s->wh[g]);
    if (s->xh) free(s->xh[g]);
  }
  free(s->ref);
  free(s->wh);
  free(s->xh);
  free(s->outh);
  free(s->call);
  free(s->gemm);
  if (s->base) cudaFree(s->base);
  memset(s, 0, sizeof *s);
}

bf16fp32_status bf16fp32__step_set_m(bf16fp32__step *s, int64_t m, int check_rows) {
  if (m < 1 || m > s->max_m)
    return bf16fp32__fail(BF16FP32_BAD_SIZE, "step: m=%lld (1 to %lld)", (long long)m, (long long)s->max_m);
  s->m = m;
  for (int g = 0; g < s->gemm_count; g++) {
    const bf16fp32__step_gemm *gm = &s->gemm[g];
    bf16fp32__check_ref_free(&s->ref[g]);
    if (gm->calls == 0) continue;
    bf16fp32_status st = bf16fp32__check_ref_init(&s->ref[g], m, gm->n, gm->k, s->xh[g], gm->k,
                                                  s->wh[g], gm->k, check_rows, 0x5eedULL + (uint64_t)g);
    if (st != BF16FP32_OK) return st;
  }
  return BF16FP32_OK;
}

int bf16fp32__step_first_call(const bf16fp32__step *s, int g) {
  for (int i = 0; i < s->call_count; i++)
    if (s->call[i].gemm == g) return i;
  return -1;
}

bf16fp32__call bf16fp32__step_call_at(const bf16fp32__step *s, int i, void *stream, bool capturing) {
  const bf16fp32__step_call *c = &s->call[i];
  const bf16fp32__step_gemm *g = &s->gemm[c->gemm];
  bf16fp32__call call;
  memset(&call, 0, sizeof call);
  call.shape = bf16fp32__make_shape(BF16FP32_DEVICE, s->m, g->n, g->k, g->k, g->k, g->n, c->x,
                                    c->w, c->out);
  call.x = c->x;
  call.w = c->w;
  call.out = c->out;
  call.stream = stream;
  call.capturing = capturing;
  return call;
}

bf16fp32_status bf16fp32__step_poison(const bf16fp32__step *s, void *stream) {
  for (int i = 0; i < s->call_count; i++) {
    const bf16fp32__step_gemm *g = &s->gemm[s->call[i].gemm];
    bf16fp32_status st = bf16fp32__device_poison_f32(s->call[i].out, (size_t)s->m * (size_t)g->n, stream);
    if (st != BF16FP32_OK) return st;
  }
  return BF16FP32_OK;
}

bf16fp32_status bf16fp32__step_check(const bf16fp32__step *s, int skip, void *stream, char *msg,
                                     size_t len) {
  cudaError_t e = cudaStreamSynchronize((cudaStream_t)stream);
  for (int i = 0; i < s->call_count && e == cudaSuccess; i++) {
    const bf16fp32__step_call *c = &s->call[i];
    if ((!c->first && !c->last) || c->gemm == skip) continue;
    const bf16fp32__step_gemm *g = &s->gemm[c->gemm];
    e = cudaMemcpy(s->outh, c->out, (size_t)s->m * (size_t)g->n * sizeof(float), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) break;
    bf16fp32__check_result res;
    bf16fp32__check_ref_compare(&s->ref[c->gemm], s->outh, g->n, &res);
    char why[200];
    if (!bf16fp32__check_ok(&res, why, sizeof why)) {
      snprintf(msg, len, "call %d (GEMM %d, %lldx%lld): %s", i, c->gemm, (long long)g->n,
               (long long)g->k, why);
      return bf16fp32__fail(BF16FP32_INTERNAL, "%s", msg);
    }
  }
  if (e != cudaSuccess) {
    snprintf(msg, len, "check: %s", cudaGetErrorString(e));
    (void)cudaGetLastError();
    return bf16fp32__fail(BF16FP32_CUDA_ERROR, "%s", msg);
  }
  return BF16FP32_OK;
}

double bf16fp32__step_floor_us(const bf16fp32__step *s) {
  double us = 0;
  for (int i = 0; i < s->call_count; i++) {
    const bf16fp32__step_gemm *g = &s->gemm[s->call[i].gemm];
    us += bf16fp32__floor_us(s->m, g->n, g->k);
  }
  return us;
}
