// The double-double Box–Muller pair (oracle/core/normal_pair.h) against the formula in MPFR at
// the draws where its derivation has edges: the quadrant and table-cell boundaries of the angle
// (θ a multiple of π/2, of π/128, and one step either side), u1 at its smallest (log u1 = −44)
// and close to 1 (log u1 tiny: a wider ball), means that cancel the product.
// Every ball must contain the MPFR value, with a radius far below an f64 ulp of the terms.
#include "oracle/core/normal_pair.h"

#include <gtest/gtest.h>
#include <mpfr.h>

#include <boost/math/constants/constants.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tests/support/splitmix.h"

namespace lmo::oracle {
namespace {

using ref::mp;

// The generator's formula (inputs.cc, NormalReal::pair_values) at 167 bits.
std::array<mp, 2> mpfr_pair(uint64_t w1, uint64_t w2, double mean, double stddev) {
  const mp u1 = ldexp(mp(w1) + 1, -64);
  const mp u2 = ldexp(mp(w2), -64);
  const mp radius = sqrt(-2 * log(u1));
  const mp theta = 2 * boost::math::constants::pi<mp>() * u2;
  mp s, c;
  mpfr_sin_cos(s.backend().data(), c.backend().data(), theta.backend().data(), MPFR_RNDN);
  return {mp(mean) + mp(stddev) * (radius * c), mp(mean) + mp(stddev) * (radius * s)};
}

std::vector<uint64_t> angle_words() {
  std::vector<uint64_t> w;
  for (uint64_t q = 0; q < 4; ++q) {
    for (uint64_t j = 0; j <= 64; j += 1) {
      const uint64_t at = (q << 62) + (j << 56);  // a quadrant or table-cell boundary
      for (const uint64_t d : {uint64_t{0}, uint64_t{1}, ~uint64_t{0}, uint64_t{1} << 55}) {
        w.push_back(at + d);  // wraps modulo 2^64, as the angle does
      }
    }
  }
  testing::SplitMix64 g{2026};
  for (int i = 0; i < 2000; ++i) w.push_back(g.next());
  return w;
}

TEST(NormalPair, ContainsTheMpfrPairAtTheDerivationsEdges) {
  const std::vector<uint64_t> angles = angle_words();
  const std::vector<uint64_t> radii = {
      0, 1, 12345, uint64_t{1} << 40, ~uint64_t{0} / 3, ~uint64_t{0} - (uint64_t{1} << 50)};
  int64_t checked = 0;
  for (const auto& [mean, stddev] :
       {std::pair{0.0, 1.0}, std::pair{1.0, 0.25}, std::pair{-3.5, 2.0}, std::pair{0.0, 1e-3}}) {
    for (const uint64_t w1 : radii) {
      for (const uint64_t w2 : angles) {
        const std::optional<std::array<ref::Ball, 2>> b = normal_pair_dd(w1, w2, mean, stddev);
        ASSERT_TRUE(b.has_value()) << w1 << " " << w2;
        const std::array<mp, 2> want = mpfr_pair(w1, w2, mean, stddev);
        const double r = static_cast<double>(sqrt(-2 * log(ldexp(mp(w1) + 1, -64))));
        for (int k = 0; k < 2; ++k) {
          const ref::Ball& v = (*b)[static_cast<size_t>(k)];
          ASSERT_LE(abs(want[k] - ref::to_mp(v)), mp(v.rad()))
              << "w1 " << w1 << " w2 " << w2 << " value " << k << " mean " << mean;
          // Far below an f64 ulp of the terms |mean| + stddev·R.
          ASSERT_LT(v.rad(), 0x1p-80 * (std::fabs(mean) + stddev * r)) << w1 << " " << w2;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 50000);
}

TEST(NormalPair, DeclinesOutsideItsDerivation) {
  EXPECT_FALSE(normal_pair_dd(~uint64_t{0}, 5, 0, 1).has_value());  // u1 = 1: log u1 = 0
  EXPECT_FALSE(normal_pair_dd(0, 5, 0, std::numeric_limits<double>::infinity()).has_value());
  EXPECT_FALSE(normal_pair_dd(0, 5, NAN, 1).has_value());
  EXPECT_FALSE(normal_pair_dd(0, 5, 0, 0x1p-950).has_value());  // products near underflow
}

// u1 = 1 − 2^-64, the closest to 1: log u1 ≈ −2^-64 is known to only 2^-33 of itself (the bound's
// absolute 2^-97), a wide ball that still contains MPFR's value (and decides bf16 roundings).
TEST(NormalPair, LogU1NearOneGivesAWideButTrueBall) {
  for (const uint64_t w2 : {uint64_t{5}, uint64_t{1} << 61, ~uint64_t{0} / 7}) {
    const std::optional<std::array<ref::Ball, 2>> b = normal_pair_dd(~uint64_t{0} - 1, w2, 0, 1);
    ASSERT_TRUE(b.has_value());
    const std::array<mp, 2> want = mpfr_pair(~uint64_t{0} - 1, w2, 0, 1);
    for (int k = 0; k < 2; ++k) {
      const ref::Ball& v = (*b)[static_cast<size_t>(k)];
      EXPECT_LE(abs(want[k] - ref::to_mp(v)), mp(v.rad())) << w2 << " " << k;
      EXPECT_LT(v.rad(), 0x1p-30 * 0x1p-31);  // R = 2^-31.5: relative radius below 2^-29.5
    }
  }
}

}  // namespace
}  // namespace lmo::oracle
