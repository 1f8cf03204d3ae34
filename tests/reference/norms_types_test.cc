// F01/F02/E01 and their backward passes run on all nine number types, return finite values on
// small well-scaled inputs (exact in every format, fp8 included), and stay within a stated bound
// of the mp result on the same inputs.
//
// Bound: a row of d = 8 goes through ≤ d + 8 roundings on its longest path (the length-d mean,
// then ≤ 8 elementwise steps), each ≤ u = ε/2, with condition ≤ 2 for these inputs (no x ≈ μ,
// σ ≈ 1): |error| ≤ 2(d + 8)·ε·S, S the scale of the outputs (max |x̂·γ| + max |β| ≤ 4 here;
// for the backward passes max |dy·γ|/σ·(1 + max|x̂|) ≤ 6). The first-order analysis is not
// rigorous at fp8's u = 1/16 or 1/8; there the bound (≥ 4·S) only says "the right magnitude".
#include <gtest/gtest.h>

#include <vector>

#include "reference/norms.h"
#include "reference/norms_grad.h"
#include "tests/support/typed_numbers.h"

namespace lmo::ref {
namespace {

using testdata::eps_of;
using testdata::normwise_close;
using testdata::to_mp_vector;
using testdata::to_type;

const std::vector<double> kX{0.5, -1.25, 2, 0.75, -0.375, 1.5, -2, 0.25};
const std::vector<double> kGamma{1, 0.75, 1.25, 1, 0.5, 1.5, 1, 0.875};
const std::vector<double> kBeta{0, 0.25, -0.25, 0.5, 0, -0.5, 0.125, 0};
const std::vector<double> kDy{0.5, -1, 0.25, 0.75, -0.5, 1, -0.25, 0.5};
constexpr double kD = 8;

template <class T>
class NormsTypes : public ::testing::Test {};
TYPED_TEST_SUITE(NormsTypes, testdata::AllNumberTypes);

TYPED_TEST(NormsTypes, ForwardRunsFiniteAndNearMp) {
  using T = TypeParam;
  const auto x = to_type<T>(kX), g = to_type<T>(kGamma), b = to_type<T>(kBeta);
  const T eps = convert<T>(1e-5);
  const auto xm = to_mp_vector(x), gm = to_mp_vector(g), bm = to_mp_vector(b);
  const mp em = to_mp(eps);
  const mp bound = 2 * (kD + 8) * eps_of<T>() * 4;

  const auto ln = layernorm<T>(x, g, b, eps);
  EXPECT_TRUE(testdata::all_finite(ln));
  EXPECT_TRUE(normwise_close(ln, layernorm<mp>(xm, gm, bm, em), bound));
  const auto rms = rmsnorm<T>(x, g, eps);
  EXPECT_TRUE(testdata::all_finite(rms));
  EXPECT_TRUE(normwise_close(rms, rmsnorm<mp>(xm, gm, em), bound));
  const auto gem = rmsnorm_gemma<T>(x, b, eps);
  EXPECT_TRUE(testdata::all_finite(gem));
  EXPECT_TRUE(normwise_close(gem, rmsnorm_gemma<mp>(xm, bm, em), bound));
  const auto e01 = rmsnorm_literal_e01<T>(x, g, eps);
  EXPECT_TRUE(testdata::all_finite(e01));
  EXPECT_TRUE(normwise_close(e01, rmsnorm_literal_e01<mp>(xm, gm, em), bound));
}

TYPED_TEST(NormsTypes, GemmaWeightIsOnePlusGammaInEveryType) {
  using T = TypeParam;
  const auto x = to_type<T>(kX), b = to_type<T>(kBeta);
  std::vector<T> w;
  for (const T& v : b) w.push_back(T(1) + v);
  const auto a = rmsnorm_gemma<T>(x, b, convert<T>(1e-5));
  const auto c = rmsnorm<T>(x, w, convert<T>(1e-5));
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(to_mp(a[i]), to_mp(c[i])) << i;
}

TYPED_TEST(NormsTypes, BackwardRunsFiniteAndNearMp) {
  using T = TypeParam;
  const auto x = to_type<T>(kX), g = to_type<T>(kGamma), dy = to_type<T>(kDy);
  const T eps = convert<T>(1e-5);
  const auto xm = to_mp_vector(x), gm = to_mp_vector(g), dym = to_mp_vector(dy);
  const mp em = to_mp(eps);
  const mp bound = 2 * (kD + 8) * eps_of<T>() * 6;

  const auto r = rmsnorm_backward<T>(x, g, eps, dy);
  const auto rm = rmsnorm_backward<mp>(xm, gm, em, dym);
  EXPECT_TRUE(testdata::all_finite(r.dx) && testdata::all_finite(r.dgamma));
  EXPECT_TRUE(normwise_close(r.dx, rm.dx, bound));
  EXPECT_TRUE(normwise_close(r.dgamma, rm.dgamma, bound));
  const auto gq = rmsnorm_gemma_backward<T>(x, g, eps, dy);
  EXPECT_TRUE(testdata::all_finite(gq.dx));
  EXPECT_TRUE(normwise_close(gq.dx, rmsnorm_gemma_backward<mp>(xm, gm, em, dym).dx, 2 * bound));
  const auto l = layernorm_backward<T>(x, g, eps, dy);
  const auto lm = layernorm_backward<mp>(xm, gm, em, dym);
  EXPECT_TRUE(testdata::all_finite(l.dx) && testdata::all_finite(l.dgamma));
  EXPECT_TRUE(normwise_close(l.dx, lm.dx, bound));
  EXPECT_TRUE(normwise_close(l.dgamma, lm.dgamma, bound));
  EXPECT_TRUE(normwise_close(l.dbeta, lm.dbeta, mp(0)));
}

TYPED_TEST(NormsTypes, MatrixOverloadRuns) {
  using T = TypeParam;
  Mat<T> x(2, 8);
  for (int64_t j = 0; j < 8; ++j) {
    x(0, j) = convert<T>(kX[static_cast<size_t>(j)]);
    x(1, j) = convert<T>(kDy[static_cast<size_t>(j)]);
  }
  const auto y = rmsnorm<T>(x, to_type<T>(kGamma), convert<T>(1e-5));
  EXPECT_TRUE(testdata::all_finite(y.data));
}

}  // namespace
}  // namespace lmo::ref
