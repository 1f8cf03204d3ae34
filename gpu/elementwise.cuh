// F06 activations, F05 GLU gates and F14 soft-cap: elementwise kernels over n values
// (grid-stride), in f32: each stored value widened exactly to f32, the function of
// gpu/activation_f32.h evaluated in f32 with CUDA's library functions (gpu/f32_math.h; each
// bound at its call), the result rounded once to the storage. A gate multiplies the activation's
// f32 value by the up value in f32 (one more rounding), as fast/elementwise.cc does. The
// rounding order is the naive f32 run's: the gpu backend declares `strict` for these
// (oracle/backends/gpu_recipes.cc), and the host test gpu_activation_math_test judges the same
// functors on the built-in cases under it.
#pragma once

#include "gpu/activation_f32.h"
#include "gpu/common.cuh"

namespace lmo::gpu {

// Calls fn(F{}) with F the f32 functor of activation act (gpu/activation_f32.h).
template <class Fn>
cudaError_t with_activation(Activation act, Fn fn) {
  switch (act) {
    case Activation::relu:
      return fn(f32::ReluFn<>{});
    case Activation::gelu:
      return fn(f32::GeluFn<>{});
    case Activation::gelu_tanh:
      return fn(f32::GeluTanhFn<>{});
    case Activation::silu:
      return fn(f32::SiluFn<>{});
  }
  return cudaErrorInvalidValue;
}

// y[i] = f(x[i]).
template <class T, class F>
__global__ void __launch_bounds__(kThreads)
    map_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += step) {
    y[i] = store_f32<T>(f(widen_f32(x[i])));
  }
}

// h[i] = f(gate[i])·up[i]: the f32 activation times the up value, rounded once in f32.
template <class T, class F>
__global__ void __launch_bounds__(kThreads)
    gate_kernel(const T* __restrict__ gate, const T* __restrict__ up, T* __restrict__ h, int64_t n,
                F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += step) {
    h[i] = store_f32<T>(f32::mul(f(widen_f32(gate[i])), widen_f32(up[i])));
  }
}

}  // namespace lmo::gpu
