// The F06 activations and the F14 soft-cap in f32, as __host__ __device__ functors: the
// elementwise kernels (gpu/elementwise.cuh: activations, GLU gates, soft-cap) and the GLU experts
// of gpu/moe_layer.cuh run them per element, and host tests (tests/kernels/
// gpu_activation_math_test.cc, gpu_moe_layer_math_test.cc) judge them against the reference.
// Plain C++ when not compiled by nvcc; no CUDA header.
//
// Each takes its argument widened exactly to f32 and evaluates the reference's function
// (reference/activations.h, reference/softmax.h) in the cancellation-free form fast/math-inl.h
// uses, every f32 operation rounded once (gpu/f32_ops.h), its library function from L
// (gpu/f32_math.h, CUDA's in the kernels) with the bound written at the call. A function value is
// CUDA's single-precision one where the op's policy holds with CUDA's documented bound, and else
// the double function's value rounded once to f32 (½ ulp and a hair): whether the policy holds
// is what the host test checks with a library that errs by the whole documented bound on every
// call (tests/support/bounded_libm.h). Error budgets, in ulps of the f32 result, against the op's
// policy (oracle/ops/activations.cc, whose derivation adds the ulps of each step as these do):
//   silu        x/(1 + e^{−x}): e^{−x} rounded from double ½ (expf's 2 ulp gave 4 ulp over the
//               bounded library, the policy's 3), the sum ½, the quotient ½: 1.5;
//   gelu_tanh   x/(1 + e^{−v}), v = x·(k1 + k2·x²) in f32 (x², the product with k2, the sum,
//               the product with x, and k1, k2 rounded: ≤ 6u relative, within the policy's 7u
//               argument budget times sigmoid's condition), expf 2, the sum ½, the quotient ½:
//               3 plus the argument's share, the policy's 4 plus 7u·κ;
//   gelu        (x/2)·erfc(−x/√2): the argument x/√2 in f32 (√2 and the quotient: 2u, the
//               policy's argument budget times erfc's condition), erfc in double rounded once
//               to f32 (½ ulp; CUDA's erfcf, 4 ulp, would exceed the 2 the policy assumes),
//               x/2 exact, the product ½: 1, the policy's 4;
//   soft-cap    cap·tanh(z/cap): the quotient ½, tanh rounded from double ½ (tanhf's 2 ulp gave
//               4 over the bounded library, the policy's 3), the product ½: 1.5;
//   the gates   the activation's, plus ½ for the product with the up value: the policy's one
//               more ulp.
// Where the f32 form would underflow or overflow an intermediate (e^{−x} beyond FLT_MAX for
// x < −88, a subnormal erfc for x < −10), the value is formed in double from the same f32
// argument and rounded once to f32: then only the last rounding, into the subnormal range,
// loses accuracy, as in the reference's exactly rounded result. Special values follow the
// reference's formulas in IEEE arithmetic: NaN stays NaN, silu(−inf) = −inf·0 = NaN,
// gelu(−inf) = NaN, gelu_tanh(−inf) = NaN, ±inf elsewhere as the function's limit.
#pragma once

#include <cmath>

#include "gpu/f32_math.h"
#include "gpu/f32_ops.h"

namespace lmo::gpu::f32 {

// ReLU: x for x > 0, NaN stays NaN, everything else (−0 included) +0.
template <class L = CudaF32>
struct ReluFn {
  LMO_HD float operator()(float x) const { return x > 0.0f || x != x ? x : 0.0f; }
};

// How x_sigmoid forms e^{−v}: CUDA's expf (≤ 2 ulp), or exp in double rounded once to f32
// (≤ ½ ulp + 2^-29 ulp: the correctly rounded value but within that of a midpoint).
enum class ExpF32 { kExpf, kRoundedDouble };

// x/(1 + e^{−v}) (= x·sigmoid(v)) for v ≥ −88, where e^{−v} ≤ e^88 < FLT_MAX; below, the same
// quotient in double (e^{−v} up to e^709), rounded once to f32. NaN v takes the f32 branch and
// stays NaN.
template <class L, ExpF32 E>
LMO_HD float x_sigmoid(float x, float v) {
  if (v < -88.0f) {
    return static_cast<float>(static_cast<double>(x) /
                              (1.0 + L::exp(-static_cast<double>(v))));  // exp: ≤ 1 ulp (double)
  }
  const float e = E == ExpF32::kExpf
                      ? L::exp(-v)  // expf: ≤ 2 ulp (CUDA)
                      : static_cast<float>(L::exp(-static_cast<double>(v)));  // ≤ 1 ulp (double)
  return div(x, add(1.0f, e));
}

// SiLU(x) = x·sigmoid(x) = x/(1 + e^{−x}), e^{−x} in double rounded once: with expf's 2 ulp
// the result reached 4 ulp (the policy's 3) on silu/basic and swiglu-gate/llama3-8b when every
// expf erred by its documented bound (tests/kernels/gpu_activation_math_test.cc, BoundedLibm):
// e^{−x}'s error weighs up to twice its ulps in a result with a larger significand.
template <class L = CudaF32>
struct SiluFn {
  LMO_HD float operator()(float x) const { return x_sigmoid<L, ExpF32::kRoundedDouble>(x, x); }
};

// GELU-tanh(x) = x·sigmoid(2u), u = √(2/π)·(x + 0.044715·x³): 2u = x·(k1 + k2·x²) with
// k1 = 2√(2/π) and k2 = 0.044715·2√(2/π) rounded to f32 (fast/math-inl.h's GeluTanhF).
template <class L = CudaF32>
struct GeluTanhFn {
  LMO_HD float operator()(float x) const {
    constexpr float k1 = 1.5957691669464111f;   // 2√(2/π)
    constexpr float k2 = 0.07135481387376785f;  // 0.044715·2√(2/π)
    const float v = mul(x, add(mul(mul(x, x), k2), k1));
    return x_sigmoid<L, ExpF32::kExpf>(x, v);
  }
};

// GELU(x) = x/2·erfc(−x/√2). For x < −10 (erfc(7.07) ≈ 1.5e-23; further out erfc and then the
// product reach the subnormal range, erfc's f32 value losing bits first) the product is formed in
// double and rounded once.
template <class L = CudaF32>
struct GeluFn {
  LMO_HD float operator()(float x) const {
    constexpr float kSqrt2 = 1.41421356f;  // √2 rounded to f32
    const float a = -div(x, kSqrt2);
    const double e = L::erfc(static_cast<double>(a));  // erfc: ≤ 5 ulp (double)
    if (x < -10.0f) return static_cast<float>(static_cast<double>(x) * 0.5 * e);
    return mul(mul(x, 0.5f), static_cast<float>(e));  // e rounded once: ≤ ½ + 2^-25 ulp
  }
};

// Soft-cap: cap·tanh(z/cap), tanh of the f32 quotient in double rounded once: with tanhf's 2 ulp
// the result reached 4 ulp (the policy's 3) on both built-in soft-cap cases when every tanhf
// erred by its documented bound (gpu_activation_math_test, BoundedLibm). Where |z/cap| < 2^-12,
// tanh(t) = t·(1 − t²/3 + …) and cap·tanh(z/cap) lies within 2^-25.5 relative of z, below half
// an ulp: the result is z itself (also where z/cap is subnormal and its product with cap would
// have lost bits).
template <class L = CudaF32>
struct SoftcapFn {
  float cap;
  LMO_HD float operator()(float z) const {
    const float t = div(z, cap);
    if (t < 0x1p-12f && t > -0x1p-12f) return z;
    return mul(cap, static_cast<float>(L::tanh(static_cast<double>(t))));  // ≤ 1 ulp (double)
  }
};

}  // namespace lmo::gpu::f32
