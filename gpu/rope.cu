// Launchers of gpu/rope.cuh for the three storage formats (and, for the table, its own format).
#include "gpu/launch.h"
#include "gpu/rope.cuh"

namespace lmo::gpu {

cudaError_t launch_rope(Storage s, const void* x, const int64_t* positions, const double* turns_hi,
                        const double* turns_lo, double cos_sin_factor, void* y, const RopeShape& sh,
                        cudaStream_t stream) {
  if (sh.tokens == 0) return cudaSuccess;
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    rope_angles_kernel<T><<<row_grid(sh.tokens), kThreads, 0, stream>>>(
        static_cast<const T*>(x), positions, turns_hi, turns_lo, cos_sin_factor, static_cast<T*>(y),
        sh);
    return cudaGetLastError();
  });
}

cudaError_t launch_rope_table(Storage s, const void* x, Storage table, const void* cos_sin, void* y,
                              const RopeShape& sh, cudaStream_t stream) {
  if (sh.tokens == 0) return cudaSuccess;
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    return with_storage(table, [&](auto table_tag) {
      using TableT = decltype(table_tag);
      rope_table_kernel<T, TableT><<<row_grid(sh.tokens), kThreads, 0, stream>>>(
          static_cast<const T*>(x), static_cast<const TableT*>(cos_sin), static_cast<T*>(y), sh);
      return cudaGetLastError();
    });
  });
}

}  // namespace lmo::gpu
