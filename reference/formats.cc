#include "reference/formats.h"

#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace lmo::ref {

std::optional<Format> parse_format(std::string_view name) {
  for (const FormatSpec& s : kFormatSpecs) {
    if (s.name == name) return s.id;
  }
  return std::nullopt;
}

namespace detail {

namespace {
// Whether the double d (|d| in [2^-1000, 2^1000]) lies exactly on a rounding boundary of the
// format: the midpoint of two neighbouring values (0 and the smallest subnormal included), or the
// overflow threshold max + ulp/2, the midpoint in the largest binade's grid.
bool on_rounding_boundary(const FormatSpec& s, double d) {
  int e = 0;
  const double a = std::fabs(d);
  (void)std::frexp(a, &e);  // a in [2^(e−1), 2^e)
  const int exp = std::max(e - 1, s.emin());
  if (exp > s.emax()) return false;  // past the threshold's binade: overflows on either side
  const double scaled = std::ldexp(a, s.frac_bits - exp);  // exact
  return scaled - std::floor(scaled) == 0.5;
}
}  // namespace

// d = x rounded to the nearest double. For f64 that is the answer. For a narrower format f, every
// rounding boundary of f is a double, and rounding to double is monotone and leaves doubles
// alone, so x and d lie on the same side of every boundary, except when d is itself one and
// x ≠ d: then x lies strictly between d and its neighbouring double on x's side, and no other
// boundary of f is that close (they are at least 2^-25·|d| apart, a double's step is 2^-52·|d|),
// so that neighbour rounds as x does. The result is the generic algorithm's, bit for bit
// (formats_test: MpEncodeThroughDoubleIsTheGenericRounding).
uint64_t encode_mpfr(Format f, const void* mpfr, Overflow overflow, bool& done) {
  const auto x = static_cast<mpfr_srcptr>(mpfr);
  const double d = mpfr_get_d(x, MPFR_RNDN);
  const double a = std::fabs(d);
  done = a >= 0x1p-1000 && a <= 0x1p1000;  // false for NaN, ±inf and 0 too
  if (!done) return 0;
  if (f == Format::f64) return encode(f, d, overflow);
  const int c = mpfr_cmp_d(x, d);
  if (c != 0 && on_rounding_boundary(spec(f), d)) {
    return encode(f, std::nextafter(d, c > 0 ? HUGE_VAL : -HUGE_VAL), overflow);
  }
  return encode(f, d, overflow);
}
}  // namespace detail

uint64_t max_finite_bits(Format f, bool negative) {
  const FormatSpec& s = spec(f);
  const uint64_t hidden = uint64_t{1} << s.frac_bits;
  return detail::assemble(s, negative, s.emax() + s.bias, s.max_significand() - hidden);
}

uint64_t nan_bits(Format f) {
  const FormatSpec& s = spec(f);
  const int top = (1 << s.exp_bits) - 1;
  if (!s.has_inf) return detail::assemble(s, false, top, (uint64_t{1} << s.frac_bits) - 1);
  return detail::assemble(s, false, top, uint64_t{1} << (s.frac_bits - 1));  // quiet bit
}

uint64_t inf_bits(Format f, bool negative) {
  const FormatSpec& s = spec(f);
  if (!s.has_inf) return nan_bits(f);
  return detail::assemble(s, negative, (1 << s.exp_bits) - 1, 0);
}

uint64_t min_subnormal_bits(Format f) { return detail::assemble(spec(f), false, 0, 1); }

}  // namespace lmo::ref
