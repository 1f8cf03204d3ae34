// Conversions and constants that generic reference code needs on every number type: mp,
// float128, double, float and the simulated formats (Sim<F>).
//
// Conventions for formula code (every header of reference/):
//  - `template <class T, class Acc = T>`: T is the type every value and intermediate is held in;
//    sums of products (dot products, means, softmax denominators) accumulate in Acc, left to
//    right, and are converted back to T once. With T = Acc = Sim<F> this is the naive
//    low-precision kernel; with T = bfloat16, Acc = float a kernel that accumulates in f32.
//  - `using std::exp;` then unqualified calls, so mp, float128 and Sim<F> find their own.
//  - constants through `constant<T>(...)` / `from_mp<T>(...)`: the exact constant rounded once.
#pragma once

#include <boost/math/constants/constants.hpp>
#include <cmath>
#include <span>
#include <type_traits>
#include <vector>

#include "reference/ball.h"
#include "reference/number_types.h"
#include "reference/sim_float.h"

namespace lmo::ref {

// The value of x in mp; exact for every type here (all have at most 113 significant bits).
template <class T>
mp to_mp(const T& x) {
  if constexpr (std::is_same_v<T, mp>) {
    return x;
  } else if constexpr (is_sim_v<T>) {
    return static_cast<mp>(x);
  } else if constexpr (std::is_same_v<T, float128>) {
    return mp(x);
  } else {
    static_assert(std::is_same_v<T, double> || std::is_same_v<T, float>,
                  "to_mp: not a project number type (a wider type would be truncated)");
    return mp(static_cast<double>(x));
  }
}

// x as a double, for messages and diagnostics only (never for arithmetic): accepts any number
// type that converts to double, including wider MPFR types used by tests.
template <class T>
double to_double(const T& x) {
  if constexpr (is_sim_v<T>) {
    return x.value();
  } else {
    return static_cast<double>(x);
  }
}

// x rounded once to T (to nearest-even for double, float and the simulated formats).
template <class T>
T from_mp(const mp& x) {
  if constexpr (std::is_same_v<T, mp>) {
    return x;
  } else if constexpr (is_sim_v<T>) {
    return T(x);
  } else if constexpr (std::is_same_v<T, double>) {
    return decode<double>(Format::f64, encode(Format::f64, x));
  } else if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(decode<double>(Format::f32, encode(Format::f32, x)));
  } else {
    return static_cast<T>(x);  // float128: Boost converts through MPFR
  }
}

// Convert between two project number types: exact when widening, rounded once when narrowing.
template <class T>
inline constexpr bool is_double_exact_v =
    std::is_same_v<T, double> || std::is_same_v<T, float> || is_sim_v<T>;

template <class To, class From>
To convert(const From& x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (is_double_exact_v<To> && is_double_exact_v<From>) {
    // Every value of these types is a double, and double -> To rounds once (the CPU's IEEE
    // conversion for float, encode() for Sim<F>): no trip through mp needed.
    return To(static_cast<double>(x));
  } else {
    return from_mp<To>(to_mp(x));
  }
}

// A double constant (exact: written as a literal the formula itself uses, like 0.044715)
// rounded once to T. For a constant like 0.044715 the exact value meant is the decimal, so
// pass it as a string instead.
template <class T>
T constant(const char* decimal) {
  return from_mp<T>(mp(decimal));
}

template <class T>
T pi() {
  return from_mp<T>(boost::math::constants::pi<mp>());
}

// sin x and cos x of one argument, for the formulas that take both (rope.h, positional.h): a
// Ball overload (ball.h) reduces the argument and sums the series once for the two, which sin
// and cos called apart each do in full; every other type calls them apart.
template <class T>
struct SinCosOf {
  T sin, cos;
};
template <class T>
SinCosOf<T> sin_cos_of(const T& x) {
  using std::cos;
  using std::sin;
  return {T(sin(x)), T(cos(x))};
}
inline SinCosOf<Ball> sin_cos_of(const Ball& x) {
  const BallSinCos r = sin_cos(x);
  return {r.sin, r.cos};
}

// sin_cos_of of every angle into sines[i] and cosines[i] (both as long as angles): a row of a
// table at once, which on balls goes through sin_cos_many, four lanes at a time where the CPU
// allows (ball.h); the same values as one sin_cos_of each.
template <class T>
void sin_cos_each(std::span<const T> angles, std::span<T> sines, std::span<T> cosines) {
  if constexpr (std::is_same_v<T, Ball>) {
    std::vector<BallSinCos> sc(angles.size());
    sin_cos_many(angles, sc);
    for (size_t i = 0; i < angles.size(); ++i) {
      sines[i] = sc[i].sin;
      cosines[i] = sc[i].cos;
    }
  } else {
    for (size_t i = 0; i < angles.size(); ++i) {
      const SinCosOf<T> sc = sin_cos_of(angles[i]);
      sines[i] = sc.sin;
      cosines[i] = sc.cos;
    }
  }
}

}  // namespace lmo::ref
