// Double-double ("double-word") arithmetic: a value hi + lo held in two doubles, |lo| ≤ ulp(hi)/2,
// about 106 significant bits. The certified evaluation (ball.h) carries its midpoints in it.
//
// Each operation below is one of the algorithms of M. Joldes, J.-M. Muller, V. Popescu, "Tight
// and rigorous error bounds for basic building blocks of double-word arithmetic", ACM TOMS 44(2),
// 2017, with the bound proved there (u = 2^-53, relative to the exact result of the operation on
// the two double-word operands, in the absence of underflow and overflow):
//
//   add  Algorithm 6 (AccurateDWPlusDW)   3u²/(1 − 4u)  < 2^-104.4
//   mul  Algorithm 12 (DWTimesDW3, FMA)   4u²           = 2^-104
//   div  Algorithm 17 (DWDivDW2)          15u² + 56u³   < 2^-102
//
// sqrt is one Newton step from s = RN(√hi): with X = hi + lo, s = √X·(1 + ε₀), |ε₀| ≤ u, the
// residual X − s² is formed with s² exact (2Prod) and hi − p.hi exact (Sterbenz), so the
// correction (X − s²)/(2s) ≈ ε₀·s carries three roundings of relative size u (≤ 3u·|ε₀|·s) and
// Newton's truncation is ε₀²·s/2: at most 3.5u² + O(u³) relative, < 2^-104.1.
//
// The ball layer uses the rounded-up bounds kAddErr … kSqrtErr (a factor of at least 2 of margin
// over each proof), and adds an absolute term for results near the underflow threshold, where the
// low word loses bits and the relative bounds above stop holding.
#pragma once

#include <cmath>

namespace lmo::ref::dd {

struct DD {
  double hi = 0;
  double lo = 0;
};

inline constexpr double kAddErr = 0x1p-103;
inline constexpr double kMulErr = 0x1p-103;
inline constexpr double kDivErr = 0x1p-101;
inline constexpr double kSqrtErr = 0x1p-103;

// s + e = a + b exactly (Knuth's 2Sum; no precondition).
[[gnu::always_inline]] inline DD two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  const double e = (a - (s - bb)) + (b - bb);
  return {s, e};
}

// s + e = a + b exactly when |a| ≥ |b| or a = 0 (Dekker's Fast2Sum).
[[gnu::always_inline]] inline DD fast_two_sum(double a, double b) {
  const double s = a + b;
  const double e = b - (s - a);
  return {s, e};
}

// p + e = a·b exactly, unless the product is near underflow (|e| below 2^-1022·2^-52).
[[gnu::always_inline]] inline DD two_prod(double a, double b) {
  const double p = a * b;
  const double e = std::fma(a, b, -p);
  return {p, e};
}

// Algorithm 6 (AccurateDWPlusDW).
[[gnu::always_inline]] inline DD add(DD x, DD y) {
  const DD s = two_sum(x.hi, y.hi);
  const DD t = two_sum(x.lo, y.lo);
  const double c = s.lo + t.hi;
  const DD v = fast_two_sum(s.hi, c);
  const double w = t.lo + v.lo;
  return fast_two_sum(v.hi, w);
}

// Algorithm 12 (DWTimesDW3).
[[gnu::always_inline]] inline DD mul(DD x, DD y) {
  const DD c = two_prod(x.hi, y.hi);
  const double tl0 = x.lo * y.lo;
  const double tl1 = std::fma(x.hi, y.lo, tl0);
  const double cl2 = std::fma(x.lo, y.hi, tl1);
  const double cl3 = c.lo + cl2;
  return fast_two_sum(c.hi, cl3);
}

// Algorithm 9 (DWTimesFP1), the product of a double-word and a double; used by div.
[[gnu::always_inline]] inline DD mul_fp(DD x, double y) {
  const DD c = two_prod(x.hi, y);
  const double cl2 = x.lo * y;
  const DD t = fast_two_sum(c.hi, cl2);
  const double tl2 = t.lo + c.lo;
  return fast_two_sum(t.hi, tl2);
}

// Algorithm 17 (DWDivDW2).
[[gnu::always_inline]] inline DD div(DD x, DD y) {
  const double th = x.hi / y.hi;
  const DD r = mul_fp(y, th);
  const DD pi = two_sum(x.hi, -r.hi);
  const double dh = x.lo - r.lo;
  const double dl = pi.lo + dh;
  const double d = pi.hi + dl;
  const double tl = d / y.hi;
  return fast_two_sum(th, tl);
}

// One Newton correction of the double square root (bound above). x.hi > 0.
[[gnu::always_inline]] inline DD sqrt(DD x) {
  const double sh = std::sqrt(x.hi);
  const DD p = two_prod(sh, sh);
  const double r = ((x.hi - p.hi) - p.lo + x.lo) / (2 * sh);
  return fast_two_sum(sh, r);
}

[[gnu::always_inline]] inline DD neg(DD x) { return {-x.hi, -x.lo}; }

}  // namespace lmo::ref::dd
