/* The GPU half of the measure (MEASURING.md): rotating operand copies for a cold L2, each
 * candidate checked eagerly and after one graph replay, then graphs of many calls replayed in
 * interleaved rounds timed with events. Also the device poison fill. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-check.h"
#include "dispatch.h"
#include "measure.h"

#define MEASURE_ALIGN 256
#define MEASURE_POISON_SEED_FLOATS 4096

static size_t align_up(size_t v) { return (v + MEASURE_ALIGN - 1) / MEASURE_ALIGN * MEASURE_ALIGN; }

/* NO_DEVICE (with the reason) when the runtime sees no usable device. */
static bf16fp32_status need_device(void) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    const char *why = e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device";
    (void)cudaGetLastError();
    return bf16fp32__fail(BF16FP32_NO_DEVICE, "cudaGetDeviceCount: %s", why);
  }
  return BF16FP32_OK;
}

bf16fp32_status bf16fp32__device_poison_f32(float *dev, size_t count, void *stream) {
  bf16fp32_status st = BF16FP32_OK;
  cudaStream_t s = (cudaStream_t)stream;
  if (count == 0) return BF16FP32_OK;
  /* Upload one small block, then double the poisoned prefix with device copies: a 4-byte
   * pattern that cudaMemset (bytes) cannot write, without a kernel of our own. */
  float seed[MEASURE_POISON_SEED_FLOATS];
  size_t first = count < MEASURE_POISON_SEED_FLOATS ? count : MEASURE_POISON_SEED_FLOATS;
  bf16fp32__poison_f32(seed, first);
  /* From pageable memory the call returns once seed is staged: the stack buffer may go. */
  BF16FP32__CUDA_TRY(cudaMemcpyAsync(dev, seed, first * sizeof(float), cudaMemcpyHostToDevice, s));
  for (size_t done = first; done < count;) {
    size_t part = done < count - done ? done : count - done;
    BF16FP32__CUDA_TRY(cudaMemcpyAsync(dev + done, dev, part * sizeof(float),
                                       cudaMemcpyDeviceToDevice, s));
    done += part;
  }
cleanup:
  return st;
}

/* Records a CUDA failure on a candidate; the error is cleared when it is not sticky. The macro
 * passes the failing call's line, so the last error names it rather than this helper. */
static bf16fp32_status cand_cuda_fail_at(bf16fp32__candidate *c, cudaError_t e, const char *what,
                                         int line) {
  bf16fp32_status s = bf16fp32__cuda_status(e, what, __FILE__, line);
  bf16fp32__candidate_fail(c, s);
  return s;
}
#define cand_cuda_fail(c, e, what) cand_cuda_fail_at((c), (e), (what), __LINE__)

/* A CUDA failure of the graph run itself (not of a job's hooks) on a job: its status, with the
 * error in the job's detail. */
static bf16fp32_status job_cuda_fail_at(bf16fp32__graph_job *jb, cudaError_t e, const char *what,
                                        int line) {
  const bf16fp32_status s = bf16fp32__cuda_status(e, what, __FILE__, line);
  snprintf(jb->detail, sizeof jb->detail, "%s", bf16fp32_last_error());
  return s;
}
#define job_cuda_fail(jb, e, what) job_cuda_fail_at((jb), (e), (what), __LINE__)

/* Each captured call puts at least one kernel or copy into the graph: a graph of fewer nodes than
 * calls means that work ran outside the capture (on another stream, at once), where no replay
 * repeats it and where it may still have written the outputs that the replay's check reads.
 * Sets *short_of (1 with the reason in msg, else 0); returns the counting's error. */
static cudaError_t graph_short_of(cudaGraph_t graph, size_t calls, int *short_of, char *msg,
                                  size_t len) {
  size_t nodes = 0;
  const cudaError_t e = cudaGraphGetNodes(graph, NULL, &nodes);
  *short_of = e == cudaSuccess && nodes < calls;
  if (*short_of)
    snprintf(msg, len, "the capture of %zu calls holds %zu graph nodes: work ran outside it", calls,
             nodes);
  return e;
}

/* The operand copies of one measure: copy i is x[i], w[i], out[i]; x_flipped and w_flipped
 * the copies whose x or w has its signs flipped (bf16fp32__flipped_copies; 0: none). */
typedef struct rotation {
  char *base;
  size_t per, xa, wa;
  int copies;
  size_t x_flipped, w_flipped;
} rotation;

static uint16_t *rot_x(const rotation *r, int i) { return (uint16_t *)(r->base + (size_t)i * r->per); }
static uint16_t *rot_w(const rotation *r, int i) {
  return (uint16_t *)(r->base + (size_t)i * r->per + r->xa);
}
static float *rot_out(const rotation *r, int i) {
  return (float *)(r->base + (size_t)i * r->per + r->xa + r->wa);
}

static bf16fp32__call rot_call(const rotation *r, int i, int64_t m, int64_t n, int64_t k,
                               cudaStream_t stream, bool capturing) {
  bf16fp32__call call;
  memset(&call, 0, sizeof call);
  call.x = rot_x(r, i);
  call.w = rot_w(r, i);
  call.out = rot_out(r, i);
  call.shape = bf16fp32__make_shape(BF16FP32_DEVICE, m, n, k, k, k, n, call.x, call.w, call.out);
  call.stream = stream;
  call.capturing = capturing;
  return call;
}

/* Downloads copy i's output and compares it with the oracle (negated for a flipped copy).
 * Returns non-OK only when the download itself failed (the candidate's own verdict goes into
 * the candidate). */
static bf16fp32_status check_copy(const rotation *rot, size_t i, cudaStream_t stream, float *outh,
                                  const bf16fp32__check_ref *ref, bf16fp32__candidate *cd) {
  bf16fp32_status st = BF16FP32_OK;
  BF16FP32__CUDA_TRY(cudaMemcpyAsync(outh, rot_out(rot, (int)i),
                                     (size_t)ref->m * (size_t)ref->n * sizeof(float),
                                     cudaMemcpyDeviceToHost, stream));
  BF16FP32__CUDA_TRY(cudaStreamSynchronize(stream));
  bf16fp32__check_result res;
  if (i != 0 && (i == rot->x_flipped || i == rot->w_flipped))
    bf16fp32__check_ref_compare_flipped(ref, outh, ref->n, &res);
  else
    bf16fp32__check_ref_compare(ref, outh, ref->n, &res);
  bf16fp32__candidate_record_check(cd, &res);
cleanup:
  return st;
}

/* Prewarm, eager checked run, capture of `calls` calls, one checked replay. On
 * success *exec holds the graph. Returns non-OK only for a failure that ends the measure
 * (a sticky error, or the check's download failing); the candidate's own failure goes into
 * the candidate. */
static bf16fp32_status prepare_candidate(bf16fp32__candidate *cd, const rotation *rot,
                                         cudaStream_t stream, int64_t m, int64_t n, int64_t k,
                                         int calls, float *outh, const bf16fp32__check_ref *ref,
                                         cudaGraphExec_t *exec) {
  bf16fp32_status st = BF16FP32_OK;
  cudaGraph_t graph = NULL;
  *exec = NULL;
  bf16fp32__call call = rot_call(rot, 0, m, n, k, stream, false);
  bf16fp32_status s = BF16FP32_OK;
  if (cd->prewarm) s = cd->prewarm(cd->user, &call.shape, stream);
  if (s != BF16FP32_OK) {
    bf16fp32__candidate_fail(cd, s);
    if (s == BF16FP32_CUDA_FATAL) st = s;
    goto cleanup;
  }
  /* Eager run into a poisoned output: anything left unwritten shows. */
  BF16FP32__TRY(bf16fp32__device_poison_f32(rot_out(rot, 0), (size_t)m * (size_t)n, stream));
  s = cd->run(cd->user, &call);
  if (s != BF16FP32_OK) {
    bf16fp32__candidate_fail(cd, s);
    if (s == BF16FP32_CUDA_FATAL) st = s;
    (void)cudaGetLastError();
    goto cleanup;
  }
  cudaError_t e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess) {
    s = cand_cuda_fail(cd, e, "cudaStreamSynchronize after the eager run");
    if (s == BF16FP32_CUDA_FATAL) st = s;
    goto cleanup;
  }
  BF16FP32__TRY(check_copy(rot, 0, stream, outh, ref, cd));
  if (cd->wrong) goto cleanup;

  /* Capture: call i uses copy i mod copies, so consecutive calls never share operands. Thread-
   * local: the candidate's own unsafe calls still break it, other threads' allocations do not. */
  e = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  if (e != cudaSuccess) {
    s = cand_cuda_fail(cd, e, "cudaStreamBeginCapture");
    if (s == BF16FP32_CUDA_FATAL) st = s;
    goto cleanup;
  }
  for (int i = 0; i < calls && s == BF16FP32_OK; i++) {
    bf16fp32__call ci = rot_call(rot, i % rot->copies, m, n, k, stream, true);
    s = cd->run(cd->user, &ci);
  }
  e = cudaStreamEndCapture(stream, &graph); /* always: leaves capture mode */
  if (s != BF16FP32_OK) {
    bf16fp32__candidate_fail(cd, s);
    if (s == BF16FP32_CUDA_FATAL) st = s;
    (void)cudaGetLastError();
    goto cleanup;
  }
  if (e != cudaSuccess) {
    s = cand_cuda_fail(cd, e, "cudaStreamEndCapture");
    if (s == BF16FP32_CUDA_FATAL) st = s;
    goto cleanup;
  }
  int short_of = 0;
  char why[sizeof cd->detail];
  e = graph_short_of(graph, (size_t)calls, &short_of, why, sizeof why);
  if (e != cudaSuccess) {
    s = cand_cuda_fail(cd, e, "cudaGraphGetNodes");
    if (s == BF16FP32_CUDA_FATAL) st = s;
    goto cleanup;
  }
  if (short_of) { /* its output would not come from the graph: a wrong result, as the check's */
    bf16fp32__candidate_wrong(cd, why);
    goto cleanup;
  }
  e = cudaGraphInstantiate(exec, graph, 0);
  if (e != cudaSuccess) {
    *exec = NULL;
    s = cand_cuda_fail(cd, e, "cudaGraphInstantiate");
    if (s == BF16FP32_CUDA_FATAL) st = s;
    goto cleanup;
  }
  /* One replay into poisoned copies: the graph must compute what the eager call did, in copy 0
   * and, from their own operands, in the flipped copies. */
  const size_t checked[3] = {0, rot->x_flipped, rot->w_flipped};
  for (int i = 0; i < 3; i++)
    if (i == 0 || checked[i])
      BF16FP32__TRY(bf16fp32__device_poison_f32(rot_out(rot, (int)checked[i]), (size_t)m * (size_t)n,
                                                stream));
  e = cudaGraphLaunch(*exec, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess) {
    s = cand_cuda_fail(cd, e, "cudaGraphLaunch (checked replay)");
    if (s == BF16FP32_CUDA_FATAL) st = s;
    goto cleanup;
  }
  for (int i = 0; i < 3 && !cd->wrong; i++)
    if (i == 0 || checked[i]) BF16FP32__TRY(check_copy(rot, checked[i], stream, outh, ref, cd));

cleanup:
  if (graph) cudaGraphDestroy(graph);
  if (*exec && (st != BF16FP32_OK || cd->status != BF16FP32_OK)) {
    cudaGraphExecDestroy(*exec);
    *exec = NULL;
  }
  return st;
}

/* The timing of graphs exec[0 .. count - 1] (NULL ones skipped), queued back to back on stream:
 * `warmup` untimed rounds, then `replays` timed rounds, each read after one synchronization.
 * In a timed round the first graph rotates with the round, and each timed replay follows an
 * untimed replay of the same graph, so that what ran before it is always itself. Without that
 * lead-in, a graph timed right after a long chain of another backend's calls measured up to
 * 3.5 % slower than the same graph timed after itself on the H200 (cuBLAS at 2048x7168 M = 256
 * after smallm's 45 us calls; docs/smallm-notes.md, session 43). ev[2 j], ev[2 j + 1] bracket
 * graph j's timed replay; its round r's milliseconds go to samples[j * replays + r]. */
static cudaError_t time_rounds(cudaGraphExec_t *exec, int count, int warmup, int replays,
                               cudaEvent_t *ev, cudaStream_t stream, double *samples) {
  cudaError_t e = cudaSuccess;
  for (int r = 0; r < warmup && e == cudaSuccess; r++)
    for (int j = 0; j < count && e == cudaSuccess; j++)
      if (exec[j]) e = cudaGraphLaunch(exec[j], stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  for (int r = 0; r < replays && e == cudaSuccess; r++) {
    for (int i = 0; i < count && e == cudaSuccess; i++) {
      const int j = (r + i) % count;
      if (!exec[j]) continue;
      e = cudaGraphLaunch(exec[j], stream); /* the lead-in */
      if (e == cudaSuccess) e = cudaEventRecord(ev[2 * j], stream);
      if (e == cudaSuccess) e = cudaGraphLaunch(exec[j], stream);
      if (e == cudaSuccess) e = cudaEventRecord(ev[2 * j + 1], stream);
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    for (int j = 0; j < count && e == cudaSuccess; j++) {
      if (!exec[j]) continue;
      float ms = 0;
      e = cudaEventElapsedTime(&ms, ev[2 * j], ev[2 * j + 1]);
      samples[(size_t)j * (size_t)replays + (size_t)r] = ms;
    }
  }
  return e;
}

bf16fp32_status bf16fp32__measure_device(int64_t m, int64_t n, int64_t k,
                                         bf16fp32__candidate *cands, int count,
                                         const bf16fp32__measure_opts *opt) {
  bf16fp32_status st = BF16FP32_OK;
  cudaStream_t stream = NULL;
  bool own_stream = false;
  rotation rot = {0};
  uint16_t *xh = NULL, *wh = NULL;
  float *outh = NULL;
  cudaEvent_t *ev = NULL;
  int events = 0;
  cudaGraphExec_t *exec = NULL;
  double *samples = NULL;
  bf16fp32__check_ref ref = {0};
  int calls = opt->calls_per_graph > 0 ? opt->calls_per_graph : 1;
  const int replays = opt->replays > 0 ? opt->replays : 1;
  const size_t xn = (size_t)m * (size_t)k, wn = (size_t)n * (size_t)k, on = (size_t)m * (size_t)n;

  BF16FP32__TRY(need_device());
  rot.xa = align_up(xn * 2);
  rot.wa = align_up(wn * 2);
  rot.per = rot.xa + rot.wa + align_up(on * 4);
  calls = bf16fp32__device_graph_calls(rot.per, calls);
  /* Enough copies for rotate_bytes, at least two (a call never follows one on the same
   * operands), at most one per call. */
  size_t copies = (opt->rotate_bytes + rot.per - 1) / rot.per;
  if (copies < 2) copies = 2;
  if (copies > (size_t)calls) copies = (size_t)calls;
  rot.copies = (int)copies;

  xh = (uint16_t *)malloc(xn * 2);
  wh = (uint16_t *)malloc(wn * 2);
  outh = (float *)malloc(on * 4);
  exec = (cudaGraphExec_t *)calloc((size_t)count + 1, sizeof *exec);
  ev = (cudaEvent_t *)calloc(2 * (size_t)count + 1, sizeof *ev);
  samples = (double *)calloc((size_t)count * (size_t)replays + 1, sizeof *samples);
  if (!xh || !wh || !outh || !exec || !ev || !samples) {
    st = bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "measure: host buffers for %lldx%lldx%lld",
                        (long long)m, (long long)n, (long long)k);
    goto cleanup;
  }
  bf16fp32__fill_random_bf16(xh, xn, opt->seed);
  bf16fp32__fill_random_bf16(wh, wn, opt->seed + 1);
  BF16FP32__TRY(bf16fp32__check_ref_init(&ref, m, n, k, xh, k, wh, k, opt->check_rows, opt->seed));

  if (opt->stream) {
    stream = (cudaStream_t)opt->stream;
  } else {
    BF16FP32__CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    own_stream = true;
  }
  BF16FP32__CUDA_TRY(cudaMalloc((void **)&rot.base, rot.per * copies));
  /* Every copy holds the same random data, but for the signs of the flipped ones: the cache
   * sees distinct addresses, the check needs one oracle. */
  BF16FP32__CUDA_TRY(cudaMemcpyAsync(rot_x(&rot, 0), xh, xn * 2, cudaMemcpyHostToDevice, stream));
  BF16FP32__CUDA_TRY(cudaMemcpyAsync(rot_w(&rot, 0), wh, wn * 2, cudaMemcpyHostToDevice, stream));
  for (int i = 1; i < rot.copies; i++) {
    BF16FP32__CUDA_TRY(cudaMemcpyAsync(rot_x(&rot, i), rot_x(&rot, 0), xn * 2,
                                       cudaMemcpyDeviceToDevice, stream));
    BF16FP32__CUDA_TRY(cudaMemcpyAsync(rot_w(&rot, i), rot_w(&rot, 0), wn * 2,
                                       cudaMemcpyDeviceToDevice, stream));
  }
  /* The flipped copies, through the host buffers once copy 0's uploads are done (the oracle
   * came from them already, and nothing reads them again). */
  BF16FP32__CUDA_TRY(cudaStreamSynchronize(stream));
  bf16fp32__flipped_copies(copies, &rot.x_flipped, &rot.w_flipped);
  if (rot.x_flipped) {
    bf16fp32__flip_signs(xh, xn);
    BF16FP32__CUDA_TRY(cudaMemcpyAsync(rot_x(&rot, (int)rot.x_flipped), xh, xn * 2,
                                       cudaMemcpyHostToDevice, stream));
  }
  if (rot.w_flipped) {
    bf16fp32__flip_signs(wh, wn);
    BF16FP32__CUDA_TRY(cudaMemcpyAsync(rot_w(&rot, (int)rot.w_flipped), wh, wn * 2,
                                       cudaMemcpyHostToDevice, stream));
  }
  BF16FP32__CUDA_TRY(cudaStreamSynchronize(stream));
  for (int i = 0; i < 2 * count; i++) {
    BF16FP32__CUDA_TRY(cudaEventCreate(&ev[i]));
    events++;
  }

  for (int c = 0; c < count; c++)
    BF16FP32__TRY(prepare_candidate(&cands[c], &rot, stream, m, n, k, calls, outh, &ref, &exec[c]));

  BF16FP32__CUDA_TRY(time_rounds(exec, count, opt->warmup, replays, ev, stream, samples));
  for (int c = 0; c < count; c++) {
    if (!exec[c]) continue;
    bf16fp32__candidate_times(&cands[c], samples + (size_t)c * (size_t)replays, replays, 1e3,
                              calls);
    bf16fp32__candidate_rotated(&cands[c], BF16FP32_DEVICE, rot.per * copies);
  }

cleanup:
  if (exec)
    for (int c = 0; c < count; c++)
      if (exec[c]) cudaGraphExecDestroy(exec[c]);
  for (int i = 0; i < events; i++) cudaEventDestroy(ev[i]);
  if (stream && st == BF16FP32_OK) (void)cudaStreamSynchronize(stream);
  if (own_stream) cudaStreamDestroy(stream);
  if (rot.base) cudaFree(rot.base);
  bf16fp32__check_ref_free(&ref);
  free(xh);
  free(wh);
  free(outh);
  free(exec);
  free(ev);
  free(samples);
  return st;
}

bf16fp32_status bf16fp32__time_graphs_device(bf16fp32__graph_job *jobs, int count, int warmup,
                                             int replays, void *caller_stream) {
  bf16fp32_status st = BF16FP32_OK;
  cudaStream_t stream = (cudaStream_t)caller_stream, own = NULL;
  cudaGraphExec_t *exec = NULL;
  cudaEvent_t *ev = NULL;
  int events = 0;
  double *samples = NULL;
  if (replays < 1) replays = 1;

  BF16FP32__TRY(need_device());
  exec = (cudaGraphExec_t *)calloc((size_t)count + 1, sizeof *exec);
  ev = (cudaEvent_t *)calloc(2 * (size_t)count + 1, sizeof *ev);
  samples = (double *)calloc((size_t)count * (size_t)replays + 1, sizeof *samples);
  if (!exec || !ev || !samples) {
    st = bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "time_graphs: %d jobs", count);
    goto cleanup;
  }
  if (!stream) {
    BF16FP32__CUDA_TRY(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking));
    stream = own;
  }
  for (int i = 0; i < 2 * count; i++) {
    BF16FP32__CUDA_TRY(cudaEventCreate(&ev[i]));
    events++;
  }

  for (int j = 0; j < count; j++) {
    bf16fp32__graph_job *jb = &jobs[j];
    cudaGraph_t graph = NULL;
    bf16fp32_status s = BF16FP32_OK;
    if (jb->prepare) s = jb->prepare(jb->user, stream);
    if (s == BF16FP32_OK) {
      /* thread-local, as above */
      cudaError_t e = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
      if (e != cudaSuccess) {
        s = job_cuda_fail(jb, e, "cudaStreamBeginCapture");
      } else {
        s = jb->record(jb->user, stream);
        e = cudaStreamEndCapture(stream, &graph); /* always: leaves capture mode */
        if (s == BF16FP32_OK && e != cudaSuccess)
          s = job_cuda_fail(jb, e, "cudaStreamEndCapture");
        if (s != BF16FP32_OK) (void)cudaGetLastError();
      }
    }
    if (s == BF16FP32_OK && jb->min_nodes > 0) {
      int short_of = 0;
      cudaError_t e = graph_short_of(graph, (size_t)jb->min_nodes, &short_of, jb->detail,
                                     sizeof jb->detail);
      if (e != cudaSuccess) s = job_cuda_fail(jb, e, "cudaGraphGetNodes");
      else if (short_of) s = bf16fp32__fail(BF16FP32_INTERNAL, "time_graphs: %s", jb->detail);
    }
    if (s == BF16FP32_OK) {
      cudaError_t e = cudaGraphInstantiate(&exec[j], graph, 0);
      if (e != cudaSuccess) {
        exec[j] = NULL;
        s = job_cuda_fail(jb, e, "cudaGraphInstantiate");
      }
    }
    if (graph) cudaGraphDestroy(graph);
    if (s == BF16FP32_OK && jb->arm) s = jb->arm(jb->user, stream);
    if (s == BF16FP32_OK) {
      cudaError_t e = cudaGraphLaunch(exec[j], stream);
      if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
      if (e != cudaSuccess) s = job_cuda_fail(jb, e, "cudaGraphLaunch (first replay)");
    }
    if (s == BF16FP32_OK && jb->check) s = jb->check(jb->user, stream);
    if (s != BF16FP32_OK) {
      jb->status = s;
      if (exec[j]) cudaGraphExecDestroy(exec[j]);
      exec[j] = NULL;
      if (s == BF16FP32_CUDA_FATAL) {
        st = s;
        goto cleanup;
      }
    }
  }

  BF16FP32__CUDA_TRY(time_rounds(exec, count, warmup, replays, ev, stream, samples));
  for (int j = 0; j < count; j++)
    if (exec[j]) jobs[j].median_ms = bf16fp32__median(samples + (size_t)j * (size_t)replays, replays);

cleanup:
  if (exec)
    for (int j = 0; j < count; j++)
      if (exec[j]) cudaGraphExecDestroy(exec[j]);
  for (int i = 0; i < events; i++) cudaEventDestroy(ev[i]);
  if (own) cudaStreamDestroy(own);
  if (st != BF16FP32_OK)
    for (int j = 0; j < count; j++)
      if (jobs[j].status == BF16FP32_OK && jobs[j].median_ms < 0) jobs[j].status = st;
  free(exec);
  free(ev);
  free(samples);
  return st;
}
