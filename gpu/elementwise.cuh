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

#include "gpu/common.cuh"

namespace lmo::gpu {

// ReLU: x for x > 0, NaN stays NaN, everything else (−0 included) +0.
struct ReluFn {
  __device__ double operator()(double x) const { return x > 0.0 || isnan(x) ? x : 0.0; }
};

// The reference's stable sigmoid: 1/(1 + e^{−x}) for x ≥ 0 (and NaN), e^{x}/(1 + e^{x}) below.
__device__ __forceinline__ double sigmoid(double x) {
  if (!(x < 0.0)) return 1.0 / (1.0 + exp(-x));
  const double e = exp(x);
  return e / (1.0 + e);
}

// GELU(x) = x/2·erfc(−x/√2).
struct GeluFn {
  __device__ double operator()(double x) const {
    constexpr double kSqrt2 = 1.4142135623730951;  // √2 rounded to double
    return (x / 2.0) * erfc(-(x / kSqrt2));
  }
};

// GELU-tanh(x) = x·sigmoid(2u), u = √(2/π)·(x + 0.044715·x³).
struct GeluTanhFn {
  __device__ double operator()(double x) const {
    constexpr double kSqrt2OverPi = 0.7978845608028654;
    const double u = kSqrt2OverPi * (x + 0.044715 * ((x * x) * x));
    return x * sigmoid(2.0 * u);
  }
};

struct SiluFn {
  __device__ double operator()(double x) const { return x * sigmoid(x); }
};

// Soft-cap: cap·tanh(z/cap). In double z/cap stays normal for every f32 z and cap (≥ 2^-277).
struct SoftcapFn {
  double cap;
  __device__ double operator()(double z) const { return cap * tanh(z / cap); }
};

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
