// The diagnosis (recipe_judge.h: diagnose) ranks candidate recipes by the share of the kernel's
// elements within each one's own bound, on kernels written here in plain float arithmetic,
// independently of the oracle's simulated runs (their sums in eight lanes, as a vectorized
// reduction adds, where the simulated kernels add left to right):
//  - flax's one-pass LayerNorm in f32 at mean 100 is named variance=one_pass, though Welford's
//    run equals more of its elements bit for bit;
//  - a correct two-pass f32 LayerNorm is named by a recipe that explains all of it, never by a
//    narrow-format one, whose wide bound holds it too;
//  - a kernel with garbage in a few elements is explained by no recipe, and the report shows the
//    worst element with its exact value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "oracle/cases/case.h"
#include "oracle/check/check.h"
#include "oracle/rules/recipe.h"
#include "tests/support/float_tensors.h"
#include "tests/support/splitmix.h"

namespace lmo::oracle {
namespace {

using testing::float_tensor;
using testing::floats;

constexpr int64_t kRows = 4, kD = 1024;
constexpr float kEps = 1e-5f;

// The case of cases/norms.json's layernorm/offset-mean: x ~ N(100, 1), where one pass cancels.
Case layernorm_case(double mean) {
  return parse_case({{"id", "ln"},
                     {"op", "layernorm"},
                     {"seed", 1006},
                     {"formats", {"f32"}},
                     {"params", {{"rows", kRows}, {"d", kD}, {"eps", kEps}}},
                     {"inputs", {{"x", {{"dist", "normal"}, {"mean", mean}, {"std", 1}}}}}},
                    "diagnosis_test", "case");
}

// Σ f(x_c) over a row in eight lanes, the lanes then added in order.
template <class F>
float lane_sum(const float* x, int64_t d, F f) {
  float lane[8] = {};
  for (int64_t c = 0; c < d; ++c) lane[c % 8] += f(x[c]);
  float s = 0;
  for (float v : lane) s += v;
  return s;
}

// flax.linen.LayerNorm's default (use_fast_variance): μ = E[x], σ² = max(0, E[x²] − μ²),
// y = (x − μ) · (rsqrt(σ² + ε) · γ) + β. With two_pass, σ² = E[(x − μ)²] instead, the
// division as written: (x − μ) / sqrt(σ² + ε) · γ + β.
std::vector<float> layernorm_kernel(const InputSet& in, bool one_pass) {
  const std::vector<float> x = floats(in.at("x")), g = floats(in.at("gamma")),
                           b = floats(in.at("beta"));
  const float n = static_cast<float>(kD);
  std::vector<float> y(x.size());
  for (int64_t r = 0; r < kRows; ++r) {
    const float* xr = &x[static_cast<size_t>(r * kD)];
    float* yr = &y[static_cast<size_t>(r * kD)];
    const float mu = lane_sum(xr, kD, [](float v) { return v; }) / n;
    if (one_pass) {
      const float ex2 = lane_sum(xr, kD, [](float v) { return v * v; }) / n;
      const float var = std::max(0.0f, ex2 - mu * mu);
      const float inv = 1.0f / std::sqrt(var + kEps);
      for (int64_t c = 0; c < kD; ++c) {
        yr[c] = (xr[c] - mu) * (inv * g[static_cast<size_t>(c)]) + b[static_cast<size_t>(c)];
      }
    } else {
      const float var = lane_sum(xr, kD, [mu](float v) { return (v - mu) * (v - mu); }) / n;
      const float denom = std::sqrt(var + kEps);
      for (int64_t c = 0; c < kD; ++c) {
        yr[c] = (xr[c] - mu) / denom * g[static_cast<size_t>(c)] + b[static_cast<size_t>(c)];
      }
    }
  }
  return y;
}

CheckReport check(const Case& c, const std::vector<float>& y, const std::string& recipe) {
  std::map<std::string, ref::Tensor> outs;
  outs.emplace("y", float_tensor(ref::Format::f32, {kRows, kD}, y));
  CheckOptions o;
  o.recipe = parse_recipe(recipe);
  o.diagnose = true;
  return check_outputs(c, outs, o);
}

const RecipeMatch* find(const CheckReport& r, const std::string& recipe) {
  for (const RecipeMatch& m : r.diagnosis) {
    if (m.recipe == recipe) return &m;
  }
  return nullptr;
}

bool names_a_narrow_format(const std::string& recipe) {
  for (const char* f : {"bf16", "f16", "e4m3", "e5m2"}) {
    if (recipe.find(std::string("=") + f) != std::string::npos) return true;
  }
  return false;
}

TEST(Diagnosis, FlaxOnePassLayernormAtMean100IsNamedOnePass) {
  const Case c = layernorm_case(100);
  const std::vector<float> y = layernorm_kernel(reference_inputs(c, ref::Format::f32), true);
  const CheckReport strict = check(c, y, "strict");
  ASSERT_FALSE(strict.pass) << to_text(strict);
  ASSERT_FALSE(strict.diagnosis.empty());
  // The variance point is among the declared recipe's neighbours, and its one-pass value holds
  // every element: the kernel passes when it says so.
  EXPECT_EQ(strict.diagnosis.front().recipe, "strict,variance=one_pass") << to_text(strict);
  EXPECT_TRUE(explains(strict.diagnosis.front())) << to_text(strict);
  EXPECT_TRUE(check(c, y, "variance=one_pass").pass);
  // Welford's run does not cancel: it leaves the one-pass errors outside its bound, whatever
  // share of elements it equals.
  const RecipeMatch* welford = find(strict, "strict,variance=welford");
  ASSERT_NE(welford, nullptr) << to_text(strict);
  EXPECT_FALSE(explains(*welford)) << to_text(strict);
  EXPECT_EQ(to_text(strict).find("no recipe explains"), std::string::npos) << to_text(strict);
}

TEST(Diagnosis, ACorrectF32LayernormIsNamedByARecipeThatExplainsItAll) {
  for (double mean : {0.0, 100.0}) {
    const Case c = layernorm_case(mean);
    const std::vector<float> y = layernorm_kernel(reference_inputs(c, ref::Format::f32), false);
    const CheckReport r = check(c, y, "strict");
    ASSERT_TRUE(r.pass) << to_text(r);
    ASSERT_FALSE(r.diagnosis.empty());
    const RecipeMatch& best = r.diagnosis.front();
    EXPECT_TRUE(explains(best)) << to_text(r);
    // A narrow format's bound holds an f32 kernel too; its errors are not the kernel's.
    EXPECT_FALSE(names_a_narrow_format(best.recipe)) << to_text(r);
    const RecipeMatch* strict = find(r, "strict");
    ASSERT_NE(strict, nullptr);
    EXPECT_TRUE(explains(*strict)) << to_text(r);
  }
}

TEST(Diagnosis, GarbageInAFewElementsIsExplainedByNoRecipe) {
  const Case c = layernorm_case(0);
  std::vector<float> y = layernorm_kernel(reference_inputs(c, ref::Format::f32), false);
  // Five elements overwritten with draws of ±[100, 10000), where the outputs lie within ±10: a
  // kernel that wrote where it should not.
  testing::SplitMix64 rng{52};
  std::vector<size_t> at;
  while (at.size() < 5) {
    const size_t i = static_cast<size_t>(rng.next() % y.size());
    if (std::find(at.begin(), at.end(), i) != at.end()) continue;
    at.push_back(i);
    const float v = static_cast<float>(100 * std::pow(100.0, rng.unit()));
    y[i] = rng.next() % 2 ? v : -v;
  }
  const CheckReport r = check(c, y, "strict");
  ASSERT_FALSE(r.pass);
  ASSERT_FALSE(r.diagnosis.empty());
  for (const RecipeMatch& m : r.diagnosis) EXPECT_FALSE(explains(m)) << to_text(r);
  EXPECT_LE(r.diagnosis.front().explained, 1 - 5.0 / (kRows * kD) + 1e-12) << to_text(r);
  const std::string text = to_text(r);
  EXPECT_NE(text.find("no recipe explains these errors"), std::string::npos) << text;
  // The worst element is one of the garbage ones, shown with its exact value: 21 digits.
  ASSERT_EQ(r.outputs.size(), 1u);
  const CheckedOutput& o = r.outputs.front();
  EXPECT_NE(std::find(at.begin(), at.end(), static_cast<size_t>(o.worst_index)), at.end());
  EXPECT_NE(text.find("worst element of out.y: [" + std::to_string(o.worst_index) + "]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("exact " + o.worst_exact), std::string::npos) << text;
  // d.ddd…e±xx: 21 significant digits, a sign where negative.
  const size_t sign = o.worst_exact.starts_with("-") ? 1 : 0;
  EXPECT_EQ(o.worst_exact.find('e'), sign + 22) << o.worst_exact;
  // The exact value lies within half an f32 ulp of the expected one, its correct rounding.
  const float e = static_cast<float>(o.worst_expected);
  EXPECT_LE(std::fabs(std::stod(o.worst_exact) - e),
            0.5 * (std::nextafter(std::fabs(e), INFINITY) - std::fabs(e)))
      << o.worst_exact << " vs " << e;
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["outputs"][0]["worst_exact"], o.worst_exact);
  EXPECT_EQ(j["diagnosis"][0]["explained"], r.diagnosis.front().explained);
}

}  // namespace
}  // namespace lmo::oracle
