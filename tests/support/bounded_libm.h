// Stand-ins for CUDA's library functions (gpu/f32_math.h's CudaF32) that err by their whole
// documented bound on every call, for the host tests of the GPU kernels' f32 math: CUDA states a
// function's maximum error as the distance in ulps (floating-point steps) between its result and
// the correctly rounded one (CUDA C++ Programming Guide, "Mathematical Functions"), so these
// return the correctly rounded value moved by exactly that many steps: expf 2 steps of f32, exp,
// tanh and log 1 step and erfc 5 steps of double. The direction is up, down, or fixed per
// argument by a hash of its bits (Dir). The correctly rounded value comes from the long double
// function (64-bit significand, glibc's expl, tanhl, erfcl, logl: a double rounding of it
// differs from the correct one only within ~2^-40 ulp of a midpoint). A step never leaves the
// finite range or crosses zero's sign, and exact results (±0, ±inf, NaN, tanh(±inf) = ±1,
// exp(0) = 1) are returned as they are: a real library returns those exactly.
//
// The glibc functions the kernels' host evaluation calls otherwise (CudaF32 on the host) are
// close to correctly rounded; these show instead whether the policies hold when CUDA's functions
// err as much as CUDA allows.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "gpu/f32_math.h"

namespace lmo::testing {

enum class Dir { kUp, kDown, kHashed };

namespace bounded_detail {

inline uint64_t hash_bits(uint64_t u) {
  u ^= u >> 33;
  u *= 0xff51afd7ed558ccdull;
  u ^= u >> 33;
  u *= 0xc4ceb9fe1a85ec53ull;
  u ^= u >> 33;
  return u;
}

template <class F>
uint64_t bits(F x) {
  if constexpr (sizeof(F) == 4) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    return u;
  } else {
    uint64_t u;
    std::memcpy(&u, &x, 8);
    return u;
  }
}

// cr moved by `steps` floating-point steps of F, up (+1) or down (−1), staying finite and on
// cr's side of zero.
template <class F>
F step(F cr, int steps, int dir) {
  if (!std::isfinite(cr) || cr == 0) return cr;
  F r = cr;
  for (int i = 0; i < steps; ++i) {
    const F next = std::nextafter(r, dir > 0 ? std::numeric_limits<F>::infinity()
                                             : -std::numeric_limits<F>::infinity());
    if (!std::isfinite(next) || next == 0 || std::signbit(next) != std::signbit(cr)) break;
    r = next;
  }
  return r;
}

template <Dir D, class F>
int direction(F arg) {
  if constexpr (D == Dir::kUp) return 1;
  if constexpr (D == Dir::kDown) return -1;
  return (hash_bits(bits(arg)) & 1) ? 1 : -1;
}

// The correctly rounded F of the long double value v, moved by `steps` unless v is exact in F
// (then a library returns it exactly: exp(0) = 1, tanh(±inf) = ±1).
template <Dir D, class F>
F bounded(F arg, long double v, int steps) {
  const auto cr = static_cast<F>(v);
  if (static_cast<long double>(cr) == v) return cr;
  return step(cr, steps, direction<D>(arg));
}

}  // namespace bounded_detail

template <Dir D>
struct BoundedLibm {
  static float exp(float x) {  // expf: 2 ulp (CUDA)
    return bounded_detail::bounded<D>(x, std::exp(static_cast<long double>(x)), 2);
  }
  static double tanh(double x) {  // tanh: 1 ulp (CUDA)
    return bounded_detail::bounded<D>(x, std::tanh(static_cast<long double>(x)), 1);
  }
  static double exp(double x) {  // exp: 1 ulp (CUDA)
    return bounded_detail::bounded<D>(x, std::exp(static_cast<long double>(x)), 1);
  }
  static double erfc(double x) {  // erfc: 5 ulp (CUDA)
    return bounded_detail::bounded<D>(x, std::erfc(static_cast<long double>(x)), 5);
  }
  static double log(double x) {  // log: 1 ulp (CUDA)
    return bounded_detail::bounded<D>(x, std::log(static_cast<long double>(x)), 1);
  }
};

// Runs fn(library, name) for the C library (CudaF32 on the host) and BoundedLibm in each
// direction: a kernel's host math must pass over every library within CUDA's bounds.
template <class Fn>
void for_each_library(const Fn& fn) {
  fn(gpu::f32::CudaF32{}, "libm");
  fn(BoundedLibm<Dir::kUp>{}, "bounded-up");
  fn(BoundedLibm<Dir::kDown>{}, "bounded-down");
  fn(BoundedLibm<Dir::kHashed>{}, "bounded-hashed");
}

}  // namespace lmo::testing
