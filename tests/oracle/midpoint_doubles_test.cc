// The judge's doubles of a ball's midpoint (oracle/judge/midpoint_doubles.h) against MPFR: where
// they decide, x and |y − x| rounded to double are those of the mp values the judge would
// otherwise make (to_mp, then 167-bit arithmetic), on ordinary balls and on differences built to
// be exact ties, or within 2^-(54 + k) of one (k ≤ 55), between two doubles, where rounding y − hi
// first and subtracting lo after gives the wrong double.
#include "oracle/judge/midpoint_doubles.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "reference/ball.h"
#include "tests/support/splitmix.h"

namespace lmo::oracle {
namespace {

using ref::Ball;
using ref::mp;

double exact_abs_error(const Ball& b, double y) {
  return static_cast<double>(abs(mp(y) - ref::to_mp(b)));
}

// A double with a random 53-bit significand in [2^e, 2^(e+1)), either sign.
double random_double(testing::SplitMix64& g, int e) {
  const double m = 1 + g.unit();
  return std::ldexp(g.next() % 2 ? m : -m, e);
}

TEST(MidpointDoubles, OrdinaryBallsGiveMpfrsDoubles) {
  testing::SplitMix64 g{11};
  int decided = 0, total = 0;
  for (int i = 0; i < 200000; ++i) {
    const int e = static_cast<int>(g.next() % 200) - 100;
    const double hi = random_double(g, e);
    // A normalized low word, or a word far below it, or none.
    const int gap = i % 3 == 0 ? 53 : i % 3 == 1 ? 54 + static_cast<int>(g.next() % 100) : 0;
    const double lo = gap == 0 ? 0.0 : random_double(g, e - gap);
    const Ball b = Ball::from_parts(hi, lo, 0);
    const std::optional<double> x = midpoint_double(b);
    if (gap <= 113) {
      ASSERT_TRUE(x.has_value()) << hi << " " << lo;
    }
    if (x) {
      EXPECT_EQ(*x, static_cast<double>(ref::to_mp(b))) << hi << " " << lo;
    }
    // Outputs as kernels write them: x rounded to bf16 or f32 (a few ulps off), or far off.
    double y = 0;
    switch (i % 4) {
      case 0:
        y = static_cast<double>(static_cast<float>(hi));
        break;
      case 1:
        y = std::nextafter(static_cast<float>(hi), 0.0f);
        break;
      case 2:
        y = std::ldexp(std::round(std::ldexp(hi, 7 - e)), e - 7);
        break;  // 8 bits
      default:
        y = random_double(g, e + static_cast<int>(g.next() % 9) - 4);
        break;
    }
    const std::optional<double> a = midpoint_abs_error(b, y);
    // A normalized ball and an output near it: always decided.
    if (gap == 53 && i % 4 != 3) {
      ASSERT_TRUE(a.has_value()) << hi << " " << lo << " " << y;
    }
    ++total;
    if (!a) continue;
    ++decided;
    ASSERT_EQ(*a, exact_abs_error(b, y)) << hi << " " << lo << " " << y;
  }
  EXPECT_GT(decided, total * 8 / 10);
}

TEST(MidpointDoubles, DifferencesAtATieBetweenTwoDoublesRoundAsMpfrDoes) {
  testing::SplitMix64 g{12};
  int naive_wrong = 0, decided = 0;
  for (int i = 0; i < 200000; ++i) {
    // y − hi is an exact tie between two doubles of y's binade (hi an odd multiple of half an
    // ulp of y), and lo moves it off by a relative 2^-k, or not at all (then to even).
    const int e = static_cast<int>(g.next() % 100) - 50;
    const double y = std::fabs(random_double(g, e));
    const double half_ulp = std::ldexp(1.0, e - 53);
    const double hi = half_ulp * static_cast<double>(2 * (g.next() % 64) + 1);
    const int k = static_cast<int>(g.next() % 56);
    const double lo = i % 5 == 0 ? 0.0 : (g.next() % 2 ? 1 : -1) * std::ldexp(hi, -1 - k);
    const Ball b = Ball::from_parts(hi, lo, 0);
    const std::optional<double> a = midpoint_abs_error(b, y);
    if (!a) continue;
    ++decided;
    const double exact = exact_abs_error(b, y);
    ASSERT_EQ(*a, exact) << y << " " << hi << " " << lo;
    if (std::fabs((y - hi) - lo) != exact) ++naive_wrong;
  }
  EXPECT_GT(decided, 190000);
  // The construction does reach what two roundings get wrong.
  EXPECT_GT(naive_wrong, 10000);
}

TEST(MidpointDoubles, UndecidedWhereMpfrWouldRoundFirst) {
  // hi + lo over 167 bits: to_mp rounds it; a difference over 167 bits: MPFR rounds it.
  EXPECT_FALSE(midpoint_double(Ball::from_parts(1.0, 0x1p-170, 0)));
  EXPECT_FALSE(midpoint_abs_error(Ball::from_parts(1.0, 0x1p-170, 0), 1.0));
  EXPECT_FALSE(midpoint_abs_error(Ball::from_parts(1.0, 0x1p-60, 0), 0x1p120));
  // Near underflow, and non-finite words.
  EXPECT_FALSE(midpoint_abs_error(Ball::from_parts(0x1p-950, 0, 0), 0x1p-950));
  EXPECT_FALSE(midpoint_abs_error(Ball::from_parts(1.0, 0, 0), INFINITY));
  EXPECT_FALSE(midpoint_double(Ball::from_parts(NAN, 0, 0)));
  // Zeros: −0 stays −0 (to_mp leaves the low word out), an exact output gives 0.
  EXPECT_TRUE(std::signbit(*midpoint_double(Ball::from_parts(-0.0, 0, 0))));
  EXPECT_EQ(*midpoint_abs_error(Ball::from_parts(1.5, 0, 0), 1.5), 0.0);
  EXPECT_EQ(*midpoint_abs_error(Ball::from_parts(0.0, 0, 0), -2.0), 2.0);
}

}  // namespace
}  // namespace lmo::oracle
