// Launcher of gpu/shaw_logits.cuh for the three storage formats.
#include <cstdint>

#include "gpu/launch_positional.h"
#include "gpu/shaw_logits.cuh"

namespace lmo::gpu {

cudaError_t launch_shaw_logits(Storage s, const void* q, const void* k, const void* rel_k, void* e,
                               int64_t n_q, int64_t n_k, int64_t d_k, int64_t max_relative_position,
                               cudaStream_t stream) {
  if (n_q == 0 || n_k == 0) return cudaSuccess;
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    shaw_logits_kernel<T><<<element_grid(n_q * n_k), kThreads, 0, stream>>>(
        static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(rel_k),
        static_cast<T*>(e), n_q, n_k, d_k, max_relative_position);
    return cudaGetLastError();
  });
}

}  // namespace lmo::gpu
