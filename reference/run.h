// A double-double value v with a running bound e ≥ |v − exact|, for chains of finite operations
// inside one function (the series and table combination of ball_trig.cc, erfcx's Horner): the
// rules of the ball operations (ball.cc), inlined and without their special cases, so that a
// caller compiled with FMA (fma_clones.h) gets each 2Prod as one instruction. Written once for
// double and for the four-lane vector of the batched sine and cosine (ball_trig_avx2.cc): the
// same operations in the same order, so both give the very same bits. T needs +, −, ×, ÷, fma
// and fabs (by argument-dependent lookup; std:: for double), and a broadcast from double.
//
// mag(v) ≥ |v|: |lo| ≤ 2^-52·|hi| for normalized words. up_of() is ball.h's up(): the factor
// 1 + 2^-50 covers the bound's own roundings, the absolute 2^-1070 what a result near underflow
// loses. Non-finite results are the caller's to check.
#pragma once

#include <cmath>
#include <cstddef>

#include "reference/double_double.h"

namespace lmo::ref {

template <class T>
struct RunOf {
  dd::Word2<T> v;
  T e{};
};
using Run = RunOf<double>;

template <class T>
[[gnu::always_inline]] inline T up_of(T r) {
  return r * T(1 + 0x1p-50) + T(0x1p-1070);
}
template <class T>
[[gnu::always_inline]] inline T mag(dd::Word2<T> v) {
  using std::fabs;
  return fabs(v.hi) * T(1 + 0x1p-50);
}
// |x̂ŷ − xy| ≤ |x̂|·e_y + |ŷ|·e_x + e_x·e_y, plus the product's own rounding.
template <class T>
[[gnu::always_inline]] inline RunOf<T> operator*(RunOf<T> a, RunOf<T> b) {
  const dd::Word2<T> p = dd::mul<T>(a.v, b.v);
  return {p, up_of(mag(a.v) * b.e + mag(b.v) * a.e + a.e * b.e + T(dd::kMulErr) * mag(p))};
}
template <class T>
[[gnu::always_inline]] inline RunOf<T> operator+(RunOf<T> a, RunOf<T> b) {
  const dd::Word2<T> s = dd::add<T>(a.v, b.v);
  return {s, up_of(a.e + b.e + T(dd::kAddErr) * mag(s))};
}
template <class T>
[[gnu::always_inline]] inline RunOf<T> operator-(RunOf<T> a) {
  return {{-a.v.hi, -a.v.lo}, a.e};
}
template <class T>
[[gnu::always_inline]] inline RunOf<T> operator-(RunOf<T> a, RunOf<T> b) {
  return a + -b;
}
// An exact value (a double, or one lane's worth of them).
template <class T>
[[gnu::always_inline]] inline RunOf<T> exact_run(T x) {
  return {{x, T(0)}, T(0)};
}
// The largest |value| the run admits.
template <class T>
[[gnu::always_inline]] inline T run_max(RunOf<T> a) {
  using std::fabs;
  return up_of((fabs(a.v.hi) + fabs(a.v.lo) + a.e) * T(1 + 0x1p-52));
}

// Σ_k c_k·x^k for k < n by Horner, v ← c_k + x·v, on runs; coefficient(k) gives c_k as a run of
// T. The short series of the sine and cosine (trig_core.h) and erfcx's polynomial
// (ball_detail::horner) both run it.
template <class T, class Coefficient>
[[gnu::always_inline]] inline RunOf<T> run_horner(size_t n, Coefficient&& coefficient, RunOf<T> x) {
  RunOf<T> v = coefficient(n - 1);
  for (size_t k = n - 1; k-- > 0;) v = coefficient(k) + x * v;
  return v;
}

}  // namespace lmo::ref
