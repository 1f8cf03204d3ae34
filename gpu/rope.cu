// Launchers of gpu/rope.cuh for the three storage formats (and, for the table, its own format).
#include "gpu/launch.h"
#include "gpu/rope.cuh"

namespace lmo::gpu {

cudaError_t launch_rope(Storage s, const void* x, const int64_t* positions, const double* inv_freq,
                        double cos_sin_factor, void* y, int64_t tokens, int64_t heads,
                        int64_t head_dim, int64_t rotary_dims, RopeLayout layout,
                        cudaStream_t stream) {
  if (tokens == 0) return cudaSuccess;
  const RopeShape sh{tokens, heads, head_dim, rotary_dims, layout == RopeLayout::interleaved};
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    rope_angles_kernel<T><<<row_grid(tokens), kThreads, 0, stream>>>(
        static_cast<const T*>(x), positions, inv_freq, cos_sin_factor, static_cast<T*>(y), sh);
    return cudaGetLastError();
  });
}

cudaError_t launch_rope_table(Storage s, const void* x, Storage table_storage, const void* cos_sin,
                              void* y, int64_t tokens, int64_t heads, int64_t head_dim,
                              int64_t rotary_dims, RopeLayout layout, cudaStream_t stream) {
  if (tokens == 0) return cudaSuccess;
  const RopeShape sh{tokens, heads, head_dim, rotary_dims, layout == RopeLayout::interleaved};
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    return with_storage(table_storage, [&](auto table_tag) {
      using TableT = decltype(table_tag);
      rope_table_kernel<T, TableT><<<row_grid(tokens), kThreads, 0, stream>>>(
          static_cast<const T*>(x), static_cast<const TableT*>(cos_sin), static_cast<T*>(y), sh);
      return cudaGetLastError();
    });
  });
}

}  // namespace lmo::gpu
