// Backward passes of F01 LayerNorm and F02 RMSNorm: the analytic gradients in mp against
// central differences (h = 1e-20, evaluated at 100 digits: tests/support/central_difference.h)
// of L = Σ_i dy_i·y_i, and double against mp within a stated bound.
#include "reference/norms_grad.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "tests/support/central_difference.h"
#include "tests/support/test_data.h"

namespace lmo::ref {
namespace {

using testdata::central_gradient;
using testdata::dot100;
using testdata::mp100;

const std::vector<double> kX{0.7, -1.3, 2.1, 0.05, -0.4, 1.6, -2.2, 0.9};
const std::vector<double> kGamma{1.1, 0.9, -0.3, 1.4, 0.8, 1.0, 0.6, -1.2};
const std::vector<double> kBeta{0.1, -0.2, 0.0, 0.3, 0.05, -0.1, 0.2, 0.0};
const std::vector<double> kDy{0.3, -0.8, 1.2, 0.5, -0.1, 0.7, -1.5, 0.25};
const double kEps = 1e-5;

std::vector<mp> mps(const std::vector<double>& v) { return std::vector<mp>(v.begin(), v.end()); }

// FD agreement: 1e-30 relative to each component, with a floor of 1e-30 × the largest
// component (the O(h²) truncation error scales with the function, not with each entry).
void expect_close(const std::vector<mp>& analytic, const std::vector<mp>& fd, const char* what) {
  mp scale = 0;
  for (const mp& v : fd) scale = std::max(scale, mp(abs(v)));
  ASSERT_EQ(analytic.size(), fd.size());
  for (size_t i = 0; i < fd.size(); ++i) {
    EXPECT_LE(abs(analytic[i] - fd[i]), 1e-30 * (abs(fd[i]) + scale * 1e-5))
        << what << " i=" << i << " analytic=" << analytic[i] << " fd=" << fd[i];
  }
}

TEST(NormsGrad, RmsNormBackwardMatchesCentralDifferences) {
  const auto x = mps(kX), g = mps(kGamma), dy = mps(kDy);
  const auto grad = rmsnorm_backward<mp>(x, g, mp(kEps), dy);
  const auto dy100 = testdata::to_mp100(dy);
  const mp100 eps(kEps);
  const auto fx = [&](const std::vector<mp100>& w) {
    return dot100(dy100, rmsnorm<mp100>(w, testdata::to_mp100(g), eps));
  };
  const auto fg = [&](const std::vector<mp100>& w) {
    return dot100(dy100, rmsnorm<mp100>(testdata::to_mp100(x), w, eps));
  };
  expect_close(grad.dx, central_gradient(fx, x), "dx");
  expect_close(grad.dgamma, central_gradient(fg, g), "dgamma");
}

TEST(NormsGrad, RmsNormGemmaBackwardMatchesCentralDifferences) {
  std::vector<mp> g;
  for (double v : kGamma) g.push_back(mp(v) / 10);  // Gemma's γ sits near 0
  const auto x = mps(kX), dy = mps(kDy);
  const auto grad = rmsnorm_gemma_backward<mp>(x, g, mp(kEps), dy);
  const auto dy100 = testdata::to_mp100(dy);
  const mp100 eps(kEps);
  const auto fx = [&](const std::vector<mp100>& w) {
    return dot100(dy100, rmsnorm_gemma<mp100>(w, testdata::to_mp100(g), eps));
  };
  const auto fg = [&](const std::vector<mp100>& w) {
    return dot100(dy100, rmsnorm_gemma<mp100>(testdata::to_mp100(x), w, eps));
  };
  expect_close(grad.dx, central_gradient(fx, x), "dx");
  expect_close(grad.dgamma, central_gradient(fg, g), "dgamma");
}

TEST(NormsGrad, LayerNormBackwardMatchesCentralDifferences) {
  const auto x = mps(kX), g = mps(kGamma), b = mps(kBeta), dy = mps(kDy);
  const auto grad = layernorm_backward<mp>(x, g, mp(kEps), dy);
  const auto dy100 = testdata::to_mp100(dy);
  const auto x100 = testdata::to_mp100(x), g100 = testdata::to_mp100(g);
  const auto b100 = testdata::to_mp100(b);
  const mp100 eps(kEps);
  const auto fx = [&](const std::vector<mp100>& w) {
    return dot100(dy100, layernorm<mp100>(w, g100, b100, eps));
  };
  const auto fg = [&](const std::vector<mp100>& w) {
    return dot100(dy100, layernorm<mp100>(x100, w, b100, eps));
  };
  const auto fb = [&](const std::vector<mp100>& w) {
    return dot100(dy100, layernorm<mp100>(x100, g100, w, eps));
  };
  expect_close(grad.dx, central_gradient(fx, x), "dx");
  expect_close(grad.dgamma, central_gradient(fg, g), "dgamma");
  expect_close(grad.dbeta, central_gradient(fb, b), "dbeta");
  // LayerNorm is shift-invariant, so Σ_k ∂L/∂x_k = 0.
  mp s = 0, s_abs = 0;
  for (const mp& v : grad.dx) s += v, s_abs += abs(v);
  EXPECT_LT(abs(s), 1e-45 * s_abs);
}

TEST(NormsGrad, RmsNormBackwardIsScaleInvariantInX) {
  // y(c·x) = y(x) for ε = 0, so ∂L/∂x at c·x is (1/c)·∂L/∂x at x (and dγ is unchanged).
  const auto x = mps(kX), g = mps(kGamma), dy = mps(kDy);
  std::vector<mp> x4;
  for (const mp& v : x) x4.push_back(4 * v);
  const auto a = rmsnorm_backward<mp>(x, g, mp(0), dy);
  const auto b = rmsnorm_backward<mp>(x4, g, mp(0), dy);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_LT(abs(4 * b.dx[i] - a.dx[i]), 1e-48 * (abs(a.dx[i]) + 1));
    EXPECT_LT(abs(b.dgamma[i] - a.dgamma[i]), 1e-48 * (abs(a.dgamma[i]) + 1));
  }
}

TEST(NormsGrad, DoubleAndFloat128WithinBoundOfMp) {
  // Both backward passes are a handful of roundings per element after two length-d means; the
  // terms g_i, mean(g) and x̂_i·mean(g⊙x̂) can cancel, so the bound is normwise: per element
  // ≤ 4(d + 8)·u·(max|g| + |mean g| + max|x̂|·|mean g⊙x̂|)/σ, with these magnitudes ≤ 10/σ here.
  const auto x = mps(kX), g = mps(kGamma), dy = mps(kDy);
  const auto rm = rmsnorm_backward<mp>(x, g, mp(kEps), dy);
  const auto lm = layernorm_backward<mp>(x, g, mp(kEps), dy);
  const auto rd = rmsnorm_backward<double>(kX, kGamma, kEps, kDy);
  const auto ld = layernorm_backward<double>(kX, kGamma, kEps, kDy);
  std::vector<float128> xq, gq, dyq;
  for (size_t i = 0; i < kX.size(); ++i) {
    xq.push_back(kX[i]), gq.push_back(kGamma[i]), dyq.push_back(kDy[i]);
  }
  const auto rq = rmsnorm_backward<float128>(xq, gq, float128(kEps), dyq);
  const auto lq = layernorm_backward<float128>(xq, gq, float128(kEps), dyq);
  const mp sigma_min = 1;  // both σ here are > 1 (mean of squares, variance of kX)
  const double u = std::numeric_limits<double>::epsilon() / 2;
  const mp bound_d = mp(4 * (8 + 8) * u) * 10 / sigma_min;
  const mp bound_q = 4 * (8 + 8) * (to_mp(std::numeric_limits<float128>::epsilon()) / 2) * 10;
  for (size_t i = 0; i < kX.size(); ++i) {
    EXPECT_LT(abs(mp(rd.dx[i]) - rm.dx[i]), bound_d) << i;
    EXPECT_LT(abs(mp(ld.dx[i]) - lm.dx[i]), bound_d) << i;
    EXPECT_LT(abs(mp(rd.dgamma[i]) - rm.dgamma[i]), bound_d) << i;
    EXPECT_LT(abs(mp(ld.dgamma[i]) - lm.dgamma[i]), bound_d) << i;
    EXPECT_LT(abs(to_mp(rq.dx[i]) - rm.dx[i]), bound_q) << i;
    EXPECT_LT(abs(to_mp(lq.dx[i]) - lm.dx[i]), bound_q) << i;
  }
}

TEST(NormsGrad, RejectsMismatchedDy) {
  const std::vector<double> x{1, 2, 3}, g{1, 1, 1}, dy{1, 1};
  EXPECT_THROW(rmsnorm_backward<double>(x, g, 1e-6, dy), std::invalid_argument);
  EXPECT_THROW(layernorm_backward<double>(x, g, 1e-6, dy), std::invalid_argument);
}

}  // namespace
}  // namespace lmo::ref
