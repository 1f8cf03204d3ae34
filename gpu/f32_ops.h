// f32 arithmetic with every operation rounded once to nearest-even and never contracted into an
// fma, as __host__ __device__ functions: the f32 kernels (fp8, fused_add_rmsnorm, moe_layer)
// state their rounding order with them, so that the order is the strict recipe's (each product
// and sum rounded, as the oracle's naive f32 run rounds) whatever nvcc's -fmad does, and a host
// test built with -ffp-contract=off evaluates the very same sequence of roundings. On the device
// __fmul_rn/__fadd_rn/__fdiv_rn are IEEE operations (0 ulp: CUDA Programming Guide, "Intrinsic
// Functions": "never merged into an FMAD"); on the host the plain operators are IEEE too.
// Plain C++ when not compiled by nvcc; no CUDA header.
#pragma once

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

LMO_HD inline float div(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fdiv_rn(a, b);
#else
  return a / b;
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
