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
uint64_t assemble(const FormatSpec& s, bool negative, int biased_exp, uint64_t frac) {
  uint64_t p = (uint64_t{negative} << (s.exp_bits + s.frac_bits)) |
               (static_cast<uint64_t>(biased_exp) << s.frac_bits) | frac;
  return p << s.shift;
}

// The generic algorithm (formats.h) step by step on the bits of a double: |x| = sig·2^(e−52)
// with sig of 53 bits; the exponent clamped to emin for subnormals; k = the bits below the
// format's quantum 2^(exp − frac_bits), dropped with round-to-nearest-even.
uint64_t encode_double(Format f, double x, Overflow overflow) {
  const FormatSpec& s = spec(f);
  const auto raw = std::bit_cast<uint64_t>(x);
  const bool neg = (raw >> 63) != 0;
  const int biased = static_cast<int>((raw >> 52) & 0x7FF);
  const uint64_t mant = raw & ((uint64_t{1} << 52) - 1);
  const auto overflowed = [&] {
    return overflow == Overflow::kSaturate ? max_finite_bits(f, neg) : inf_bits(f, neg);
  };
  if (biased == 0x7FF) return mant != 0 ? nan_bits(f) : overflowed();
  if (f == Format::f64) return raw;  // every other double is an f64 value, −0 and subnormals too
  // The other formats' smallest subnormal is 2^-149 or more: a double subnormal or zero is
  // below half of it and rounds to a signed zero.
  if (biased == 0) return assemble(s, neg, 0, 0);
  const int e = biased - 1023;  // |x| in [2^e, 2^(e+1))
  const int exp = std::max(e, s.emin());
  if (exp > s.emax() + 1) return overflowed();
  const uint64_t sig53 = (uint64_t{1} << 52) | mant;
  const int k = 52 - s.frac_bits + (exp - e);  // ≥ 29
  uint64_t sig = 0;
  // k ≥ 55: |x| < 2^-2 of the quantum, below half of it: rounds to zero.
  if (k < 55) {
    sig = sig53 >> k;
    const uint64_t rem = sig53 & ((uint64_t{1} << k) - 1);
    const uint64_t half = uint64_t{1} << (k - 1);
    if (rem > half || (rem == half && (sig & 1))) ++sig;
  }
  int out_exp = exp;
  if (sig >> s.precision()) {  // carried into the next binade
    sig >>= 1;
    ++out_exp;
  }
  if (out_exp > s.emax() || (out_exp == s.emax() && sig > s.max_significand())) {
    return overflowed();
  }
  const uint64_t hidden = uint64_t{1} << s.frac_bits;
  if (sig < hidden) return assemble(s, neg, 0, sig);  // subnormal (or zero)
  return assemble(s, neg, out_exp + s.bias, sig - hidden);
}

// decode<T>'s cases, with the double built from its fields instead of ldexp.
double decode_double(Format f, uint64_t bits) {
  const FormatSpec& s = spec(f);
  if (f == Format::f64) {
    if (bits_is_nan(f, bits)) {  // decode's NaN: the quiet NaN, with the pattern's sign
      const double q = std::numeric_limits<double>::quiet_NaN();
      return (bits >> 63) != 0 ? -q : q;
    }
    return std::bit_cast<double>(bits);
  }
  const uint64_t p = (bits >> s.shift) & s.pattern_mask();
  const bool neg = ((p >> (s.exp_bits + s.frac_bits)) & 1) != 0;
  const int bexp = static_cast<int>((p >> s.frac_bits) & ((uint64_t{1} << s.exp_bits) - 1));
  const uint64_t frac = p & ((uint64_t{1} << s.frac_bits) - 1);
  double v = 0;
  if (bits_is_nan(f, bits)) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (bits_is_inf(f, bits)) {
    v = std::numeric_limits<double>::infinity();
  } else if (bexp == 0) {
    // frac·2^(emin − frac_bits): the power of two is a normal double (≥ 2^-149), the product
    // exact (frac < 2^23).
    const auto scale =
        std::bit_cast<double>(static_cast<uint64_t>(s.emin() - s.frac_bits + 1023) << 52);
    v = static_cast<double>(frac) * scale;
  } else {
    v = std::bit_cast<double>((static_cast<uint64_t>(bexp - s.bias + 1023) << 52) |
                              (frac << (52 - s.frac_bits)));
  }
  return neg ? -v : v;
}

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
