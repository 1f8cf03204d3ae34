// The blocked certified cross-entropy (reference/cross_entropy_enclosure.h) against the MPFR
// reference (softmax_cross_entropy<mp>, 167 bits): every exact loss, log Z and gradient element
// lies in its ball, and the radii stay far below an f64 ulp, across chain boundaries (rows of
// 1, 31, 32, 33 and thousands of logits), z-loss coefficients, targets at either end, logits
// from bf16 and from full doubles, and spreads up to the 400 below the row's largest where the
// path declines, with and without a soft cap (saturated caps included).
#include "reference/cross_entropy_enclosure.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "reference/softmax.h"
#include "tests/support/splitmix.h"

namespace lmo::ref {
namespace {

struct Shape {
  std::string name;
  int64_t rows, n;
  double std;
  double lambda;
  bool doubles = false;  // full-precision logits instead of bf16-like floats
  double cap = 0;        // soft cap (0: none)
};

std::vector<double> logits(const Shape& s, uint64_t seed) {
  testing::SplitMix64 g{seed};
  std::vector<double> z(static_cast<size_t>(s.rows * s.n));
  for (double& x : z) {
    const double u = g.unit() + g.unit() + g.unit() - 1.5;  // roughly normal
    x = 2 * u * s.std;
    if (!s.doubles) x = static_cast<double>(static_cast<float>(x));
  }
  if (s.cap > 0) z[1] = 0;  // tanh(0) = 0 on the capped path: an exact zero
  return z;
}

// |v − mid| ≤ rad, in mp.
bool contains(const Ball& b, const mp& v) { return abs(v - to_mp(b)) <= mp(b.rad()); }

// The radius against the value's magnitude (the target's gradient element against 1 as well).
double relative_radius(const Ball& b, double scale) {
  return b.rad() / std::max(std::fabs(b.hi()), scale);
}

class CrossEntropyEnclosure : public ::testing::TestWithParam<Shape> {};

TEST_P(CrossEntropyEnclosure, ContainsTheMpfrValuesWithTinyRadii) {
  const Shape& s = GetParam();
  const std::vector<double> z = logits(s, 0x5eed + static_cast<uint64_t>(s.n));
  std::vector<int64_t> target(static_cast<size_t>(s.rows));
  for (int64_t r = 0; r < s.rows; ++r) {
    // First class, last class, then inside.
    target[static_cast<size_t>(r)] = r == 0 ? 0 : (r == 1 ? s.n - 1 : (r * 7919) % s.n);
  }
  const std::optional<LossEnclosure> e =
      cross_entropy_enclosure(z, target, s.rows, s.n, s.lambda, s.cap);
  ASSERT_TRUE(e.has_value()) << s.name;
  double worst = 0;
  for (int64_t r = 0; r < s.rows; ++r) {
    std::vector<mp> row(static_cast<size_t>(s.n));
    for (int64_t j = 0; j < s.n; ++j)
      row[static_cast<size_t>(j)] = mp(z[static_cast<size_t>(r * s.n + j)]);
    const LossRow<mp> want = softmax_cross_entropy<mp>(
        std::span<const mp>(row), target[static_cast<size_t>(r)], mp(s.lambda),
        s.cap > 0 ? std::optional<mp>(mp(s.cap)) : std::nullopt);
    const size_t i = static_cast<size_t>(r);
    ASSERT_TRUE(contains(e->loss[i], want.loss)) << s.name << " loss of row " << r;
    ASSERT_TRUE(contains(e->logz[i], want.log_z)) << s.name << " log Z of row " << r;
    // The loss against its terms' magnitudes (with one logit it is λ·z², after −z + log Z
    // cancelled), log Z against 1.
    const double zt = z[static_cast<size_t>(r * s.n + target[i])];
    const double terms =
        std::fabs(s.cap > 0 ? s.cap * std::tanh(zt / s.cap) : zt) + std::fabs(e->logz[i].hi());
    worst = std::max({worst, relative_radius(e->loss[i], terms), relative_radius(e->logz[i], 1)});
    for (int64_t j = 0; j < s.n; ++j) {
      const Ball& b = e->grad[static_cast<size_t>(r * s.n + j)];
      ASSERT_TRUE(contains(b, want.dlogits[static_cast<size_t>(j)]))
          << s.name << " grad [" << r << ", " << j << "]: ball " << b.hi() << " + " << b.lo()
          << " ± " << b.rad() << ", MPFR " << want.dlogits[static_cast<size_t>(j)];
      worst = std::max(worst, relative_radius(b, j == target[i] ? 1.0 : 0.0));
    }
  }
  // Far below an f64 half-ulp (2^-53): the enclosure decides nearly every rounding.
  EXPECT_LT(worst, 0x1p-90) << s.name;
}

INSTANTIATE_TEST_SUITE_P(Shapes, CrossEntropyEnclosure,
                         ::testing::Values(Shape{"one_logit", 2, 1, 2, 1e-4},
                                           Shape{"chain_minus_one", 3, 31, 2, 0},
                                           Shape{"one_chain", 3, 32, 2, 1e-4},
                                           Shape{"chain_plus_one", 3, 33, 2, 0.5},
                                           Shape{"vocab_5000_zloss", 3, 5000, 2, 1e-4},
                                           Shape{"wide_logits", 3, 2000, 60, 1e-4},
                                           Shape{"double_logits", 3, 777, 3, 1e-3, true},
                                           Shape{"negative_lambda", 3, 300, 2, -0.01},
                                           Shape{"softcap_gemma2", 3, 3000, 20, 1e-4, false, 30},
                                           Shape{"softcap_saturated", 3, 500, 300, 0, true, 5},
                                           Shape{"softcap_chain_plus_one", 3, 33, 2, 0.5, true, 1}),
                         [](const ::testing::TestParamInfo<Shape>& i) { return i.param.name; });

TEST(CrossEntropyEnclosureDeclines, WhereItsBoundWasNotDerived) {
  const std::vector<int64_t> t = {0};
  // A logit more than 400 below the row's largest.
  EXPECT_FALSE(cross_entropy_enclosure(std::vector<double>{0, -401}, t, 1, 2, 0).has_value());
  EXPECT_TRUE(cross_entropy_enclosure(std::vector<double>{0, -399}, t, 1, 2, 0).has_value());
  // Non-finite logits and λ.
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(cross_entropy_enclosure(std::vector<double>{0, -inf}, t, 1, 2, 0).has_value());
  EXPECT_FALSE(cross_entropy_enclosure(std::vector<double>{0, NAN}, t, 1, 2, 0).has_value());
  EXPECT_FALSE(cross_entropy_enclosure(std::vector<double>{0, 1}, t, 1, 2, inf).has_value());
  EXPECT_FALSE(cross_entropy_enclosure(std::vector<double>{0, 1}, t, 1, 2, 0, inf).has_value());
  EXPECT_FALSE(cross_entropy_enclosure(std::vector<double>{0, 1}, t, 1, 2, 0, -1).has_value());
  // 1 + 2λ·log Z = 0: log Z = log 2 for two equal logits 0, so λ = −1/(2 log 2) up to rounding.
  EXPECT_FALSE(cross_entropy_enclosure(std::vector<double>{0, 0}, t, 1, 2, -0.5 / std::log(2.0))
                   .has_value());
}

TEST(CrossEntropyEnclosureDeclines, RejectsATargetOutsideTheRow) {
  EXPECT_THROW(cross_entropy_enclosure(std::vector<double>{0, 1}, std::vector<int64_t>{2}, 1, 2, 0),
               std::invalid_argument);
  EXPECT_THROW(
      cross_entropy_enclosure(std::vector<double>{0, 1, 2}, std::vector<int64_t>{0}, 1, 2, 0),
      std::invalid_argument);
}

}  // namespace
}  // namespace lmo::ref
