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

}  // namespace
}  // namespace lmo::ref
