// F12 softmax / log-sum-exp / cross-entropy, F13 z-loss and its gradient, F14 soft-capping and
// the fused loss row, against the mpmath values of tests/data/make_softmax.py; float128 and
// double within a forward-error bound; gradients against central differences.
#include "reference/softmax.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "tests/support/central_difference.h"
#include "tests/support/test_data.h"

namespace lmo::ref {
namespace {

using testdata::relative_error;

struct Row {
  std::string name;
  std::vector<double> z;
  int64_t target;
  double lambda;
  std::optional<double> cap;
  mp log_z, ce, loss;
  std::vector<int64_t> index;
  std::vector<mp> p, grad;
};

std::vector<Row> rows() {
  const auto data = testdata::load("softmax.json");
  std::map<std::string, std::vector<double>> logits;
  std::vector<Row> out;
  for (const auto& r : data.at("rows")) {
    Row row;
    row.name = r.at("name");
    row.z = r.contains("z") ? testdata::exact_doubles(r.at("z")) : logits.at(r.at("z_from"));
    logits[row.name] = row.z;
    row.target = r.at("target");
    row.lambda = testdata::exact_double(r.at("lambda"));
    if (!r.at("cap").is_null()) row.cap = testdata::exact_double(r.at("cap"));
    row.log_z = testdata::expected(r.at("log_z"));
    row.ce = testdata::expected(r.at("ce"));
    row.loss = testdata::expected(r.at("loss"));
    row.index = r.at("index").get<std::vector<int64_t>>();
    row.p = testdata::expected_vector(r.at("p"));
    row.grad = testdata::expected_vector(r.at("grad"));
    out.push_back(std::move(row));
  }
  return out;
}

template <class T>
std::vector<T> as(const std::vector<double>& v) {
  std::vector<T> out;
  for (double d : v) out.push_back(convert<T>(d));
  return out;
}

template <class T>
LossRow<T> fused(const Row& r) {
  const std::optional<T> cap = r.cap ? std::optional<T>(convert<T>(*r.cap)) : std::nullopt;
  return softmax_cross_entropy<T>(as<T>(r.z), r.target, convert<T>(r.lambda), cap);
}

// Gradient entries: 1e-40 relative to max(|g_j|, p_j). The error of g_j = p_j − [j = y] + … is
// the error of p_j (relative 1e-49); where j = y and p_y ≈ 1, g_y = p_y − 1 cancels and only
// p_y's scale is meaningful.
bool grad_close(const mp& got, const mp& want, const mp& p, const mp& rel) {
  return abs(got - want) <= rel * std::max(mp(abs(want)), mp(abs(p)));
}

TEST(SoftmaxLoss, FusedRowMatchesMpmathAt1e40) {
  for (const Row& r : rows()) {
    const LossRow<mp> out = fused<mp>(r);
    // log Z near 0 (z_near_1): mp's absolute error is ≤ (n + 2|max z| + 4)·2^-167 ≈ 2e-49
    // against log Z ≈ 1e-6, so 1e-40 relative still holds.
    EXPECT_LT(relative_error(out.log_z, r.log_z), 1e-40) << r.name;
    EXPECT_LT(relative_error(out.loss, r.loss), 1e-40) << r.name;
    for (size_t k = 0; k < r.index.size(); ++k) {
      const size_t j = static_cast<size_t>(r.index[k]);
      EXPECT_TRUE(grad_close(out.dlogits[j], r.grad[k], r.p[k], mp(1e-40)))
          << r.name << " j=" << j << " got " << out.dlogits[j] << " want " << r.grad[k];
    }
    // Σ_j p_j = 1, so without a cap Σ_j ∂L/∂z_j = 2λ·log Z: a check on all 32000 entries.
    if (!r.cap) {
      mp sum = 0, sum_abs = 0;
      for (const mp& g : out.dlogits) sum += g, sum_abs += abs(g);
      EXPECT_LE(abs(sum - 2 * mp(r.lambda) * out.log_z), 1e-45 * sum_abs) << r.name;
    }
  }
}

TEST(SoftmaxLoss, UnfusedFunctionsMatchMpmathAt1e40) {
  for (const Row& r : rows()) {
    std::vector<mp> z = as<mp>(r.z);
    if (r.cap) z = softcap<mp>(z, mp(*r.cap));
    const mp lambda(r.lambda);
    EXPECT_LT(relative_error(logsumexp<mp>(z), r.log_z), 1e-40) << r.name;
    EXPECT_LT(relative_error(cross_entropy<mp>(z, r.target), r.ce), 1e-40) << r.name;
    const std::vector<mp> p = softmax<mp>(z);
    std::vector<mp> g = z_loss_grad<mp>(z, r.target, lambda);
    if (!r.cap) {
      EXPECT_LT(relative_error(z_loss<mp>(z, r.target, lambda), r.loss), 1e-40) << r.name;
    }
    for (size_t k = 0; k < r.index.size(); ++k) {
      const size_t j = static_cast<size_t>(r.index[k]);
      EXPECT_LT(relative_error(p[j], r.p[k]), 1e-40) << r.name << " j=" << j;
      const mp chain = r.cap ? softcap_grad(mp(r.z[j]), mp(*r.cap)) : mp(1);
      EXPECT_TRUE(grad_close(g[j] * chain, r.grad[k], r.p[k], mp(1e-40))) << r.name << " j=" << j;
    }
  }
}

TEST(SoftmaxLoss, LiteralLogSumExpOverflowsInDoubleButNotInMp) {
  const Row r = rows()[0];  // spread1e4: e^5000 overflows double, not MPFR's exponent range
  ASSERT_EQ(r.name, "spread1e4");
  EXPECT_LT(relative_error(logsumexp<mp>(as<mp>(r.z), false), r.log_z), 1e-40);
  EXPECT_TRUE(std::isinf(logsumexp<double>(r.z, false)));
  EXPECT_EQ(logsumexp<double>(r.z), 5000.0);
  EXPECT_EQ(cross_entropy<double>(r.z, r.target), 10000.0);
}

// log Z in T with unit roundoff u, as an absolute bound: the sum of n terms e^{z'_i − m} ∈ (0, 1]
// has relative error ≤ (n + 2)·u (each exp ≤ 2u with libm), so log s is off by ≤ (n + 3)·u;
// m + log s adds u·|log Z|; soft-capped inputs z' are off by ≤ 3u·|z'| each, which moves log Z
// by at most that (log-sum-exp is 1-Lipschitz in the max norm). Doubled.
mp lse_bound(const Row& r, const mp& u, const mp& max_abs_z) {
  const mp n = mp(static_cast<int64_t>(r.z.size()));
  return 2 * ((n + 3) * u + u * abs(r.log_z) + (r.cap ? mp(3 * u * max_abs_z) : mp(0)));
}

TEST(SoftmaxLoss, Float128AndDoubleWithinForwardErrorBound) {
  const mp u_q = to_mp(std::numeric_limits<float128>::epsilon()) / 2;
  const mp u_d = mp(std::numeric_limits<double>::epsilon() / 2);
  const mp tiny = mp(std::numeric_limits<double>::denorm_min());
  for (const Row& r : rows()) {
    const LossRow<float128> q = fused<float128>(r);
    const LossRow<double> d = fused<double>(r);
    mp max_abs_z = 0;
    for (double v : r.z) max_abs_z = std::max(max_abs_z, mp(std::fabs(v)));
    if (r.cap) max_abs_z = std::min(max_abs_z, mp(*r.cap));
    const mp lam(r.lambda);
    for (const auto& [u, floor, what] :
         {std::tuple{u_q, mp(1e-30), "float128"}, std::tuple{u_d, mp(0), "double"}}) {
      const mp dl = lse_bound(r, u, max_abs_z);
      const mp got_lz = what == std::string("double") ? mp(d.log_z) : to_mp(q.log_z);
      const mp got_loss = what == std::string("double") ? mp(d.loss) : to_mp(q.loss);
      EXPECT_LE(abs(got_lz - r.log_z), std::max(floor * abs(r.log_z), dl)) << r.name << what;
      // loss = −z'_y + log Z + λ log Z²: log Z's error times (1 + 2λ|log Z|), plus 4 roundings.
      const mp tol_loss = dl * (1 + 2 * lam * abs(r.log_z)) + 8 * u * (abs(r.loss) + max_abs_z);
      EXPECT_LE(abs(got_loss - r.loss), std::max(floor * abs(r.loss), tol_loss)) << r.name << what;
      for (size_t k = 0; k < r.index.size(); ++k) {
        const size_t j = static_cast<size_t>(r.index[k]);
        const mp got = what == std::string("double") ? mp(d.dlogits[j]) : to_mp(q.dlogits[j]);
        // p_j = e^{z'_j − log Z}: relative error ≤ |Δ log Z| + u·|z'_j − log Z| + 3u (plus the
        // capped z'_j's 3u·|z'_j|), and an absolute 2^-1074 where it underflows in double.
        // g_j = p_j(1 + 2λ log Z) − [j = y], times sech²(z_j/cap) computed through e^{−2|t|}
        // (relative error ≤ u·(4|t| + 8)).
        const mp zj = mp(r.z[j]);
        const mp t = r.cap ? mp(abs(zj) / *r.cap) : mp(0);
        const mp zc = r.cap ? mp(*r.cap * tanh(zj / *r.cap)) : zj;
        const mp rel_p = dl + u * (abs(zc - r.log_z) + 3 + (r.cap ? 3 * abs(zc) : mp(0)));
        const mp chain = r.cap ? mp(1 / (cosh(t) * cosh(t))) : mp(1);
        const mp dp = 2 * (r.p[k] * rel_p) + tiny;
        const mp dg = (dp * abs(1 + 2 * lam * r.log_z) + r.p[k] * 2 * lam * dl +
                       4 * u * (abs(r.grad[k]) + r.p[k])) *
                          chain +
                      abs(r.grad[k]) * u * (4 * t + 8);
        EXPECT_LE(abs(got - r.grad[k]), std::max(floor * abs(r.grad[k]), dg))
            << r.name << " " << what << " j=" << j;
      }
    }
  }
}

TEST(SoftCap, MatchesMpmathAt1e40) {
  const auto data = testdata::load("softmax.json");
  const mp u_d = mp(std::numeric_limits<double>::epsilon() / 2);
  for (const auto& c : data.at("softcap")) {
    const double cap = testdata::exact_double(c.at("cap")), z = testdata::exact_double(c.at("z"));
    const mp y = testdata::expected(c.at("y")), g = testdata::expected(c.at("grad"));
    EXPECT_LT(relative_error(softcap(mp(z), mp(cap)), y), 1e-40) << cap << " " << z;
    EXPECT_LT(relative_error(softcap_grad(mp(z), mp(cap)), g), 1e-40) << cap << " " << z;
    EXPECT_LT(relative_error(to_mp(softcap(float128(z), float128(cap))), y), 1e-30);
    EXPECT_LT(relative_error(to_mp(softcap_grad(float128(z), float128(cap))), g), 1e-30);
    // double: tanh(z/cap) has relative condition ≤ 1 + 2|t| for t = z/cap; 4 roundings + libm.
    const mp t = abs(mp(z) / cap);
    EXPECT_LT(relative_error(mp(softcap(z, cap)), y), 8 * u_d * (1 + 2 * t)) << cap << " " << z;
    EXPECT_LT(relative_error(mp(softcap_grad(z, cap)), g), 8 * u_d * (2 + 4 * t))
        << cap << " " << z;
    if (std::fabs(z) <= 100) {
      // 1 − tanh²(z/cap) loses ≤ 3 digits for |z/cap| ≤ 3.4: the literal form agrees.
      EXPECT_LT(relative_error(softcap_grad(mp(z), mp(cap), true), g), 1e-40) << cap << " " << z;
    } else {
      // |z/cap| ≥ 200: tanh rounds to ±1 in mp and the literal derivative is exactly 0; the
      // true value is 4e^{−2|z/cap|} > 0.
      EXPECT_EQ(softcap_grad(mp(z), mp(cap), true), 0) << cap << " " << z;
      EXPECT_GT(softcap_grad(mp(z), mp(cap)), 0);
    }
  }
}

TEST(SoftCap, OddBoundedAndIdentityNearZero) {
  for (double cap : {30.0, 50.0}) {
    for (double z : {0.5, 7.0, 100.0, 1e6}) {
      EXPECT_EQ(softcap(-z, cap), -softcap(z, cap));
      EXPECT_LE(std::fabs(softcap(z, cap)), cap);
    }
    EXPECT_LT(relative_error(softcap(mp("1e-3"), mp(cap)), mp("1e-3")), 1e-9);
  }
}

TEST(SoftmaxLossGrad, FusedGradientMatchesCentralDifferences) {
  // L(z) = −z'_y + log Z + λ log Z², z' = cap·tanh(z/cap): ∂L/∂z by central differences at 100
  // digits (C11 for the uncapped z-loss; the soft-cap chain rule for capped rows).
  const std::vector<double> zd{3.5, -12.0, 41.0, 0.25, -60.0, 18.0, 7.75, -2.5};
  const std::vector<mp> z(zd.begin(), zd.end());
  for (const std::optional<double> cap :
       {std::optional<double>(), std::optional<double>(30.0), std::optional<double>(50.0)}) {
    for (double lambda : {0.0, 1e-4, 1e-3}) {
      for (int64_t y : {0, 2, 4}) {
        const std::optional<mp> c = cap ? std::optional<mp>(mp(*cap)) : std::nullopt;
        const auto out = softmax_cross_entropy<mp>(z, y, mp(lambda), c);
        const auto f = [&](const std::vector<testdata::mp100>& w) {
          const std::optional<testdata::mp100> c100 =
              cap ? std::optional<testdata::mp100>(testdata::mp100(*cap)) : std::nullopt;
          return softmax_cross_entropy<testdata::mp100>(w, y, testdata::mp100(lambda), c100).loss;
        };
        const auto fd = testdata::central_gradient(f, z);
        for (size_t j = 0; j < z.size(); ++j) {
          EXPECT_LE(abs(out.dlogits[j] - fd[j]), 1e-30 * abs(fd[j]) + 1e-40)
              << "cap=" << (cap ? *cap : 0) << " λ=" << lambda << " y=" << y << " j=" << j;
        }
        if (!cap) {
          const auto g = z_loss_grad<mp>(z, y, mp(lambda));
          const auto fz = [&](const std::vector<testdata::mp100>& w) {
            return z_loss<testdata::mp100>(w, y, testdata::mp100(lambda));
          };
          const auto fdz = testdata::central_gradient(fz, z);
          for (size_t j = 0; j < z.size(); ++j) {
            EXPECT_LE(abs(g[j] - fdz[j]), 1e-30 * abs(fdz[j]) + 1e-40) << j;
          }
        }
      }
    }
  }
  // Soft-cap derivative alone.
  for (double zz : {-100.0, -1e-3, 0.0, 13.0, 100.0}) {
    const auto f = [](const testdata::mp100& v) { return softcap(v, testdata::mp100(30)); };
    const mp fd = testdata::central_derivative(f, mp(zz));
    EXPECT_LE(abs(softcap_grad(mp(zz), mp(30)) - fd), 1e-30 * abs(fd)) << zz;
  }
}

// Not inlined, so that GCC's -Warray-bounds does not flag the deliberately out-of-range targets
// below (it cannot see that the validation throws before the access).
[[gnu::noinline]] std::vector<double> three_logits() { return {1, 2, 3}; }

TEST(SoftmaxLoss, RejectsBadArguments) {
  const std::vector<double> z = three_logits();
  EXPECT_THROW(cross_entropy<double>(z, 3), std::invalid_argument);
  EXPECT_THROW(cross_entropy<double>(z, -1), std::invalid_argument);
  EXPECT_THROW(z_loss<double>(z, 5, 1e-4), std::invalid_argument);
  EXPECT_THROW(z_loss_grad<double>(z, 5, 1e-4), std::invalid_argument);
  EXPECT_THROW(softcap(1.0, 0.0), std::invalid_argument);
  EXPECT_THROW(softcap(1.0, -30.0), std::invalid_argument);
  EXPECT_THROW(softcap_grad(1.0, std::numeric_limits<double>::infinity()), std::invalid_argument);
  EXPECT_THROW(softmax_cross_entropy<double>(z, 0, 1e-4, 0.0), std::invalid_argument);
  EXPECT_THROW(cross_entropy<double>(std::vector<double>{}, 0), std::invalid_argument);
  try {
    cross_entropy<double>(z, 7);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "cross_entropy: target is 7, expected 0 <= target < 3 (the length of the row)");
  }
}

TEST(SoftmaxLoss, RowMaxStartsAtTheFirstElement) {
  // fp8 E4M3 has no −inf (it is NaN): a running max seeded with −inf would stay NaN.
  const std::vector<fp8_e4m3> z{fp8_e4m3(1.0), fp8_e4m3(-2.0), fp8_e4m3(3.0)};
  EXPECT_EQ(row_max<fp8_e4m3>(z).value(), 3.0);
  for (const fp8_e4m3& p : softmax<fp8_e4m3>(z)) EXPECT_FALSE(isnan(p));
  EXPECT_TRUE(std::isinf(row_max<double>(std::vector<double>{})));
}

}  // namespace
}  // namespace lmo::ref
