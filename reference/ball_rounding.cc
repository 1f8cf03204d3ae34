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

#include <bit>
#include <cmath>
#include <cstdint>
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

std::optional<uint64_t> narrow_rounding(Format f, dd::DD v, double rel_err) {
  const double hi = v.hi;
  if (!(hi > 0) || !std::isfinite(hi) || spec(f).precision() > 24) return std::nullopt;
  // F, the rounding of hi, and its neighbours: positive patterns are ordered like their values.
  const uint64_t bits = encode(f, hi);
  const double value = decode<double>(f, bits);
  if (!(value > 0) || !std::isfinite(value)) return std::nullopt;
  const uint64_t step = uint64_t{1} << spec(f).shift;  // tf32's patterns skip its 13 low bits
  const double up = decode<double>(f, bits + step), down = decode<double>(f, bits - step);
  if (!std::isfinite(up) || !(up > value)) return std::nullopt;
  // F's cell is (F − half_down, F + half_up): half gaps, powers of two (exact differences of
  // neighbours of at most 24 bits). hi − F is exact (Sterbenz: F/2 ≤ hi ≤ 2F as hi rounds to
  // F ≠ 0), so t is v − F rounded once, within 2^-53·|t|.
  const double half_up = (up - value) / 2, half_down = (value - down) / 2;
  const double t = (hi - value) + v.lo;
  // The values' distance from v (rel_err·|v| ≤ rel_err·hi·(1 + 2^-52)) and t's rounding, both
  // overstated; the sums below round by less than the factor 1 − 2^-40 leaves.
  const double slack = rel_err * hi * (1 + 0x1p-40) + std::fabs(t) * 0x1p-50;
  if (t + slack < half_up * (1 - 0x1p-40) && slack - t < half_down * (1 - 0x1p-40)) return bits;
  return std::nullopt;
}

Ball round_to_format(Format f, const Ball& x, Overflow o) {
  // Every value of a deciding interval rounds to the same bits, the midpoint's among them.
  const Format one[] = {f};
  if (!decides_rounding(x, one)) count_ball_undecided();
  return Ball(decode<double>(f, encode(f, to_mp(x), o)));
}

}  // namespace lmo::ref
