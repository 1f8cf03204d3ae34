// f32 arithmetic with every operation rounded once to nearest-even and never contracted into an
// fma (but for the explicit fma()), as __host__ __device__ functions: the f32 kernels (fp8, the
// norms, softmax and log-sum-exp, the elementwise activations, moe_layer) state their rounding
// order with them, so that the order is the one they declare (each product and sum rounded, as
// the oracle's naive f32 run rounds; an explicit fma where the kernel declares +fma) whatever
// nvcc's -fmad does, and a host test built with -ffp-contract=off evaluates the very same
// sequence of roundings. On the device __fmul_rn, __fadd_rn, __fsub_rn, __fdiv_rn and __fmaf_rn
// are IEEE operations (0 ulp: CUDA Programming Guide, "Intrinsic Functions": "never merged into
// an FMAD"); on the host the plain operators and std::fma are IEEE too.
// Plain C++ when not compiled by nvcc; no CUDA header.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define LMO_HD __host__ __device__
#else
#define LMO_HD
#endif

namespace lmo::gpu::f32 {

LMO_HD inline float mul(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

LMO_HD inline float add(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

LMO_HD inline float sub(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

// a·b + c rounded once (IEEE fusedMultiplyAdd: 0 ulp on the device, std::fma on the host), for
// the kernels that declare +fma (the sums of squares of gpu/norm_math.h's RMSNorm and LayerNorm).
LMO_HD inline float fma(float a, float b, float c) {
#ifdef __CUDA_ARCH__
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

LMO_HD inline float div(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

// A double product rounded once and never contracted into an fma with the sum it feeds
// (__dmul_rn), for the per-row scalars formed in double (the norms' mean square + ε·scale²), so
// that the device rounds them as the host test does.
LMO_HD inline double dmul(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

// The bits of an f32 and back.
LMO_HD inline uint32_t bits_of(float v) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(v);
#else
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
#endif
}

LMO_HD inline float from_bits(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float v;
  std::memcpy(&v, &u, sizeof v);
  return v;
#endif
}

}  // namespace lmo::gpu::f32
