// Splitting a constant for exact argument reduction (dd_exp.cc's ln 2/256, ball.cc's π/2).
#pragma once

#include <cmath>

namespace lmo::ref {

// x with its significand cut to 32 bits (toward zero): k·x is then exact for every integer
// |k| < 2^21, the property a Cody–Waite reduction x − k·(c1 + c2 + c3) needs of c1 and c2.
inline double cut_to_32_bits(double x) {
  int e = 0;
  const double m = std::frexp(x, &e);
  return std::ldexp(std::trunc(std::ldexp(m, 32)), e - 32);
}

}  // namespace lmo::ref
