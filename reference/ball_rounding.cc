// The rounding decision of ball_rounding.h.
//
// Write the interval as hi + [d1, d2], d1 = lo − r', d2 = lo + r' (r' the widened radius).
//  - f64: every value rounds to hi exactly when −h₋ < d1 and d2 < h₊, h₋ and h₊ the half-gaps to
//    hi's neighbours (they differ at a power of two). Ties are left undecided.
//  - A narrower format F: its rounding boundaries (midpoints between F's values, and the overflow
//    threshold) are doubles. The interval, strictly inside hi's f64 rounding interval, contains
//    no double but hi, so the only boundary it can straddle is hi itself; hi is one exactly when
//    F rounds hi's two f64 neighbours differently. If it is, the interval must lie on one side.
#include "reference/ball_rounding.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>

#include "reference/formats.h"
#include "reference/round_to_format.h"

namespace lmo::ref {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// std::nextafter toward ±inf, inline (every golden element takes four of them).
inline double next_up(double x) {
  if (!std::isfinite(x)) return x == -kInf ? std::numeric_limits<double>::lowest() : x;
  if (x == 0) return std::numeric_limits<double>::denorm_min();
  const auto b = std::bit_cast<uint64_t>(x);
  return std::bit_cast<double>(x > 0 ? b + 1 : b - 1);
}
inline double next_down(double x) { return -next_up(-x); }

// MPFR's reference carries 167-bit roundings where the ball carries double-double ones (≥ 2^-106
// relative): 2^-40 of the radius covers them with room, and 2^-1070 the absolute underflow.
double widened(double rad) { return rad * (1 + 0x1p-40) + 0x1p-1070; }

// Whether a nonzero finite double may be a rounding boundary of f (a midpoint between two of its
// values, or its overflow threshold): those have at most precision + 1 significant bits, so a
// double with a set bit below them is none. (Subnormal doubles, far below every boundary of the
// narrower formats, may answer yes: the callers then take their general path.)
bool may_be_boundary(Format f, double x) {
  const int below = 52 - spec(f).frac_bits - 1;  // fraction bits below precision + 1
  return (std::bit_cast<uint64_t>(x) & ((uint64_t{1} << below) - 1)) == 0;
}

bool narrower_format_decides(Format f, double hi, double d1, double d2) {
  if (!may_be_boundary(f, hi)) return true;  // no boundary of f at hi
  const uint64_t below = encode(f, next_down(hi));
  const uint64_t above = encode(f, next_up(hi));
  if (below == above) return true;  // no boundary of f at hi: constant on the interval
  return d1 > 0 || d2 < 0;          // a boundary at hi: the interval must avoid it
}

}  // namespace

bool decides_rounding(const Ball& b, std::span<const Format> formats) {
  const double hi = b.hi();
  if (!std::isfinite(hi)) return b.exact();
  if (b.exact()) {
    // Exact: the consumer rounds the midpoint itself; it must convert to mp without loss.
    // hi's leading bit to lo's last spans at most 167 bits when |lo| ≥ |hi|·2^-113.
    return b.lo() == 0 || std::fabs(b.lo()) >= std::fabs(hi) * 0x1p-113;
  }
  // The sign of a zero result is not decided; at ±max the overflow threshold has no neighbour.
  if (hi == 0 || std::fabs(hi) == std::numeric_limits<double>::max()) return false;
  const double r = widened(b.rad());
  // d1, d2 rounded outward (one ulp each way covers the two roundings).
  const double d1 = next_down(b.lo() - r), d2 = next_up(b.lo() + r);
  const double h_up = std::fabs(next_up(hi) - hi) / 2;
  const double h_down = std::fabs(hi - next_down(hi)) / 2;
  if (!(d1 > -h_down && d2 < h_up)) return false;
  // A boundary of a format of precision p has at most p + 1 significant bits; f32's p is the
  // largest (24).
  if (!may_be_boundary(Format::f32, hi)) return true;
  for (Format f : formats) {
    if (f != Format::f64 && !narrower_format_decides(f, hi, d1, d2)) return false;
  }
  return true;
}

uint64_t decided_bits(const Ball& b, Format f) {
  const double hi = b.hi();
  if (!b.exact() && std::isfinite(hi)) {
    // A deciding inexact ball lies strictly inside hi's f64 rounding interval.
    if (f == Format::f64 || !may_be_boundary(f, hi)) return encode(f, hi);
    const uint64_t below = encode(f, next_down(hi));
    if (below == encode(f, next_up(hi))) return below;
  }
  return encode(f, to_mp(b));
}

namespace {

// F, the rounding of a positive finite hi to f (precision ≤ 24), and the half gaps to its
// neighbours: F's cell is (F − half_down, F + half_up). False where F is 0, f's largest finite
// value or beyond.
struct Cell {
  uint64_t bits = 0;
  double value = 0, half_up = 0, half_down = 0;
};

double max_finite(Format f) {
  static const auto table = [] {
    std::array<double, std::size(kFormatSpecs)> t{};
    for (const FormatSpec& s : kFormatSpecs) {
      t[static_cast<size_t>(s.id)] = decode<double>(s.id, max_finite_bits(s.id));
    }
    return t;
  }();
  return table[static_cast<size_t>(f)];
}

double pow2(int e) { return std::bit_cast<double>(static_cast<uint64_t>(e + 1023) << 52); }

bool cell_of(Format f, double hi, Cell& c) {
  const FormatSpec& s = spec(f);
  const auto hb = std::bit_cast<uint64_t>(hi);
  const int e = static_cast<int>((hb >> 52) & 0x7ff) - 1023;
  if (e >= s.emin() && e <= s.emax()) {
    // A normal value of f: hi's significand rounded to frac_bits bits, to nearest-even, on the
    // bits (a carry into the exponent gives the next power of two, as it should).
    const int drop = 52 - s.frac_bits;
    const uint64_t half = uint64_t{1} << (drop - 1);
    const uint64_t rb = (hb + (half - 1) + ((hb >> drop) & 1)) & ~((uint64_t{1} << drop) - 1);
    c.value = std::bit_cast<double>(rb);
    if (!(c.value < max_finite(f))) return false;
    const int ev = static_cast<int>((rb >> 52) & 0x7ff) - 1023;
    const double gap = pow2(ev - s.frac_bits);
    c.half_up = gap / 2;
    c.half_down = (rb & ((uint64_t{1} << 52) - 1)) == 0 && ev > s.emin() ? gap / 4 : gap / 2;
    // F's pattern from its bits (a positive normal value of f): the biased exponent and the
    // kept fraction bits, in the container's position. encode's general path cost a third of
    // this function.
    const uint64_t frac = (rb >> drop) & ((uint64_t{1} << s.frac_bits) - 1);
    c.bits = ((static_cast<uint64_t>(ev + s.bias) << s.frac_bits) | frac) << s.shift;
    return true;
  }
  // Elsewhere (f's subnormals, overflow) from the patterns: positive ones are ordered like their
  // values; tf32's skip its 13 low bits.
  c.bits = encode(f, hi);
  c.value = decode<double>(f, c.bits);
  if (!(c.value > 0) || !std::isfinite(c.value)) return false;
  const uint64_t step = uint64_t{1} << s.shift;
  const double up = decode<double>(f, c.bits + step), down = decode<double>(f, c.bits - step);
  if (!std::isfinite(up) || !(up > c.value)) return false;
  c.half_up = (up - c.value) / 2;
  c.half_down = (c.value - down) / 2;
  return true;
}

}  // namespace

uint64_t narrow_rounding_bits(Format f, dd::DD v, double rel_err) {
  const double hi = v.hi;
  Cell c;
  if (!(hi > 0) || !std::isfinite(hi) || spec(f).precision() > 24 || !cell_of(f, hi, c)) {
    return kUndecided;
  }
  // The half gaps are powers of two (exact differences of neighbours of at most 24 bits).
  // hi − F is exact (Sterbenz: F/2 ≤ hi ≤ 2F as hi rounds to F ≠ 0), so t is v − F rounded once,
  // within 2^-53·|t|.
  const double t = (hi - c.value) + v.lo;
  // The values' distance from v (rel_err·|v| ≤ rel_err·hi·(1 + 2^-52)) and t's rounding, both
  // overstated; the sums below round by less than the factor 1 − 2^-40 leaves.
  const double slack = rel_err * hi * (1 + 0x1p-40) + std::fabs(t) * 0x1p-50;
  if (t + slack < c.half_up * (1 - 0x1p-40) && slack - t < c.half_down * (1 - 0x1p-40)) {
    return c.bits;
  }
  return kUndecided;
}

Ball round_to_format(Format f, const Ball& x, Overflow o) {
  // Every value of a deciding interval rounds to the same bits, the midpoint's among them.
  const Format one[] = {f};
  if (!decides_rounding(x, one)) count_ball_undecided();
  return Ball(decode<double>(f, encode(f, to_mp(x), o)));
}

}  // namespace lmo::ref
