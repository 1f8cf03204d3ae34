// The fp8 linear layer on balls (reference/fp8_linear_enclosure.h) against the MPFR reference
// (fp8_linear<mp>, 167 bits): every exact output lies in its ball and the radii stay far below an
// f64 ulp, with whole and partial k-blocks, f32 and power-of-two scales, e4m3 and e5m2 values;
// and the path declines where its exactness argument does not hold.
#include "reference/fp8_linear_enclosure.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "reference/formats.h"
#include "tests/support/splitmix.h"

namespace lmo::ref {
namespace {

// Random finite values of an fp8 format: every bit pattern but NaN and ±inf, or (narrow) those of
// magnitude in [2^-4, 2^4] and zero. e5m2's whole range makes products 2^63 apart, whose block
// sums are not exact in double: the path declines there (tested below).
std::vector<double> fp8_values(Format f, int64_t count, bool narrow, testing::SplitMix64& g) {
  std::vector<double> v;
  while (static_cast<int64_t>(v.size()) < count) {
    const double x = decode<double>(f, g.next() & 0xff);
    if (!std::isfinite(x)) continue;
    if (narrow && x != 0 && !(std::fabs(x) >= 0x1p-4 && std::fabs(x) <= 0x1p4)) continue;
    v.push_back(x);
  }
  return v;
}

std::vector<double> scales(int64_t count, bool pow2, testing::SplitMix64& g) {
  std::vector<double> s(static_cast<size_t>(count));
  for (double& x : s) {
    const double u = 0.5 + g.unit();
    x = pow2 ? std::ldexp(1.0, static_cast<int>(g.next() % 40) - 30)
             : static_cast<double>(
                   static_cast<float>(std::ldexp(u, -static_cast<int>(g.next() % 20))));
  }
  return s;
}

struct Shape {
  const char* name;
  int64_t m, n, k, block;
  Format f;
  bool pow2;
};

class Fp8LinearEnclosure : public ::testing::TestWithParam<Shape> {};

TEST_P(Fp8LinearEnclosure, ContainsTheMpfrValuesWithTinyRadii) {
  const Shape& s = GetParam();
  testing::SplitMix64 g{0xf8 + static_cast<uint64_t>(s.k)};
  const ScaleTiling at{s.m, s.k, 1, s.block}, wt{s.n, s.k, s.block, s.block};
  const bool narrow = s.f == Format::e5m2;
  const std::vector<double> a = fp8_values(s.f, s.m * s.k, narrow, g),
                            w = fp8_values(s.f, s.n * s.k, narrow, g);
  const std::vector<double> as = scales(at.scales(), s.pow2, g),
                            ws = scales(wt.scales(), s.pow2, g);
  const std::optional<std::vector<Ball>> y = fp8_linear_enclosure(a, as, at, w, ws, wt);
  ASSERT_TRUE(y.has_value()) << s.name;
  const auto to = [](const std::vector<double>& v) { return std::vector<mp>(v.begin(), v.end()); };
  const std::vector<mp> am = to(a), asm_ = to(as), wm = to(w), wsm = to(ws);
  const Mat<mp> want = fp8_linear<mp>(std::span<const mp>(am), std::span<const mp>(asm_), at,
                                      std::span<const mp>(wm), std::span<const mp>(wsm), wt);
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      const Ball& b = (*y)[static_cast<size_t>(i * s.n + j)];
      const mp& v = want(i, j);
      ASSERT_LE(abs(v - to_mp(b)), mp(b.rad())) << s.name << " y[" << i << ", " << j << "]";
      // Far below an f64 half-ulp of the magnitudes summed.
      double mag = 0;
      for (int64_t t = 0; t < s.k; ++t) {
        mag += std::fabs(
            a[static_cast<size_t>(i * s.k + t)] * as[static_cast<size_t>(at.scale_of(i, t))] *
            w[static_cast<size_t>(j * s.k + t)] * ws[static_cast<size_t>(wt.scale_of(j, t))]);
      }
      EXPECT_LE(b.rad(), mag * 0x1p-90 + 0x1p-1000) << s.name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Fp8LinearEnclosure,
    ::testing::Values(Shape{"deepseek_block128", 4, 6, 512, 128, Format::e4m3, false},
                      Shape{"deepseek_k7168", 2, 3, 7168, 128, Format::e4m3, false},
                      Shape{"partial_block", 3, 5, 300, 128, Format::e4m3, false},
                      Shape{"ue8m0_scales", 3, 4, 256, 128, Format::e4m3, true},
                      Shape{"small_blocks_e5m2", 3, 4, 96, 8, Format::e5m2, false},
                      Shape{"one_column", 2, 3, 1, 128, Format::e4m3, false}),
    [](const ::testing::TestParamInfo<Shape>& i) { return i.param.name; });

TEST(Fp8LinearEnclosureDeclines, WhereItsExactnessArgumentDoesNotHold) {
  const ScaleTiling at{1, 2, 1, 2}, wt{1, 2, 2, 2};
  const std::vector<double> one = {1.0}, ones = {1.0, 1.0};
  EXPECT_TRUE(fp8_linear_enclosure(ones, one, at, ones, one, wt).has_value());
  // A block sum that is not exact in double (e5m2's 57344² plus its smallest product 2^-32).
  const std::vector<double> wide_a = {57344.0, 0x1p-16}, wide_w = {57344.0, 0x1p-16};
  EXPECT_FALSE(fp8_linear_enclosure(wide_a, one, at, wide_w, one, wt).has_value());
  // A scale product that is not exact (two doubles of 53 bits).
  const std::vector<double> odd = {1.0 + 0x1p-52};
  EXPECT_FALSE(fp8_linear_enclosure(ones, odd, at, ones, odd, wt).has_value());
  // Non-finite values, and tilings whose k-blocks differ.
  const std::vector<double> nan = {NAN, 1.0};
  EXPECT_FALSE(fp8_linear_enclosure(nan, one, at, ones, one, wt).has_value());
  const ScaleTiling wt1{1, 2, 1, 1};
  EXPECT_FALSE(fp8_linear_enclosure(ones, one, at, ones, ones, wt1).has_value());
}

}  // namespace
}  // namespace lmo::ref
