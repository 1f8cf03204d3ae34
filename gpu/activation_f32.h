// The F06 activations in f32, as __host__ __device__ functors, for the f32 kernels (the GLU
// experts of gpu/moe_layer.cuh); a host test (tests/kernels/gpu_moe_layer_math_test.cc) checks
// them against the reference. Each is the reference's stable form (reference/activations.h), as
// gpu/activation_math.h's double functors are, with every f32 operation rounded once
// (gpu/f32_ops.h). Plain C++ when not compiled by nvcc; no CUDA header.
//
// The library functions and their documented bounds on the device (CUDA C++ Programming Guide,
// "Mathematical Functions", single precision, nvcc's defaults -prec-div=true -ftz=false, no
// -use_fast_math): expf ≤ 2 ulp and erfcf ≤ 4 ulp over the full range; the f32 division and the
// other operations are IEEE (0 ulp). On the host the C library's expf and erfcf (glibc: ≤ 1 and
// ≤ 2 ulp) stand in for them.
#pragma once

#include <cmath>

#include "gpu/f32_ops.h"

namespace lmo::gpu::f32 {

// ReLU: x for x > 0, NaN stays NaN, everything else (−0 included) +0.
struct ReluFn {
  LMO_HD float operator()(float x) const { return x > 0.0f || x != x ? x : 0.0f; }
};

// The reference's stable sigmoid: 1/(1 + e^{−x}) for x ≥ 0 (and NaN), e^{x}/(1 + e^{x}) below,
// so that e never overflows.
LMO_HD inline float sigmoid(float x) {
  if (!(x < 0.0f)) return div(1.0f, add(1.0f, ::expf(-x)));  // expf: ≤ 2 ulp (CUDA)
  const float e = ::expf(x);                                 // expf: ≤ 2 ulp (CUDA)
  return div(e, add(1.0f, e));
}

// GELU(x) = x/2·erfc(−x/√2).
struct GeluFn {
  LMO_HD float operator()(float x) const {
    constexpr float kSqrt2 = 1.41421356f;                // √2 rounded to f32
    return mul(mul(x, 0.5f), ::erfcf(-div(x, kSqrt2)));  // erfcf: ≤ 4 ulp (CUDA)
  }
};

// GELU-tanh(x) = x·sigmoid(2u), u = √(2/π)·(x + 0.044715·x³).
struct GeluTanhFn {
  LMO_HD float operator()(float x) const {
    constexpr float kSqrt2OverPi = 0.797884561f;
    const float u = mul(kSqrt2OverPi, add(x, mul(0.044715f, mul(mul(x, x), x))));
    return mul(x, sigmoid(mul(2.0f, u)));
  }
};

struct SiluFn {
  LMO_HD float operator()(float x) const { return mul(x, sigmoid(x)); }
};

}  // namespace lmo::gpu::f32
