// F11 long-context RoPE scaling against mpmath (tests/data/make_rope_scaling.py →
// rope_scaling.json): position interpolation, NTK-aware base, YaRN (released code and paper),
// Llama 3.1, the YaRN temperature; and the rules' exact structural properties in mp.
#include "reference/rope_scaling.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/support/test_data.h"

namespace lmo::ref {
namespace {

using testdata::exact_double;
using testdata::exact_doubles;
using testdata::expected;
using testdata::expected_vector;
using testdata::relative_error;

template <class T>
std::vector<T> inv_freq_of(const nlohmann::json& c) {
  const std::string rule = c["rule"];
  const auto& p = c["params"];
  const int64_t r = c["rotary_dims"];
  const T base = convert<T>(exact_double(c["base"]));
  if (rule == "linear") return rope_inv_freq_linear<T>(r, base, T(p["scale"].get<int>()));
  if (rule == "ntk") return rope_inv_freq_ntk<T>(r, base, T(p["scale"].get<int>()));
  if (rule == "yarn") {
    return rope_inv_freq_yarn<T>(r, base, T(p["scale"].get<int>()), p["original_context"],
                                 T(p["beta_fast"].get<int>()), T(p["beta_slow"].get<int>()),
                                 p["truncate"]);
  }
  if (rule == "yarn_paper") {
    return rope_inv_freq_yarn_paper<T>(r, base, T(p["scale"].get<int>()), p["original_context"],
                                       T(p["alpha"].get<int>()), T(p["beta"].get<int>()));
  }
  if (rule == "llama3") {
    return rope_inv_freq_llama3<T>(r, base, T(p["factor"].get<int>()),
                                   T(p["low_freq_factor"].get<int>()),
                                   T(p["high_freq_factor"].get<int>()), p["original_context"]);
  }
  throw std::runtime_error("unknown rule " + rule);
}

RopeLayout layout_of(const nlohmann::json& c) {
  return c["layout"] == "interleaved" ? RopeLayout::kInterleaved : RopeLayout::kHalfSplit;
}

// Relative error bound of the frequencies in a type with unit roundoff u: θ_k carries
// (ln(base) + 3)u (exponent amplified by pow, pow, reciprocal; see rope_test.cc); each rule adds
// at most 6 roundings on top (a quotient, a blend of two products and a sum, the ramp's
// quotient of quantities that are themselves ~4 roundings from exact: 10u covers it). The
// blends are convex combinations of positive terms, so no cancellation. Factor 2 for
// second-order terms and libm's last ulp.
double freq_bound(double u, double base) { return 2.0 * (std::log(base) + 13.0) * u; }

template <class T>
void check_inv_freq(const nlohmann::json& c, double u) {
  const std::vector<T> inv = inv_freq_of<T>(c);
  const std::vector<mp> want = expected_vector(c["inv_freq"]);
  ASSERT_EQ(inv.size(), want.size());
  for (size_t k = 0; k < inv.size(); ++k) {
    const mp err = relative_error(to_mp(inv[k]), want[k]);
    if constexpr (std::is_same_v<T, mp>) {
      EXPECT_LT(err, mp("1e-40")) << c["rule"] << " k=" << k;
    } else {
      EXPECT_LE(err, freq_bound(u, exact_double(c["base"]))) << c["rule"] << " k=" << k;
    }
  }
}

// RoPE with the scaled frequencies. mp: 1e-40 per element. Others: the angle p·h_k carries the
// frequency's relative error plus one rounding, and a rotation moves with its angle (see
// rope_test.cc): |Δy| ≤ (freq_bound·|angle| + 16u)·‖pair‖.
template <class T>
void check_rope(const nlohmann::json& c, double u) {
  const std::vector<T> inv = inv_freq_of<T>(c);
  const std::vector<double> x = exact_doubles(c["x"]);
  std::vector<T> xt;
  for (double v : x) xt.push_back(convert<T>(v));
  const int64_t half = static_cast<int64_t>(inv.size());
  const RopeLayout layout = layout_of(c);
  for (size_t row = 0; row < c["positions"].size(); ++row) {
    const double p = exact_double(c["positions"][row]);
    const std::vector<T> y = rope<T>(xt, convert<T>(p), inv, layout);
    const std::vector<mp> want = expected_vector(c["y"][row]);
    for (int64_t k = 0; k < half; ++k) {
      const size_t a = layout == RopeLayout::kInterleaved ? 2 * k : k;
      const size_t b = layout == RopeLayout::kInterleaved ? 2 * k + 1 : k + half;
      const mp norm = sqrt(mp(x[a]) * x[a] + mp(x[b]) * x[b]);
      const double angle = p * static_cast<double>(to_mp(inv[static_cast<size_t>(k)]));
      for (size_t i : {a, b}) {
        if constexpr (std::is_same_v<T, mp>) {
          EXPECT_LT(relative_error(y[i], want[i]), mp("1e-40"))
              << c["rule"] << " p=" << p << " i=" << i;
        } else {
          const double bound = freq_bound(u, exact_double(c["base"])) * angle + 16 * u;
          EXPECT_LE(static_cast<double>(abs(to_mp(y[i]) - want[i]) / norm), bound)
              << c["rule"] << " p=" << p << " i=" << i;
        }
      }
    }
  }
}

TEST(RopeScaling, FrequenciesMatchMpmath) {
  const auto data = testdata::load("rope_scaling.json");
  for (const auto& c : data["cases"]) {
    check_inv_freq<mp>(c, 0);
    check_inv_freq<float128>(c, std::ldexp(1.0, -113));
    check_inv_freq<double>(c, std::ldexp(1.0, -53));
  }
  EXPECT_EQ(data["cases"].size(), 6u);
}

TEST(RopeScaling, RotationsWithScaledFrequenciesMatchMpmath) {
  const auto data = testdata::load("rope_scaling.json");
  for (const auto& c : data["cases"]) {
    check_rope<mp>(c, 0);
    check_rope<float128>(c, std::ldexp(1.0, -113));
    check_rope<double>(c, std::ldexp(1.0, -53));
  }
}

TEST(RopeScaling, YarnTemperatureMatchesMpmath) {
  const auto data = testdata::load("rope_scaling.json");
  for (const auto& c : data["mscale"]) {
    const double s = exact_double(c["scale"]);
    const std::string m = c["mscale"];
    const mp want = expected(c["value"]);
    EXPECT_LT(relative_error(yarn_mscale<mp>(mp(s), mp(m)), want), mp("1e-40")) << s << " " << m;
    EXPECT_LT(relative_error(
                  to_mp(yarn_mscale<float128>(float128(s), constant<float128>(m.c_str()))), want),
              mp("1e-33"));  // ln, two products and a sum: ~4 roundings of 2^-113
    EXPECT_LT(relative_error(mp(yarn_mscale<double>(s, constant<double>(m.c_str()))), want),
              mp("1e-15"));
  }
  // DeepSeek-V3 (factor 40, mscale_all_dim 1) scales its softmax by mscale², ≈ 1.8739.
  const mp v3 = yarn_mscale<mp>(mp(40));
  EXPECT_LT(abs(v3 * v3 - mp("1.87385")), mp("1e-5"));
}

// Exact structure, in mp: what each rule keeps, what it divides by s.
TEST(RopeScaling, RulesKeepOrScaleFrequenciesExactlyWhereTheyShould) {
  const auto data = testdata::load("rope_scaling.json");
  for (const auto& c : data["cases"]) {
    const std::string rule = c["rule"];
    const int64_t r = c["rotary_dims"];
    const mp base = exact_double(c["base"]);
    const std::vector<mp> theta = rope_inv_freq<mp>(r, base);
    const std::vector<mp> h = inv_freq_of<mp>(c);
    if (rule == "ntk") {
      // θ'_0 = 1 and θ'_{r/2−1} = θ_{r/2−1} / s: the lowest frequency is interpolated by s.
      EXPECT_EQ(h[0], 1);
      EXPECT_LT(relative_error(h.back(), theta.back() / 8), mp("1e-45"));
    }
    if (rule == "yarn" && c["params"]["truncate"]) {
      // lo = ⌊10.47⌋ = 10, hi = ⌈22.51⌉ = 23: pairs 0 … 10 keep θ, 23 … 31 get θ/s, exactly.
      for (size_t k = 0; k <= 10; ++k) EXPECT_EQ(h[k], theta[k]) << k;
      for (size_t k = 23; k < h.size(); ++k) EXPECT_EQ(h[k], theta[k] / 40) << k;
      for (size_t k = 11; k < 23; ++k) {
        EXPECT_TRUE(theta[k] / 40 < h[k] && h[k] < theta[k]) << k;
      }
    }
    if (rule == "llama3") {
      const auto regimes = c["regimes"].get<std::vector<std::string>>();
      for (size_t k = 0; k < h.size(); ++k) {
        if (regimes[k] == "kept") {
          EXPECT_EQ(h[k], theta[k]) << k;
        } else if (regimes[k] == "scaled") {
          EXPECT_EQ(h[k], theta[k] / 8) << k;
        } else {
          EXPECT_TRUE(theta[k] / 8 < h[k] && h[k] < theta[k]) << k;
        }
      }
    }
    if (rule == "linear") {
      // Interpolating the position equals scaling the frequency (up to the order of rounding).
      for (double p : {1.0, 4095.0, 16383.0}) {
        const mp at_p = rope_interpolated_position<mp>(mp(p), mp(4));
        for (size_t k = 0; k < h.size(); ++k) {
          EXPECT_LT(relative_error(at_p * theta[k], mp(p) * h[k]), mp("1e-48"));
        }
      }
    }
  }
}

// The paper's ramp (linear in the number of turns r) and the released code's (linear in the
// pair index between integer-rounded ends) agree outside the ramp and differ inside it: same
// DeepSeek-V3 parameters, the frequencies of pairs 11 … 22 are apart by 7 % to 77 % (pair 20).
TEST(RopeScaling, YarnPaperAndReleasedCodeDifferInsideTheRamp) {
  const std::vector<mp> code = rope_inv_freq_yarn<mp>(64, mp(10000), mp(40), 4096);
  const std::vector<mp> paper = rope_inv_freq_yarn_paper<mp>(64, mp(10000), mp(40), 4096);
  mp largest = 0;
  for (size_t k = 0; k < code.size(); ++k) {
    if (k <= 10 || k >= 23) {  // both: θ kept for k ≤ 10, θ/s for k ≥ 23, exactly
      EXPECT_EQ(paper[k], code[k]) << k;
    }
    const mp e = relative_error(paper[k], code[k]);
    if (e > largest) largest = e;
  }
  EXPECT_GT(largest, mp("0.75"));
}

TEST(RopeScaling, TableCarriesTheAttentionFactor) {
  const std::vector<mp> inv = rope_inv_freq_yarn<mp>(64, mp(10000), mp(40), 4096);
  const mp m = yarn_mscale<mp>(mp(40));
  const std::vector<mp> positions{mp(0), mp(7), mp(163839)};
  const RopeTable<mp> plain = rope_table<mp>(positions, inv);
  const RopeTable<mp> scaled = rope_table<mp>(positions, inv, m);
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t k = 0; k < 32; ++k) {
      EXPECT_EQ(scaled.cos(i, k), plain.cos(i, k) * m);
      EXPECT_EQ(scaled.sin(i, k), plain.sin(i, k) * m);
    }
  }
}

TEST(RopeScaling, RejectsBadParameters) {
  EXPECT_THROW(rope_inv_freq_linear<double>(8, 1e4, 0.0), std::invalid_argument);
  EXPECT_THROW(rope_interpolated_position<double>(3.0, -1.0), std::invalid_argument);
  EXPECT_THROW(rope_ntk_base<double>(1e4, 2.0, 2), std::invalid_argument);
  EXPECT_THROW(rope_inv_freq_ntk<double>(7, 1e4, 2.0), std::invalid_argument);
  EXPECT_THROW(rope_inv_freq_yarn<double>(64, 1e4, 40.0, 0), std::invalid_argument);
  EXPECT_THROW(rope_inv_freq_yarn<double>(64, 1e4, 40.0, 4096, 0.0), std::invalid_argument);
  EXPECT_THROW(rope_inv_freq_yarn_paper<double>(64, 1e4, 40.0, 4096, 32.0, 1.0),
               std::invalid_argument);
  EXPECT_THROW(rope_inv_freq_llama3<double>(128, 5e5, 8.0, 4.0, 1.0), std::invalid_argument);
  EXPECT_THROW(rope_inv_freq_llama3<double>(128, 5e5, 8.0, 1.0, 4.0, -1), std::invalid_argument);
  EXPECT_THROW(yarn_mscale<double>(0.0), std::invalid_argument);
}

}  // namespace
}  // namespace lmo::ref
