// The fp32 backend's conversion kernel and its extern "C" launcher (see fp32-upcast.h).
#include "fp32-upcast.h"

// Rows [0, m) come from x, rows [m, m + n) from w; blockIdx.y walks rows, x-threads walk columns.
__global__ void bf16fp32_upcast_rows(const uint16_t *__restrict__ x, long long ldx, long long m,
                                     const uint16_t *__restrict__ w, long long ldw, long long rows,
                                     long long k, float *__restrict__ xf, float *__restrict__ wf) {
  for (long long r = blockIdx.y; r < rows; r += gridDim.y) {
    const uint16_t *src = r < m ? x + r * ldx : w + (r - m) * ldw;
    float *dst = r < m ? xf + r * k : wf + (r - m) * k;
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < k;
         j += (long long)gridDim.x * blockDim.x)
      dst[j] = __uint_as_float((unsigned)src[j] << 16);
  }
}

extern "C" cudaError_t bf16fp32__fp32_upcast(const uint16_t *x, int64_t ldx, int64_t m,
                                             const uint16_t *w, int64_t ldw, int64_t n, int64_t k,
                                             float *xf, float *wf, cudaStream_t stream) {
  const int threads = 256;
  const long long rows = (long long)m + n;
  long long bx = (k + threads - 1) / threads;
  if (bx > 64) bx = 64; // long rows: threads loop over columns
  long long by = rows < 65535 ? rows : 65535;  // gridDim.y limit; blocks loop over rows
  long long ldx_ = ldx, m_ = m, ldw_ = ldw, k_ = k;
  void *args[] = {(void *)&x, &ldx_, &m_, (void *)&w, &ldw_, (void *)&rows, &k_, &xf, &wf};
  // cudaLaunchKernel reports this launch's own status (a <<<>>> launch needs cudaGetLastError,
  // which would also pick up an unrelated earlier error).
  return cudaLaunchKernel((const void *)bf16fp32_upcast_rows, dim3((unsigned)bx, (unsigned)by),
                          dim3(threads), args, 0, stream);
}

extern "C" cudaError_t bf16fp32__fp32_upcast_check(void) {
  cudaFuncAttributes attr;
  return cudaFuncGetAttributes(&attr, bf16fp32_upcast_rows);
}
