// The nine number types every reference function must run on, for GoogleTest typed tests, and
// the helpers those tests use to compare a result in T with the mp result on the same inputs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "reference/linalg.h"
#include "reference/numeric.h"

namespace lmo::testdata {

using AllNumberTypes = ::testing::Types<ref::mp, ref::float128, double, float, ref::bfloat16,
                                        ref::float16, ref::tf32, ref::fp8_e4m3, ref::fp8_e5m2>;

// ε of T (the gap from 1 to the next value: 2u) and its smallest positive value, in mp.
template <class T>
ref::mp eps_of() {
  return ref::to_mp(std::numeric_limits<T>::epsilon());
}

// (Boost 1.74's numeric_limits<float128>::denorm_min() does not compile with expression
// templates off, hence the constant 2^-16494.)
template <class T>
ref::mp tiny_of() {
  if constexpr (std::is_same_v<T, ref::float128>) {
    return boost::multiprecision::ldexp(ref::mp(1), -16494);
  } else {
    return ref::to_mp(std::numeric_limits<T>::denorm_min());
  }
}

// The unit roundoff u of T (half of ε): one rounding changes a value by at most u relative.
template <class T>
ref::mp unit_roundoff() {
  return eps_of<T>() / 2;
}

// n roundings of relative size u compound to at most (1 + u)^n − 1 (≈ n·u when n·u is small;
// for the fp8 formats, u = 2^-4 or 2^-3, the compounding matters).
inline double compound(int n, double u) { return std::expm1(n * std::log1p(u)); }

template <class T>
bool is_finite(const T& v) {
  using std::isfinite;
  return isfinite(v);
}

// The exact values of a matrix in mp, to run the mp reference on the same inputs.
template <class T>
ref::Mat<ref::mp> widen(const ref::Mat<T>& m) {
  ref::Mat<ref::mp> w(m.rows, m.cols);
  for (size_t i = 0; i < m.data.size(); ++i) w.data[i] = ref::to_mp(m.data[i]);
  return w;
}

template <class T>
bool all_finite(const ref::Mat<T>& m) {
  using std::isfinite;
  for (const T& x : m.data) {
    if (!isfinite(x)) return false;
  }
  return true;
}

template <class T>
std::vector<T> to_type(const std::vector<double>& v) {
  std::vector<T> out;
  for (double d : v) out.push_back(ref::convert<T>(d));
  return out;
}

template <class T>
std::vector<ref::mp> to_mp_vector(const std::vector<T>& v) {
  std::vector<ref::mp> out;
  for (const T& x : v) out.push_back(ref::to_mp(x));
  return out;
}

template <class T>
bool all_finite(const std::vector<T>& v) {
  using std::isfinite;
  for (const T& x : v) {
    if (!isfinite(x)) return false;
  }
  return true;
}

// max_i |got_i − want_i| ≤ bound, with a message naming the worst index.
template <class T>
::testing::AssertionResult normwise_close(const std::vector<T>& got,
                                          const std::vector<ref::mp>& want, const ref::mp& bound) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size mismatch";
  for (size_t i = 0; i < got.size(); ++i) {
    const ref::mp err = abs(ref::to_mp(got[i]) - want[i]);
    if (!(err <= bound)) {
      return ::testing::AssertionFailure()
             << "index " << i << ": got " << ref::to_mp(got[i]) << ", mp " << want[i]
             << ", |error| " << err << " > bound " << bound;
    }
  }
  return ::testing::AssertionSuccess();
}

inline ref::mp max_abs(const std::vector<ref::mp>& v) {
  ref::mp m = 0;
  for (const ref::mp& x : v) m = std::max(m, ref::mp(abs(x)));
  return m;
}

}  // namespace lmo::testdata
