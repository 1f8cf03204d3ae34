// The recipe flags: +fma (reference/contraction.h: products fused into the sums they feed) and
// a case's `literal: true` (form=literal for the judge). Checked against plain-float kernels
// written with std::fmaf and PyTorch's literal GELU, independently of the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "oracle/cases/case.h"
#include "oracle/check/check.h"
#include "oracle/rules/recipe.h"
#include "reference/contraction.h"
#include "reference/linalg.h"
#include "reference/parallel.h"
#include "tests/support/float_tensors.h"
#include "tests/support/recipe_kernels.h"

namespace lmo::oracle {
namespace {

using testing::float_tensor;
using testing::floats;

Case make_case(const nlohmann::json& j) { return parse_case(j, "recipe_flags_test", "case"); }

CheckReport check(const Case& c, const ref::Tensor& y, const std::string& recipe,
                  bool diagnose = false) {
  std::map<std::string, ref::Tensor> outs;
  outs.emplace("y", y);
  CheckOptions o;
  o.recipe = parse_recipe(recipe);
  o.diagnose = diagnose;
  return check_outputs(c, outs, o);
}

TEST(RecipeFma, TextFormsRoundTrip) {
  EXPECT_TRUE(parse_recipe("strict+fma").fma);
  EXPECT_FALSE(parse_recipe("strict+fma").ftz);
  const Recipe r = parse_recipe("flash-attention,probs=f16+ftz+fma");
  EXPECT_TRUE(r.ftz && r.fma);
  EXPECT_EQ(parse_recipe(r.text()), r);
  EXPECT_TRUE(parse_recipe("probs=bf16,fma").fma);
  try {
    (void)parse_recipe("strict+fmx");
    FAIL() << "an unknown modifier was accepted";
  } catch (const RecipeError& e) {
    EXPECT_NE(std::string(e.what()).find("+fma"), std::string::npos) << e.what();
  }
}

// Σ a_i b_i in f32 as a contracting compiler writes it (fmaf) and as written (a volatile store
// keeps the product rounded on its own).
float fused_dot(const std::vector<float>& a, const std::vector<float>& b) {
  float s = 0;
  for (size_t i = 0; i < a.size(); ++i) s = std::fmaf(a[i], b[i], s);
  return s;
}
float unfused_dot(const std::vector<float>& a, const std::vector<float>& b) {
  float s = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    volatile float p = a[i] * b[i];
    s += p;
  }
  return s;
}

TEST(RecipeFma, DotFollowsTheThreadsSwitchInEveryWorker) {
  using F32 = ref::Sim<ref::Format::f32>;
  std::vector<float> a(97), b(97);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = std::ldexp(static_cast<float>(i % 13) + 0.37f, -static_cast<int>(i % 5)) - 3.1f;
    b[i] = std::sin(static_cast<float>(i)) * 1.7f;
  }
  const std::vector<F32> sa(a.begin(), a.end()), sb(b.begin(), b.end());
  auto sim_dot = [&] { return ref::dot<F32, F32>(sa, sb).value(); };
  EXPECT_EQ(sim_dot(), static_cast<double>(unfused_dot(a, b)));
  EXPECT_NE(fused_dot(a, b), unfused_dot(a, b));  // the inputs tell the two apart
  ref::set_reference_threads(2);
  {
    const ref::FmaContraction on(true);
    EXPECT_EQ(sim_dot(), static_cast<double>(fused_dot(a, b)));
    std::vector<double> per_index(4);
    ref::parallel_for(4, [&](int64_t i) {
      per_index[static_cast<size_t>(i)] = ref::fma_contraction() ? sim_dot() : 0.0;
    });
    for (double v : per_index) EXPECT_EQ(v, static_cast<double>(fused_dot(a, b)));
  }
  EXPECT_FALSE(ref::fma_contraction());
  ref::set_reference_threads(0);
}

TEST(RecipeFma, AContractedRmsnormIsNamedByTheDiagnosis) {
  // RMSNorm in f32 whose sum of squares a compiler contracted: x/√(Σx²/d + ε)·γ.
  const int64_t rows = 16, d = 256;
  const Case c = make_case({{"id", "rms"},
                            {"op", "rmsnorm"},
                            {"seed", 5},
                            {"formats", {"f32"}},
                            {"params", {{"rows", rows}, {"d", d}, {"eps", 1e-6}}}});
  const InputSet in = reference_inputs(c, ref::Format::f32);
  const std::vector<float> x = floats(in.at("x")), g = floats(in.at("gamma"));
  std::vector<float> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    float s = 0;
    for (int64_t j = 0; j < d; ++j) s = std::fmaf(x[size_t(r * d + j)], x[size_t(r * d + j)], s);
    const float denom = std::sqrt(s / static_cast<float>(d) + static_cast<float>(1e-6));
    for (int64_t j = 0; j < d; ++j) {
      y[size_t(r * d + j)] = x[size_t(r * d + j)] / denom * g[size_t(j)];
    }
  }
  const ref::Tensor t = float_tensor(ref::Format::f32, {rows, d}, y);
  const CheckReport fma = check(c, t, "strict+fma", true);
  EXPECT_TRUE(fma.pass) << to_text(fma);
  ASSERT_FALSE(fma.diagnosis.empty());
  EXPECT_EQ(fma.diagnosis.front().recipe, "strict+fma") << to_text(fma);
  EXPECT_EQ(fma.diagnosis.front().equal, 1.0) << to_text(fma);
  // The unfused strict run reproduces fewer elements: both bounds hold the kernel (an unfused
  // sum is within the factor 2 of a fused one), and the flag's run, the kernel's very errors,
  // correlates more: the flag is what names the kernel.
  const CheckReport strict = check(c, t, "strict", true);
  EXPECT_EQ(strict.diagnosis.front().recipe, "strict+fma") << to_text(strict);
  EXPECT_TRUE(explains(strict.diagnosis.front())) << to_text(strict);
  for (const RecipeMatch& m : strict.diagnosis) {
    if (m.recipe == "strict") {
      EXPECT_LT(m.equal, 1.0) << to_text(strict);
    }
  }
}

TEST(RecipeLiteral, ACaseWithLiteralTrueIsJudgedAsTheLiteralForm) {
  // F.gelu in f32 on the negative tail, where 1 + erf cancels: the stable form's ulp bound
  // rejects it, the literal form's bound holds it.
  auto gelu_case = [](bool literal) {
    return make_case({{"id", "gelu"},
                      {"op", "gelu"},
                      {"seed", 11},
                      {"formats", {"f32"}},
                      {"params", {{"n", 4096}, {"literal", literal}}},
                      {"inputs", {{"x", {{"dist", "uniform"}, {"lo", -12}, {"hi", 6}}}}}});
  };
  const Case literal = gelu_case(true), stable = gelu_case(false);
  std::vector<float> y = floats(reference_inputs(literal, ref::Format::f32).at("x"));
  for (float& v : y) v = testing::torch_gelu(v);
  const ref::Tensor t = float_tensor(ref::Format::f32, {4096}, y);
  EXPECT_TRUE(check(literal, t, "strict").pass);
  EXPECT_FALSE(check(stable, t, "strict").pass);
  // A recipe that contradicts the case's form is refused when the case is read.
  try {
    (void)make_case({{"id", "gelu"},
                     {"op", "gelu"},
                     {"formats", {"f32"}},
                     {"seed", 1},
                     {"params", {{"n", 16}, {"literal", true}}},
                     {"recipe", "form=stable"}});
    FAIL() << "literal: true with form=stable was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("recipe"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("literal"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lmo::oracle
