// The rounding decision of balls (reference/ball_rounding.h) against MPFR's rounding of points
// of the ball: wherever decides_rounding says every point rounds alike, the two ends and the
// midpoint (in mp, exact) round, by the generic encode, to decided_bits, in every format. Balls
// are centred on and next to the formats' values, midpoints and overflow thresholds, with low
// words and radii from nothing to a few ulps, so the decision goes both ways.
#include "reference/ball_rounding.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "reference/formats.h"
#include "tests/support/splitmix.h"

namespace lmo::ref {
namespace {

std::vector<double> centres(Format f, testing::SplitMix64& g) {
  const FormatSpec& s = spec(f);
  std::vector<double> out;
  for (int i = 0; i < 3000; ++i) {
    const uint64_t bits = (g.next() & s.pattern_mask()) << s.shift;
    const double v = decode<double>(f, bits);
    if (!std::isfinite(v)) continue;
    const double next = decode<double>(f, (((bits >> s.shift) + 1) & s.pattern_mask()) << s.shift);
    out.push_back(v);
    if (std::isfinite(next) && std::fabs(next) > std::fabs(v)) {
      const double mid = v + (next - v) / 2;  // a rounding boundary (exact in double)
      out.push_back(mid);
      out.push_back(std::nextafter(mid, 0.0));
      out.push_back(std::nextafter(mid, std::numeric_limits<double>::infinity()));
    }
  }
  return out;
}

TEST(BallRounding, DecidedBitsAreEveryPointsRounding) {
  testing::SplitMix64 g{20261203};
  for (const Format f : kAllFormats) {
    const Format one[] = {f};
    int64_t decided = 0, undecided = 0;
    for (const double hi : centres(f, g)) {
      if (hi == 0) continue;
      const double ulp = std::fabs(std::nextafter(hi, 2 * hi) - hi);
      for (const double lo_units : {0.0, 1e-9, -1e-9, 0.3, -0.3, 0.5, -0.5}) {
        for (const double rad_units : {0.0, 1e-12, 1e-6, 0.1, 0.49, 2.0}) {
          const double lo = lo_units * ulp, rad = rad_units * ulp;
          // A normalized double-double: hi = RN(hi + lo).
          if (hi + lo != hi) continue;
          const Ball b = Ball::from_parts(hi, lo, rad);
          if (!decides_rounding(b, one)) {
            ++undecided;
            continue;
          }
          ++decided;
          const uint64_t bits = decided_bits(b, f);
          const mp mid = mp(hi) + mp(lo);
          for (const mp& p : {mid, mid - mp(rad), mid + mp(rad)}) {
            ASSERT_EQ(encode(f, p), bits)
                << format_name(f) << " hi " << hi << " lo " << lo << " rad " << rad;
          }
        }
      }
    }
    EXPECT_GT(decided, 10000) << format_name(f);
    EXPECT_GT(undecided, 1000) << format_name(f);
  }
}

// narrow_rounding (Sim's cheap decision): around every kind of value of each narrow format
// (its values, rounding midpoints and their neighbours; random positive centres), with low words
// and errors from nothing to a few of its ulps, a decision is the rounding of both ends of the
// interval it was given (so of every point between); at a midpoint itself it never decides.
TEST(NarrowRounding, DecisionsAreEveryPointsRounding) {
  testing::SplitMix64 g{41};
  using wide = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<100>,
                                             boost::multiprecision::et_off>;
  for (Format f :
       {Format::f32, Format::tf32, Format::bf16, Format::f16, Format::e4m3, Format::e5m2}) {
    int decided = 0, undecided = 0;
    for (double c : centres(f, g)) {
      if (!(c > 0)) continue;
      for (double rel : {0.0, 0x1p-58, 0x1p-30, 0x1p-12}) {
        const double lo = g.next() % 3 == 0 ? 0.0 : std::ldexp(g.unit() - 0.5, std::ilogb(c) - 53);
        const dd::DD v = dd::fast_two_sum(c, lo);
        const std::optional<uint64_t> b = narrow_rounding(f, v, rel);
        const wide mid = wide(v.hi) + wide(v.lo);
        if (v.lo == 0 && b) {
          const uint64_t at = encode(f, v.hi);
          ASSERT_EQ(*b, at);
        }
        if (!b) {
          ++undecided;
          continue;
        }
        ++decided;
        const wide r = mid * wide(rel);
        ASSERT_EQ(*b, encode(f, mp(mid - r))) << format_name(f) << " " << c << " " << rel;
        ASSERT_EQ(*b, encode(f, mp(mid + r))) << format_name(f) << " " << c << " " << rel;
      }
    }
    EXPECT_GT(decided, 1000) << format_name(f);
    EXPECT_GT(undecided, 100) << format_name(f) << ": midpoints must not decide";
  }
}

// A bound narrower than the error it claims to cover is seen: an evaluation one double above an
// f32 midpoint whose truth lies one double below it decides wrongly under a claimed 2^-58, and
// not at all under a bound that covers the error (2^-50).
TEST(NarrowRounding, ATooNarrowBoundDecidesWrongly) {
  const double value = 1.5, next = 1.5 + 0x1p-23, mid = 1.5 + 0x1p-24;
  const double above = std::nextafter(mid, 2.0), below = std::nextafter(mid, 1.0);
  const dd::DD v{above, 0};
  EXPECT_EQ(narrow_rounding(Format::f32, v, 0x1p-50), std::nullopt);
  const std::optional<uint64_t> wrong = narrow_rounding(Format::f32, v, 0x1p-58);
  ASSERT_TRUE(wrong.has_value());
  EXPECT_EQ(*wrong, encode(Format::f32, next));
  EXPECT_NE(*wrong, encode(Format::f32, below));
  EXPECT_EQ(encode(Format::f32, below), encode(Format::f32, value));
}

}  // namespace
}  // namespace lmo::ref
