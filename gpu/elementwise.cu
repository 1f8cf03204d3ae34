// Launchers of gpu/elementwise.cuh for the three storage formats and four activations.
#include "gpu/elementwise.cuh"
#include "gpu/launch.h"

namespace lmo::gpu {
namespace {

template <class F>
cudaError_t launch_map(Storage s, const void* x, void* y, int64_t n, F f, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    map_kernel<T, F><<<element_grid(n), kThreads, 0, stream>>>(static_cast<const T*>(x),
                                                               static_cast<T*>(y), n, f);
    return cudaGetLastError();
  });
}

}  // namespace

cudaError_t launch_softcap(Storage s, const void* z, void* y, int64_t n, float cap,
                           cudaStream_t stream) {
  return launch_map(s, z, y, n, f32::SoftcapFn<>{cap}, stream);
}

cudaError_t launch_activation(Activation act, Storage s, const void* x, void* y, int64_t n,
                              cudaStream_t stream) {
  return with_activation(act, [&](auto f) { return launch_map(s, x, y, n, f, stream); });
}

cudaError_t launch_glu_gate(Activation act, Storage s, const void* gate, const void* up, void* h,
                            int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return with_activation(act, [&](auto f) {
    using F = decltype(f);
    return with_storage(s, [&](auto tag) {
      using T = decltype(tag);
      gate_kernel<T, F><<<element_grid(n), kThreads, 0, stream>>>(
          static_cast<const T*>(gate), static_cast<const T*>(up), static_cast<T*>(h), n, f);
      return cudaGetLastError();
    });
  });
}

}  // namespace lmo::gpu
