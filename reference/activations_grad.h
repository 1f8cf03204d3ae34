// Derivatives of the F06 activations, for the backward passes of F04/F05 (ffn_grad.h). Each has
// the `literal` flag of its forward function (activations.h) and the same reason for the
// default: the literal derivative cancels where the literal forward does.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>

#include "reference/activations.h"

namespace lmo::ref {

// ReLU'(x) = 1 for x > 0, else 0 (0 at x = 0, as PyTorch and JAX define it). NaN propagates.
template <class T>
T relu_grad(const T& x) {
  using std::isnan;
  if (isnan(x)) return x;
  return x > T(0) ? T(1) : T(0);
}

// GELU'(x) = Φ(x) + x·φ(x), φ(x) = e^{−x²/2}/√(2π). Φ(x) is ½·erfc(−x/√2) by default and
// ½·(1 + erf(x/√2)) when literal.
template <class T>
T gelu_grad(const T& x, bool literal = false) {
  using std::exp;
  using std::sqrt;
  // Once per T: an MPFR evaluation per element cost more than the element.
  static const T sqrt2 = from_mp<T>(sqrt(mp(2)));
  static const T sqrt_2pi = from_mp<T>(sqrt(mp(2) * boost::math::constants::pi<mp>()));
  const T t = x / sqrt2;
  const T cdf = literal ? T(T(T(1) + detail::erf_of(t)) / T(2)) : T(detail::erfc_of(T(-t)) / T(2));
  const T pdf = T(exp(T(-T(x * x) / T(2)))) / sqrt_2pi;
  return cdf + T(x * pdf);
}

// d/dx GELU-tanh(x), with u = √(2/π)(x + 0.044715x³) and u' = √(2/π)(1 + 3·0.044715x²).
// Default (x·s(2u) with s = sigmoid): s(2u) + 2x·u'·s(2u)·s(−2u). Literal (0.5x(1 + tanh u)):
// 0.5(1 + tanh u) + 0.5x·(1 − tanh²u)·u'.
template <class T>
T gelu_tanh_grad(const T& x, bool literal = false) {
  using std::sqrt;
  using std::tanh;
  static const T k = from_mp<T>(sqrt(mp(2) / boost::math::constants::pi<mp>()));  // once per T
  static const T c3 = constant<T>("0.134145");  // 3 · 0.044715, exact in decimal
  const T u = gelu_tanh_inner(x);
  const T du = k * T(T(1) + T(c3 * T(x * x)));
  if (literal) {
    const T th = tanh(u);
    const T half = T(1) / T(2);
    return T(half * T(T(1) + th)) + T(T(half * x) * T(T(T(1) - T(th * th)) * du));
  }
  const T s = sigmoid(T(T(2) * u));
  const T s_neg = sigmoid(T(T(-2) * u));
  return s + T(T(T(T(2) * x) * du) * T(s * s_neg));
}

// Swish_β'(x) = s + βx·s·(1 − s), s = sigmoid(βx), with 1 − s = sigmoid(−βx) (no cancellation).
template <class T>
T swish_grad(const T& x, const T& beta, bool literal = false) {
  const T bx = beta * x;
  const T s = sigmoid(bx, literal);
  const T s_neg = sigmoid(T(-bx), literal);
  return s + T(bx * T(s * s_neg));
}

// SiLU'(x) = s + x·s·(1 − s), s = sigmoid(x).
template <class T>
T silu_grad(const T& x, bool literal = false) {
  const T s = sigmoid(x, literal);
  const T s_neg = sigmoid(T(-x), literal);
  return s + T(x * T(s * s_neg));
}

// The derivative of activate(a, x).
template <class T>
T activate_grad(Activation a, const T& x, bool literal = false) {
  switch (a) {
    case Activation::kReLU:
      return relu_grad(x);
    case Activation::kGELU:
      return gelu_grad(x, literal);
    case Activation::kGELUTanh:
      return gelu_tanh_grad(x, literal);
    case Activation::kSiLU:
      return silu_grad(x, literal);
  }
  throw std::invalid_argument("activate_grad: unknown activation " +
                              std::to_string(static_cast<int>(a)));
}

}  // namespace lmo::ref
