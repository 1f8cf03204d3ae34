// Declared recipes (Backend::declared_recipe; docs/recipes.md, "Declared recipes"): a backend
// says, per kernel entry, which recipe its kernel follows, and verify's run_and_judge judges each
// backend under judged_recipe(case recipe, declaration), one judge_kernels call per recipe.
// Checked with deliberately wrong kernels whose error is of a known kind:
//   - a store that truncates to bf16 (f32 → bf16 by dropping the low bits): fails strict, passes
//     declared strict+trunc, fails declared strict;
//   - a store that flushes subnormal results to zero: fails strict, passes declared strict+ftz;
//   - attention whose QKᵀ sums are fused (fma) on inputs where that shows: q·k = a² − a² cancels
//     exactly when the products are rounded apart (the exact and the strict run's score 0) and
//     leaves the rounding error of a² when fused, so the fused kernel fails strict and passes
//     declared strict+fma;
// and a wrong declaration never passes a wrong kernel: a kernel off by a factor fails under every
// declaration, a declaration that does not fit the op fails the row.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "oracle/backends/gpu_recipes.h"
#include "oracle/ops/registry.h"
#include "oracle/rules/recipe.h"
#include "tests/support/oracle_harness.h"
#include "tests/support/truncating_store.h"

namespace lmo::oracle {
namespace {

using lmo::testing::careful_f32;
using lmo::testing::exact_rounded;
using lmo::testing::FnBackend;
using lmo::testing::Harness;
using lmo::testing::Kernel;

TEST(DeclaredRecipe, JudgedRecipeFollowsTheRule) {
  const Recipe strict{};
  // No declaration: the case's recipe.
  EXPECT_EQ(judged_recipe(strict, std::nullopt), strict);
  EXPECT_EQ(judged_recipe(parse_recipe("hf-llama-rmsnorm"), std::nullopt),
            parse_recipe("hf-llama-rmsnorm"));
  // The case names none: the declaration, whole.
  EXPECT_EQ(judged_recipe(strict, parse_recipe("strict+fma")), parse_recipe("strict+fma"));
  EXPECT_EQ(judged_recipe(parse_recipe("strict"), parse_recipe("hf-llama-rmsnorm+trunc")),
            parse_recipe("hf-llama-rmsnorm+trunc"));
  // The case names one: the case's, with the declared modifiers added; the declared name and
  // points do not replace the case's.
  EXPECT_EQ(judged_recipe(parse_recipe("hf-llama-rmsnorm"), parse_recipe("strict+fma+trunc")),
            parse_recipe("hf-llama-rmsnorm+fma+trunc"));
  EXPECT_EQ(judged_recipe(parse_recipe("strict+ftz"), parse_recipe("strict+fma")),
            parse_recipe("strict+ftz+fma"));
  EXPECT_EQ(judged_recipe(parse_recipe("vllm-fused-add-rmsnorm"), parse_recipe("strict")),
            parse_recipe("vllm-fused-add-rmsnorm"));
  EXPECT_EQ(judged_recipe(parse_recipe("probs=bf16"), parse_recipe("flash-attention+ftz")),
            parse_recipe("probs=bf16+ftz"));
}

nlohmann::json rmsnorm_case(const char* storage, const char* recipe = nullptr) {
  nlohmann::json c = {{"id", "declared/rmsnorm"},
                      {"op", "rmsnorm"},
                      {"seed", 4242},
                      {"formats", {storage}},
                      {"params", {{"rows", 8}, {"d", 512}, {"eps", 1e-6}}}};
  if (recipe) c["recipe"] = recipe;
  return c;
}

// The careful f32 run stored toward zero in bf16 (the low 16 bits of each f32 dropped).
Outputs<double> truncating_bf16(const RunContext& ctx) {
  Outputs<double> o = careful_f32(ctx);
  lmo::testing::truncate_to_bf16(o);
  return o;
}

std::optional<Recipe> decl(const char* text) { return parse_recipe(text); }

TEST(DeclaredRecipe, ATruncatingStorePassesOnlyWhereItIsDeclared) {
  Harness h(rmsnorm_case("bf16"), ref::Format::bf16);
  const VerifyRow none = h.judge("trunc", truncating_bf16);
  EXPECT_FALSE(none.pass) << "a truncating store passed strict";
  EXPECT_EQ(none.recipe, "strict");
  const VerifyRow strict = h.judge("trunc", truncating_bf16, decl("strict"));
  EXPECT_FALSE(strict.pass) << "a truncating store passed its (wrong) strict declaration";
  const VerifyRow fma = h.judge("trunc", truncating_bf16, decl("strict+fma"));
  EXPECT_FALSE(fma.pass) << "a truncating store passed a declaration without +trunc";
  const VerifyRow trunc = h.judge("trunc", truncating_bf16, decl("strict+trunc"));
  EXPECT_TRUE(trunc.pass) << trunc.detail;
  EXPECT_EQ(trunc.recipe, "strict+trunc");
  // The correct kernel passes whatever it declares of these.
  for (const char* d : {"strict", "strict+trunc", "strict+fma"}) {
    const VerifyRow good = h.judge("careful", careful_f32, decl(d));
    EXPECT_TRUE(good.pass) << d << ": " << good.detail;
  }
}

TEST(DeclaredRecipe, ACaseRecipeKeepsItsPointsAndTakesTheDeclaredModifiers) {
  // The case asks for transformers' RMSNorm (normed=storage); the truncating kernel declares
  // +trunc: judged under hf-llama-rmsnorm+trunc.
  Harness h(rmsnorm_case("bf16", "hf-llama-rmsnorm"), ref::Format::bf16);
  const VerifyRow row = h.judge("trunc", truncating_bf16, decl("strict+trunc"));
  EXPECT_EQ(row.recipe, "hf-llama-rmsnorm+trunc");
  // A declaration of another named recipe does not replace the case's.
  const VerifyRow named = h.judge("trunc", truncating_bf16, decl("hf-llama-rmsnorm"));
  EXPECT_EQ(named.recipe, "hf-llama-rmsnorm");
}

// silu's subnormal tail: x in [−100, −90) gives x·σ(x) ≈ x·e^x between 4e-42 and 7e-38.
nlohmann::json subnormal_silu_case() {
  return {{"id", "declared/silu-tail"},
          {"op", "silu"},
          {"seed", 4243},
          {"formats", {"f32"}},
          {"params", {{"n", 2048}}},
          {"inputs", {{"x", {{"dist", "uniform"}, {"lo", -100}, {"hi", -90}}}}}};
}

// The correctly rounded values with every f32 subnormal flushed to a zero of its sign.
Outputs<double> flushing(const RunContext& ctx) {
  Outputs<double> o = exact_rounded(ctx);
  for (OutputValues<double>& out : o) {
    for (double& v : out.values) {
      if (std::fabs(v) < 0x1p-126) v = std::copysign(0.0, v);
    }
  }
  return o;
}

TEST(DeclaredRecipe, AFlushingStorePassesOnlyWhereItIsDeclared) {
  Harness h(subnormal_silu_case(), ref::Format::f32);
  int subnormal = 0;
  const Outputs<double> rounded = exact_rounded(h.ctx());
  for (double v : rounded[0].values) subnormal += v != 0 && std::fabs(v) < 0x1p-126;
  ASSERT_GT(subnormal, 100) << "the case does not reach the subnormal range";
  EXPECT_FALSE(h.judge("ftz", flushing).pass);
  EXPECT_FALSE(h.judge("ftz", flushing, decl("strict")).pass);
  EXPECT_FALSE(h.judge("ftz", flushing, decl("strict+trunc")).pass);
  const VerifyRow ftz = h.judge("ftz", flushing, decl("strict+ftz"));
  EXPECT_TRUE(ftz.pass) << ftz.detail;
  EXPECT_EQ(ftz.recipe, "strict+ftz");
}

// One head, two tokens, d 2, no mask; q_i = (a, a), k_0 = (a, −a), k_1 = (0, 0), v the identity,
// with a = 2^6·(1 + 2^-12): a² = 2^12 + 2 + 2^-12 lies halfway between two f32 neighbours and
// rounds to 2^12 + 2. Rounded apart, q·k_0 = round(a²) − round(a²) = 0, the exact score; fused
// (fma(a, −a, round(a²))), it is round(a²) − a² = −2^-12. Both rows' outputs are then
// (p_0, p_1) = (½, ½) exactly in the strict run and σ(∓2^-12/√2) in the fused one, off by about
// 2^-14.5: thousands of f32 ulps beyond the strict run's error, which is 0.
InputSet cancelling_attention_inputs(const InputSet& drawn) {
  const float a = 0x1p6f * (1.0f + 0x1p-12f);
  const std::vector<float> q = {a, a, a, a}, k = {a, -a, 0.0f, 0.0f}, v = {1, 0, 0, 1};
  InputSet in;
  for (const auto& [name, t] : drawn.all()) {
    const std::vector<float>& vals = name == "q" ? q : name == "k" ? k : v;
    ref::Tensor u(t.dtype(), t.shape());
    EXPECT_EQ(u.numel(), 4) << name;
    for (int64_t i = 0; i < u.numel(); ++i) u.set(i, vals[static_cast<size_t>(i)]);
    in.add(name, std::move(u));
  }
  return in;
}

TEST(DeclaredRecipe, AFusedDotProductPassesOnlyWhereItIsDeclared) {
  const nlohmann::json j = {{"id", "declared/attention-fma"},
                            {"op", "attention"},
                            {"seed", 4244},
                            {"formats", {"f32"}},
                            {"params", {{"h", 1}, {"g", 1}, {"d", 2}, {"tokens", 2}, {"mask", "none"}}}};
  Harness h(j, ref::Format::f32);
  const InputSet in = cancelling_attention_inputs(h.inputs());
  std::optional<Outputs<ref::mp>> exact;
  std::map<ref::Format, Outputs<double>> sims;
  const RunContext ctx{h.c(),
                       h.op(),
                       ref::Format::f32,
                       in,
                       [&]() -> const Outputs<ref::mp>& {
                         if (!exact) exact = h.op().exact(in);
                         return *exact;
                       },
                       [&](ref::Format f) -> const Outputs<double>& {
                         auto it = sims.find(f);
                         if (it == sims.end()) it = sims.emplace(f, h.op().simulated(f, in)).first;
                         return it->second;
                       }};
  // The kernel: the reference's attention in f32 with its dot products fused (Op::simulated
  // under strict+fma, reference/contraction.h), on these inputs.
  const Kernel fused = [](const RunContext& c) {
    return c.op.simulated(ref::Format::f32, c.in,
                          bind_recipe(parse_recipe("strict+fma"), c.c.op, c.op, c.storage));
  };
  // The construction: the strict run is exact, the fused one is not.
  const Outputs<double> strict_run = h.op().simulated(ref::Format::f32, in);
  const Outputs<double> fused_run = fused(ctx);
  for (double v : strict_run[0].values) EXPECT_EQ(v, 0.5);
  EXPECT_NE(fused_run[0].values[0], 0.5);
  const auto judged = [&](std::optional<Recipe> d) {
    FnBackend b("fused", fused, std::move(d));
    return run_and_judge(h.c(), h.op(), ref::Format::f32, b, ctx);
  };
  EXPECT_FALSE(judged(std::nullopt).pass) << "a fused QKᵀ passed strict on cancelling inputs";
  EXPECT_FALSE(judged(decl("strict")).pass);
  EXPECT_FALSE(judged(decl("strict+trunc")).pass);
  const VerifyRow fma = judged(decl("strict+fma"));
  EXPECT_TRUE(fma.pass) << fma.detail;
  EXPECT_EQ(fma.recipe, "strict+fma");
}

TEST(DeclaredRecipe, NoDeclarationPassesAKernelOffByAFactor) {
  // rmsnorm's output 1 % too large: under no recipe a correct kernel's error.
  const Kernel scaled = [](const RunContext& ctx) {
    Outputs<double> o = careful_f32(ctx);
    for (double& v : o[0].values) v *= 1.01;
    return o;
  };
  for (const char* storage : {"f32", "bf16"}) {
    Harness h(rmsnorm_case(storage), *ref::parse_format(storage));
    EXPECT_FALSE(h.judge("scaled", scaled).pass) << storage;
    for (const char* d : {"strict", "strict+fma", "strict+trunc", "strict+ftz",
                          "strict+ftz+fma+trunc", "hf-llama-rmsnorm+fma+trunc",
                          "normed=bf16,inv_rms=bf16,form=rsqrt+trunc"}) {
      const VerifyRow row = h.judge("scaled", scaled, decl(d));
      EXPECT_FALSE(row.pass) << storage << ": the scaled kernel passed declared " << d;
    }
  }
}

TEST(DeclaredRecipe, ADeclarationThatDoesNotFitTheOpFailsItsRowOnly) {
  // hf-rope's points are rope's; on rmsnorm the declaration is the backend's error. The other
  // backends of the same call are judged as usual.
  Harness h(rmsnorm_case("f32"), ref::Format::f32);
  FnBackend wrong("wrong-declaration", careful_f32, decl("hf-rope"));
  FnBackend plain("plain", careful_f32);
  FnBackend trunc("declared-trunc", careful_f32, decl("strict+trunc"));
  const RunContext ctx = h.ctx();
  const std::vector<VerifyRow> rows =
      run_and_judge(h.c(), h.op(), ref::Format::f32, {&plain, &wrong, &trunc}, ctx);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(rows[0].pass) << rows[0].detail;
  EXPECT_EQ(rows[0].recipe, "strict");
  EXPECT_FALSE(rows[1].pass);
  EXPECT_NE(rows[1].detail.find("declared recipe hf-rope"), std::string::npos) << rows[1].detail;
  EXPECT_TRUE(rows[2].pass) << rows[2].detail;
  EXPECT_EQ(rows[2].recipe, "strict+trunc");
  // The case's own recipe not fitting the op is bad input, as before (here through a case
  // whose recipe is rope's).
  Harness bad(rmsnorm_case("f32"), ref::Format::f32);
  Case c = bad.c();
  c.recipe = parse_recipe("hf-rope");
  const RunContext bctx = bad.ctx();
  EXPECT_THROW((void)run_and_judge(c, bad.op(), ref::Format::f32, plain, bctx), RecipeError);
}

TEST(DeclaredRecipe, BackendsUnderDifferentRecipesAreJudgedInOneCall) {
  // A truncating kernel that declares it and a correct one that does not, in one bf16 call:
  // each under its own recipe; the truncating one without its declaration fails.
  Harness h(rmsnorm_case("bf16"), ref::Format::bf16);
  FnBackend good("good", careful_f32);
  FnBackend declared("declared", truncating_bf16, decl("strict+trunc"));
  FnBackend undeclared("undeclared", truncating_bf16);
  const RunContext ctx = h.ctx();
  const std::vector<VerifyRow> rows =
      run_and_judge(h.c(), h.op(), ref::Format::bf16, {&good, &declared, &undeclared}, ctx);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(rows[0].pass) << rows[0].detail;
  EXPECT_TRUE(rows[1].pass) << rows[1].detail;
  EXPECT_FALSE(rows[2].pass);
  EXPECT_EQ(rows[0].recipe, "strict");
  EXPECT_EQ(rows[1].recipe, "strict+trunc");
  EXPECT_EQ(rows[2].recipe, "strict");
}

TEST(DeclaredRecipe, TheGpuDeclarationsFitEveryBuiltinCaseOfTheirOps) {
  // gpu_recipes.cc's declarations are CUDA-free, so this runs in every build: each binds, as the
  // case's recipe combined with it (judged_recipe), to every built-in case of the entry's ops in
  // every format the case lists.
  int bound = 0;
  for (const auto& file : std::filesystem::directory_iterator(builtin_cases_dir())) {
    if (file.path().extension() != ".json") continue;
    for (const Case& c : load_case_file(file.path().string())) {
      const std::optional<Recipe> d = gpu_declared_recipe(kernel_entry(c.op));
      if (!d) continue;
      const std::unique_ptr<Op> op = make_op(c);
      for (ref::Format f : c.formats) {
        EXPECT_NO_THROW((void)bind_recipe(judged_recipe(c.recipe, d), c.op, *op, f))
            << c.id << " " << ref::format_name(f) << ": " << d->text();
        ++bound;
      }
    }
  }
  EXPECT_GT(bound, 0);
}

}  // namespace
}  // namespace lmo::oracle
