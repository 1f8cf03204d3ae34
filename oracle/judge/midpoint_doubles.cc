#include "oracle/judge/midpoint_doubles.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <initializer_list>

#include "reference/double_double.h"

namespace lmo::oracle {
namespace {

// The exponent of a nonzero finite x read off its bits (std::ilogb is a library call, and these
// run for every element judged): subnormals answer −1023, above their true exponent, which
// only widens a span below.
int exponent(double x) {
  const auto e = static_cast<int>((std::bit_cast<uint64_t>(x) >> 52) & 0x7ff);
  return e == 0 ? -1023 : e - 1023;
}

// The bits the nonzero values among `terms` occupy, from a carry above the largest (two: a sum of
// three terms is below 4·2^e) to the lowest bit the smallest may hold (52 below its exponent, and
// never below 2^-1074): the span the exact sum needs at most. 0 when all are zero.
int span_of(std::initializer_list<double> terms, int carry_bits) {
  int top = INT_MIN, bottom = INT_MAX;
  for (const double t : terms) {
    if (t == 0) continue;
    const int e = exponent(t);
    top = std::max(top, e + carry_bits);
    bottom = std::min(bottom, std::max(e - 52, -1074));
  }
  return top == INT_MIN ? 0 : top - bottom + 1;
}

bool in_safe_range(std::initializer_list<double> terms) {
  for (const double t : terms) {
    const double a = std::fabs(t);
    if (t != 0 && !(a >= 0x1p-900 && a <= 0x1p1000)) return false;
  }
  return true;
}

// The rounding to odd of a + b: the nearest double when exact, else the one of the two doubles
// around a + b whose last significand bit is 1 (Boldo & Melquiond, "Emulation of FMA and
// correctly rounded sums: proved algorithms using rounding to odd", IEEE TC 57(4), 2008).
double add_round_to_odd(double a, double b) {
  const ref::dd::DD s = ref::dd::two_sum(a, b);
  if (s.lo == 0 || (std::bit_cast<uint64_t>(s.hi) & 1) != 0) return s.hi;
  // s.hi is even and a + b lies strictly between it and its neighbour toward s.lo: that
  // neighbour is odd.
  return std::nextafter(s.hi, s.lo > 0 ? INFINITY : -INFINITY);
}

}  // namespace

std::optional<double> midpoint_double(const ref::Ball& b) {
  const double hi = b.hi(), lo = b.lo();
  if (!std::isfinite(hi) || !std::isfinite(lo)) return std::nullopt;
  if (lo == 0) return hi;  // to_mp keeps hi alone (a −0 included)
  // One rounding of an exact sum: the nearest double, as MPFR's of the same exact value.
  if (span_of({hi, lo}, 1) > 167) return std::nullopt;
  return hi + lo;
}

std::optional<double> midpoint_abs_error(const ref::Ball& b, double y) {
  const double hi = b.hi(), lo = b.lo();
  if (!std::isfinite(hi) || !std::isfinite(lo) || !std::isfinite(y)) return std::nullopt;
  if (!in_safe_range({hi, lo, y})) return std::nullopt;
  // x = hi + lo exactly, and y − x exactly: MPFR's |y − x| is the exact one, which the double
  // rounds once.
  if (span_of({hi, lo}, 1) > 167 || span_of({y, hi, lo}, 2) > 167) return std::nullopt;
  // The sum y + (−hi) + (−lo) rounded once to nearest (the paper's algorithm for a + b + c):
  // 2Sum(b, c), 2Sum(a, its high word), the two low words added with rounding to odd, and
  // the high word plus that, rounded to nearest. Valid without underflow, which the range
  // check above rules out for every intermediate.
  const ref::dd::DD u = ref::dd::two_sum(-hi, -lo);
  const ref::dd::DD t = ref::dd::two_sum(y, u.hi);
  const double v = add_round_to_odd(t.lo, u.lo);
  return std::fabs(t.hi + v);
}

}  // namespace lmo::oracle
