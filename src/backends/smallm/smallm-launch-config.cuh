/* What the smallm kernels share at load and launch: the shared-memory limit raised at module
 * load; grid and block from the config (the stream kernel's token blocks along z), the K-split
 * cluster along x, and the programmatic-dependent-launch attribute when asked for; the argument
 * fields their launches fill alike. */
#ifndef BF16FP32_SMALLM_LAUNCH_CONFIG_CUH
#define BF16FP32_SMALLM_LAUNCH_CONFIG_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "smallm-config.h"
#include "smallm-trace.cuh"

/* attr must outlive the launch. A cluster of the K split's S blocks, or of the wide or stream
 * kernel's groups (bf16fp32__smallm_use_groups, bf16fp32__smallm_use_stream), where that is more
 * than one; none for the fold kernel. */
static inline cudaLaunchConfig_t bf16fp32__smallm_launch_config(const bf16fp32__smallm_config *c,
                                                                size_t smem, cudaStream_t stream,
                                                                int use_pdl,
                                                                cudaLaunchAttribute (&attr)[2]) {
  const int ranks = c->fold ? 1 /* one block sums all slices */
                            : c->split.ksplit *
                                  (c->wide ? c->wide_groups : c->stream ? c->stream_groups : 1);
  cudaLaunchConfig_t cfg = {};
  unsigned na = 0;
  const int tblocks = c->stream && c->stream_tblocks > 1 ? c->stream_tblocks : 1;
  cfg.gridDim = dim3(static_cast<unsigned>(c->grid_x), static_cast<unsigned>(c->grid_y),
                     static_cast<unsigned>(tblocks));
  cfg.blockDim = dim3(static_cast<unsigned>(c->threads), 1, 1);
  cfg.dynamicSmemBytes = smem + BF16FP32__SMALLM_TRACE_SMEM; /* 0 but in --trace probe builds */
  cfg.stream = stream;
  if (ranks > 1) {
    attr[na].id = cudaLaunchAttributeClusterDimension;
    attr[na].val.clusterDim.x = static_cast<unsigned>(ranks);
    attr[na].val.clusterDim.y = 1;
    attr[na].val.clusterDim.z = 1;
    na++;
  }
  if (use_pdl) {
    attr[na].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[na].val.programmaticStreamSerializationAllowed = 1;
    na++;
  }
  cfg.numAttrs = na;
  cfg.attrs = attr;
  return cfg;
}

/* The argument fields the decode, tiled, share and stream kernels share, by name: the call's M,
 * a block's rows, the split (K slices, each slice's bounds, warp groups) and the padded token
 * count. One fill for all four launches, so that their blocks place themselves alike. */
template <class A>
static inline void bf16fp32__smallm_fill_split(A &a, const bf16fp32__smallm_config *c, int64_t m,
                                               int64_t k, int rows) {
  a.m = static_cast<int>(m);
  a.rows = rows, a.ksplit = c->split.ksplit, a.kwarps = c->split.kwarps;
  bf16fp32__smallm_fill_slices(k, a.ksplit, &a.slices);
  a.mpad = c->mpad;
}

/* ... and the operands of those that read x and w by address (not the stream kernel's maps). */
template <class A>
static inline void bf16fp32__smallm_fill_operands(A &a, const uint16_t *x, int64_t ldx,
                                                  const uint16_t *w, int64_t ldw, float *out,
                                                  int64_t ldo) {
  a.x = x, a.w = w, a.out = out;
  a.ldx = ldx, a.ldw = ldw, a.ldo = ldo;
}

/* Raises each kernel's dynamic shared-memory limit to smem_limit, at module load so that no
 * launch (graph capture included) does it later. The first error, else cudaSuccess. */
template <class... Kernels>
static inline cudaError_t bf16fp32__smallm_allow_smem(size_t smem_limit, Kernels... kernels) {
  const void *const all[] = {reinterpret_cast<const void *>(kernels)...};
  for (const void *k : all) {
    cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem_limit));
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

#endif
