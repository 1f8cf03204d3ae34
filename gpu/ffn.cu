// Launchers of gpu/ffn.cuh for the three storage formats and four activations.
#include "gpu/elementwise.cuh"  // with_activation: the f32 activations
#include "gpu/ffn.cuh"
#include "gpu/launch_ffn.h"

namespace lmo::gpu {

cudaError_t launch_ffn(Activation act, Storage s, const void* x, const void* up, const void* v,
                       const void* b1, const void* w2, const void* b2, float* h, void* y,
                       int64_t tokens, int64_t d, int64_t d_ff, cudaStream_t stream) {
  if (tokens == 0) return cudaSuccess;
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    const auto* xs = static_cast<const T*>(x);
    const auto* ups = static_cast<const T*>(up);
    const cudaError_t hidden = with_activation(act, [&](auto f) {
      using F = decltype(f);
      if (v) {
        ffn_hidden_kernel<T, F, true><<<element_grid(tokens * d_ff), kThreads, 0, stream>>>(
            xs, ups, static_cast<const T*>(v), nullptr, h, tokens, d, d_ff, f);
      } else {
        ffn_hidden_kernel<T, F, false><<<element_grid(tokens * d_ff), kThreads, 0, stream>>>(
            xs, ups, nullptr, static_cast<const T*>(b1), h, tokens, d, d_ff, f);
      }
      return cudaGetLastError();
    });
    if (hidden != cudaSuccess) return hidden;
    project_kernel<float, T, T><<<element_grid(tokens * d), kThreads, 0, stream>>>(
        h, static_cast<const T*>(w2), static_cast<const T*>(b2), static_cast<T*>(y), tokens, d_ff,
        d);
    return cudaGetLastError();
  });
}

cudaError_t launch_project_f32(const float* a, const float* w, float* out, int64_t rows, int64_t n,
                               int64_t cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return cudaSuccess;
  project_kernel<float, float, float>
      <<<element_grid(rows * cols), kThreads, 0, stream>>>(a, w, nullptr, out, rows, n, cols);
  return cudaGetLastError();
}

cudaError_t launch_add_f32(const float* a, const float* b, float* out, int64_t n,
                           cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  add_f32_kernel<<<element_grid(n), kThreads, 0, stream>>>(a, b, out, n);
  return cudaGetLastError();
}

cudaError_t launch_convert(Storage from, const void* in, Storage to, void* out, int64_t n,
                           cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return with_storage(from, [&](auto from_tag) {
    using I = decltype(from_tag);
    return with_storage(to, [&](auto to_tag) {
      using O = decltype(to_tag);
      convert_kernel<I, O><<<element_grid(n), kThreads, 0, stream>>>(static_cast<const I*>(in),
                                                                     static_cast<O*>(out), n);
      return cudaGetLastError();
    });
  });
}

}  // namespace lmo::gpu
