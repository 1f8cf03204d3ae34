// Box–Muller on double-doubles (normal_pair.h). Every double-double operation (double_double.h)
// has relative error at most e = 2^-103 (kAddErr, kMulErr, kSqrtErr); F = 1 + 2^-30 covers the
// ratios between a value and its approximation below (all within 2^-90 of 1) and the roundings of
// the bounds themselves (each a handful of double operations, evaluated in round-to-nearest).
//
// Angle. θ = 2π·w2/2^64 = q·π/2 + ψ with q the top two bits of w2 (a quadrant: sin θ and cos θ
// are ±sin ψ and ±cos ψ, exactly) and ψ = (π/2)·ρ, ρ = rest/2^62 ∈ [0, 1). With j the next six
// bits, ψ = a_j + r, a_j = (π/2)(j + 1/2)/64 and r = (π/2)·g, g = ρ − (j + 1/2)/64 ∈ [−2^-7, 2^-7)
// formed exactly (an integer below 2^55 times 2^-62), so |r| < π/256 < 0.01228.
//  - r̂ = (π/2)^·g, (π/2)^ the double-double of π/2 (error 2^-106 relative): |r̂ − r| ≤ 2^-102|r|;
//    x̂ = r̂² : |x̂ − r²| ≤ 2^-100·r², r² < 1.51·10^-4.
//  - sin r = r·Σ_{k≤5} (−x)^k/(2k+1)!, cos r = Σ_{k≤6} (−x)^k/(2k)!, truncated after r^11 and r^12:
//    the omitted terms are below r^13/13! < 2^-114. Horner in double-double, coefficients
//    rounded from MPFR (2^-106 relative each): each of the ≤ 7 steps adds at most 2e times values
//    ≤ 1, carried to the result by factors x^k ≤ 1, so each series is within 2^-99 + 2^-106 +
//    (x's error times |P'| ≤ 1/2: 2^-112) < 2^-98 of its value. Hence |ŝ_r − sin r| ≤
//    |r|·(2^-98 + 2^-102 + e) + 2^-114 < 2^-102 (|r| < 2^-6) and |ĉ_r − cos r| < 2^-97.9.
//  - sin a_j, cos a_j: MPFR's values (167 bits) rounded to double-doubles, within 2^-106.
//  - sin ψ = s_a c_r + c_a s_r, cos ψ = c_a c_r − s_a s_r: the inputs' errors contribute at most
//    2^-97.9 + 2^-102 + 2·2^-106, the two products and the sum 3e·1.02: in all below 2^-96.9.
//    εT = 2^-96 bounds |ŝ − sin θ| and |ĉ − cos θ|.
//
// Radius. u1 = (w1 + 1)/2^64 is a double-double exactly (an integer below 2^64 splits into a
// double and a remainder of at most 11 bits). With y0 any double (libm's log of u1's high word,
// a guess: its error moves τ below, never the bound), log u1 = y0 + log1p(τ), τ = u1·e^(−y0) − 1.
//  - t̂ = U·Ê − 1, Ê = dd::exp(−y0) (kExpErr relative, dd_exp.h): |t̂ − τ| ≤ (1 + |τ|)(kExpErr +
//    e)·F + e·|t̂| < 2^-97.9 for |t̂| ≤ 2^-20 (checked).
//  - log1p(τ) = τ − τ²/2 + δ, |δ| ≤ |τ|³/(3(1 − |τ|)) ≤ (|t̂| + 2^-97)³/2; replacing τ by t̂ moves
//    τ − τ²/2 by |t̂ − τ|·(1 + 2^-19).
//  - L̂ = y0 + (t̂ − t̂²/2) by a product and two sums: e·(t̂² + |t̂ − t̂²/2| + |L̂|).
//  So |L̂ − log u1| ≤ err_L = F·(2^-97 + (|t̂| + 2^-97)³/2 + e·(|m̂| + |L̂|)), relative rel_L =
//  err_L/|L̂|: at most 2^-33, as |log u1| ≥ 2^-64 (checked ≤ 2^-20, which the square root's
//  bound below assumes).
//  R = √(−2 log u1): R̂ = dd::sqrt(−2L̂), |R̂ − R| ≤ rel_R·R, rel_R = F·(rel_L·(1 + 2^-19)/2 + e).
//
// Values. P = R·C (C = cos θ or sin θ): |P̂ − P| ≤ err_P = F·|R̂|·((e + rel_R)·|Ĉ| + εT);
// Q = stddev·P: err_Q = |stddev|·err_P + F·e·|Q̂| + 2^-1000; V = mean + Q: err_V = err_Q +
// F·e·|V̂| + 2^-1000 (2^-1000: no relative bound holds where a word is subnormal). The ball is
// (V̂, up(F·err_V)); its radius is at least e·|V| of the terms, 2^57 times MPFR's 167-bit
// deviations, as NormalReal::pair_balls requires.
#include "oracle/core/normal_pair.h"

#include <boost/math/constants/constants.hpp>
#include <boost/multiprecision/mpfr.hpp>
#include <cmath>

#include "reference/dd_exp.h"
#include "reference/double_double.h"
#include "reference/fma_clones.h"
#include "reference/split_constant.h"

namespace lmo::oracle {
namespace {

using ref::Ball;
using ref::mp;
namespace dd = ref::dd;

constexpr double kE = 0x1p-103;
constexpr double kF = 1 + 0x1p-30;
constexpr double kTrigErr = 0x1p-96;
constexpr double kAbs = 0x1p-1000;
constexpr int kTableBits = 6;
constexpr int kTable = 1 << kTableBits;

// The constants, from MPFR once: π/2, the series' coefficients (−1)^k/(2k+1)! and (−1)^k/(2k)!,
// and sin a_j, cos a_j.
struct Constants {
  dd::DD half_pi;
  dd::DD sin_c[6], cos_c[7];
  dd::DD sin_a[kTable], cos_a[kTable];
};

const Constants& constants() {
  static const Constants c = [] {
    Constants k;
    const mp half_pi = boost::math::constants::pi<mp>() / 2;
    k.half_pi = ref::dd_of(half_pi);
    mp f = 1;  // n!
    for (int n = 1; n <= 12; ++n) {
      f *= n;
      const mp term = ((n / 2) % 2 == 0 ? mp(1) : mp(-1)) / f;  // (−1)^⌊n/2⌋/n!
      if (n % 2 == 1) k.sin_c[n / 2] = ref::dd_of(term);
      if (n % 2 == 0) k.cos_c[n / 2] = ref::dd_of(term);
    }
    k.sin_c[0] = {1, 0};
    k.cos_c[0] = {1, 0};
    for (int j = 0; j < kTable; ++j) {
      const mp a = half_pi * (mp(j) + mp(0.5)) / kTable;
      k.sin_a[j] = ref::dd_of(mp(boost::multiprecision::sin(a)));
      k.cos_a[j] = ref::dd_of(mp(boost::multiprecision::cos(a)));
    }
    return k;
  }();
  return c;
}

template <int N>
[[gnu::always_inline]] inline dd::DD horner(const dd::DD (&c)[N], dd::DD x) {
  dd::DD y = c[N - 1];
  for (int k = N - 2; k >= 0; --k) y = dd::add(c[k], dd::mul(x, y));
  return y;
}

// An integer of magnitude below 2^64 (unsigned) or 2^63 (signed) as a double-double, exactly:
// its bits above the lowest eleven (at most 53 of them) and those eleven, each a double.
template <class I>
[[gnu::always_inline]] inline dd::DD exact_dd(I v) {
  constexpr I kLow = 0x7FF;
  return dd::fast_two_sum(static_cast<double>(v & ~kLow), static_cast<double>(v & kLow));
}

struct SinCos {
  dd::DD sin, cos;
};

[[gnu::always_inline]] inline SinCos sin_cos_turns(uint64_t w2) {
  const Constants& k = constants();
  const uint64_t q = w2 >> 62;
  const uint64_t rest = w2 & ((uint64_t{1} << 62) - 1);
  const int j = static_cast<int>(rest >> (62 - kTableBits));
  const int64_t off = static_cast<int64_t>(rest & ((uint64_t{1} << (62 - kTableBits)) - 1)) -
                      (int64_t{1} << (61 - kTableBits));
  const dd::DD o = exact_dd(off);
  const dd::DD g = {o.hi * 0x1p-62, o.lo * 0x1p-62};  // exact: no underflow
  const dd::DD r = dd::mul(k.half_pi, g);
  const dd::DD x = dd::mul(r, r);
  const dd::DD sr = dd::mul(r, horner(k.sin_c, x)), cr = horner(k.cos_c, x);
  const dd::DD sa = k.sin_a[j], ca = k.cos_a[j];
  const dd::DD s = dd::add(dd::mul(sa, cr), dd::mul(ca, sr));
  const dd::DD c = dd::add(dd::mul(ca, cr), dd::neg(dd::mul(sa, sr)));
  switch (q) {
    case 0:
      return {s, c};
    case 1:
      return {c, dd::neg(s)};
    case 2:
      return {dd::neg(s), dd::neg(c)};
    default:
      return {dd::neg(c), s};
  }
}

}  // namespace

LMO_FMA_CLONES std::optional<std::array<Ball, 2>> normal_pair_dd(uint64_t w1, uint64_t w2,
                                                                 double mean, double stddev) {
  if (w1 == ~uint64_t{0} || !std::isfinite(mean) || !(std::fabs(stddev) >= 0x1p-900) ||
      !std::isfinite(stddev)) {
    return std::nullopt;
  }
  // log u1 by the exponential (header comment).
  const dd::DD n1 = exact_dd(w1 + 1);                   // w1 + 1 < 2^64: w1 is not all ones
  const dd::DD u = {n1.hi * 0x1p-64, n1.lo * 0x1p-64};  // exact: ≥ 2^-64·2^-11
  const double y0 = std::log(u.hi);
  if (!(y0 <= 0.5 && y0 >= -50)) return std::nullopt;  // a libm far off: the ball path
  const dd::DD t = dd::add(dd::mul(u, dd::exp({-y0, 0})), {-1, 0});
  const double ta = std::fabs(t.hi);
  if (!(ta <= 0x1p-20)) return std::nullopt;
  const dd::DD t2 = dd::mul(t, t);
  const dd::DD m = dd::add(t, {-0.5 * t2.hi, -0.5 * t2.lo});
  const dd::DD l = dd::add({y0, 0}, m);
  const double tail = ta * (1 + 0x1p-40) + 0x1p-97;
  const double err_l =
      kF * (0x1p-97 + tail * tail * tail * 0.5 + kE * (std::fabs(m.hi) + std::fabs(l.hi)));
  const double rel_l = err_l / std::fabs(l.hi);
  if (!(rel_l <= 0x1p-20) || !(l.hi < 0)) return std::nullopt;
  const dd::DD rr = dd::sqrt({-2 * l.hi, -2 * l.lo});
  const double rel_r = kF * (rel_l * (1 + 0x1p-19) / 2 + kE);
  const SinCos sc = sin_cos_turns(w2);
  const auto value = [&](dd::DD c) {
    const dd::DD p = dd::mul(rr, c);
    const double err_p = kF * std::fabs(rr.hi) * ((kE + rel_r) * std::fabs(c.hi) + kTrigErr);
    const dd::DD qv = dd::mul({stddev, 0}, p);
    const double err_q = std::fabs(stddev) * err_p + kF * kE * std::fabs(qv.hi) + kAbs;
    const dd::DD v = dd::add({mean, 0}, qv);
    const double err_v = err_q + kF * kE * std::fabs(v.hi) + kAbs;
    return Ball::from_parts(v.hi, v.lo, ref::up(kF * err_v));
  };
  return std::array<Ball, 2>{value(sc.cos), value(sc.sin)};
}

}  // namespace lmo::oracle
