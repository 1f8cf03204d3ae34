// The blocked certified attention (reference/attention_enclosure.h) against the MPFR reference
// (attention<mp>, 167 bits): every exact output lies in its ball, and the radii stay far below
// an f64 ulp, on both instruction sets, across the masks, GQA, chunk and block boundaries
// (d not a multiple of 32, more than 64 keys) and logits far enough apart that exponentials
// drop below the 2^-600 cut, with and without a soft cap.
#include "reference/attention_enclosure.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "reference/attention.h"
#include "tests/support/reference_attention_shape.h"

namespace lmo::ref {
namespace {

using Shape = testdata::RefAttentionShape;

Mat<double> floats(int64_t rows, int64_t cols, double scale, uint64_t seed) {
  return testdata::ref_attention_values<double>(rows, cols, scale, seed);
}

Mat<mp> to_mp(const Mat<double>& m) {
  Mat<mp> r(m.rows, m.cols);
  for (size_t i = 0; i < m.data.size(); ++i) r.data[i] = mp(m.data[i]);
  return r;
}

class AttentionEnclosure : public ::testing::TestWithParam<EnclosureIsa> {
 protected:
  void TearDown() override { set_attention_enclosure_isa(EnclosureIsa::kAuto); }
};

// Every exact output (attention<mp>) of s on seeded inputs lies in its ball, and the widest
// radius, relative to the output (an element near 0 from cancellation: relative to 10^-3 of the
// values' scale of 1), is below widest_allowed.
void expect_enclosed(const Shape& s, uint64_t seed, double widest_allowed) {
  SCOPED_TRACE(s.name);
  const AttentionConfig cfg = testdata::ref_attention_config(s);
  const Mat<double> q = floats(s.tq, s.h * s.d, s.qk_scale, seed);
  const Mat<double> k = floats(s.tk, s.g * s.d, s.qk_scale, seed + 1);
  const Mat<double> v = floats(s.tk, s.g * s.dv, 1, seed + 2);
  const std::optional<std::vector<Ball>> balls = attention_enclosure(q, k, v, cfg);
  ASSERT_TRUE(balls.has_value());
  const Mat<mp> exact = attention<mp>(to_mp(q), to_mp(k), to_mp(v), cfg);
  ASSERT_EQ(balls->size(), exact.data.size());
  double widest = 0;
  for (size_t i = 0; i < exact.data.size(); ++i) {
    const Ball& b = (*balls)[i];
    const mp e = exact.data[i];
    const mp gap = abs(e - (mp(b.hi()) + mp(b.lo())));
    ASSERT_LE(gap, mp(b.rad())) << "element " << i << ": exact " << e.str(30);
    const double mag = std::fabs(static_cast<double>(e));
    widest = std::max(widest, b.rad() / std::max(mag, 1e-3));
  }
  EXPECT_LT(widest, widest_allowed);
}

TEST_P(AttentionEnclosure, ContainsTheMpfrValuesWithTinyRadii) {
  set_attention_enclosure_isa(GetParam());
  const std::vector<Shape> shapes = {
      {"causal MHA", 37, 37, 2, 2, 16, 16, MaskKind::kCausal},
      {"GQA, d 40, 70 keys", 70, 70, 4, 2, 40, 40, MaskKind::kNone},
      {"MQA, value dim 24", 20, 20, 3, 1, 8, 24, MaskKind::kCausal},
      {"window 5", 40, 40, 2, 1, 16, 16, MaskKind::kSlidingWindow, 5},
      {"documents", 80, 80, 2, 2, 12, 12, MaskKind::kDocument},
      {"decode over 150 keys", 1, 150, 8, 2, 64, 64, MaskKind::kCausal},
      {"3 queries, 90 keys", 3, 90, 2, 2, 33, 33, MaskKind::kCausal},
      // Logits hundreds apart: most exponentials below 2^-600, left out with their bound.
      {"peaked", 24, 24, 2, 2, 16, 16, MaskKind::kCausal, 0, 12},
      // Gemma 2's soft cap on logits of spread 36 (cap 50) and of spread 9 (cap 20).
      {"soft cap 50", 37, 37, 4, 2, 16, 16, MaskKind::kCausal, 0, 6, true, 1, 50},
      {"soft cap 20, window", 24, 70, 2, 1, 40, 40, MaskKind::kSlidingWindow, 33, 3, true, 1, 20},
  };
  uint64_t seed = 1;
  for (const Shape& s : shapes) {
    // Radii this wide would leave f64 roundings undecided.
    expect_enclosed(s, seed, 0x1p-80);
    seed += 3;
  }
}

// Logits of spread ~200 pressed against a cap of 20: most keys sit at ±20, so a row's output is
// an average over many of them, near 0 by cancellation, while the radius stays that of the sum
// of their magnitudes, set by the dot products' own (uncapped) error: about 2^-87 absolute here.
// Enclosed all the same; relative to such outputs the radius is wider than above.
TEST_P(AttentionEnclosure, ContainsLogitsPressedAgainstTheCap) {
  set_attention_enclosure_isa(GetParam());
  expect_enclosed(
      {"soft cap 20, peaked", 24, 70, 2, 1, 40, 40, MaskKind::kSlidingWindow, 33, 12, true, 1, 20},
      100, 0x1p-72);
}

INSTANTIATE_TEST_SUITE_P(Isa, AttentionEnclosure,
                         ::testing::Values(EnclosureIsa::kAuto, EnclosureIsa::kPortable),
                         [](const auto& info) {
                           return info.param == EnclosureIsa::kAuto ? "Auto" : "Portable";
                         });

TEST(AttentionEnclosureScope, DeclinesWhatItsBoundsDoNotCover) {
  const Shape s{"", 8, 8, 2, 2, 8, 8, MaskKind::kCausal};
  AttentionConfig cfg = testdata::ref_attention_config(s);
  const Mat<double> q = floats(8, 16, 1, 7), k = floats(8, 16, 1, 8), v = floats(8, 16, 1, 9);
  ASSERT_TRUE(attention_enclosure(q, k, v, cfg).has_value());
  // f64 inputs: the products q·k would not be exact in double.
  Mat<double> q64 = q;
  q64.data[3] = 1.0 / 3.0;
  EXPECT_FALSE(attention_enclosure(q64, k, v, cfg).has_value());
  // A logit bias (T5's): attention<Ball> runs instead.
  cfg.logit_bias.assign(2, Mat<mp>(8, 8));
  EXPECT_FALSE(attention_enclosure(q, k, v, cfg).has_value());
}

}  // namespace
}  // namespace lmo::ref
