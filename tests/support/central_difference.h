// Central differences for checking analytic gradients of reference functions.
//
// The step is h = 1e-20, so the truncation error is O(h²) ≈ 1e-40 relative. The function is
// evaluated in `mp100` (100 decimal digits): in `mp` (50 digits) the difference quotient's own
// rounding error would be ≈ u·|f|/h ≈ 3e-51·|f|/1e-20 = 3e-31·|f|, too close to the 1e-30
// agreement the gradient tests assert. Reference functions are templates, so they run on mp100
// unchanged (T = Acc = mp100; their constants are rounded at mp's 50 digits, which is the same
// constant in the analytic gradient and cannot change the derivative by more than 1e-50).
#pragma once

#include <boost/multiprecision/mpfr.hpp>
#include <vector>

#include "reference/number_types.h"

namespace lmo::testdata {

using mp100 = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<100>,
                                            boost::multiprecision::et_off>;

inline std::vector<mp100> to_mp100(const std::vector<ref::mp>& v) {
  return std::vector<mp100>(v.begin(), v.end());
}

// (f(v + h e_k) − f(v − h e_k)) / (2h) for every k, f: std::vector<mp100> -> mp100.
template <class F>
std::vector<ref::mp> central_gradient(F f, const std::vector<ref::mp>& v) {
  const mp100 h("1e-20");
  std::vector<mp100> w = to_mp100(v);
  std::vector<ref::mp> g(v.size());
  for (size_t k = 0; k < v.size(); ++k) {
    const mp100 center = w[k];
    w[k] = center + h;
    const mp100 fp = f(w);
    w[k] = center - h;
    const mp100 fm = f(w);
    w[k] = center;
    g[k] = ref::mp((fp - fm) / (2 * h));
  }
  return g;
}

// The derivative of a scalar function at x.
template <class F>
ref::mp central_derivative(F f, const ref::mp& x) {
  return central_gradient([&](const std::vector<mp100>& w) { return f(w[0]); },
                          std::vector<ref::mp>{x})[0];
}

// Σ_i a_i b_i in mp100, left to right.
inline mp100 dot100(const std::vector<mp100>& a, const std::vector<mp100>& b) {
  mp100 s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

}  // namespace lmo::testdata
