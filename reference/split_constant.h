// Constants for the double-double kernels: split for exact argument reduction (dd_exp.cc's
// ln 2/256, ball.cc's π/2) or rounded to a double-double (dd_exp.cc's table, normal_pair.cc's).
#pragma once

#include <cmath>

#include "reference/double_double.h"
#include "reference/number_types.h"

namespace lmo::ref {

// An MPFR constant as a double-double: its nearest double and the nearest double to the rest
// (within 2^-106 of the value, relative).
inline dd::DD dd_of(const mp& x) {
  const double hi = static_cast<double>(x);
  return {hi, static_cast<double>(mp(x - hi))};
}

// x with its significand cut to 32 bits (toward zero): k·x is then exact for every integer
// |k| < 2^21, the property a Cody–Waite reduction x − k·(c1 + c2 + c3) needs of c1 and c2.
inline double cut_to_32_bits(double x) {
  int e = 0;
  const double m = std::frexp(x, &e);
  return std::ldexp(std::trunc(std::ldexp(m, 32)), e - 32);
}

}  // namespace lmo::ref
