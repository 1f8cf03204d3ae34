// F01 LayerNorm, F02 RMSNorm (and the Gemma (1 + γ) variant), E01, against the mpmath values
// of tests/data/make_norms.py, and the forward-error bounds of float128 and double.
#include "reference/norms.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tests/support/test_data.h"

namespace lmo::ref {
namespace {

using testdata::exact_doubles;
using testdata::expected_vector;
using testdata::relative_error;

template <class T>
std::vector<T> as(const std::vector<double>& v) {
  std::vector<T> out;
  for (double d : v) out.push_back(convert<T>(d));
  return out;
}

template <class T>
mp unit_roundoff() {
  return to_mp(std::numeric_limits<T>::epsilon()) / 2;
}

struct Row {
  std::string name;
  double eps;
  std::vector<double> x, gamma, beta;
  std::vector<mp> want;
};

std::vector<Row> rows(const char* key) {
  const auto data = testdata::load("norms.json");
  std::vector<Row> out;
  for (const auto& c : data.at(key)) {
    Row r{c.at("name"),
          testdata::exact_double(c.at("eps")),
          exact_doubles(c.at("x")),
          exact_doubles(c.at("gamma")),
          {},
          expected_vector(c.at("y"))};
    if (c.contains("beta")) r.beta = exact_doubles(c.at("beta"));
    out.push_back(std::move(r));
  }
  return out;
}

// LayerNorm in T against the exact value: a first-order forward-error bound for
// y_i = (x_i − μ)/σ·γ_i + β_i with unit roundoff u.
//  - μ = fl(Σx/d) is off by at most u·|μ| beyond the sum's own error; x_i − μ̂ is then exact
//    (Sterbenz) but off by that amount, a relative error u·|μ|/|x_i − μ| of the deviation
//    (the conditioning of the subtraction; large when |μ| ≫ σ). The sum Σx adds (d − 1)·u·Σ|x|/d
//    unless it is exact (sum_exact: mp, whose 167 bits hold any sum of these doubles).
//  - Σ(x_i − μ̂)² has relative error ≤ d·u (positive terms; the first-order effect of the mean
//    error cancels because Σ(x_i − μ) = 0); the division, + ε and sqrt add 3u, halved by sqrt;
//    the division by σ, · γ and + β add 3u.
// So |Δy_i| ≤ |x̂_i γ_i|·((d + 8)u + u·(|μ| + (d − 1)·mean|x|)/|x_i − μ|) + u|y_i|, doubled to
// cover the neglected second-order terms.
mp layernorm_bound(const Row& r, size_t i, const mp& u, bool sum_exact = false) {
  const mp d = mp(static_cast<int64_t>(r.x.size()));
  mp mu = 0, mean_abs = 0;
  for (double v : r.x) mu += mp(v), mean_abs += abs(mp(v));
  mu /= d, mean_abs /= d;
  mp var = 0;
  for (double v : r.x) var += (mp(v) - mu) * (mp(v) - mu);
  var /= d;
  const mp sigma = sqrt(var + mp(r.eps));
  const mp dev = abs(mp(r.x[i]) - mu);
  const mp xg = abs(dev / sigma * mp(r.gamma[i]));
  const mp mean_err = u * (abs(mu) + (sum_exact ? mp(0) : mp((d - 1) * mean_abs)));
  const mp cancel = dev == 0 ? mp(0) : mp(mean_err / dev);
  return 2 * (xg * ((d + 8) * u + cancel) + u * abs(r.want[i]));
}

TEST(LayerNorm, MatchesMpmathAt1e40) {
  for (const Row& r : rows("layernorm")) {
    const auto x = as<mp>(r.x), g = as<mp>(r.gamma), b = as<mp>(r.beta);
    const auto y = layernorm<mp>(x, g, b, mp(r.eps));
    for (size_t i = 0; i < y.size(); ++i) {
      if (r.x.size() == 100) {
        // d = 100: the mean of 1e6 + k·2^-20 is not a dyadic number, so mp rounds it (error
        // ≤ u·|μ| ≈ 2.7e-51·1e6) and every deviation x_i − μ inherits that absolute error.
        // Deviations are ≥ 0.01·2^-20 ≈ 1e-8 (μ is a multiple of 0.01·2^-20) or exactly 0:
        // relative error up to ≈ 3e-37. The bound below is that conditioning term plus 1e-40.
        const mp tol = 1e-40 * abs(r.want[i]) + layernorm_bound(r, i, unit_roundoff<mp>(), true);
        EXPECT_LE(abs(y[i] - r.want[i]), tol) << r.name << " i=" << i;
      } else {
        // d = 8, 64: every step before the square root is exact in mp (the sums of these
        // doubles need < 100 bits and d is a power of two), so the full 1e-40 holds.
        EXPECT_LT(relative_error(y[i], r.want[i]), 1e-40) << r.name << " i=" << i;
      }
    }
  }
}

TEST(LayerNorm, Float128AndDoubleWithinForwardErrorBound) {
  for (const Row& r : rows("layernorm")) {
    const auto q = layernorm<float128>(as<float128>(r.x), as<float128>(r.gamma),
                                       as<float128>(r.beta), convert<float128>(r.eps));
    const auto y = layernorm<double>(r.x, r.gamma, r.beta, r.eps);
    for (size_t i = 0; i < y.size(); ++i) {
      // float128: 1e-30 relative, or the conditioning bound where it is larger (x − μ).
      const mp tol128 =
          std::max(mp(1e-30) * abs(r.want[i]), layernorm_bound(r, i, unit_roundoff<float128>()));
      EXPECT_LE(abs(to_mp(q[i]) - r.want[i]), tol128) << r.name << " i=" << i;
      EXPECT_LE(abs(mp(y[i]) - r.want[i]), layernorm_bound(r, i, unit_roundoff<double>()))
          << r.name << " i=" << i;
    }
  }
}

TEST(LayerNorm, CancellationCaseIsAccurateInDoubleBecauseTwoPass) {
  // 1e6 + k·2^-20 with d = 64: the double sum is exact (multiples of 2^-20 below 2^27), so the
  // two-pass double result is accurate to a few ulps. A one-pass E[x²] − μ² would lose all
  // digits here (σ² ≈ 3e-7 against μ² ≈ 1e12, below double's resolution 1e12·2^-53 ≈ 1e-4).
  const Row r = rows("layernorm")[1];
  ASSERT_EQ(r.x.size(), 64u);
  const auto y = layernorm<double>(r.x, r.gamma, r.beta, r.eps);
  for (size_t i = 0; i < y.size(); ++i) {
    EXPECT_LT(relative_error(mp(y[i]), r.want[i]), 1e-13) << i;
  }
}

TEST(RmsNorm, MatchesMpmathAt1e40AndFloat128AndDouble) {
  for (const char* key : {"rmsnorm", "rmsnorm_gemma", "rmsnorm_literal_e01"}) {
    const std::string k = key;
    for (const Row& r : rows(key)) {
      const auto run = [&]<class T>(T) {
        const auto x = as<T>(r.x), g = as<T>(r.gamma);
        const T eps = convert<T>(r.eps);
        if (k == "rmsnorm") return rmsnorm<T>(x, g, eps);
        if (k == "rmsnorm_gemma") return rmsnorm_gemma<T>(x, g, eps);
        return rmsnorm_literal_e01<T>(x, g, eps);
      };
      const auto y = run(mp());
      const auto q = run(float128());
      const auto dbl = run(double());
      // y_i = x_i / sqrt(Σx²/d + ε)·γ_i has no cancellation: the sum of squares has relative
      // error ≤ d·u (positive terms), the remaining steps ≤ 6u (7u with the Gemma variant's
      // 1 + γ): (d + 10)·u relative.
      const mp d = mp(static_cast<int64_t>(r.x.size()));
      for (size_t i = 0; i < y.size(); ++i) {
        EXPECT_LT(relative_error(y[i], r.want[i]), 1e-40) << k << " " << r.name << " i=" << i;
        EXPECT_LT(relative_error(to_mp(q[i]), r.want[i]), 1e-30) << k << " " << r.name;
        EXPECT_LT(relative_error(mp(dbl[i]), r.want[i]), (d + 10) * unit_roundoff<double>())
            << k << " " << r.name << " i=" << i;
      }
    }
  }
}

TEST(RmsNorm, GemmaVariantIsRmsNormWithWeightOnePlusGamma) {
  for (const Row& r : rows("rmsnorm_gemma")) {
    const auto x = as<mp>(r.x), g = as<mp>(r.gamma);
    std::vector<mp> w;
    for (const mp& v : g) w.push_back(1 + v);
    EXPECT_EQ(rmsnorm_gemma<mp>(x, g, mp(r.eps)), rmsnorm<mp>(x, w, mp(r.eps))) << r.name;
  }
}

TEST(RmsNorm, E01LiteralFormIsF02DividedBySqrtDWhenEpsIsZero) {
  std::vector<Row> cases = rows("rmsnorm");
  Row d12 = cases[0];  // a width that is not a power of two
  d12.x.insert(d12.x.end(), {0.3, -1.7, 2.25, 0.0078125});
  d12.gamma.insert(d12.gamma.end(), {1.0, 0.5, -2.0, 1.25});
  cases.push_back(d12);
  for (const Row& r : cases) {
    const auto x = as<mp>(r.x), g = as<mp>(r.gamma);
    const auto f02 = rmsnorm<mp>(x, g, mp(0));
    const auto e01 = rmsnorm_literal_e01<mp>(x, g, mp(0));
    const mp sqrt_d = sqrt(mp(static_cast<int64_t>(r.x.size())));
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i] == 0) continue;
      // Both accumulate the same squares in the same order; only /d, sqrt and the two
      // divisions differ: a few units of mp's 2^-167.
      EXPECT_LT(relative_error(f02[i] / e01[i], sqrt_d), 1e-48) << r.x.size() << " i=" << i;
    }
    // With ε > 0 the ratio is no longer exactly √d: the registry reports the difference.
    const auto e01_eps = rmsnorm_literal_e01<mp>(x, g, mp(r.eps));
    EXPECT_NE(rmsnorm<mp>(x, g, mp(r.eps))[0] / e01_eps[0], sqrt_d);
  }
}

TEST(Norms, MatrixOverloadsNormalizeEachRowIndependentOfThreads) {
  const Row r = rows("layernorm")[0];
  Mat<double> x(3, 8);
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 8; ++j) x(i, j) = r.x[static_cast<size_t>(j)] * (1.0 + 0.5 * i);
  }
  for (int threads : {1, 3}) {
    set_reference_threads(threads);
    const Mat<double> ln = layernorm<double>(x, r.gamma, r.beta, r.eps);
    const Mat<double> rms = rmsnorm<double>(x, r.gamma, r.eps);
    const Mat<double> gem = rmsnorm_gemma<double>(x, r.gamma, r.eps);
    for (int64_t i = 0; i < 3; ++i) {
      const std::vector<double> row(x.row(i).begin(), x.row(i).end());
      EXPECT_EQ(std::vector<double>(ln.row(i).begin(), ln.row(i).end()),
                layernorm<double>(row, r.gamma, r.beta, r.eps));
      EXPECT_EQ(std::vector<double>(rms.row(i).begin(), rms.row(i).end()),
                rmsnorm<double>(row, r.gamma, r.eps));
      EXPECT_EQ(std::vector<double>(gem.row(i).begin(), gem.row(i).end()),
                rmsnorm_gemma<double>(row, r.gamma, r.eps));
    }
  }
  set_reference_threads(0);
}

TEST(Norms, RejectsBadArguments) {
  const std::vector<double> x{1, 2, 3}, g3{1, 1, 1}, g2{1, 1};
  EXPECT_THROW(rmsnorm<double>(x, g2, 1e-6), std::invalid_argument);
  EXPECT_THROW(rmsnorm<double>(std::vector<double>{}, std::vector<double>{}, 1e-6),
               std::invalid_argument);
  EXPECT_THROW(rmsnorm<double>(x, g3, -1e-6), std::invalid_argument);
  EXPECT_THROW(layernorm<double>(x, g3, g2, 1e-6), std::invalid_argument);
  EXPECT_THROW(rmsnorm_gemma<double>(x, g2, 1e-6), std::invalid_argument);
  EXPECT_THROW(rmsnorm_literal_e01<double>(x, g2, 0.0), std::invalid_argument);
  try {
    layernorm<double>(x, g2, g3, 1e-6);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "layernorm: gamma has 2 values, expected 3 (the length of x)");
  }
}

TEST(Norms, NanPropagatesAndZeroRowWithEps) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> g{1, 1, 1}, b{0, 0, 0};
  for (double v : rmsnorm<double>(std::vector<double>{1, nan, 2}, g, 1e-6))
    EXPECT_TRUE(std::isnan(v));
  for (double v : layernorm<double>(std::vector<double>{1, nan, 2}, g, b, 1e-6))
    EXPECT_TRUE(std::isnan(v));
  // A zero row: 0 / sqrt(0 + ε) = 0, not NaN.
  for (double v : rmsnorm<double>(std::vector<double>{0, 0, 0}, g, 1e-6)) EXPECT_EQ(v, 0.0);
  for (double v : layernorm<double>(std::vector<double>{5, 5, 5}, g, b, 1e-6)) EXPECT_EQ(v, 0.0);
}

}  // namespace
}  // namespace lmo::ref
