// Launchers of gpu/norms.cuh for the three storage formats.
#include "gpu/launch.h"
#include "gpu/norms.cuh"

namespace lmo::gpu {

cudaError_t launch_rmsnorm(Storage s, const void* x, const void* gamma, void* y, int64_t rows,
                           int64_t d, float eps, bool one_plus_gamma, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    rmsnorm_kernel<T><<<row_grid(rows), kThreads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<const T*>(gamma), static_cast<T*>(y), rows, d, eps,
        one_plus_gamma);
    return cudaGetLastError();
  });
}

cudaError_t launch_layernorm(Storage s, const void* x, const void* gamma, const void* beta, void* y,
                             int64_t rows, int64_t d, float eps, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    layernorm_kernel<T><<<row_grid(rows), kThreads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<const T*>(gamma), static_cast<const T*>(beta),
        static_cast<T*>(y), rows, d, eps);
    return cudaGetLastError();
  });
}

}  // namespace lmo::gpu
