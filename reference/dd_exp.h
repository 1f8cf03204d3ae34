// e^x in double-double with a written error bound: the exponential of the certified evaluation
// (ball.h). glibc's exp is fast but its error is only tested, and its results change between
// versions; MPFR is proven but costs ~1.8 µs a call (docs/certified.md).
#pragma once

#include <cstdint>

#include "reference/double_double.h"

namespace lmo::ref::dd {

// |exp(x) − e^(x.hi + x.lo)| ≤ kExpErr·e^(x.hi + x.lo) + kExpAbsErr for x.hi in
// [kExpMin, kExpMax]; the derivation is in dd_exp.cc. Below kExpMin the result is 0 (the exact
// value is below 2^-1076, inside kExpAbsErr); above kExpMax it may overflow (callers check).
inline constexpr double kExpErr = 0x1p-98;
inline constexpr double kExpAbsErr = 0x1p-1070;
inline constexpr double kExpMin = -746;
inline constexpr double kExpMax = 709.7;

DD exp(DD x);

// y_i = exp({xh[i], xl[i]}) for i < n, bit for bit, four at a time where the CPU has AVX2 and FMA
// (dd_exp_avx2.cc: the same operations in each lane; arguments outside [−700, 700] and the last
// n mod 4 go through exp). The outputs may be the inputs (in place).
void exp_many(const double* xh, const double* xl, int64_t n, double* yh, double* yl);

// e^x for the correctly rounded exponential of the narrow simulated formats (sim_float.cc),
// in double arithmetic only (the same reduction and table, a degree-5 polynomial): an unevaluated
// sum hi + lo with |lo| ≤ ulp(hi)/2 and |hi + lo − e^x| ≤ kExpSplitErr·e^x for |x| ≤
// kExpSplitMax (the derivation is in dd_exp.cc). About 2^-58 decides a rounding to 24 bits except
// within 2^-34 of a half-gap of a midpoint, at a tenth of exp's cost.
inline constexpr double kExpSplitErr = 0x1p-58;
inline constexpr double kExpSplitMax = 600;
DD exp_split(double x);

}  // namespace lmo::ref::dd
