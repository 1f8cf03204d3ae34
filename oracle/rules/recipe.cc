#include "oracle/rules/recipe.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>


namespace lmo::oracle {
namespace {

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      parts.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  return parts;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string format_values() {
  std::string s = "storage";
  for (ref::Format f : ref::kAllFormats) s += ", " + std::string(ref::format_name(f));
  return s;
}

}  // namespace

const std::vector<NamedRecipe>& recipe_table() {
  // Each recipe names the implementation it describes; docs/recipes.md gives the lines of code
  // each point comes from. Which ops each describes is said by the ops' records
  // (OpInfo::recipes): ops/registry.h's named_recipes() fills it in.
  static const std::vector<NamedRecipe> kRecipes = {
      {"strict",
       {},
       {},
       "the oracle's naive kernel: every operation in f32, one rounding at the store",
       /*every_op=*/true},
      {"flash-attention",
       {},
       {{"scores", "f32"},
        {"probs", "storage"},
        {"acc", "f32"},
        {"sum", "f32"},
        {"normalize", "late"}},
       "FlashAttention 2/3 and PyTorch SDPA (CPU flash kernel): P̃ = e^(s−m) cast to the storage "
       "format for the P̃V matrix product with f32 accumulation, divided by the f32 row sum "
       "at the end"},
      {"flash-mla",
       {},
       {{"query", "storage"},
        {"scores", "f32"},
        {"probs", "storage"},
        {"acc", "f32"},
        {"sum", "f32"},
        {"normalize", "late"}},
       "DeepSeek's FlashMLA decode kernel as vLLM's MLA backend feeds it: the absorbed query "
       "q_nope·W_UK (torch.bmm) and the rotated q_pe stored in the input dtype, then "
       "FlashAttention's P̃ in that dtype with f32 accumulation, divided at the end"},
      {"hf-llama-rmsnorm",
       {},
       {{"form", "rsqrt"}, {"inv_rms", "f32"}, {"normed", "storage"}},
       "transformers' LlamaRMSNorm: x·rsqrt(mean(x²)+ε) in f32, cast to the input dtype, then "
       "times the weight in that dtype"},
      {"vllm-fused-add-rmsnorm",
       {},
       {{"sum", "storage"}, {"form", "rsqrt"}, {"inv_rms", "f32"}, {"normed", "storage"}},
       "vLLM's fused_add_rms_norm kernel: z = input + residual in the input dtype (stored as the "
       "residual and normalized as stored), rsqrtf of the f32 mean square, (x·rms) cast to the "
       "dtype, times the weight"},
      {"hf-rope",
       {},
       {{"angle", "f32"}, {"table", "storage"}, {"products", "storage"}},
       "transformers' Llama rotary embedding: f32 inv_freq and angles, cos/sin cast to the "
       "input dtype, q·cos + rotate_half(q)·sin in that dtype"},
      {"torch-gelu",
       {},
       {{"form", "literal"}},
       "torch.nn.functional.gelu: x/2·(1 + erf(x/√2)) in f32, erf within A&S 7.1.26's 1.5e-7 "
       "(ATen's CPU kernel)"},
      {"torch-gelu-tanh",
       {},
       {{"form", "literal"}},
       "torch.nn.functional.gelu(approximate=\"tanh\"): x/2·(1 + tanh(√(2/π)(x + 0.044715x³)))"},
      {"torch-silu",
       {},
       {{"form", "literal"}},
       "torch.nn.functional.silu: x/(1 + e^−x), −0 where e^−x overflows (x < −88.7 in f32)"},
      {"deepseek-v3-gate",
       {},
       {{"scores", "storage"}, {"sum", "storage"}, {"normalized", "storage"}},
       "DeepSeek-V3's reference Gate (inference/model.py) in bf16: sigmoid of the bf16 logits "
       "in bf16, the top-k weights gathered from those scores, divided by their bf16 sum, times "
       "route_scale, each step stored in bf16"},
      {"torch-mlp",
       {},
       {{"hidden", "storage"}, {"act", "storage"}, {"gated", "storage"}},
       "an MLP of separate PyTorch kernels in the input dtype (transformers' LlamaMLP "
       "down_proj(act_fn(gate_proj(x)) * up_proj(x)), GPT-2's MLP): each nn.Linear output, the "
       "activation and the gate product stored in that dtype, f32 accumulation inside each GEMM"},
  };
  return kRecipes;
}

const NamedRecipe* find_named_recipe(std::string_view name) {
  for (const NamedRecipe& r : recipe_table()) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

std::string named_recipe_names() {
  std::vector<std::string> names;
  for (const NamedRecipe& r : recipe_table()) names.push_back(r.name);
  return join(names) + " (modifiers: +ftz, +fma, +trunc)";
}

std::string Recipe::text() const {
  std::string s = name;
  for (const auto& [p, v] : points) s += "," + p + "=" + v;
  if (ftz) s += "+ftz";
  if (fma) s += "+fma";
  if (trunc) s += "+trunc";
  return s;
}

Recipe parse_recipe(std::string_view text) {
  Recipe r;
  std::string body = trim(text);
  if (body.empty()) throw RecipeError("expected a recipe, got an empty text");
  // Modifiers: "+ftz", "+fma" and "+trunc" suffixes, or bare "ftz", "fma" and "trunc" items.
  auto modifier = [&r](const std::string& m) {
    if (m == "ftz") r.ftz = true;
    if (m == "fma") r.fma = true;
    if (m == "trunc") r.trunc = true;
    return m == "ftz" || m == "fma" || m == "trunc";
  };
  std::vector<std::string> plus = split(body, '+');
  body = plus[0];
  for (size_t i = 1; i < plus.size(); ++i) {
    if (!modifier(plus[i])) {
      throw RecipeError("unknown recipe modifier '+" + plus[i] + "': expected +ftz, +fma or +trunc");
    }
  }
  bool first = true;
  for (const std::string& item : split(body, ',')) {
    if (item.empty()) throw RecipeError("empty item in recipe '" + std::string(text) + "'");
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      if (modifier(item)) {
        // a bare modifier
      } else if (first && find_named_recipe(item)) {
        r.name = item;
      } else {
        throw RecipeError("unknown recipe '" + item + "': expected one of " +
                          named_recipe_names() + ", or point=value items");
      }
    } else {
      const std::string point = trim(item.substr(0, eq)), value = trim(item.substr(eq + 1));
      if (point.empty() || value.empty()) {
        throw RecipeError("expected point=value in recipe '" + std::string(text) + "', got '" +
                          item + "'");
      }
      // A point given twice must say the same thing: the second value silently winning would
      // judge the kernel under a recipe its author did not write.
      const auto [it, fresh] = r.points.emplace(point, value);
      if (!fresh && it->second != value) {
        throw RecipeError("point '" + point + "' given twice with different values (" +
                          it->second + ", " + value + ") in recipe '" + std::string(text) + "'");
      }
    }
    first = false;
  }
  return r;
}

Recipe judged_recipe(const Recipe& case_recipe, const std::optional<Recipe>& declared) {
  if (!declared) return case_recipe;
  if (case_recipe == Recipe{}) return *declared;
  Recipe r = case_recipe;
  r.ftz = r.ftz || declared->ftz;
  r.fma = r.fma || declared->fma;
  r.trunc = r.trunc || declared->trunc;
  return r;
}

BoundRecipe::BoundRecipe(const Recipe& r, std::string_view op,
                         const std::vector<RoundingPoint>& points, ref::Format storage)
    : storage_(storage), ftz_(r.ftz), fma_(r.fma), trunc_(r.trunc) {
  const NamedRecipe* named = find_named_recipe(r.name);
  if (!named) throw RecipeError("unknown recipe '" + r.name + "': expected " + named_recipe_names());
  std::vector<std::string> names;
  for (const RoundingPoint& p : points) {
    names.push_back(p.name);
    values_[p.name] = p.strict;
  }
  auto set = [&](const std::string& point, const std::string& value) {
    const RoundingPoint* rp = nullptr;
    for (const RoundingPoint& p : points) {
      if (p.name == point) rp = &p;
    }
    if (!rp) {
      throw RecipeError("op " + std::string(op) + " has no rounding point '" + point + "'" +
                        (names.empty() ? ": it has none (only strict, +ftz, +fma and +trunc apply)"
                                       : ": expected one of " + join(names)));
    }
    if (rp->choices.empty()) {
      if (value != "storage" && !ref::parse_format(value)) {
        throw RecipeError("point '" + point + "' of op " + std::string(op) +
                          " takes a format: expected one of " + format_values() + ", got '" +
                          value + "'");
      }
    } else {
      bool ok = false;
      for (const std::string& c : rp->choices) ok = ok || c == value;
      if (!ok) {
        throw RecipeError("point '" + point + "' of op " + std::string(op) + " takes one of " +
                          join(rp->choices) + ", got '" + value + "'");
      }
    }
    values_[point] = value;
  };
  // A named recipe covers a family (torch-mlp: ffn and glu_ffn): it sets the points this op has
  // (recipe_test checks each of its points is some listed op's); a user's points must all exist.
  for (const auto& [p, v] : named->points) {
    if (std::find(names.begin(), names.end(), p) != names.end()) set(p, v);
  }
  for (const auto& [p, v] : r.points) set(p, v);
  for (const RoundingPoint& p : points) {
    if (p.choices.empty()) {
      format_points_.push_back(p.name);
      points_strict_ = points_strict_ && !format(p.name);
    } else {
      points_strict_ = points_strict_ && value(p.name) == p.strict;
    }
  }
  strict_ = points_strict_ && !ftz_ && !fma_ && !trunc_;
}

std::string BoundRecipe::key() const {
  std::string k;
  for (const auto& [p, v] : values_) {
    bool is_format = false;
    for (const std::string& f : format_points_) is_format = is_format || f == p;
    std::string shown = v;
    if (is_format) {
      const std::optional<ref::Format> f = format(p);
      shown = f ? std::string(ref::format_name(*f)) : "f32";
    }
    k += p + "=" + shown + ";";
  }
  return k + (ftz_ ? "ftz;" : "") + (fma_ ? "fma;" : "") + (trunc_ ? "trunc;" : "");
}

const std::string& BoundRecipe::value(std::string_view point) const {
  const auto it = values_.find(point);
  if (it == values_.end()) {
    throw std::logic_error("recipe: the op asked for point '" + std::string(point) +
                           "' it does not declare");
  }
  return it->second;
}

std::optional<ref::Format> BoundRecipe::format(std::string_view point) const {
  const std::string& v = value(point);
  const ref::Format f = v == "storage" ? storage_ : *ref::parse_format(v);
  // The naive run computes in f32; f64 at a point is handled by the op (rope's angle) or
  // means "no rounding" (a wider intermediate changes nothing the simulation can show).
  if (f == ref::Format::f32 || f == ref::Format::f64) return std::nullopt;
  return f;
}

const std::string& BoundRecipe::choice(std::string_view point) const { return value(point); }

double round_point(double x, std::optional<ref::Format> f, bool ftz) {
  double y = f ? ref::decode<double>(*f, ref::encode(*f, x)) : x;
  if (ftz && y != 0 && std::isfinite(y)) {
    const ref::FormatSpec& s = ref::spec(f.value_or(ref::Format::f32));
    if (std::fabs(y) < std::ldexp(1.0, s.emin())) y = std::copysign(0.0, y);
  }
  return y;
}

}  // namespace lmo::oracle
