/* The registry: every backend, in fallback order. Adding a backend touches its folder, one line
 * here and (for CUDA code) one in CMakeLists.txt. Data only, so that a test can link its own
 * registry of fake backends in place of this one. */
#include "internal.h"

#define NOT_BUILT_CUDA "not built: the CUDA toolkit was not found when this library was configured"

#ifdef BF16FP32_HAVE_CUDA
extern const bf16fp32__backend bf16fp32__backend_smallm;
extern const bf16fp32__backend bf16fp32__backend_cublas;
extern const bf16fp32__backend bf16fp32__backend_cublaslt;
extern const bf16fp32__backend bf16fp32__backend_fp32;
#define CUDA_BACKEND(sym) &sym, NULL
#else
#define CUDA_BACKEND(sym) NULL, NOT_BUILT_CUDA
#endif
extern const bf16fp32__backend bf16fp32__backend_cpu_simd;
extern const bf16fp32__backend bf16fp32__backend_cpu_ref;

const bf16fp32__registry_entry bf16fp32__registry[] = {
    {"smallm", BF16FP32_DEVICE, CUDA_BACKEND(bf16fp32__backend_smallm), true, true, true},
    {"cublas", BF16FP32_DEVICE, CUDA_BACKEND(bf16fp32__backend_cublas), false, false, false},
    {"cublaslt", BF16FP32_DEVICE, CUDA_BACKEND(bf16fp32__backend_cublaslt), false, false, false},
    {"fp32", BF16FP32_DEVICE, CUDA_BACKEND(bf16fp32__backend_fp32), false, false, false},
    {"cpu-simd", BF16FP32_HOST, &bf16fp32__backend_cpu_simd, NULL, false, true, false},
    {"cpu-ref", BF16FP32_HOST, &bf16fp32__backend_cpu_ref, NULL, false, true, false},
};

const int bf16fp32__registry_count = (int)(sizeof bf16fp32__registry / sizeof bf16fp32__registry[0]);
