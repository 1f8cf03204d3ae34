// F06 activations and their derivatives against the mpmath values of
// tests/data/make_activations.py; derivatives also against central differences; float128 and
// double within stated bounds.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "reference/activations_grad.h"
#include "tests/support/central_difference.h"
#include "tests/support/test_data.h"

namespace lmo::ref {
namespace {

using testdata::mp100;
using testdata::relative_error;

const mp kU128 = to_mp(std::numeric_limits<float128>::epsilon()) / 2;
const mp kU64 = mp(std::numeric_limits<double>::epsilon() / 2);

// One function of the data file, on every precision the test checks.
struct Fn {
  std::string key;
  std::function<mp(const mp&)> f_mp;
  std::function<float128(const float128&)> f_q;
  std::function<double(double)> f_d;
  // Relative condition-and-rounding allowance for float128 and double at x, in units of u:
  // (number of roundings + libm's ≤ 2 ulp) × (1 + relative condition number of the function).
  std::function<double(double)> ulps;
};

#define LMO_FN(key, call, ulps)                                                    \
  Fn {                                                                             \
    key, [](const mp& x) { return call; }, [](const float128& x) { return call; }, \
        [](double x) { return call; }, ulps                                        \
  }

// GELU: erfc(−x/√2) has relative condition 2t²-ish at t = x/√2 (≈ x² + 1), times ~8 roundings.
// GELU-tanh: sigmoid(2u) has relative condition |2u|·(1 − s) ≤ |2u|, u ≈ 0.8(|x| + 0.045|x|³).
// SiLU/sigmoid: condition ≤ 1 + |x|.
double gelu_ulps(double x) { return 16 * (2 + x * x); }
double gelu_tanh_ulps(double x) {
  const double u = 0.8 * (std::fabs(x) + 0.045 * std::fabs(x * x * x));
  return 16 * (2 + 2 * u);
}
double sig_ulps(double x) { return 16 * (2 + std::fabs(x)); }

std::vector<Fn> functions() {
  return {
      LMO_FN("gelu", gelu(x), gelu_ulps),
      LMO_FN("gelu_tanh", gelu_tanh(x), gelu_tanh_ulps),
      LMO_FN("silu", silu(x), sig_ulps),
      LMO_FN("sigmoid", sigmoid(x), sig_ulps),
      LMO_FN("gelu_grad", gelu_grad(x), gelu_ulps),
      LMO_FN("gelu_tanh_grad", gelu_tanh_grad(x), gelu_tanh_ulps),
      LMO_FN("silu_grad", silu_grad(x), sig_ulps),
  };
}

TEST(Activations, MatchMpmathAt1e40Float128At1e30AndDoubleWithinBound) {
  const auto data = testdata::load("activations.json");
  for (const auto& p : data.at("points")) {
    const double x = testdata::exact_double(p.at("x"));
    for (const Fn& fn : functions()) {
      const mp want = testdata::expected(p.at(fn.key));
      EXPECT_LT(relative_error(fn.f_mp(mp(x)), want), 1e-40) << fn.key << " x=" << x;
      const mp tol_q = std::max(mp(1e-30), fn.ulps(x) * kU128);
      EXPECT_LT(relative_error(to_mp(fn.f_q(float128(x))), want), tol_q) << fn.key << " x=" << x;
      EXPECT_LT(relative_error(mp(fn.f_d(x)), want), fn.ulps(x) * kU64) << fn.key << " x=" << x;
    }
  }
}

TEST(Activations, LiteralFormsMatchWhereTheyDoNotCancelAway) {
  // 1 + erf(x/√2) = 2Φ(x) and 1 + tanh(u) = 2·sigmoid(2u) lose log10 of their inverse in
  // digits: at x = −5.3, 7 and 8 of mp's 50 (relative error ≤ 2.7e-51 / 1e-8 ≈ 3e-43), so
  // 1e-40 holds for x ≥ −5.3; at x = −10 the literal GELU keeps only ~27 digits, and at −20
  // none (it returns 0: 1 + erf(−14.1) rounds to 0 in mp).
  const auto data = testdata::load("activations.json");
  int checked = 0;
  for (const auto& p : data.at("points")) {
    const double x = testdata::exact_double(p.at("x"));
    const mp xm(x);
    const auto want = [&](const char* k) { return testdata::expected(p.at(k)); };
    // sigmoid, SiLU: the literal 1/(1 + e^{−x}) has no cancellation in mp at any x here.
    EXPECT_LT(relative_error(sigmoid(xm, true), want("sigmoid")), 1e-40) << x;
    EXPECT_LT(relative_error(silu(xm, true), want("silu")), 1e-40) << x;
    EXPECT_LT(relative_error(silu_grad(xm, true), want("silu_grad")), 1e-40) << x;
    if (x < -5.3) continue;
    ++checked;
    EXPECT_LT(relative_error(gelu(xm, true), want("gelu")), 1e-40) << x;
    EXPECT_LT(relative_error(gelu_tanh(xm, true), want("gelu_tanh")), 1e-40) << x;
    EXPECT_LT(relative_error(gelu_grad(xm, true), want("gelu_grad")), 1e-40) << x;
    EXPECT_LT(relative_error(gelu_tanh_grad(xm, true), want("gelu_tanh_grad")), 1e-40) << x;
  }
  EXPECT_EQ(checked, 14);
  EXPECT_EQ(gelu(mp(-20), true), 0);  // the documented failure of the literal form
  EXPECT_LT(gelu(mp(-20)), 0);
}

TEST(Activations, HardPoints) {
  // The three points the catalog names for GELU: −5.3 (cancellation in 1 + erf), 0, 1e-8
  // (GELU(x) ≈ x/2). Exact zeros and signs at 0.
  const auto data = testdata::load("activations.json");
  int found = 0;
  for (const auto& p : data.at("points")) {
    const double x = testdata::exact_double(p.at("x"));
    if (x == -5.3 || x == 0.0 || x == 1e-8) ++found;
  }
  EXPECT_EQ(found, 3);
  EXPECT_EQ(gelu(0.0), 0.0);
  EXPECT_EQ(gelu_tanh(0.0), 0.0);
  EXPECT_EQ(silu(0.0), 0.0);
  EXPECT_EQ(gelu_grad(mp(0)), mp(1) / 2);
  EXPECT_EQ(gelu_tanh_grad(mp(0)), mp(1) / 2);
  EXPECT_EQ(silu_grad(mp(0)), mp(1) / 2);
  // GELU(1e-8) = 1e-8·Φ(1e-8) = 5e-9·(1 + 1e-8·√(2/π)) + O(1e-24).
  const mp x(1e-8);
  const mp series = x / 2 * (1 + x * sqrt(2 / boost::math::constants::pi<mp>()));
  EXPECT_LT(relative_error(gelu(x), series), 1e-23);
}

TEST(Activations, SwishMatchesMpmathAndSiluIsSwishOne) {
  const auto data = testdata::load("activations.json");
  for (const auto& r : data.at("swish")) {
    const double x = testdata::exact_double(r.at("x")), b = testdata::exact_double(r.at("beta"));
    EXPECT_LT(relative_error(swish(mp(x), mp(b)), testdata::expected(r.at("y"))), 1e-40) << x;
    EXPECT_LT(relative_error(swish_grad(mp(x), mp(b)), testdata::expected(r.at("grad"))), 1e-40)
        << x;
    EXPECT_LT(relative_error(mp(swish(x, b)), testdata::expected(r.at("y"))),
              sig_ulps(b * x) * kU64);
  }
  for (double x : {-8.0, -1.0, 0.0, 0.3, 5.0}) {
    EXPECT_EQ(silu(mp(x)), swish(mp(x), mp(1))) << x;
    EXPECT_EQ(silu_grad(mp(x)), swish_grad(mp(x), mp(1))) << x;
  }
}

TEST(Activations, DerivativesMatchCentralDifferences) {
  using Fd = std::function<mp100(const mp100&)>;
  struct Case {
    const char* name;
    Fd f;
    std::function<mp(const mp&)> df;
  };
  const mp100 beta100(1.702);
  const std::vector<Case> cases = {
      {"gelu", [](const mp100& x) { return gelu(x); }, [](const mp& x) { return gelu_grad(x); }},
      {"gelu_tanh", [](const mp100& x) { return gelu_tanh(x); },
       [](const mp& x) { return gelu_tanh_grad(x); }},
      {"silu", [](const mp100& x) { return silu(x); }, [](const mp& x) { return silu_grad(x); }},
      {"swish1.702", [&](const mp100& x) { return swish(x, beta100); },
       [](const mp& x) { return swish_grad(x, mp(1.702)); }},
      {"relu", [](const mp100& x) { return relu(x); }, [](const mp& x) { return relu_grad(x); }},
  };
  for (const Case& c : cases) {
    for (double x : {-7.5, -2.0, -0.75, -0.1, 0.3, 1.0, 4.0}) {
      const mp fd = testdata::central_derivative(c.f, mp(x));
      EXPECT_LE(abs(c.df(mp(x)) - fd), 1e-30 * abs(fd) + 1e-40) << c.name << " x=" << x;
    }
  }
}

TEST(Activations, ReluAndNanPropagation) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(relu(-2.0), 0.0);
  EXPECT_EQ(relu(3.0), 3.0);
  EXPECT_FALSE(std::signbit(relu(-0.0)));
  EXPECT_EQ(relu_grad(0.0), 0.0);
  for (Activation a :
       {Activation::kReLU, Activation::kGELU, Activation::kGELUTanh, Activation::kSiLU}) {
    EXPECT_TRUE(std::isnan(activate(a, nan))) << activation_name(a);
    EXPECT_TRUE(std::isnan(activate_grad(a, nan))) << activation_name(a);
  }
  // Limits: sigmoid saturates without overflow in either direction.
  EXPECT_EQ(sigmoid(-800.0), 0.0);
  EXPECT_EQ(sigmoid(800.0), 1.0);
  EXPECT_EQ(gelu(-40.0), -0.0);
  EXPECT_EQ(gelu_tanh(-40.0), -0.0);
  EXPECT_EQ(gelu(40.0), 40.0);
  const std::vector<double> v{-1.0, 0.0, 2.0};
  EXPECT_EQ(activate<double>(Activation::kReLU, v), (std::vector<double>{0.0, 0.0, 2.0}));
}

}  // namespace
}  // namespace lmo::ref
