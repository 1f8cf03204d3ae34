// F06 activations, F05 GLU gates and F14 soft-cap: elementwise kernels over n values
// (grid-stride), each function evaluated in double in the reference's stable form
// (reference/activations.h, reference/softmax.h) and rounded once to f32, then to the storage.
//
// Why double and not the f32 algorithms of fast/math-inl.h: CUDA's f32 expf/erfcf/tanhf carry
// up to 2–4 ulp (CUDA Programming Guide, "Mathematical Functions": expf 2, erfcf 4, tanhf 2),
// and GELU's argument −x/√2 rounded in f32 is amplified by erfc's condition number ≈ x² (the
// gelu policy's arg_error); sigmoid would need exp, a sum, a quotient and a product within 3
// ulp. In double (CUDA's exp, erfc, tanh: ≤ 5 double ulps) the function and its argument are
// exact to ~2^-45 relative for every x whose f32 result is not zero, so each f32 result is the
// correctly rounded value except within that distance of a midpoint: inside every ulp policy
// with room to spare. Special values (±0, ±inf, NaN) follow from IEEE double arithmetic in the
// reference's order: GELU(−inf) = −inf·erfc(inf) = NaN as the reference computes it.
#pragma once

#include "gpu/activation_math.h"
#include "gpu/common.cuh"

namespace lmo::gpu {

// Soft-cap: cap·tanh(z/cap). In double z/cap stays normal for every f32 z and cap (≥ 2^-277).
struct SoftcapFn {
  double cap;
  __device__ double operator()(double z) const { return cap * tanh(z / cap); }
};

// Calls fn(F{}) with F the functor of activation act (gpu/activation_math.h).
template <class Fn>
cudaError_t with_activation(Activation act, Fn fn) {
  switch (act) {
    case Activation::relu:
      return fn(ReluFn{});
    case Activation::gelu:
      return fn(GeluFn{});
    case Activation::gelu_tanh:
      return fn(GeluTanhFn{});
    case Activation::silu:
      return fn(SiluFn{});
  }
  return cudaErrorInvalidValue;
}

// y[i] = f(x[i]).
template <class T, class F>
__global__ void __launch_bounds__(kThreads)
    map_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += step) {
    y[i] = narrow<T>(f(widen(x[i])));
  }
}

// h[i] = f(gate[i])·up[i], the product of the double activation and the exact up value rounded
// once to f32 (for ReGLU exactly the correctly rounded f32 product: two f32 factors multiply
// exactly in double).
template <class T, class F>
__global__ void __launch_bounds__(kThreads)
    gate_kernel(const T* __restrict__ gate, const T* __restrict__ up, T* __restrict__ h, int64_t n,
                F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += step) {
    h[i] = narrow<T>(f(widen(gate[i])) * widen(up[i]));
  }
}

}  // namespace lmo::gpu
