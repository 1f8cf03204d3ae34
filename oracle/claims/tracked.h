// Tracked<T>: a number type for the claims registry's float bounds. It computes exactly as T
// (every value is the T value the reference would produce) and carries, next to each value, a
// rigorous bound on |value − exact|, where "exact" is the same formula in real arithmetic on the
// same inputs with the exact constants (running error analysis, Wilkinson; Higham, "Accuracy and
// Stability of Numerical Algorithms", §3.3). Running a reference template on Tracked<T> gives
// the result in T and a bound that is derived, per operation, from the format alone:
//
//  - a correctly rounded operation (+, −, ×, ÷, √ in every type; every function of Sim<F>,
//    whose functions round once) adds (u·|z| + η)/(1 − u), u = 2^−p the unit roundoff and
//    η = half the smallest subnormal (the absolute error of a subnormal result);
//  - a libm function on float or double (glibc: errors of a few ulps, not correctly rounded)
//    adds 8 ulps: (16u·|z| + η)/(1 − u);
//  - the error carried in from the operands propagates through the exact derivative bounds of
//    each operation (listed with the functions below);
//  - an overflow (±inf or NaN result) makes the bound infinite.
// The bound is computed in double and inflated by 2^−50 relative per operation, which covers the
// rounding of the bound's own arithmetic.
//
// A claim that two computations A and B agree in exact arithmetic then holds in T when
// |A_T − B_T| ≤ bound(A) + bound(B): nothing is fitted to measured residuals.
//
// Branches are decided on the T values. Every reference formula the registry runs on Tracked is
// either continuous across its branches (max, masks fixed by positions) or exactly
// shift-invariant where it picks a value (the softmax max); discontinuous ones (top-k routing,
// ReLU at 0) are not run on it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "reference/numeric.h"

namespace lmo::oracle {

using ref::mp;

template <class T>
class Tracked;

namespace tracked_detail {

template <class T>
struct FormatConstants {
  double u;    // unit roundoff 2^−p
  double eta;  // half the smallest positive subnormal
  double fn;   // multiple of u·|z| one function call may add
};

template <class T>
FormatConstants<T> constants() {
  const double u = std::ldexp(1.0, -std::numeric_limits<T>::digits);
  double tiny = 0;
  if constexpr (ref::is_sim_v<T>) {
    tiny = std::numeric_limits<T>::denorm_min().value();
  } else {
    tiny = static_cast<double>(std::numeric_limits<T>::denorm_min());
  }
  return {u, tiny / 2, ref::is_sim_v<T> ? 1.0 : 16.0};
}

inline double up(double x) { return x * (1 + 0x1p-50); }

inline double finite_or_inf(double x) {
  return std::isnan(x) ? std::numeric_limits<double>::infinity() : x;
}

}  // namespace tracked_detail

template <class T>
class Tracked {
 public:
  using value_type = T;

  Tracked() : v_(0), e_(0) {}
  // A value of T taken as exact (an input).
  static Tracked exact(const T& v) { return Tracked(v, 0.0); }
  static Tracked with_error(const T& v, double e) { return Tracked(v, e); }

  // A number rounded to T: the bound is the rounding error, computed exactly.
  template <class U>
    requires std::is_arithmetic_v<U>
  explicit Tracked(U x) {
    if constexpr (std::is_integral_v<U>) {
      if (x > (int64_t{1} << 52) || x < -(int64_t{1} << 52)) {
        *this = Tracked(mp(x));
        return;
      }
    }
    const double d = static_cast<double>(x);  // exact: |x| ≤ 2^52 or x already a float type
    v_ = ref::convert<T>(d);
    e_ = std::fabs(static_cast<double>(v_) - d);  // exact (Sterbenz) or inf
    if (!std::isfinite(e_)) e_ = std::numeric_limits<double>::infinity();
  }
  explicit Tracked(const mp& x) : v_(ref::from_mp<T>(x)) {
    using std::abs;
    const mp diff = abs(ref::to_mp(v_) - x);
    e_ = tracked_detail::finite_or_inf(tracked_detail::up(static_cast<double>(diff)));
    using std::isfinite;
    if (!isfinite(v_)) e_ = std::numeric_limits<double>::infinity();
  }

  const T& value() const { return v_; }
  double error() const { return e_; }
  double magnitude() const { return std::fabs(static_cast<double>(v_)); }
  explicit operator double() const { return static_cast<double>(v_); }

  // The result z (already rounded to T) of an operation whose propagated error is `carried`,
  // plus the rounding of this operation (`fn`: a function call rather than a basic operation).
  static Tracked rounded(const T& z, double carried, bool fn = false) {
    const auto c = tracked_detail::constants<T>();
    const double mag = std::fabs(static_cast<double>(z));
    if (!std::isfinite(mag)) return Tracked(z, std::numeric_limits<double>::infinity());
    const double k = fn ? c.fn : 1.0;
    const double round = (k * c.u * mag + c.eta) / (1 - k * c.u);
    return Tracked(z, tracked_detail::finite_or_inf(tracked_detail::up(carried + round)));
  }

  // x ± y: errors add.
  friend Tracked operator+(const Tracked& a, const Tracked& b) {
    return rounded(T(a.v_ + b.v_), a.e_ + b.e_);
  }
  friend Tracked operator-(const Tracked& a, const Tracked& b) {
    return rounded(T(a.v_ - b.v_), a.e_ + b.e_);
  }
  // x·y: |x̂ŷ − xy| ≤ |x̂|·e_y + |ŷ|·e_x + e_x·e_y.
  friend Tracked operator*(const Tracked& a, const Tracked& b) {
    return rounded(T(a.v_ * b.v_), a.magnitude() * b.e_ + b.magnitude() * a.e_ + a.e_ * b.e_);
  }
  // x/y: |x̂/ŷ − x/y| ≤ (|x̂|·e_y + |ŷ|·e_x) / (|ŷ|·(|ŷ| − e_y)) when |ŷ| > e_y, else unbounded.
  friend Tracked operator/(const Tracked& a, const Tracked& b) {
    const double y = b.magnitude();
    const double carried = y > b.e_ ? (a.magnitude() * b.e_ + y * a.e_) / (y * (y - b.e_))
                                    : std::numeric_limits<double>::infinity();
    return rounded(T(a.v_ / b.v_), carried);
  }
  Tracked operator-() const { return Tracked(T(-v_), e_); }
  Tracked operator+() const { return *this; }
  Tracked& operator+=(const Tracked& o) { return *this = *this + o; }
  Tracked& operator-=(const Tracked& o) { return *this = *this - o; }
  Tracked& operator*=(const Tracked& o) { return *this = *this * o; }
  Tracked& operator/=(const Tracked& o) { return *this = *this / o; }

#define LMO_TRACKED_CMP(op)                                                            \
  friend bool operator op(const Tracked& a, const Tracked& b) { return a.v_ op b.v_; } \
  friend bool operator op(const Tracked& a, int b) { return a.v_ op T(b); }
  LMO_TRACKED_CMP(==)
  LMO_TRACKED_CMP(!=)
  LMO_TRACKED_CMP(<)
  LMO_TRACKED_CMP(<=)
  LMO_TRACKED_CMP(>)
  LMO_TRACKED_CMP(>=)
#undef LMO_TRACKED_CMP

 private:
  Tracked(const T& v, double e) : v_(v), e_(e) {}
  T v_;
  double e_;
};

template <class T>
inline constexpr bool is_tracked_v = false;
template <class T>
inline constexpr bool is_tracked_v<Tracked<T>> = true;

// Exact value (found by argument-dependent lookup from ref::convert and ref::to_double).
template <class T>
mp to_mp(const Tracked<T>& x) {
  return ref::to_mp(x.value());
}

// Functions, each with the bound on how an operand error e carries through it (x̂ the computed
// operand, z = f(x̂)):
//   exp, expm1: e^x̂·(e^e − 1);  log: −log(1 − e/x̂) (x̂ > e);  log1p: −log(1 − e/(1 + x̂));
//   sin, cos, tanh, atan: min(e, range);  erf, erfc: min(2/√π·e, 2);  sqrt: e/(√x̂ + √(x̂ − e))
//   for x̂ > e, else √(x̂ + e).
#define LMO_TRACKED_FN(name, carry)                                       \
  template <class T>                                                      \
  Tracked<T> name(const Tracked<T>& x) {                                  \
    using std::name;                                                      \
    const T z = name(x.value());                                          \
    const double xv = static_cast<double>(x.value()), e = x.error();      \
    (void)xv;                                                             \
    return Tracked<T>::rounded(z, tracked_detail::finite_or_inf(carry), true); \
  }
LMO_TRACKED_FN(exp, std::exp(xv) * std::expm1(e))
LMO_TRACKED_FN(expm1, std::exp(xv) * std::expm1(e))
LMO_TRACKED_FN(log, xv > e ? -std::log1p(-e / xv) : std::numeric_limits<double>::infinity())
LMO_TRACKED_FN(log1p, 1 + xv > e ? -std::log1p(-e / (1 + xv))
                                 : std::numeric_limits<double>::infinity())
LMO_TRACKED_FN(sin, std::min(e, 2.0))
LMO_TRACKED_FN(cos, std::min(e, 2.0))
LMO_TRACKED_FN(tanh, std::min(e, 2.0))
LMO_TRACKED_FN(atan, std::min(e, 4.0))
LMO_TRACKED_FN(erf, std::min(1.1283791670955127 * e, 2.0))
LMO_TRACKED_FN(erfc, std::min(1.1283791670955127 * e, 2.0))
#undef LMO_TRACKED_FN

// √ is correctly rounded in every type (IEEE for float and double, round-to-odd for Sim).
template <class T>
Tracked<T> sqrt(const Tracked<T>& x) {
  using std::sqrt;
  const double xv = static_cast<double>(x.value()), e = x.error();
  const double carried =
      xv > e ? e / (std::sqrt(xv) + std::sqrt(xv - e)) : std::sqrt(std::max(xv, 0.0) + e);
  return Tracked<T>::rounded(T(sqrt(x.value())), tracked_detail::finite_or_inf(carried));
}

// pow(b, y) = e^{y·log b} for b > 0: the error of y·log b carried through exp.
template <class T>
Tracked<T> pow(const Tracked<T>& b, const Tracked<T>& y) {
  using std::pow;
  const double bv = static_cast<double>(b.value()), yv = static_cast<double>(y.value());
  const T z = pow(b.value(), y.value());
  double carried = std::numeric_limits<double>::infinity();
  if (bv > b.error()) {
    const double log_e = -std::log1p(-b.error() / bv);
    const double lv = std::fabs(std::log(bv));
    const double p_e = std::fabs(yv) * log_e + lv * y.error() + y.error() * log_e;
    carried = std::fabs(static_cast<double>(z)) * std::expm1(p_e);
  } else if (b.error() == 0 && y.error() == 0) {
    carried = 0;
  }
  return Tracked<T>::rounded(z, tracked_detail::finite_or_inf(carried), true);
}

template <class T>
Tracked<T> abs(const Tracked<T>& x) {
  using std::abs;
  return Tracked<T>::with_error(T(abs(x.value())), x.error());
}
template <class T>
Tracked<T> fabs(const Tracked<T>& x) {
  return abs(x);
}
// max and min are 1-Lipschitz in each operand.
template <class T>
Tracked<T> max(const Tracked<T>& a, const Tracked<T>& b) {
  return Tracked<T>::with_error(a < b ? b.value() : a.value(), std::max(a.error(), b.error()));
}
template <class T>
Tracked<T> min(const Tracked<T>& a, const Tracked<T>& b) {
  return Tracked<T>::with_error(b < a ? b.value() : a.value(), std::max(a.error(), b.error()));
}
template <class T>
Tracked<T> fma(const Tracked<T>& a, const Tracked<T>& b, const Tracked<T>& c) {
  using std::fma;
  return Tracked<T>::rounded(
      T(fma(a.value(), b.value(), c.value())),
      a.magnitude() * b.error() + b.magnitude() * a.error() + a.error() * b.error() + c.error());
}
template <class T>
Tracked<T> ldexp(const Tracked<T>& x, int k) {
  using std::ldexp;
  return Tracked<T>::rounded(T(ldexp(x.value(), k)), std::ldexp(x.error(), k));
}
// floor is exact on T but discontinuous: the error is the spread of floor over [x̂ − e, x̂ + e].
template <class T>
Tracked<T> floor(const Tracked<T>& x) {
  using std::floor;
  const double xv = static_cast<double>(x.value()), e = x.error();
  return Tracked<T>::with_error(T(floor(x.value())), std::floor(xv + e) - std::floor(xv - e));
}
template <class T>
bool isnan(const Tracked<T>& x) {
  using std::isnan;
  return isnan(x.value());
}
template <class T>
bool isinf(const Tracked<T>& x) {
  using std::isinf;
  return isinf(x.value());
}
template <class T>
bool isfinite(const Tracked<T>& x) {
  using std::isfinite;
  return isfinite(x.value());
}
template <class T>
bool signbit(const Tracked<T>& x) {
  using std::signbit;
  return signbit(x.value());
}

}  // namespace lmo::oracle

template <class T>
class std::numeric_limits<lmo::oracle::Tracked<T>> {
  using R = lmo::oracle::Tracked<T>;
  using L = std::numeric_limits<T>;

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = L::has_infinity;
  static constexpr bool has_quiet_NaN = true;
  static constexpr int digits = L::digits;
  static constexpr int radix = 2;
  static constexpr int min_exponent = L::min_exponent;
  static constexpr int max_exponent = L::max_exponent;
  static R min() { return R::exact(L::min()); }
  static R max() { return R::exact(L::max()); }
  static R lowest() { return R::exact(L::lowest()); }
  static R epsilon() { return R::exact(L::epsilon()); }
  static R denorm_min() { return R::exact(L::denorm_min()); }
  static R infinity() { return R::with_error(L::infinity(), std::numeric_limits<double>::infinity()); }
  static R quiet_NaN() {
    return R::with_error(L::quiet_NaN(), std::numeric_limits<double>::infinity());
  }
};
