// The F06 activations in double, as __host__ __device__ functors: the FFN kernels (gpu/ffn.cuh)
// run them per element, and a host test (tests/kernels/gpu_ffn_math_test.cc) checks them against
// the reference on a machine without a device. Each is the reference's stable form
// (reference/activations.h) evaluated in double (CUDA's exp, erfc: ≤ 1 and 5 double ulps), so that
// the hidden value, rounded once to f32, is the correctly rounded one but within ~2^-45 of a
// midpoint. The elementwise kernels (gpu/elementwise.cuh) compute in f32 instead
// (gpu/activation_f32.h). Plain C++ when not compiled by nvcc; no CUDA header.
#pragma once

#include <cmath>

#ifdef __CUDACC__
#define LMO_HD __host__ __device__
#else
#define LMO_HD
#endif

namespace lmo::gpu {

// ReLU: x for x > 0, NaN stays NaN, everything else (−0 included) +0.
struct ReluFn {
  LMO_HD double operator()(double x) const { return x > 0.0 || std::isnan(x) ? x : 0.0; }
};

// The reference's stable sigmoid: 1/(1 + e^{−x}) for x ≥ 0 (and NaN), e^{x}/(1 + e^{x}) below.
LMO_HD inline double sigmoid(double x) {
  if (!(x < 0.0)) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}

// GELU(x) = x/2·erfc(−x/√2).
struct GeluFn {
  LMO_HD double operator()(double x) const {
    constexpr double kSqrt2 = 1.4142135623730951;  // √2 rounded to double
    return (x / 2.0) * std::erfc(-(x / kSqrt2));
  }
};

// GELU-tanh(x) = x·sigmoid(2u), u = √(2/π)·(x + 0.044715·x³).
struct GeluTanhFn {
  LMO_HD double operator()(double x) const {
    constexpr double kSqrt2OverPi = 0.7978845608028654;
    const double u = kSqrt2OverPi * (x + 0.044715 * ((x * x) * x));
    return x * sigmoid(2.0 * u);
  }
};

struct SiluFn {
  LMO_HD double operator()(double x) const { return x * sigmoid(x); }
};

}  // namespace lmo::gpu
