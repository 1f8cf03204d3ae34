// Rounding recipes (oracle/rules/recipe.h, recipe_judge.h): the text forms and their errors, and the
// judge under a recipe on kernels written independently of the reference (support/
// recipe_kernels.h): each named recipe's kernel passes under it and fails under strict, its
// mutants fail and the diagnosis names what each mutant does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "oracle/cases/case.h"
#include "oracle/check/check.h"
#include "oracle/golden/golden.h"
#include "oracle/golden/golden_content.h"
#include "oracle/ops/registry.h"
#include "oracle/rules/recipe.h"
#include "tests/support/float_tensors.h"
#include "tests/support/recipe_kernels.h"

namespace lmo::oracle {
namespace {

using testing::float_tensor;
using testing::floats;

using testing::FlashKnobs;
using testing::RopeKnobs;

Case make_case(const nlohmann::json& j) { return parse_case(j, "recipe_test", "case"); }

CheckReport check(const Case& c, const std::string& name, const ref::Tensor& out,
                  const std::string& recipe) {
  std::map<std::string, ref::Tensor> outs;
  outs.emplace(name, out);
  CheckOptions o;
  o.recipe = parse_recipe(recipe);
  return check_outputs(c, outs, o);
}

// The diagnosis's first recipe, which must explain every element (recipe_judge.h: each kernel
// named here passes under the recipe it is named by); marked where it does not.
std::string best(const CheckReport& r) {
  if (r.diagnosis.empty()) return "(none)";
  const RecipeMatch& m = r.diagnosis.front();
  return explains(m) ? m.recipe : "(explained by none; closest " + m.recipe + ")";
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const RecipeError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(RecipeText, ParsesNamesModifiersAndPoints) {
  EXPECT_EQ(parse_recipe("flash-attention").name, "flash-attention");
  EXPECT_TRUE(parse_recipe("torch-silu+ftz").ftz);
  const Recipe custom = parse_recipe("probs=bf16, acc=f32");
  EXPECT_EQ(custom.name, "strict");
  EXPECT_EQ(custom.points.at("probs"), "bf16");
  EXPECT_EQ(custom.points.at("acc"), "f32");
  const Recipe over = parse_recipe("hf-rope,table=f16,ftz");
  EXPECT_EQ(over.name, "hf-rope");
  EXPECT_EQ(over.points.at("table"), "f16");
  EXPECT_TRUE(over.ftz);
  for (const char* t : {"strict", "flash-attention+ftz", "hf-rope,table=f16", "probs=e4m3"}) {
    EXPECT_EQ(parse_recipe(parse_recipe(t).text()), parse_recipe(t)) << t;
  }
}

TEST(RecipeText, BadNamesListTheValidOnes) {
  const std::string unknown = message_of([] { parse_recipe("flash-attn"); });
  for (const NamedRecipe& r : named_recipes()) EXPECT_NE(unknown.find(r.name), std::string::npos);
  EXPECT_NE(message_of([] { parse_recipe("strict+fz"); }).find("+ftz"), std::string::npos);
  EXPECT_NE(message_of([] { parse_recipe("probs="); }).find("point=value"), std::string::npos);
  EXPECT_NE(message_of([] { parse_recipe(""); }).find("empty"), std::string::npos);
}

TEST(RecipeText, PointsAndValuesAreTheOpsOwn) {
  const Case att = make_case({{"id", "a"}, {"op", "attention"}, {"seed", 1}, {"formats", {"bf16"}},
                              {"params", {{"h", 2}, {"d", 4}, {"tokens", 3}, {"mask", "none"}}}});
  const Case norm = make_case({{"id", "n"}, {"op", "rmsnorm"}, {"seed", 1}, {"formats", {"bf16"}},
                               {"params", {{"rows", 2}, {"d", 4}, {"eps", 1e-6}}}});
  const auto bind = [](const Case& c, const std::string& text) {
    return [c, text] {
      (void)bind_recipe(parse_recipe(text), c.op, *make_op(c), ref::Format::bf16);
    };
  };
  const std::string point = message_of(bind(norm, "probs=bf16"));
  for (const char* p : {"form", "inv_rms", "normed"}) {
    EXPECT_NE(point.find(p), std::string::npos) << point;
  }
  EXPECT_NE(message_of(bind(att, "probs=bf17")).find("e4m3"), std::string::npos);
  EXPECT_NE(message_of(bind(att, "normalize=sideways")).find("early, late"), std::string::npos);
  EXPECT_NE(message_of(bind(norm, "flash-attention")).find("attention_decode"),
            std::string::npos);
  EXPECT_EQ(message_of(bind(att, "flash-attention,acc=bf16+ftz")), "(no error)");
  // A case file names its recipe; a point its op lacks is refused when the file is read.
  nlohmann::json bad = {{"id", "n"}, {"op", "rmsnorm"}, {"seed", 1}, {"formats", {"bf16"}},
                        {"recipe", "probs=bf16"},
                        {"params", {{"rows", 2}, {"d", 4}, {"eps", 1e-6}}}};
  EXPECT_THROW(make_case(bad), InputError);
  bad["recipe"] = "hf-llama-rmsnorm";
  EXPECT_EQ(make_case(bad).recipe.name, "hf-llama-rmsnorm");
}

// Each named recipe's points are points of the ops it lists (a named recipe sets, on each op,
// the points that op has: a misspelt point would otherwise be silently skipped everywhere).
TEST(RecipeText, NamedRecipesSetPointsTheirOpsHave) {
  std::map<std::string, std::vector<std::string>> points_of;  // op -> points, from a built-in case
  for (const Case& c : load_case_dir(builtin_cases_dir())) {
    if (points_of.count(c.op)) continue;
    for (const RoundingPoint& p : make_op(c)->rounding_points()) points_of[c.op].push_back(p.name);
  }
  for (const NamedRecipe& r : named_recipes()) {
    for (const std::string& op : r.ops) EXPECT_TRUE(points_of.count(op)) << r.name << ": " << op;
    for (const auto& [point, value] : r.points) {
      bool found = false;
      for (const std::string& op : r.ops) {
        const std::vector<std::string>& ps = points_of[op];
        found = found || std::find(ps.begin(), ps.end(), point) != ps.end();
      }
      EXPECT_TRUE(found) << r.name << " sets " << point << ", a point none of its ops has";
    }
  }
}

// --- Attention: FlashAttention 2's forward pass (key tiles, online softmax) ------------------

struct AttentionRun {
  Case c;
  std::vector<float> q, k, v;
};

AttentionRun attention_case(ref::Format f, int64_t tokens, int64_t h, int64_t g, int64_t d,
                            uint64_t seed) {
  AttentionRun r{make_case({{"id", "att"},
                            {"op", "attention"},
                            {"seed", seed},
                            {"formats", {std::string(ref::format_name(f))}},
                            {"params",
                             {{"h", h}, {"g", g}, {"d", d}, {"tokens", tokens},
                              {"mask", "causal"}}}}),
                 {}, {}, {}};
  const InputSet in = reference_inputs(r.c, f);
  r.q = floats(in.at("q"));
  r.k = floats(in.at("k"));
  r.v = floats(in.at("v"));
  return r;
}

CheckReport check_flash(const AttentionRun& a, ref::Format f, const FlashKnobs& kn,
                        const std::string& recipe) {
  const int64_t h = a.c.params["h"], g = a.c.params["g"], d = a.c.params["d"];
  const int64_t t = a.c.params["tokens"];
  const std::vector<float> o = testing::flash_attention(
      a.q, a.k, a.v, t, t, h, g, d, true, static_cast<float>(1 / std::sqrt(double(d))), kn);
  return check(a.c, "o", float_tensor(f, {t, h * d}, o), recipe);
}

TEST(RecipeAttention, FlashKernelPassesUnderFlashAttentionOnly) {
  const AttentionRun a = attention_case(ref::Format::bf16, 96, 4, 2, 32, 7);
  FlashKnobs kn;
  kn.probs = ref::Format::bf16;
  const CheckReport flash = check_flash(a, ref::Format::bf16, kn, "flash-attention");
  EXPECT_TRUE(flash.pass) << to_text(flash);
  const CheckReport strict = check_flash(a, ref::Format::bf16, kn, "strict");
  EXPECT_FALSE(strict.pass);
  EXPECT_EQ(best(strict), "flash-attention") << to_text(strict);
}

TEST(RecipeAttention, MutantsFailAndTheDiagnosisNamesThem) {
  const AttentionRun a = attention_case(ref::Format::bf16, 96, 4, 2, 32, 8);
  FlashKnobs e4m3;
  e4m3.probs = ref::Format::e4m3;
  const CheckReport r1 = check_flash(a, ref::Format::bf16, e4m3, "flash-attention");
  EXPECT_FALSE(r1.pass);
  EXPECT_EQ(best(r1), "flash-attention,probs=e4m3") << to_text(r1);
  FlashKnobs bf16_acc;
  bf16_acc.probs = ref::Format::bf16;
  bf16_acc.acc = ref::Format::bf16;
  const CheckReport r2 = check_flash(a, ref::Format::bf16, bf16_acc, "flash-attention");
  EXPECT_FALSE(r2.pass);
  EXPECT_EQ(best(r2), "flash-attention,acc=bf16") << to_text(r2);
  // In f32 storage FlashAttention keeps P̃ in f32: one rounded to f16 is a bug.
  const AttentionRun b = attention_case(ref::Format::f32, 96, 4, 2, 32, 9);
  FlashKnobs f16;
  f16.probs = ref::Format::f16;
  const CheckReport r3 = check_flash(b, ref::Format::f32, f16, "flash-attention");
  EXPECT_FALSE(r3.pass);
  EXPECT_EQ(best(r3), "flash-attention,probs=f16") << to_text(r3);
}

// --- RMSNorm: transformers' LlamaRMSNorm ----------------------------------------------------

Case rmsnorm_case(ref::Format f, int64_t rows, int64_t d, double eps, double x_std,
                  uint64_t seed) {
  return make_case({{"id", "rms"},
                    {"op", "rmsnorm"},
                    {"seed", seed},
                    {"formats", {std::string(ref::format_name(f))}},
                    {"params", {{"rows", rows}, {"d", d}, {"eps", eps}}},
                    {"inputs", {{"x", {{"dist", "normal"}, {"mean", 0}, {"std", x_std}}}}}});
}

CheckReport check_hf_rmsnorm(const Case& c, ref::Format f, float eps, const std::string& recipe,
                             int64_t block = 8) {
  const InputSet in = reference_inputs(c, f);
  const int64_t rows = c.params["rows"], d = c.params["d"];
  const std::vector<float> y =
      testing::hf_rmsnorm(floats(in.at("x")), floats(in.at("gamma")), rows, d, eps, f, block);
  return check(c, "y", float_tensor(f, {rows, d}, y), recipe);
}

TEST(RecipeRmsnorm, LlamaRmsnormPassesUnderItsRecipeOnly) {
  const Case c = rmsnorm_case(ref::Format::bf16, 16, 256, 1e-6, 1, 3);
  const CheckReport hf = check_hf_rmsnorm(c, ref::Format::bf16, 1e-6f, "hf-llama-rmsnorm");
  EXPECT_TRUE(hf.pass) << to_text(hf);
  const CheckReport strict = check_hf_rmsnorm(c, ref::Format::bf16, 1e-6f, "strict");
  EXPECT_FALSE(strict.pass);
  EXPECT_EQ(best(strict), "hf-llama-rmsnorm") << to_text(strict);
}

TEST(RecipeRmsnorm, WrongEpsilonFailsWhereEpsilonMatters) {
  // mean(x²) ≈ 1e-6: ε = 1e-5 instead of 1e-6 changes every output by about a factor 3. No
  // recipe explains that: even the widest bound (a normalized row in e5m2, 2^−3 of each value)
  // leaves elements outside, and the report says so.
  const Case c = rmsnorm_case(ref::Format::bf16, 16, 256, 1e-6, 1e-3, 4);
  const CheckReport r = check_hf_rmsnorm(c, ref::Format::bf16, 1e-5f, "hf-llama-rmsnorm");
  EXPECT_FALSE(r.pass);
  ASSERT_FALSE(r.diagnosis.empty());
  EXPECT_FALSE(explains(r.diagnosis.front())) << to_text(r);
  EXPECT_NE(to_text(r).find("no recipe explains these errors"), std::string::npos) << to_text(r);
}

// --- RoPE: transformers' Llama rotary embedding --------------------------------------------

Case rope_case(ref::Format f, int64_t tokens, int64_t heads, int64_t dim, int64_t max_position,
               uint64_t seed) {
  return make_case({{"id", "rope"},
                    {"op", "rope"},
                    {"seed", seed},
                    {"formats", {std::string(ref::format_name(f))}},
                    {"params",
                     {{"tokens", tokens}, {"heads", heads}, {"head_dim", dim},
                      {"layout", "half_split"}, {"max_position", max_position}}}});
}

CheckReport check_hf_rope(const Case& c, ref::Format f, const RopeKnobs& kn,
                          const std::string& recipe) {
  const InputSet in = reference_inputs(c, f);
  const int64_t t = c.params["tokens"], heads = c.params["heads"], dim = c.params["head_dim"];
  const std::vector<float> y =
      testing::hf_rope(floats(in.at("x")), in.ints("positions"), t, heads, dim, 10000.0f, kn);
  return check(c, "y", float_tensor(f, {t, heads * dim}, y), recipe);
}

TEST(RecipeRope, LlamaRopePassesUnderHfRopeOnly) {
  const Case c = rope_case(ref::Format::bf16, 64, 2, 64, 4096, 5);
  RopeKnobs kn;
  kn.table = ref::Format::bf16;
  kn.products = ref::Format::bf16;
  const CheckReport hf = check_hf_rope(c, ref::Format::bf16, kn, "hf-rope");
  EXPECT_TRUE(hf.pass) << to_text(hf);
  const CheckReport strict = check_hf_rope(c, ref::Format::bf16, kn, "strict");
  EXPECT_FALSE(strict.pass);
  EXPECT_EQ(best(strict), "hf-rope") << to_text(strict);
}

TEST(RecipeRope, ABf16TableFailsAKernelThatDeclaresF32TablesAtLongPositions) {
  for (ref::Format f : {ref::Format::f32, ref::Format::bf16}) {
    const Case c = rope_case(f, 64, 2, 64, int64_t{1} << 20, 6);
    RopeKnobs good;
    good.f64_angles = true;
    const CheckReport ok = check_hf_rope(c, f, good, "angle=f64");
    EXPECT_TRUE(ok.pass) << to_text(ok);
    RopeKnobs mutant = good;
    mutant.table = ref::Format::bf16;
    const CheckReport r = check_hf_rope(c, f, mutant, "angle=f64");
    EXPECT_FALSE(r.pass) << ref::format_name(f);
    EXPECT_EQ(best(r), "strict,angle=f64,table=bf16") << to_text(r);
  }
}

// --- Activations: PyTorch's literal forms -------------------------------------------------

CheckReport check_activation(const std::string& op, float (*kernel)(float), double lo,
                             double hi, const std::string& recipe, uint64_t seed = 11) {
  const Case c = make_case({{"id", op},
                            {"op", op},
                            {"seed", seed},
                            {"formats", {"f32"}},
                            {"params", {{"n", 4096}}},
                            {"inputs", {{"x", {{"dist", "uniform"}, {"lo", lo}, {"hi", hi}}}}}});
  const InputSet in = reference_inputs(c, ref::Format::f32);
  std::vector<float> y = floats(in.at("x"));
  for (float& v : y) v = kernel(v);
  return check(c, "y", float_tensor(ref::Format::f32, {4096}, y), recipe);
}

TEST(RecipeActivations, TorchFormsPassUnderTheirRecipesOnly) {
  struct Row {
    std::string op, recipe;
    float (*kernel)(float);
    double lo, hi;
  };
  for (const Row& r : {Row{"gelu", "torch-gelu", testing::torch_gelu, -12, 6},
                       Row{"gelu_tanh", "torch-gelu-tanh", testing::torch_gelu_tanh, -12, 6},
                       Row{"silu", "torch-silu", testing::torch_silu, -100, 20}}) {
    const CheckReport named = check_activation(r.op, r.kernel, r.lo, r.hi, r.recipe);
    EXPECT_TRUE(named.pass) << to_text(named);
    const CheckReport strict = check_activation(r.op, r.kernel, r.lo, r.hi, "strict");
    EXPECT_FALSE(strict.pass) << r.op;
    EXPECT_EQ(best(strict), r.recipe) << to_text(strict);
  }
}

TEST(RecipeActivations, TorchGatesPassUnderTheirRecipesOnly) {
  // F.silu(a) * b and F.gelu(a) * b in f32, as a transformers MLP computes its gate.
  struct Row {
    std::string op, recipe;
    float (*act)(float);
    double lo, hi;
  };
  for (const Row& r : {Row{"swiglu_gate", "torch-silu", testing::torch_silu, -100, 20},
                       Row{"geglu_gate", "torch-gelu", testing::torch_gelu, -12, 6}}) {
    const Case c = make_case({{"id", r.op},
                              {"op", r.op},
                              {"seed", 13},
                              {"formats", {"f32"}},
                              {"params", {{"n", 2048}}},
                              {"inputs", {{"a", {{"dist", "uniform"}, {"lo", r.lo}, {"hi", r.hi}}}}}});
    const InputSet in = reference_inputs(c, ref::Format::f32);
    const std::vector<float> a = floats(in.at("a")), b = floats(in.at("b"));
    std::vector<float> y(a.size());
    for (size_t i = 0; i < a.size(); ++i) y[i] = r.act(a[i]) * b[i];
    const ref::Tensor t = float_tensor(ref::Format::f32, {2048}, y);
    const CheckReport named = check(c, "y", t, r.recipe);
    EXPECT_TRUE(named.pass) << to_text(named);
    const CheckReport strict = check(c, "y", t, "strict");
    EXPECT_FALSE(strict.pass) << r.op;
    EXPECT_EQ(best(strict), r.recipe) << to_text(strict);
  }
}

// --- Softmax: a kernel that keeps its exponentials in bf16 -----------------------------

TEST(RecipeSoftmax, Bf16ExponentialsFailStrictAndAreNamed) {
  const Case c = make_case({{"id", "sm"},
                            {"op", "softmax"},
                            {"seed", 14},
                            {"formats", {"f32"}},
                            {"params", {{"rows", 8}, {"n", 256}}}});
  const InputSet in = reference_inputs(c, ref::Format::f32);
  const std::vector<float> z = floats(in.at("z"));
  // Row max, e = bf16(exp(z − m)) summed in f32 in blocks of 8, then e / Σ.
  std::vector<float> y(z.size());
  for (size_t r = 0; r < 8; ++r) {
    float m = z[r * 256];
    for (size_t j = 0; j < 256; ++j) m = std::max(m, z[r * 256 + j]);
    float part[8] = {};
    for (size_t j = 0; j < 256; ++j) {
      y[r * 256 + j] = testing::round_to(ref::Format::bf16, std::exp(z[r * 256 + j] - m));
      part[j % 8] += y[r * 256 + j];
    }
    float sum = 0;
    for (float p : part) sum += p;
    for (size_t j = 0; j < 256; ++j) y[r * 256 + j] /= sum;
  }
  const ref::Tensor t = float_tensor(ref::Format::f32, {8, 256}, y);
  const CheckReport strict = check(c, "p", t, "strict");
  EXPECT_FALSE(strict.pass);
  EXPECT_EQ(best(strict), "strict,exps=bf16") << to_text(strict);
  const CheckReport declared = check(c, "p", t, "exps=bf16");
  EXPECT_TRUE(declared.pass) << to_text(declared);
}

// --- LayerNorm: the normalized row cast to the storage dtype before the affine -------------

TEST(RecipeLayernorm, NormalizedRowInBf16PassesUnderItsPointsAndIsNamed) {
  const int64_t rows = 8, d = 256;
  const Case c = make_case({{"id", "ln"},
                            {"op", "layernorm"},
                            {"seed", 25},
                            {"formats", {"bf16"}},
                            {"params", {{"rows", rows}, {"d", d}, {"eps", 1e-5}}}});
  const InputSet in = reference_inputs(c, ref::Format::bf16);
  const std::vector<float> x = floats(in.at("x")), g = floats(in.at("gamma"));
  const std::vector<float> b = floats(in.at("beta"));
  // f32 mean and variance (two passes, summed in 4 lanes), (x − μ)/sqrt(σ² + ε) cast to bf16,
  // then γ·n + β in f32, rounded once at the store.
  std::vector<float> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = &x[static_cast<size_t>(r * d)];
    float lane[4] = {};
    for (int64_t i = 0; i < d; ++i) lane[i % 4] += xr[i];
    const float mu = (lane[0] + lane[1] + lane[2] + lane[3]) / static_cast<float>(d);
    float sq[4] = {};
    for (int64_t i = 0; i < d; ++i) sq[i % 4] += (xr[i] - mu) * (xr[i] - mu);
    const float var = (sq[0] + sq[1] + sq[2] + sq[3]) / static_cast<float>(d);
    const float denom = std::sqrt(var + 1e-5f);
    for (int64_t i = 0; i < d; ++i) {
      const float n = testing::round_to(ref::Format::bf16, (xr[i] - mu) / denom);
      const auto k = static_cast<size_t>(i);
      y[static_cast<size_t>(r * d + i)] = n * g[k] + b[k];
    }
  }
  const ref::Tensor t = float_tensor(ref::Format::bf16, {rows, d}, y);
  const CheckReport strict = check(c, "y", t, "strict");
  EXPECT_FALSE(strict.pass);
  EXPECT_EQ(best(strict), "strict,normed=bf16") << to_text(strict);
  const CheckReport declared = check(c, "y", t, "normed=bf16");
  EXPECT_TRUE(declared.pass) << to_text(declared);
  EXPECT_EQ(message_of([&] {
              BoundRecipe(parse_recipe("form=rsqrt,inv_std=bf16"), c.op,
                          make_op(c)->rounding_points(), ref::Format::bf16);
            }),
            "(no error)");
}

// --- MLA decode: FlashMLA as vLLM's MLA backend feeds it --------------------------------

TEST(RecipeMla, FlashMlaPassesUnderItsRecipeAndIsNamed) {
  const int64_t h = 8, dh = 32, dr = 16, dc = 64, t = 96;
  const Case c = make_case({{"id", "mla"},
                            {"op", "mla_decode"},
                            {"seed", 23},
                            {"formats", {"bf16"}},
                            {"params",
                             {{"h", h}, {"d_h", dh}, {"d_rope", dr}, {"d_c", dc},
                              {"cache_len", t}}}});
  const InputSet in = reference_inputs(c, ref::Format::bf16);
  const auto run = [&](std::optional<ref::Format> query, std::optional<ref::Format> probs,
                       const std::string& recipe) {
    FlashKnobs kn;
    kn.probs = probs;
    const std::vector<float> o = testing::flash_mla(
        floats(in.at("q_c")), floats(in.at("q_r")), floats(in.at("c_kv")), floats(in.at("k_r")),
        floats(in.at("w_uk")), h, dh, dr, dc, t, query, kn);
    return check(c, "o", float_tensor(ref::Format::bf16, {1, h * dc}, o), recipe);
  };
  const CheckReport named = run(ref::Format::bf16, ref::Format::bf16, "flash-mla");
  EXPECT_TRUE(named.pass) << to_text(named);
  const CheckReport strict = run(ref::Format::bf16, ref::Format::bf16, "strict");
  EXPECT_FALSE(strict.pass);
  EXPECT_EQ(best(strict), "flash-mla") << to_text(strict);
  // P̃ in e4m3 (an fp8 attention kernel) while declaring flash-mla: caught and named.
  const CheckReport fp8 = run(ref::Format::bf16, ref::Format::e4m3, "flash-mla");
  EXPECT_FALSE(fp8.pass);
  EXPECT_EQ(best(fp8), "flash-mla,probs=e4m3") << to_text(fp8);
}

// --- MLP: separate PyTorch kernels in bf16 -----------------------------------------------

CheckReport check_mlp(const std::string& op, const std::string& act, float (*f)(float),
                      const testing::MlpKnobs& kn, const std::string& recipe) {
  const int64_t t = 8, d = 128, ff = 256;
  const Case c = make_case({{"id", "mlp"},
                            {"op", op},
                            {"seed", 21},
                            {"formats", {"bf16"}},
                            {"params",
                             {{"tokens", t}, {"d", d}, {"d_ff", ff}, {"activation", act}}}});
  const InputSet in = reference_inputs(c, ref::Format::bf16);
  const bool gated = op == "glu_ffn";
  const std::vector<float> v = gated ? floats(in.at("v")) : std::vector<float>{};
  const std::vector<float> y =
      testing::torch_mlp(floats(in.at("x")), floats(in.at(gated ? "w" : "w1")),
                         gated ? &v : nullptr, floats(in.at("w2")), t, d, ff, f, kn);
  return check(c, "y", float_tensor(ref::Format::bf16, {t, d}, y), recipe);
}

TEST(RecipeMlp, TorchMlpPassesUnderItsRecipeAndIsNamed) {
  // LlamaMLP (SwiGLU) and a GELU MLP as PyTorch runs them in bf16: every intermediate tensor
  // stored in bf16, tiled f32 accumulation inside each GEMM.
  const testing::MlpKnobs torch{ref::Format::bf16, ref::Format::bf16, ref::Format::bf16,
                                ref::Format::bf16};
  struct Row {
    const char *op, *act;
    float (*f)(float);
  };
  for (const auto& [op, act, f] : {Row{"glu_ffn", "silu", testing::torch_silu},
                                   Row{"ffn", "gelu", testing::torch_gelu}}) {
    const CheckReport named = check_mlp(op, act, f, torch, "torch-mlp");
    EXPECT_TRUE(named.pass) << op << "\n" << to_text(named);
    const CheckReport strict = check_mlp(op, act, f, torch, "strict");
    EXPECT_FALSE(strict.pass) << op;
    EXPECT_EQ(best(strict), "torch-mlp") << to_text(strict);
  }
  // A kernel that declares torch-mlp but feeds down_proj an unscaled e4m3 gate product (an fp8
  // GEMM without its scales) fails, and the diagnosis names the point it changed.
  const testing::MlpKnobs fp8{ref::Format::bf16, ref::Format::bf16, ref::Format::e4m3,
                              ref::Format::bf16};
  const CheckReport mutant = check_mlp("glu_ffn", "silu", testing::torch_silu, fp8, "torch-mlp");
  EXPECT_FALSE(mutant.pass);
  EXPECT_EQ(best(mutant), "torch-mlp,gated=e4m3") << to_text(mutant);
}

// --- Inputs and outputs in different formats -------------------------------------------

// A case with input_format f32 and outputs in bf16 (a kernel reading f32 activations and
// writing bf16): the golden file holds f32 inputs, and its bf16 outputs are the reference of
// those f32 values. A kernel that rounds its inputs to bf16 first is a different kernel: its
// outputs differ by about an ulp and fail.
TEST(RecipeMixedFormats, F32InputsBf16OutputsAreJudgedOnTheF32Values) {
  const Case c = make_case({{"id", "mixed"},
                            {"op", "rmsnorm"},
                            {"seed", 12},
                            {"formats", {"bf16"}},
                            {"input_format", "f32"},
                            {"params", {{"rows", 8}, {"d", 512}, {"eps", 1e-6}}}});
  const InputSet in = reference_inputs(c, ref::Format::bf16);
  EXPECT_EQ(in.at("x").dtype(), ref::DType::f32);
  const SafetensorsContent g = golden_content(c);
  EXPECT_EQ(g.tensors.at("in.x"), in.at("x"));
  const auto y_of = [&](bool round_inputs) {
    std::vector<float> x = floats(in.at("x")), w = floats(in.at("gamma"));
    if (round_inputs) {
      for (float& v : x) v = testing::round_to(ref::Format::bf16, v);
    }
    std::vector<float> y(x.size());
    for (int64_t r = 0; r < 8; ++r) {
      double ss = 0;
      for (int64_t j = 0; j < 512; ++j) ss += double(x[size_t(r * 512 + j)]) * x[size_t(r * 512 + j)];
      const double inv = 1 / std::sqrt(ss / 512 + 1e-6);
      for (int64_t j = 0; j < 512; ++j) {
        y[size_t(r * 512 + j)] = static_cast<float>(x[size_t(r * 512 + j)] * inv * w[size_t(j)]);
      }
    }
    return float_tensor(ref::Format::bf16, {8, 512}, y);
  };
  EXPECT_TRUE(check(c, "y", y_of(false), "strict").pass);
  EXPECT_FALSE(check(c, "y", y_of(true), "strict").pass);
}

}  // namespace
}  // namespace lmo::oracle
