// Simulated low-precision floating-point types: a value of Sim<F> is a bit pattern of format F,
// and every operation computes the exact result and rounds it once, to nearest-even, to F.
// Running a reference formula on Sim<F> simulates a naive kernel that stores every
// intermediate in F.
//
// How "exact, then round once" is achieved:
//  - +, -, *, /, sqrt: computed in double, then rounded to F. For formats of precision p with
//    53 >= 2p + 2 (every simulated format here: p <= 24) double rounding is innocuous for these
//    five operations (S. A. Figueroa, "When is double rounding innocuous?", SIGNUM 1995).
//  - fma and transcendental functions: MPFR computes the result rounded toward zero at 53 bits
//    and sets the last bit when inexact ("round to odd"); rounding that double to F (p + 2 <= 53)
//    is then the correctly rounded result (Boldo & Melquiond, IEEE TC 2008).
//  - exp, log, tanh, erf, erfc, sin and cos first try the certified evaluation's ball of the
//    result (reference/ball.h: double-double with written bounds, several times cheaper than
//    MPFR): where every point of it rounds to the same value of F, that value is the correctly
//    rounded result; otherwise the round-to-odd path decides.
// tests/reference/sim_float_test.cc checks the double path against the round-to-odd path exhaustively
// for the fp8 formats.
#pragma once

#include <bit>
#include <cfloat>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "reference/formats.h"
#include "reference/number_types.h"

namespace lmo::ref {

template <Format F>
using container_t = std::conditional_t<
    spec(F).container_bits == 64, uint64_t,
    std::conditional_t<spec(F).container_bits == 32, uint32_t,
                       std::conditional_t<spec(F).container_bits == 16, uint16_t, uint8_t>>>;

// Round-to-odd helpers (sim_float.cc), each returning a double whose rounding to any format of
// precision <= 51 bits equals the rounding of the exact result.
namespace odd {
enum class Fn : uint8_t { exp, expm1, log, log1p, tanh, erf, erfc, sin, cos, sqrt, atan };
double unary(Fn fn, double x);
// fn(x) correctly rounded to f, as bits: from a cheap certified enclosure where one decides the
// rounding (exp, log, tanh, erf, erfc, sin, cos: several times cheaper than MPFR), else encode(f,
// unary(fn, x)).
uint64_t rounded(Format f, Fn fn, double x);
double fma(double a, double b, double c);
double pow(double a, double b);
}  // namespace odd

template <Format F>
class Sim {
 public:
  using bits_type = container_t<F>;
  static constexpr Format format = F;

  constexpr Sim() = default;
  explicit Sim(double v) : bits_(static_cast<bits_type>(encode(F, v))) {}
  explicit Sim(float v) : Sim(static_cast<double>(v)) {}
  explicit Sim(int v) : Sim(static_cast<double>(v)) {}
  explicit Sim(long v) : Sim(static_cast<double>(v)) {}
  explicit Sim(long long v) : Sim(static_cast<double>(v)) {}
  explicit Sim(unsigned v) : Sim(static_cast<double>(v)) {}
  explicit Sim(unsigned long v) : Sim(static_cast<double>(v)) {}
  explicit Sim(const mp& v) : bits_(static_cast<bits_type>(encode(F, v))) {}
  explicit Sim(const float128& v) : bits_(static_cast<bits_type>(encode(F, v))) {}

  static Sim from_bits(bits_type b) {
    Sim s;
    s.bits_ = b;
    return s;
  }
  bits_type bits() const { return bits_; }

  // Exact: every simulated value is a double.
  explicit operator double() const { return decode<double>(F, bits_); }
  explicit operator float() const { return static_cast<float>(decode<double>(F, bits_)); }
  explicit operator mp() const { return decode<mp>(F, bits_); }
  explicit operator float128() const { return decode<float128>(F, bits_); }
  double value() const { return decode<double>(F, bits_); }

  friend Sim operator+(Sim a, Sim b) {
    if constexpr (kNativeF32) {
      const float r = a.as_float() + b.as_float();
      if (native_result(a, b, r)) return from_float(r);
    }
    return Sim(a.value() + b.value());
  }
  friend Sim operator-(Sim a, Sim b) {
    if constexpr (kNativeF32) {
      const float r = a.as_float() - b.as_float();
      if (native_result(a, b, r)) return from_float(r);
    }
    return Sim(a.value() - b.value());
  }
  friend Sim operator*(Sim a, Sim b) {
    if constexpr (kNativeF32) {
      const float r = a.as_float() * b.as_float();
      if (native_result(a, b, r)) return from_float(r);
    }
    return Sim(a.value() * b.value());
  }
  friend Sim operator/(Sim a, Sim b) {
    if constexpr (kNativeF32) {
      const float r = a.as_float() / b.as_float();
      if (native_result(a, b, r)) return from_float(r);
    }
    return Sim(a.value() / b.value());
  }
  Sim operator-() const { return Sim(-value()); }
  Sim operator+() const { return *this; }
  Sim& operator+=(Sim o) { return *this = *this + o; }
  Sim& operator-=(Sim o) { return *this = *this - o; }
  Sim& operator*=(Sim o) { return *this = *this * o; }
  Sim& operator/=(Sim o) { return *this = *this / o; }

  friend bool operator==(Sim a, Sim b) { return a.value() == b.value(); }
  friend bool operator!=(Sim a, Sim b) { return a.value() != b.value(); }
  friend bool operator<(Sim a, Sim b) { return a.value() < b.value(); }
  friend bool operator<=(Sim a, Sim b) { return a.value() <= b.value(); }
  friend bool operator>(Sim a, Sim b) { return a.value() > b.value(); }
  friend bool operator>=(Sim a, Sim b) { return a.value() >= b.value(); }
  // Comparisons with integer literals (`x == 0`, `x > 0`) in generic code.
  friend bool operator==(Sim a, int b) { return a.value() == b; }
  friend bool operator<(Sim a, int b) { return a.value() < b; }
  friend bool operator>(Sim a, int b) { return a.value() > b; }
  friend bool operator!=(Sim a, int b) { return a.value() != b; }
  friend bool operator<=(Sim a, int b) { return a.value() <= b; }
  friend bool operator>=(Sim a, int b) { return a.value() >= b; }

 private:
  // f32 on hardware that evaluates float operations in float (FLT_EVAL_METHOD 0: SSE, not x87):
  // one IEEE operation is the exact result rounded once to nearest-even, the double path's
  // value, without its two conversions (the naive kernels of `check` at real shapes are mostly
  // these). Only where no flush-to-zero or denormals-are-zero mode could have touched it:
  // operands normal or zero, result normal; the rest (and NaN, whose payload the double path
  // makes canonical) take the double path. tests/reference/sim_float_test.cc compares both.
  static constexpr bool kNativeF32 = F == Format::f32 && FLT_EVAL_METHOD == 0;
  float as_float() const { return std::bit_cast<float>(static_cast<uint32_t>(bits_)); }
  static Sim from_float(float r) {
    return from_bits(static_cast<bits_type>(std::bit_cast<uint32_t>(r)));
  }
  static bool normal_or_zero(uint32_t b) {
    const uint32_t e = b & 0x7F800000u;
    return e != 0x7F800000u && (e != 0 || (b & 0x7FFFFFu) == 0);
  }
  static bool native_result(Sim a, Sim b, float r) {
    const uint32_t e = std::bit_cast<uint32_t>(r) & 0x7F800000u;
    return e != 0 && e != 0x7F800000u && normal_or_zero(static_cast<uint32_t>(a.bits_)) &&
           normal_or_zero(static_cast<uint32_t>(b.bits_));
  }

  bits_type bits_ = 0;
};

using bfloat16 = Sim<Format::bf16>;
using float16 = Sim<Format::f16>;
using tf32 = Sim<Format::tf32>;
using fp8_e4m3 = Sim<Format::e4m3>;
using fp8_e5m2 = Sim<Format::e5m2>;

template <class T>
inline constexpr bool is_sim_v = false;
template <Format F>
inline constexpr bool is_sim_v<Sim<F>> = true;

// Functions found by argument-dependent lookup from generic code (`using std::exp; exp(x)`).
template <Format F>
Sim<F> sqrt(Sim<F> x) { return Sim<F>(std::sqrt(x.value())); }
template <Format F>
Sim<F> abs(Sim<F> x) { return Sim<F>(std::fabs(x.value())); }
template <Format F>
Sim<F> fabs(Sim<F> x) { return abs(x); }
template <Format F>
Sim<F> fma(Sim<F> a, Sim<F> b, Sim<F> c) { return Sim<F>(odd::fma(a.value(), b.value(), c.value())); }
template <Format F>
Sim<F> pow(Sim<F> a, Sim<F> b) { return Sim<F>(odd::pow(a.value(), b.value())); }
template <Format F>
Sim<F> max(Sim<F> a, Sim<F> b) { return a < b ? b : a; }
template <Format F>
Sim<F> min(Sim<F> a, Sim<F> b) { return b < a ? b : a; }
template <Format F>
Sim<F> floor(Sim<F> x) { return Sim<F>(std::floor(x.value())); }
template <Format F>
Sim<F> ldexp(Sim<F> x, int e) { return Sim<F>(std::ldexp(x.value(), e)); }
template <Format F>
bool isnan(Sim<F> x) { return bits_is_nan(F, x.bits()); }
template <Format F>
bool isinf(Sim<F> x) { return bits_is_inf(F, x.bits()); }
template <Format F>
bool isfinite(Sim<F> x) { return !isnan(x) && !isinf(x); }
template <Format F>
bool signbit(Sim<F> x) { return std::signbit(x.value()); }

#define LMO_SIM_UNARY(name)                                                                  \
  template <Format F>                                                                        \
  Sim<F> name(Sim<F> x) {                                                                    \
    return Sim<F>::from_bits(                                                                \
        static_cast<typename Sim<F>::bits_type>(odd::rounded(F, odd::Fn::name, x.value()))); \
  }
LMO_SIM_UNARY(exp)
LMO_SIM_UNARY(expm1)
LMO_SIM_UNARY(log)
LMO_SIM_UNARY(log1p)
LMO_SIM_UNARY(tanh)
LMO_SIM_UNARY(erf)
LMO_SIM_UNARY(erfc)
LMO_SIM_UNARY(sin)
LMO_SIM_UNARY(cos)
LMO_SIM_UNARY(atan)
#undef LMO_SIM_UNARY

}  // namespace lmo::ref

template <lmo::ref::Format F>
class std::numeric_limits<lmo::ref::Sim<F>> {
  using S = lmo::ref::Sim<F>;
  static constexpr const lmo::ref::FormatSpec& s = lmo::ref::spec(F);

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = s.has_inf;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = false;
  static constexpr bool has_denorm_loss = false;
  static constexpr std::float_round_style round_style = std::round_to_nearest;
  static constexpr bool is_iec559 = false;
  static constexpr bool is_bounded = true;
  static constexpr int digits = s.precision();
  static constexpr int radix = 2;
  static constexpr int min_exponent = s.emin() + 1;  // C++ convention: 2^(min_exponent-1) is min
  static constexpr int max_exponent = s.emax() + 1;
  static S min() { return S(std::ldexp(1.0, s.emin())); }
  static S max() { return S::from_bits(static_cast<typename S::bits_type>(lmo::ref::max_finite_bits(F))); }
  static S lowest() { return -max(); }
  static S epsilon() { return S(std::ldexp(1.0, -s.frac_bits)); }
  static S round_error() { return S(0.5); }
  static S infinity() { return S::from_bits(static_cast<typename S::bits_type>(lmo::ref::inf_bits(F))); }
  static S quiet_NaN() { return S::from_bits(static_cast<typename S::bits_type>(lmo::ref::nan_bits(F))); }
  static S denorm_min() {
    return S::from_bits(static_cast<typename S::bits_type>(lmo::ref::min_subnormal_bits(F)));
  }
};
