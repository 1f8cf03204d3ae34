// F06 activations, elementwise on one value: ReLU, GELU (exact, through Φ), GELU-tanh, sigmoid,
// Swish_β and SiLU = Swish₁.
//
// GELU, GELU-tanh and sigmoid have a `literal` flag. The literal forms are the equations as
// printed (and what PyTorch's kernels compute): 1 + erf(·), 1 + tanh(·), 1/(1 + e^{−x}). For
// x ≪ 0 the first two cancel — 1 + erf(x/√2) = 2Φ(x) loses log10(1/Φ(x)) digits, all of them
// in bfloat16 below x ≈ −3 and even in mp below x ≈ −15 — and e^{−x} overflows to NaN in fp8
// E4M3 (no infinity) below x ≈ −6.1. The default is therefore an equivalent evaluation that is
// exact in real arithmetic and keeps full relative accuracy for every x:
//   1 + erf(t) = erfc(−t),   1 + tanh(u) = 2·sigmoid(2u),
//   sigmoid(t) = 1/(1 + e^{−t}) for t ≥ 0 and e^{t}/(1 + e^{t}) for t < 0.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/activation_kind.h"
#include "reference/numeric.h"

namespace lmo::ref {

namespace detail {

// erf and erfc on every number type. Boost 1.74's float128 erf/erfc overloads do not compile
// with expression templates off (they return a __float128 where the number's constructor is
// explicit), so float128 calls libquadmath directly.
template <class T>
T erf_of(const T& x) {
  if constexpr (std::is_same_v<T, float128>) {
    return float128(erfq(x.backend().value()));
  } else {
    using std::erf;
    return erf(x);
  }
}

template <class T>
T erfc_of(const T& x) {
  if constexpr (std::is_same_v<T, float128>) {
    return float128(erfcq(x.backend().value()));
  } else {
    using std::erfc;
    return erfc(x);
  }
}

}  // namespace detail

// ReLU(x) = max(0, x). NaN propagates; ReLU(−0) = +0.
template <class T>
T relu(const T& x) {
  using std::isnan;
  if (isnan(x)) return x;
  return x > T(0) ? x : T(0);
}

// sigmoid(x) = 1/(1 + e^{−x}) (F06). Default: the form above for x ≥ 0 and e^{x}/(1 + e^{x})
// for x < 0, so e^{|x|} never overflows; literal: 1/(1 + e^{−x}) for every x.
template <class T>
T sigmoid(const T& x, bool literal = false) {
  using std::exp;
  if (literal || !(x < T(0))) return T(1) / T(T(1) + T(exp(T(-x))));
  const T e = exp(x);
  return e / T(T(1) + e);
}

// F06 GELU(x) = x·Φ(x) = x/2·(1 + erf(x/√2)). Default: x/2·erfc(−x/√2); literal: the
// printed form. √2 is the exact constant rounded once to T.
template <class T>
T gelu(const T& x, bool literal = false) {
  using std::sqrt;
  static const T sqrt2 = from_mp<T>(sqrt(mp(2)));  // once per T: an MPFR call per element cost more
  const T half_x = x / T(2);
  const T t = x / sqrt2;
  if (literal) return half_x * T(T(1) + detail::erf_of(t));
  return half_x * detail::erfc_of(T(-t));
}

// The argument of tanh in GELU-tanh: u = √(2/π)·(x + 0.044715·x³), with x³ = (x·x)·x.
template <class T>
T gelu_tanh_inner(const T& x) {
  using std::sqrt;
  // Once per T: an MPFR evaluation per element cost more than the element.
  static const T k = from_mp<T>(sqrt(mp(2) / boost::math::constants::pi<mp>()));
  static const T c = constant<T>("0.044715");
  const T x3 = T(x * x) * x;
  return k * T(x + T(c * x3));
}

// F06 GELU-tanh(x) = 0.5·x·(1 + tanh(u)), u as in gelu_tanh_inner (GPT-2's "gelu_new", Gemma's
// "gelu_pytorch_tanh"). Default: x·sigmoid(2u); literal: the printed form.
template <class T>
T gelu_tanh(const T& x, bool literal = false) {
  using std::tanh;
  const T u = gelu_tanh_inner(x);
  if (literal) return T(T(1) / T(2) * x) * T(T(1) + T(tanh(u)));
  return x * sigmoid(T(T(2) * u));
}

// F06 Swish_β(x) = x·sigmoid(β·x).
template <class T>
T swish(const T& x, const T& beta, bool literal = false) {
  return x * sigmoid(T(beta * x), literal);
}

// F06 SiLU(x) = x·sigmoid(x) (= Swish₁; C26 checks the two agree).
template <class T>
T silu(const T& x, bool literal = false) {
  return x * sigmoid(x, literal);
}

// One of the activations F04/F05 choose from.
template <class T>
T activate(Activation a, const T& x, bool literal = false) {
  switch (a) {
    case Activation::kReLU:
      return relu(x);
    case Activation::kGELU:
      return gelu(x, literal);
    case Activation::kGELUTanh:
      return gelu_tanh(x, literal);
    case Activation::kSiLU:
      return silu(x, literal);
  }
  throw std::invalid_argument("activate: unknown activation " +
                              std::to_string(static_cast<int>(a)));
}

// Elementwise over a vector.
template <class T>
std::vector<T> activate(Activation a, std::span<const T> x, bool literal = false) {
  std::vector<T> y;
  y.reserve(x.size());
  for (const T& v : x) y.push_back(activate(a, v, literal));
  return y;
}

}  // namespace lmo::ref
