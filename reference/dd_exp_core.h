// The steps of dd::exp (dd_exp.cc, where the error bound is derived) written once for double and
// for the four-lane vector of exp_many's AVX2 path (dd_exp_avx2.cc): the same operations in the
// same order, so that both give the very same bits. T is double or a type with the operations
// double_double.h asks of it, constructible from a double (broadcast).
#pragma once

#include <array>
#include <cstdint>

#include "reference/double_double.h"

namespace lmo::ref::dd::exp_core {

// ln 2/256 split into two 32-bit pieces and a double, and the 256 values 2^(j/256), from MPFR.
struct Constants {
  double inv_l = 0;  // 256/ln 2, only to choose k (its error moves r, not the result)
  double l1 = 0, l2 = 0, l3 = 0;
  std::array<DD, 256> table{};
};
const Constants& constants();

// y_i = exp({xh[i], xl[i]}) one at a time for i in [begin, end): exp_many's path without AVX2,
// and its lanes and tail that the vector path leaves to exp.
void exp_each(const double* xh, const double* xl, int64_t begin, int64_t end, double* yh,
              double* yl);

// 1/3! and 1/4! in double-double; 1/5! … 1/8! in double (their errors are weighted by |r|^5).
inline constexpr DD kInv6{0x1.5555555555555p-3, 0x1.5555555555555p-57};
inline constexpr DD kInv24{0x1.5555555555555p-5, 0x1.5555555555555p-59};
inline constexpr double kInv120 = 1.0 / 120, kInv720 = 1.0 / 720, kInv5040 = 1.0 / 5040,
                        kInv40320 = 1.0 / 40320;

// r = x − k·L with k = kd (an integer), L = L1 + L2 + L3.
template <class T>
[[gnu::always_inline]] inline Word2<T> reduce(Word2<T> x, T kd, const Constants& c) {
  const Word2<T> t = two_sum(x.hi - kd * T(c.l1), -kd * T(c.l2));
  return add(add(t, Word2<T>{x.lo, T(0)}), Word2<T>{-kd * T(c.l3), T(0)});
}

// e^r − 1: the Taylor polynomial, degrees 5–8 in double, 1–4 in double-double Horner.
template <class T>
[[gnu::always_inline]] inline Word2<T> expm1_poly(Word2<T> r) {
  const T q = T(kInv120) + r.hi * (T(kInv720) + r.hi * (T(kInv5040) + r.hi * T(kInv40320)));
  Word2<T> h = add(Word2<T>{T(kInv24.hi), T(kInv24.lo)}, mul_fp(r, q));
  h = add(Word2<T>{T(kInv6.hi), T(kInv6.lo)}, mul(r, h));
  h = add(Word2<T>{T(0.5), T(0)}, mul(r, h));
  h = add(Word2<T>{T(1), T(0)}, mul(r, h));
  return mul(r, h);
}

// 2^(j/256)·e^r from the table entry and e^r − 1.
template <class T>
[[gnu::always_inline]] inline Word2<T> times_table(Word2<T> tj, Word2<T> p) {
  return add(tj, mul(tj, p));
}

}  // namespace lmo::ref::dd::exp_core
