// No false alarms under a recipe: for each named recipe, 1000 random small cases (shapes, seeds,
// storage formats drawn from a fixed hash), each judged on a kernel that follows the recipe in
// another order than the recipe's simulated run (support/recipe_kernels.h: FlashAttention's key
// tiles and online rescaling, a blocked sum of squares, the C library's powf, cosf, erff, tanhf
// and expf instead of correctly rounded functions). Every one must pass.
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
#include "tests/support/recipe_kernels.h"
#include "tests/support/splitmix.h"

namespace lmo::oracle {
namespace {

using testing::float_tensor;
using testing::floats;

constexpr int kCases = 1000;

// SplitMix64: a fixed sequence of draws (no <random>: the cases are the same everywhere).
struct Draws {
  testing::SplitMix64 gen;
  uint64_t next() { return gen.next(); }
  int64_t in(int64_t lo, int64_t hi) {  // [lo, hi]
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  template <class T>
  T pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(next() % v.size())];
  }
};

// Judges y (in f, shape of output `name`) under recipe; a failure prints the case.
void expect_passes(const Case& c, const std::string& name, ref::Format f,
                   const std::vector<int64_t>& shape, const std::vector<float>& y,
                   const std::string& recipe) {
  std::map<std::string, ref::Tensor> outs;
  outs.emplace(name, float_tensor(f, shape, y));
  CheckOptions o;
  o.recipe = parse_recipe(recipe);
  const CheckReport r = check_outputs(c, outs, o);
  EXPECT_TRUE(r.pass) << c.source.dump() << " in " << ref::format_name(f) << "\n" << to_text(r);
}

Case make_case(const nlohmann::json& j) { return parse_case(j, "recipe_sweep_test", "case"); }

TEST(RecipeSweep, FlashAttention) {
  Draws d{1};
  for (int n = 0; n < kCases; ++n) {
    const int64_t g = d.pick<int64_t>({1, 2}), h = g * d.pick<int64_t>({1, 2});
    const int64_t dim = d.in(1, 12), tokens = d.in(1, 24);
    const ref::Format f = d.pick<ref::Format>({ref::Format::bf16, ref::Format::f16,
                                               ref::Format::f32});
    const bool causal = d.next() % 2 == 0;
    const Case c = make_case({{"id", "fa"},
                              {"op", "attention"},
                              {"seed", d.next() % 100000},
                              {"formats", {std::string(ref::format_name(f))}},
                              {"params",
                               {{"h", h}, {"g", g}, {"d", dim}, {"tokens", tokens},
                                {"mask", causal ? "causal" : "none"}}}});
    const InputSet in = reference_inputs(c, f);
    testing::FlashKnobs kn;
    kn.tile = d.in(1, 8);
    kn.probs = f == ref::Format::f32 ? std::nullopt : std::optional(f);
    kn.blocked_dot = d.next() % 2 == 0;
    const std::vector<float> o = testing::flash_attention(
        floats(in.at("q")), floats(in.at("k")), floats(in.at("v")), tokens, tokens, h, g, dim,
        causal, static_cast<float>(1 / std::sqrt(static_cast<double>(dim))), kn);
    expect_passes(c, "o", f, {tokens, h * dim}, o, "flash-attention");
    if (HasFailure()) return;
  }
}

TEST(RecipeSweep, HfLlamaRmsnorm) {
  Draws d{2};
  for (int n = 0; n < kCases; ++n) {
    const int64_t rows = d.in(1, 4), dim = d.in(1, 96);
    const ref::Format f = d.pick<ref::Format>({ref::Format::bf16, ref::Format::f16});
    const double eps = d.pick<double>({1e-6, 1e-5});
    const Case c = make_case({{"id", "rms"},
                              {"op", "rmsnorm"},
                              {"seed", d.next() % 100000},
                              {"formats", {std::string(ref::format_name(f))}},
                              {"params", {{"rows", rows}, {"d", dim}, {"eps", eps}}}});
    const InputSet in = reference_inputs(c, f);
    const std::vector<float> y = testing::hf_rmsnorm(floats(in.at("x")), floats(in.at("gamma")),
                                                     rows, dim, static_cast<float>(eps), f,
                                                     d.in(1, 16));
    expect_passes(c, "y", f, {rows, dim}, y, "hf-llama-rmsnorm");
    if (HasFailure()) return;
  }
}

TEST(RecipeSweep, HfRope) {
  Draws d{3};
  for (int n = 0; n < kCases; ++n) {
    const int64_t tokens = d.in(1, 8), heads = d.in(1, 2), dim = 2 * d.in(1, 16);
    const ref::Format f = d.pick<ref::Format>({ref::Format::bf16, ref::Format::f16});
    const int64_t max_position = d.pick<int64_t>({64, 4096, int64_t{1} << 17});
    const Case c = make_case({{"id", "rope"},
                              {"op", "rope"},
                              {"seed", d.next() % 100000},
                              {"formats", {std::string(ref::format_name(f))}},
                              {"params",
                               {{"tokens", tokens}, {"heads", heads}, {"head_dim", dim},
                                {"layout", "half_split"}, {"max_position", max_position}}}});
    const InputSet in = reference_inputs(c, f);
    testing::RopeKnobs kn;
    kn.table = f;
    kn.products = f;
    const std::vector<float> y = testing::hf_rope(floats(in.at("x")), in.ints("positions"),
                                                  tokens, heads, dim, 10000.0f, kn);
    expect_passes(c, "y", f, {tokens, heads * dim}, y, "hf-rope");
    if (HasFailure()) return;
  }
}

void sweep_activation(const std::string& op, float (*kernel)(float), const std::string& recipe,
                      uint64_t seed, double lo, double hi) {
  Draws d{seed};
  for (int n = 0; n < kCases; ++n) {
    const int64_t count = d.in(1, 64);
    const double a = lo + (hi - lo) * static_cast<double>(d.next() % 1000) / 1000;
    const double b = a + (hi - a) * static_cast<double>(1 + d.next() % 1000) / 1000;
    const Case c = make_case({{"id", op},
                              {"op", op},
                              {"seed", d.next() % 100000},
                              {"formats", {"f32"}},
                              {"params", {{"n", count}}},
                              {"inputs", {{"x", {{"dist", "uniform"}, {"lo", a}, {"hi", b}}}}}});
    const InputSet in = reference_inputs(c, ref::Format::f32);
    std::vector<float> y = floats(in.at("x"));
    for (float& v : y) v = kernel(v);
    expect_passes(c, "y", ref::Format::f32, {count}, y, recipe);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(RecipeSweep, TorchGelu) { sweep_activation("gelu", testing::torch_gelu, "torch-gelu", 4, -14, 8); }
TEST(RecipeSweep, TorchGeluTanh) {
  sweep_activation("gelu_tanh", testing::torch_gelu_tanh, "torch-gelu-tanh", 5, -14, 8);
}
TEST(RecipeSweep, TorchSilu) { sweep_activation("silu", testing::torch_silu, "torch-silu", 6, -110, 30); }

// FlashMLA: the query stored in the storage format, key tiles of a drawn size, P̃ in the
// storage format.
TEST(RecipeSweep, FlashMla) {
  Draws d{8};
  for (int n = 0; n < kCases; ++n) {
    const int64_t h = d.in(1, 4), dh = d.in(1, 16), dr = 2 * d.in(1, 4), dc = d.in(1, 32);
    const int64_t t = d.in(1, 40);
    const ref::Format f = d.pick<ref::Format>({ref::Format::bf16, ref::Format::f16});
    const Case c = make_case(
        {{"id", "mla"},
         {"op", "mla_decode"},
         {"seed", d.next() % 100000},
         {"formats", {std::string(ref::format_name(f))}},
         {"params", {{"h", h}, {"d_h", dh}, {"d_rope", dr}, {"d_c", dc}, {"cache_len", t}}}});
    const InputSet in = reference_inputs(c, f);
    testing::FlashKnobs kn;
    kn.tile = d.in(1, 16);
    kn.probs = f;
    const std::vector<float> o = testing::flash_mla(
        floats(in.at("q_c")), floats(in.at("q_r")), floats(in.at("c_kv")), floats(in.at("k_r")),
        floats(in.at("w_uk")), h, dh, dr, dc, t, f, kn);
    expect_passes(c, "o", f, {1, h * dc}, o, "flash-mla");
    if (HasFailure()) return;
  }
}

// LlamaMLP and GELU/ReLU MLPs as separate PyTorch kernels: every intermediate stored in the
// storage format, GEMMs in f32 over k-blocks of a drawn size.
TEST(RecipeSweep, TorchMlp) {
  Draws d{7};
  struct Act {
    const char* name;
    float (*f)(float);
  };
  const std::vector<Act> acts = {{"relu", [](float x) { return x > 0 ? x : 0.0f; }},
                                 {"gelu", testing::torch_gelu},
                                 {"gelu_tanh", testing::torch_gelu_tanh},
                                 {"silu", testing::torch_silu}};
  for (int n = 0; n < kCases; ++n) {
    const bool gated = d.in(0, 1) == 1;
    const int64_t t = d.in(1, 3), dim = d.in(1, 48), ff = d.in(1, 64);
    const ref::Format f = d.pick<ref::Format>({ref::Format::bf16, ref::Format::f16});
    const Act a = acts[static_cast<size_t>(d.in(0, 3))];
    const Case c = make_case(
        {{"id", "mlp"},
         {"op", gated ? "glu_ffn" : "ffn"},
         {"seed", d.next() % 100000},
         {"formats", {std::string(ref::format_name(f))}},
         {"params", {{"tokens", t}, {"d", dim}, {"d_ff", ff}, {"activation", a.name}}}});
    const InputSet in = reference_inputs(c, f);
    const std::vector<float> v = gated ? floats(in.at("v")) : std::vector<float>{};
    const testing::MlpKnobs kn{f, f, f, f, d.in(1, 16)};
    const std::vector<float> y =
        testing::torch_mlp(floats(in.at("x")), floats(in.at(gated ? "w" : "w1")),
                           gated ? &v : nullptr, floats(in.at("w2")), t, dim, ff, a.f, kn);
    expect_passes(c, "y", f, {t, dim}, y, "torch-mlp");
    if (HasFailure()) return;
  }
}

// DeepSeek-V3's Gate in the storage format: random experts, groups, kept groups, top-k, bias
// and logit scales; the kernel sums its weights in score order and ranks with a stable sort, and
// its selection is judged with the group limit (a nearly tied group may be kept instead).
TEST(RecipeSweep, DeepseekV3Gate) {
  Draws d{8};
  for (int n = 0; n < kCases; ++n) {
    const int64_t experts = d.pick<int64_t>({4, 8, 16, 32, 64, 256}), tokens = d.in(1, 6);
    std::vector<int64_t> divisors;
    for (int64_t g = 1; g <= 8; ++g) {
      if (experts % g == 0 && experts / g >= 2) divisors.push_back(g);
    }
    const int64_t groups = d.next() % 2 == 0 ? 1 : d.pick(divisors);
    const int64_t kept = groups == 1 ? 1 : d.in(1, groups);
    const int64_t eligible = groups == 1 ? experts : kept * (experts / groups);
    const int64_t top_k = d.in(1, std::min<int64_t>(eligible, 8));
    const bool bias = d.next() % 2 == 0;
    const double scale = d.pick<double>({1.0, 2.5});
    const ref::Format f = d.pick<ref::Format>({ref::Format::bf16, ref::Format::f16});
    nlohmann::json p = {{"tokens", tokens}, {"experts", experts},     {"top_k", top_k},
                        {"score", "sigmoid"}, {"routed_scale", scale}, {"bias", bias},
                        {"logit_std", d.pick<double>({0.5, 1.0, 2.0, 4.0})}};
    if (groups > 1) {
      p["groups"] = groups;
      p["topk_groups"] = kept;
    }
    const Case c = make_case({{"id", "gate"},
                              {"op", "moe_router"},
                              {"seed", d.next() % 100000},
                              {"formats", {std::string(ref::format_name(f))}},
                              {"params", p}});
    const InputSet in = reference_inputs(c, f);
    std::vector<float> w;
    std::vector<int64_t> idx;
    testing::deepseek_gate(floats(in.at("logits")),
                           bias ? floats(in.at("bias")) : std::vector<float>{}, tokens, experts,
                           top_k, groups, kept, static_cast<float>(scale), {f, f, f}, w, idx);
    ref::Tensor chosen(ref::DType::i64, {tokens, top_k});
    for (size_t i = 0; i < idx.size(); ++i) {
      chosen.set(static_cast<int64_t>(i), static_cast<double>(idx[i]));
    }
    std::map<std::string, ref::Tensor> outs;
    outs.emplace("gates", float_tensor(f, {tokens, top_k}, w));
    outs.emplace("experts", chosen);
    CheckOptions o;
    o.recipe = parse_recipe("deepseek-v3-gate");
    const CheckReport r = check_outputs(c, outs, o);
    EXPECT_TRUE(r.pass) << c.source.dump() << " in " << ref::format_name(f) << "\n" << to_text(r);
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace lmo::oracle
