// Launcher of gpu/fused_add_rmsnorm.cuh for the three storage formats.
#include "gpu/fused_add_rmsnorm.cuh"
#include "gpu/launch.h"

namespace lmo::gpu {

cudaError_t launch_fused_add_rmsnorm(Storage s, const void* x, const void* residual,
                                     const void* gamma, void* residual_out, void* y, int64_t rows,
                                     int64_t d, float eps, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    fused_add_rmsnorm_kernel<T><<<row_grid(rows), kThreads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<const T*>(residual), static_cast<const T*>(gamma),
        static_cast<T*>(residual_out), static_cast<T*>(y), rows, d, eps);
    return cudaGetLastError();
  });
}

}  // namespace lmo::gpu
