// The MoE router's rounding points (scores, sum, normalized) and the recipe deepseek-v3-gate, on
// DeepSeek-V3's reference Gate written independently of the reference (support/
// recipe_kernels.h, deepseek_gate): it passes under its recipe and fails under strict, which
// the diagnosis names; a kernel holding its scores in e4m3 is named by that point; a real bug
// (weights from the biased scores) matches no recipe. The selection is judged with DeepSeek's
// group limit, so a kernel that keeps another of two nearly tied groups is not flagged.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "oracle/cases/case.h"
#include "oracle/check/check.h"
#include "oracle/rules/recipe.h"
#include "tests/support/float_tensors.h"
#include "tests/support/recipe_kernels.h"
#include "tests/support/oracle_harness.h"

namespace lmo::oracle {
namespace {

using testing::float_tensor;
using testing::floats;

struct GateShape {
  int64_t tokens = 32, experts = 64, top_k = 8, groups = 8, kept = 4;
  bool bias = true;
  uint64_t seed = 31;
};

Case gate_case(const GateShape& s) {
  nlohmann::json p = {{"tokens", s.tokens}, {"experts", s.experts}, {"top_k", s.top_k},
                      {"score", "sigmoid"}, {"routed_scale", 2.5},  {"bias", s.bias},
                      {"logit_std", 2.0}};
  if (s.groups > 1) {
    p["groups"] = s.groups;
    p["topk_groups"] = s.kept;
  }
  return parse_case({{"id", "gate"},
                     {"op", "moe_router"},
                     {"seed", s.seed},
                     {"formats", {"bf16"}},
                     {"params", p}},
                    "recipe_router_test", "case");
}

CheckReport check_gate(const GateShape& s, const testing::GateKnobs& kn,
                       const std::string& recipe) {
  const Case c = gate_case(s);
  const InputSet in = reference_inputs(c, ref::Format::bf16);
  const std::vector<float> bias = s.bias ? floats(in.at("bias")) : std::vector<float>{};
  std::vector<float> w;
  std::vector<int64_t> idx;
  testing::deepseek_gate(floats(in.at("logits")), bias, s.tokens, s.experts, s.top_k, s.groups,
                         s.kept, 2.5f, kn, w, idx);
  ref::Tensor experts(ref::DType::i64, {s.tokens, s.top_k});
  for (size_t i = 0; i < idx.size(); ++i) {
    experts.set(static_cast<int64_t>(i), static_cast<double>(idx[i]));
  }
  std::map<std::string, ref::Tensor> outs;
  outs.emplace("gates", float_tensor(ref::Format::bf16, {s.tokens, s.top_k}, w));
  outs.emplace("experts", experts);
  CheckOptions o;
  o.recipe = parse_recipe(recipe);
  return check_outputs(c, outs, o);
}

const testing::GateKnobs kDeepseek{ref::Format::bf16, ref::Format::bf16, ref::Format::bf16};

TEST(RecipeRouter, DeepseekGatePassesUnderItsRecipeAndIsNamed) {
  // DeepSeek-V3's routing (8 groups, 4 kept, top-8, bias, scale 2.5) over 64 experts.
  const CheckReport named = check_gate({}, kDeepseek, "deepseek-v3-gate");
  EXPECT_TRUE(named.pass) << to_text(named);
  const CheckReport strict = check_gate({}, kDeepseek, "strict");
  EXPECT_FALSE(strict.pass);
  ASSERT_FALSE(strict.diagnosis.empty());
  EXPECT_EQ(strict.diagnosis.front().recipe, "deepseek-v3-gate") << to_text(strict);
  EXPECT_TRUE(explains(strict.diagnosis.front())) << to_text(strict);
}

// verify's path (run_and_judge) on the same gate, its outputs in ascending expert order as the
// oracle's backends write them: the one token whose bf16 scores tie differently from the exact
// ones (expert 8 for expert 63) has its gates judged on the kernel's own selection, so the
// kernel passes here as it does under check.
TEST(RecipeRouter, VerifyJudgesTheGatesOnTheBackendsOwnSelection) {
  const GateShape s;
  nlohmann::json j = gate_case(s).source;
  j["recipe"] = "deepseek-v3-gate";
  testing::Harness h(j, ref::Format::bf16);
  const testing::Kernel kernel = [&](const RunContext& ctx) {
    const std::vector<float> bias = floats(ctx.in.at("bias"));
    std::vector<float> w;
    std::vector<int64_t> idx;
    testing::deepseek_gate(floats(ctx.in.at("logits")), bias, s.tokens, s.experts, s.top_k,
                           s.groups, s.kept, 2.5f, kDeepseek, w, idx);
    Outputs<double> out(2);
    for (int64_t t = 0; t < s.tokens; ++t) {
      std::map<int64_t, float> row;  // ascending experts
      for (int64_t k = 0; k < s.top_k; ++k)
        row[idx[size_t(t * s.top_k + k)]] = w[size_t(t * s.top_k + k)];
      for (const auto& [e, g] : row) {
        out[1].indices.push_back(e);
        out[0].values.push_back(g);
      }
    }
    out[1].values.assign(out[1].indices.size(), 0.0);
    return out;
  };
  const VerifyRow row = h.judge("deepseek-gate", kernel);
  EXPECT_TRUE(row.pass) << row.detail;
}

TEST(RecipeRouter, E4m3ScoresAreNamed) {
  // Every expert selected (top-8 of 8), so only the gates tell the kernels apart.
  GateShape s;
  s.experts = 8;
  s.groups = 1;
  s.bias = false;
  testing::GateKnobs fp8 = kDeepseek;
  fp8.scores = ref::Format::e4m3;
  const CheckReport r = check_gate(s, fp8, "deepseek-v3-gate");
  EXPECT_FALSE(r.pass);
  ASSERT_FALSE(r.diagnosis.empty());
  EXPECT_EQ(r.diagnosis.front().recipe, "deepseek-v3-gate,scores=e4m3") << to_text(r);
  EXPECT_TRUE(explains(r.diagnosis.front())) << to_text(r);
}

TEST(RecipeRouter, WeightsFromBiasedScoresMatchNoRecipe) {
  testing::GateKnobs bug = kDeepseek;
  bug.weights_from_biased = true;
  const CheckReport r = check_gate({}, bug, "deepseek-v3-gate");
  EXPECT_FALSE(r.pass);
  ASSERT_FALSE(r.diagnosis.empty());
  // Weights of the biased scores are another function of the scores (about 20 bf16 ulp off):
  // no recipe that rounds in bf16 or wider holds them. A point in an 8-bit format has a bound
  // of 2^−4 of each value or more, wide enough for this bug: the diagnosis may rank such a
  // recipe first (the kernel would pass declaring it), and its errors, unlike the kernel's,
  // show in a low correlation and few equal elements (docs/recipes.md, Diagnosis).
  for (const RecipeMatch& m : r.diagnosis) {
    const bool eight_bit = m.recipe.find("=e4m3") != std::string::npos ||
                           m.recipe.find("=e5m2") != std::string::npos;
    if (!eight_bit) {
      EXPECT_FALSE(explains(m)) << to_text(r);
    } else if (explains(m)) {
      EXPECT_LT(m.correlation, 0.5) << to_text(m);
      EXPECT_LT(m.equal, 0.5) << to_text(m);
    }
  }
}

}  // namespace
}  // namespace lmo::oracle
