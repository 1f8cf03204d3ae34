// e^x in double-double (dd_exp.h).
//
// Method: x = k·L + r with L = ln 2 / 256, k = nearest integer to x/L, so e^x = 2^(k>>8) ·
// 2^((k&255)/256) · e^r with |r| ≤ L/2 < 0.00136 < 2^-9.5. The 256 values 2^(j/256) are computed
// once from MPFR and rounded to double-double. e^r − 1 is its Taylor polynomial, the terms of
// degree 1–4 in double-double Horner, degree 5–8 in double.
//
// Error bound (u = 2^-53; e_add, e_mul ≤ 2^-103 the double-double bounds of double_double.h):
//  - Reduction. |k| < 2^19 for |x| ≤ 746. L = L1 + L2 + L3 with L1, L2 of 32 significant bits, so
//    k·L1 and k·L2 are exact; x.hi − k·L1 is exact (Sterbenz: for k ≠ 0 both lie within a factor
//    2); the rest is two 2Sums and two double-double additions. L − L1 − L2 − L3 ≤ 2^-53·|L3|
//    with |L3| < 2^-72, so k·(L − L1 − L2 − L3) < 2^-106; k·L3 rounds with error < 2^-107; the two
//    additions add ≤ 2·e_add·|r|. So r carries an absolute error δ < 2^-105.5, a relative error
//    e^δ − 1 < 2^-105.4 of the result.
//  - Polynomial. Truncation after degree 8: Σ_{n≥9} |r|^n/n! < 1.01·2^-85.5/9! < 2^-104. The
//    double tail q = 1/120 + r(1/720 + r(1/5040 + r/40320)) has relative error < 4u, weighted by
//    |r|^5 < 2^-47.5: < 2^-105. Each of the four double-double Horner steps h ← c + r·h adds
//    e_mul·|r·h| + e_add·|h|; every inner error reaches P = e^r − 1 multiplied by a power of |r|,
//    so |P̂ − P| < |P|·(3·2^-103 + 2^-110) + 2^-104 + 2^-105 < |P|·2^-101.4 + 2^-103.4.
//  - Reconstruction. T̂_j = 2^(j/256)(1 + τ), |τ| ≤ u² = 2^-106. Ŷ = T̂_j + T̂_j·P̂ adds e_mul·|T_j P|
//    (< 2^-112.5 relative, as |P| < 2^-9.5) and e_add·|Y|. Relative to Y = 2^(j/256)·e^r ≥
//    0.998·T_j: 2^-103.3 (P̂) + 2^-103 (add) + 2^-106 (table) + 2^-105.4 (reduction) + 2^-112 <
//    2^-101.5.
//  - Scaling by 2^(k>>8) is exact while the result stays normal; below that each of the two words
//    loses at most 2^-1075, inside kExpAbsErr.
// The bound claimed, kExpErr = 2^-98, leaves a factor of 11 over this sum; tests/reference/ball_test.cc
// compares 10^5 arguments against MPFR (observed maximum far below).
#include "reference/dd_exp.h"

#include <bit>
#include <cmath>
#include <cstdint>

#include "reference/dd_exp_core.h"
#include "reference/fma_clones.h"
#include "reference/number_types.h"
#include "reference/split_constant.h"

namespace lmo::ref::dd {

namespace exp_core {

const Constants& constants() {
  static const Constants c = [] {
    Constants k;
    const mp l = boost::multiprecision::log(mp(2)) / 256;
    k.inv_l = static_cast<double>(mp(1 / l));
    k.l1 = cut_to_32_bits(static_cast<double>(l));
    const mp rest = l - k.l1;
    k.l2 = cut_to_32_bits(static_cast<double>(rest));
    k.l3 = static_cast<double>(mp(rest - k.l2));
    for (int j = 0; j < 256; ++j) k.table[static_cast<size_t>(j)] = dd_of(exp(mp(j) * l));
    return k;
  }();
  return c;
}

}  // namespace exp_core

using exp_core::constants;
using exp_core::Constants;
using exp_core::kInv120;

LMO_FMA_CLONES DD exp(DD x) {
  if (x.hi < kExpMin) return {0, 0};
  const exp_core::Constants& c = constants();
  const double kd = std::nearbyint(x.hi * c.inv_l);
  const DD p = exp_core::expm1_poly(exp_core::reduce(x, kd, c));
  const long k = static_cast<long>(kd);
  const DD y = exp_core::times_table(c.table[static_cast<size_t>(k & 255)], p);
  const int m = static_cast<int>(k >> 8);  // floor(k/256): arithmetic shift
  if (m >= -1022 && m <= 1023) {
    // Times the double 2^m: the same correctly rounded x·2^m as ldexp (exact unless the
    // product is subnormal), without two library calls per exponential.
    const auto scale = std::bit_cast<double>(static_cast<uint64_t>(m + 1023) << 52);
    return {y.hi * scale, y.lo * scale};
  }
  return {std::ldexp(y.hi, m), std::ldexp(y.lo, m)};
}

#if defined(LMO_EXP_AVX2)
void exp_many_avx2(const double* xh, const double* xl, int64_t n, double* yh, double* yl);
#endif

void exp_many(const double* xh, const double* xl, int64_t n, double* yh, double* yl) {
#if defined(LMO_EXP_AVX2)
  static const bool vector = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (vector) {
    exp_many_avx2(xh, xl, n, yh, yl);
    return;
  }
#endif
  exp_core::exp_each(xh, xl, 0, n, yh, yl);
}

void exp_core::exp_each(const double* xh, const double* xl, int64_t begin, int64_t end, double* yh,
                        double* yl) {
  for (int64_t i = begin; i < end; ++i) {
    const DD y = exp({xh[i], xl[i]});
    yh[i] = y.hi;
    yl[i] = y.lo;
  }
}

// exp_split's bound (u = 2^-53; the reduction as in exp, with x a double):
//  - Reduction. |k| < 2^18 for |x| ≤ 600, so k·L1 and k·L2 are exact and x − k·L1 is exact
//    (Sterbenz, as above). r2 = (x − k·L1) − k·L2 and r = r2 − k·L3 are each rounded once
//    (≤ u·2^-9.5 each), k·L3 once (< 2^-107), and L − L1 − L2 − L3 contributes < 2^-106: r is
//    within 2^-61.4 of x − k·L, a relative error < 2^-61.3 of e^r.
//  - Polynomial. P = r + r²·q with q = 1/2 + r(1/6 + r(1/24 + r/120)), |r| < 2^-9.5. Truncation
//    after degree 5: Σ_{n≥6} |r|^n/n! < 1.01·2^-57/720 < 2^-66.4. q's Horner steps and rounded
//    coefficients err by < 2^-52 absolute (q ≈ 1/2), r² and r²·q round once each: r²·q (< 2^-20)
//    is off by < 2^-20·(2u + 2^-51) < 2^-70. The sum r + r²·q rounds once: ≤ u·2^-9.4 = 2^-62.4.
//    So |P̂ − (e^r − 1)| < 2^-62.4 + 2^-66.4 + 2^-70 + 2^-61.3·1.002 < 2^-60.7.
//  - Reconstruction. lo' = fma(T.hi, P̂, T.lo) rounds once (≤ u·2^-9.4·T), T.lo·P̂ is left out
//    (≤ u·2^-9.5·T), the table errs by ≤ 2^-106·T, and Fast2Sum(T.hi, lo') is exact. In all
//    < (2^-60.7 + 2^-62.4 + 2^-62.5)·T < 2^-60·T, relative to e^r·T ≥ 0.998·T: < 2^-59.9.
//  - Scaling by 2^m is exact and both words stay normal doubles (|x| ≤ 600).
// kExpSplitErr = 2^-58 leaves a factor of 3.7; tests/reference/ball_test.cc measures the error
// against MPFR.
LMO_FMA_CLONES DD exp_split(double x) {
  const Constants& c = constants();
  const double kd = std::nearbyint(x * c.inv_l);
  const double r2 = (x - kd * c.l1) - kd * c.l2;
  const double r = r2 - kd * c.l3;
  const double q = 0.5 + r * (1.0 / 6 + r * (1.0 / 24 + r * kInv120));
  const double p = r + (r * r) * q;
  const long k = static_cast<long>(kd);
  const DD tj = c.table[static_cast<size_t>(k & 255)];
  const DD y = fast_two_sum(tj.hi, std::fma(tj.hi, p, tj.lo));
  const auto scale =
      std::bit_cast<double>(static_cast<uint64_t>(static_cast<int>(k >> 8) + 1023) << 52);
  return {y.hi * scale, y.lo * scale};
}

}  // namespace lmo::ref::dd
