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
#include <type_traits>

namespace lmo::ref::dd {

// The algorithms below are written once for any T with IEEE double arithmetic in each lane:
// double, and the four-lane vector of the batched exponential (dd_exp_avx2.cc), so that the two
// give the very same bits. T must provide +, −, unary −, × and fma(a, b, c) (found by argument-
// dependent lookup, std::fma for double).
template <class T>
struct Word2 {
  T hi{};
  T lo{};
};
using DD = Word2<double>;

inline constexpr double kAddErr = 0x1p-103;
inline constexpr double kMulErr = 0x1p-103;
inline constexpr double kDivErr = 0x1p-101;
inline constexpr double kSqrtErr = 0x1p-103;

// s + e = a + b exactly (Knuth's 2Sum; no precondition).
template <class T>
[[gnu::always_inline]] inline Word2<T> two_sum(T a, std::type_identity_t<T> b) {
  const T s = a + b;
  const T bb = s - a;
  const T e = (a - (s - bb)) + (b - bb);
  return {s, e};
}

// s + e = a + b exactly when |a| ≥ |b| or a = 0 (Dekker's Fast2Sum).
template <class T>
[[gnu::always_inline]] inline Word2<T> fast_two_sum(T a, std::type_identity_t<T> b) {
  const T s = a + b;
  const T e = b - (s - a);
  return {s, e};
}

// p + e = a·b exactly, unless the product is near underflow (|e| below 2^-1022·2^-52).
template <class T>
[[gnu::always_inline]] inline Word2<T> two_prod(T a, std::type_identity_t<T> b) {
  using std::fma;
  const T p = a * b;
  const T e = fma(a, b, -p);
  return {p, e};
}

// Algorithm 6 (AccurateDWPlusDW).
template <class T>
[[gnu::always_inline]] inline Word2<T> add(Word2<T> x, std::type_identity_t<Word2<T>> y) {
  const Word2<T> s = two_sum(x.hi, y.hi);
  const Word2<T> t = two_sum(x.lo, y.lo);
  const T c = s.lo + t.hi;
  const Word2<T> v = fast_two_sum(s.hi, c);
  const T w = t.lo + v.lo;
  return fast_two_sum(v.hi, w);
}

// Algorithm 12 (DWTimesDW3).
template <class T>
[[gnu::always_inline]] inline Word2<T> mul(Word2<T> x, std::type_identity_t<Word2<T>> y) {
  using std::fma;
  const Word2<T> c = two_prod(x.hi, y.hi);
  const T tl0 = x.lo * y.lo;
  const T tl1 = fma(x.hi, y.lo, tl0);
  const T cl2 = fma(x.lo, y.hi, tl1);
  const T cl3 = c.lo + cl2;
  return fast_two_sum(c.hi, cl3);
}

// Algorithm 9 (DWTimesFP1), the product of a double-word and a double; used by div.
template <class T>
[[gnu::always_inline]] inline Word2<T> mul_fp(Word2<T> x, std::type_identity_t<T> y) {
  const Word2<T> c = two_prod(x.hi, y);
  const T cl2 = x.lo * y;
  const Word2<T> t = fast_two_sum(c.hi, cl2);
  const T tl2 = t.lo + c.lo;
  return fast_two_sum(t.hi, tl2);
}

// The double-word forms by name, so that callers may pass braced pairs ({hi, lo}).
[[gnu::always_inline]] inline DD add(DD x, DD y) { return add<double>(x, y); }
[[gnu::always_inline]] inline DD mul(DD x, DD y) { return mul<double>(x, y); }
[[gnu::always_inline]] inline DD mul_fp(DD x, double y) { return mul_fp<double>(x, y); }

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
