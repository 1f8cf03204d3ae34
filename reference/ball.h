// Ball: the number type of the certified evaluation ([certified], oracle/core/certified.h). A
// value is a double-double midpoint m and a radius r, and stands for the interval [m − r, m + r],
// which contains both the exact real value of the computation and the value the MPFR reference
// (mp, 167 bits) computes for it. The generic formula code of reference/ runs on it unchanged,
// as on mp, double or Sim<F>: where the interval rounds to one value in every format, that
// value is the reference's, at a cost of a few double operations per operation instead of an
// MPFR call.
//
// Rigor, operation by operation:
//  - + − × ÷ √: the double-double algorithms of double_double.h, whose proven relative error
//    bounds enter the radius, plus the propagated input radii (first-order terms and their
//    products, exactly bounded). A result that both inputs determine exactly (2Sum, 2Prod of
//    two doubles, a power-of-two scale) keeps radius 0.
//  - exp: dd::exp with its written bound (dd_exp.cc). log, tanh, sin, cos, erf and erfc: ball
//    arithmetic on exp, short series around table points and series near 0, each with its
//    truncation bound written next to it (ball.cc, ball_trig.cc, ball_erf.cc, erfcx_taylor.cc).
//    expm1, log1p, atan, pow (and the others outside their ranges): MPFR
//    at the reference's precision on the midpoint, plus a Lipschitz bound of the function over
//    the ball: as rigorous as the reference itself.
//  - Radii are computed in double with round-to-nearest; each formula applies up() once, which
//    covers the roundings of up to eight operations (1 + 2^-50 > (1 + 2^-53)^8) and adds
//    2^-1070, more than double-double loses near underflow.
//  - The MPFR reference rounds every operation to 167 bits, about 2^-64 times finer than the
//    double-double bounds, and its errors propagate like the exact value's: the same radius
//    encloses both, with the margin certified.cc adds before deciding a rounding.
//
// Branches. A comparison whose answer the two intervals decide returns it. One they do not
// decide returns the midpoints' answer and counts itself in ball_undecided(); the certified
// driver then discards the evaluation and runs MPFR, since the reference's branch may differ.
// One exception: two balls with identical midpoint and radius compare as equal without being
// counted. They come from identical computations on identical inputs (the max of a row compared
// with its own first element, two experts fed the same values), where the MPFR reference also
// holds equal values; counting them would send every softmax to MPFR.
//
// Non-finite values. ±inf and NaN with radius 0 are exact and propagate as IEEE says, as in
// MPFR (masked scores are −inf). A finite input giving a non-finite result (double overflow
// where MPFR, with its wide exponent, stays finite) is counted as undecided.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>

#include "reference/double_double.h"
#include "reference/number_types.h"

namespace lmo::ref {
class Ball;
}  // namespace lmo::ref

// Defined before Ball itself: Boost.Multiprecision's conversion traits instantiate it.
template <>
class std::numeric_limits<lmo::ref::Ball> {
  using B = lmo::ref::Ball;
  using L = std::numeric_limits<double>;

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = false;
  static constexpr std::float_round_style round_style = std::round_to_nearest;
  static constexpr bool is_iec559 = false;
  static constexpr bool is_bounded = true;
  static constexpr int digits = 106;
  static constexpr int radix = 2;
  static constexpr int min_exponent = L::min_exponent;
  static constexpr int max_exponent = L::max_exponent;
  static B min();
  static B max();
  static B lowest();
  static B epsilon();
  static B round_error();
  static B infinity();
  static B quiet_NaN();
  static B denorm_min();
};

namespace lmo::ref {

// Comparisons (and operations) so far that the intervals could not decide, over all threads.
// The certified driver reads it before and after an evaluation: never reset, so concurrent
// evaluations can only make each other fall back, never hide an undecided branch.
uint64_t ball_undecided();
void count_ball_undecided();

class Ball {
 public:
  Ball() = default;
  explicit Ball(double v) : hi_(v) {}
  explicit Ball(float v) : hi_(v) {}
  explicit Ball(int v) : hi_(v) {}
  explicit Ball(long v) : Ball(static_cast<long long>(v)) {}
  explicit Ball(long long v);
  explicit Ball(unsigned v) : hi_(v) {}
  explicit Ball(unsigned long v);
  // The interval around x: x's double-double rounding, radius its rounding error (0 if exact).
  explicit Ball(const mp& x);

  static Ball from_parts(double hi, double lo, double rad) {
    Ball b;
    b.hi_ = hi;
    b.lo_ = lo;
    b.rad_ = rad;
    return b;
  }

  double hi() const { return hi_; }
  double lo() const { return lo_; }
  double rad() const { return rad_; }
  dd::DD mid() const { return {hi_, lo_}; }
  bool exact() const { return rad_ == 0; }
  bool is_double() const { return rad_ == 0 && lo_ == 0; }

  explicit operator double() const { return hi_; }
  explicit operator float() const { return static_cast<float>(hi_); }
  // The midpoint (exact when the two words' exponents lie within mp's 167 bits).
  // A zero low word is left out: −0 + 0 would lose the sign of a −0 midpoint.
  explicit operator mp() const { return lo_ == 0 ? mp(hi_) : mp(hi_) + mp(lo_); }

  // Conservative bounds of the interval as doubles (outward by one ulp).
  double lower() const;
  double upper() const;

  friend Ball operator+(const Ball& a, const Ball& b);
  friend Ball operator-(const Ball& a, const Ball& b) { return a + (-b); }
  friend Ball operator*(const Ball& a, const Ball& b);
  friend Ball operator/(const Ball& a, const Ball& b);
  Ball operator-() const { return from_parts(-hi_, -lo_, rad_); }
  Ball operator+() const { return *this; }
  Ball& operator+=(const Ball& o) { return *this = *this + o; }
  Ball& operator-=(const Ball& o) { return *this = *this - o; }
  Ball& operator*=(const Ball& o) { return *this = *this * o; }
  Ball& operator/=(const Ball& o) { return *this = *this / o; }

  // −1, 0, +1 for a < b, a = b, a > b; 2 if unordered (a NaN). Counts an undecided comparison.
  friend int compare(const Ball& a, const Ball& b);
  friend bool operator==(const Ball& a, const Ball& b) { return compare(a, b) == 0; }
  friend bool operator!=(const Ball& a, const Ball& b) { return compare(a, b) != 0; }
  friend bool operator<(const Ball& a, const Ball& b) { return compare(a, b) == -1; }
  friend bool operator<=(const Ball& a, const Ball& b) {
    const int c = compare(a, b);
    return c == -1 || c == 0;
  }
  friend bool operator>(const Ball& a, const Ball& b) { return compare(a, b) == 1; }
  friend bool operator>=(const Ball& a, const Ball& b) {
    const int c = compare(a, b);
    return c == 1 || c == 0;
  }
  friend bool operator==(const Ball& a, int b) { return a == Ball(b); }
  friend bool operator!=(const Ball& a, int b) { return a != Ball(b); }
  friend bool operator<(const Ball& a, int b) { return a < Ball(b); }
  friend bool operator<=(const Ball& a, int b) { return a <= Ball(b); }
  friend bool operator>(const Ball& a, int b) { return a > Ball(b); }
  friend bool operator>=(const Ball& a, int b) { return a >= Ball(b); }

 private:
  double hi_ = 0;
  double lo_ = 0;
  double rad_ = 0;
};

// The rounding margin of radius arithmetic (see the header comment).
inline double up(double r) { return r * (1 + 0x1p-50) + 0x1p-1070; }

mp to_mp(const Ball& x);

Ball exp(const Ball& x);
// exp of every element in place: the same balls as exp one at a time (dd::exp_many takes the
// midpoints four at a time where the CPU allows).
void exp_many(std::span<Ball> x);
Ball expm1(const Ball& x);
Ball log(const Ball& x);
Ball log1p(const Ball& x);
Ball tanh(const Ball& x);
Ball erf(const Ball& x);
Ball erfc(const Ball& x);
// erfc of every element in place: the same balls as erfc one at a time, the exponentials e^(−x²)
// taken together (exp_many).
void erfc_many(std::span<Ball> x);
Ball sin(const Ball& x);
Ball cos(const Ball& x);
// Both of one argument: one reduction and the two series that sin and cos each compute anyway
// (Box–Muller's normal pairs need both).
struct BallSinCos {
  Ball sin, cos;
};
BallSinCos sin_cos(const Ball& x);
// sin_cos of every element (out as long as x): the same balls as sin_cos one at a time, four
// lanes at a time where the CPU has AVX2 and FMA (ball_trig_avx2.cc).
void sin_cos_many(std::span<const Ball> x, std::span<BallSinCos> out);
Ball atan(const Ball& x);
Ball sqrt(const Ball& x);
Ball pow(const Ball& a, const Ball& b);
Ball fma(const Ball& a, const Ball& b, const Ball& c);
Ball floor(const Ball& x);
Ball max(const Ball& a, const Ball& b);
Ball min(const Ball& a, const Ball& b);

inline Ball abs(const Ball& x) { return std::signbit(x.hi()) ? -x : x; }
inline Ball fabs(const Ball& x) { return abs(x); }
Ball ldexp(const Ball& x, int e);
inline bool isnan(const Ball& x) { return std::isnan(x.hi()); }
inline bool isinf(const Ball& x) { return std::isinf(x.hi()); }
inline bool isfinite(const Ball& x) { return std::isfinite(x.hi()); }
inline bool signbit(const Ball& x) { return std::signbit(x.hi()); }

}  // namespace lmo::ref

inline lmo::ref::Ball std::numeric_limits<lmo::ref::Ball>::min() {
  return lmo::ref::Ball(L::min());
}
inline lmo::ref::Ball std::numeric_limits<lmo::ref::Ball>::max() {
  return lmo::ref::Ball(L::max());
}
inline lmo::ref::Ball std::numeric_limits<lmo::ref::Ball>::lowest() {
  return lmo::ref::Ball(L::lowest());
}
inline lmo::ref::Ball std::numeric_limits<lmo::ref::Ball>::epsilon() {
  return lmo::ref::Ball(0x1p-105);
}
inline lmo::ref::Ball std::numeric_limits<lmo::ref::Ball>::round_error() {
  return lmo::ref::Ball(0.5);
}
inline lmo::ref::Ball std::numeric_limits<lmo::ref::Ball>::infinity() {
  return lmo::ref::Ball(L::infinity());
}
inline lmo::ref::Ball std::numeric_limits<lmo::ref::Ball>::quiet_NaN() {
  return lmo::ref::Ball(L::quiet_NaN());
}
inline lmo::ref::Ball std::numeric_limits<lmo::ref::Ball>::denorm_min() {
  return lmo::ref::Ball(L::denorm_min());
}
