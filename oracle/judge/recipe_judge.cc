#include "oracle/judge/recipe_judge.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace lmo::oracle {

RecipeJudging judging_under(const Policy& strict_policy, const OutputDecl& d,
                            const BoundRecipe& r) {
  RecipeJudging j{strict_policy, d.group, strict_policy.kind == PolicyKind::kNaiveRelative};
  // The attention ops under a recipe that rounds P̃: besides twice the recipe run's largest
  // error, the a priori bound of that rounding, u_p·Σ_j p_j|v_j| per output, which the op's
  // simulated run supplies as its error scale (oracle/ops/attention.h, probs_error_scale). A
  // tiled kernel rounds P̃ relative to its running maximum, so its rounding errors are other
  // draws than the recipe run's; on a small output the run's largest error can fall short of
  // the kernel's, the a priori bound never does.
  if (j.uses_naive && r.has_point("probs") && r.format("probs")) j.policy.error_scale = 1;
  // A top-k selection from scores held in format f (moe_router's `scores` point): each score
  // is off by at most u_f = 2^−p of itself (normal values), so two experts within 2·u_f of the
  // row's largest |score| can swap places; the strict margin already allows bf16's 2^−7.
  if (d.topk && r.has_point("scores")) {
    if (const std::optional<ref::Format> f = r.format("scores")) {
      const double two_u = std::ldexp(2.0, -ref::spec(*f).precision());
      j.policy.tie_margin = std::max(j.policy.tie_margin, two_u);
    }
  }
  if (d.topk || r.points_strict() || strict_policy.kind != PolicyKind::kUlp) return j;
  // An elementwise op in another form than its stable one: rule (2) on R's run, per element,
  // with the error scale R's form supplies (recipe_judge.h). The FlashAttention constants: twice
  // R's error, half an ulp of the output, two ulps of f32.
  j.policy = naive_policy(2, 0.5, 2, 1);
  j.group = 1;
  j.uses_naive = true;
  return j;
}

namespace {

JudgeOptions options_with(const RecipeJudging& how, std::span<const double> condition,
                          std::span<const double> error_scale, const OutputValues<double>* naive,
                          ref::Format compute, const BoundRecipe& r) {
  JudgeOptions jo;
  jo.group = how.group;
  jo.condition = condition;
  jo.error_scale = error_scale;
  jo.ftz = r.ftz();
  jo.trunc = r.trunc();
  if (how.uses_naive && naive) {
    jo.naive = naive->values;
    jo.compute = compute;
    if (jo.error_scale.empty()) jo.error_scale = naive->error_scale;
  }
  return jo;
}

}  // namespace

JudgeOptions judge_options(const RecipeJudging& how, const OutputValues<ref::mp>& exact,
                           const OutputValues<double>* naive, ref::Format compute,
                           const BoundRecipe& r) {
  return options_with(how, exact.condition, exact.error_scale, naive, compute, r);
}

JudgeOptions judge_options(const RecipeJudging& how, const OutputValues<ref::Ball>& exact,
                           const OutputValues<double>* naive, ref::Format compute,
                           const BoundRecipe& r) {
  return options_with(how, exact.condition, exact.error_scale, naive, compute, r);
}

namespace {

struct Candidate {
  std::string text;
  BoundRecipe bound;
};

std::vector<std::string> variant_values(const RoundingPoint& p) {
  if (!p.choices.empty()) return p.choices;
  return {"f32", "bf16", "f16", "e4m3", "e5m2"};
}

// Pearson correlation; 0 when either side has no spread.
double correlation(const std::vector<double>& a, const std::vector<double>& b) {
  const size_t n = a.size();
  if (n < 2) return 0;
  double ma = 0, mb = 0;
  for (size_t i = 0; i < n; ++i) {
    ma += a[i];
    mb += b[i];
  }
  ma /= static_cast<double>(n);
  mb /= static_cast<double>(n);
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < n; ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  if (saa == 0 || sbb == 0) return 0;
  return sab / std::sqrt(saa * sbb);
}

// s stored by a truncating kernel: round-to-nearest's bits, one step toward zero where those
// lie farther from zero than s (sign-magnitude: one less in the magnitude bits).
uint64_t encode_toward_zero(ref::Format f, double s) {
  const uint64_t r = ref::encode(f, s);
  if (!std::isfinite(s) || ref::bits_is_nan(f, r)) return r;
  const double v = ref::decode<double>(f, r);
  return std::fabs(v) > std::fabs(s) ? r - 1 : r;
}

}  // namespace

std::vector<RecipeMatch> diagnose(const Op& op, const std::string& op_name, const InputSet& in,
                                  const Outputs<ref::mp>& exact,
                                  const std::vector<const ref::Tensor*>& got,
                                  const Recipe& declared, ref::Format storage, bool variants) {
  const std::vector<RoundingPoint> points = op.rounding_points();
  std::vector<Candidate> cands;
  std::set<std::string> seen;
  std::vector<std::pair<std::string, std::string>> named_keys;  // key → name
  auto add = [&](const Recipe& r, const std::string& text) {
    try {
      BoundRecipe b(r, op_name, points, storage);
      if (!seen.insert(b.key()).second) return;
      std::string shown = text;
      for (const auto& [key, name] : named_keys) {
        if (key == b.key()) shown = name;
      }
      cands.push_back({shown, std::move(b)});
    } catch (const RecipeError&) {
      // A variant that does not apply to this op: not a candidate.
    }
  };
  // The named recipes first: each is bound once, and later candidates with the same points
  // take its name.
  for (const NamedRecipe& n : named_recipes()) {
    Recipe r;
    r.name = n.name;
    try {
      BoundRecipe b(r, op_name, points, storage);
      named_keys.emplace_back(b.key(), n.name);
      if (seen.insert(b.key()).second) cands.push_back({n.name, std::move(b)});
    } catch (const RecipeError&) {
      // A named recipe of another op.
    }
  }
  add(declared, declared.text());
  for (const RoundingPoint& p : variants ? points : std::vector<RoundingPoint>{}) {
    for (const std::string& v : variant_values(p)) {
      Recipe r = declared;
      r.points[p.name] = v;
      add(r, r.text());
    }
  }
  if (variants) {
    Recipe toggled = declared;
    toggled.ftz = !toggled.ftz;
    add(toggled, toggled.text());
    toggled = declared;
    toggled.fma = !toggled.fma;
    add(toggled, toggled.text());
    toggled = declared;
    toggled.trunc = !toggled.trunc;
    add(toggled, toggled.text());
  }

  std::vector<RecipeMatch> out;
  for (const Candidate& c : cands) {
    const Outputs<double> sim = op.simulated(ref::Format::f32, in, c.bound);
    int64_t equal = 0, total = 0;
    std::vector<double> ek, ec;
    for (size_t k = 0; k < got.size() && k < sim.size(); ++k) {
      if (!got[k]) continue;
      const ref::Tensor& t = *got[k];
      const ref::Format f = ref::dtype_format(t.dtype());
      for (int64_t i = 0; i < t.numel(); ++i) {
        const double s = sim[k].values[static_cast<size_t>(i)];
        const uint64_t r = c.bound.trunc() ? encode_toward_zero(f, s) : ref::encode(f, s);
        const uint64_t y = t.bits(i);
        ++total;
        if (r == y || (ref::bits_is_nan(f, r) && ref::bits_is_nan(f, y))) ++equal;
        const double x = static_cast<double>(exact[k].values[static_cast<size_t>(i)]);
        const double vy = ref::decode<double>(f, y), vr = ref::decode<double>(f, r);
        if (std::isfinite(x) && std::isfinite(vy) && std::isfinite(vr)) {
          ek.push_back(vy - x);
          ec.push_back(vr - x);
        }
      }
    }
    out.push_back({c.text, total ? static_cast<double>(equal) / static_cast<double>(total) : 0,
                   correlation(ek, ec)});
  }
  std::stable_sort(out.begin(), out.end(), [](const RecipeMatch& a, const RecipeMatch& b) {
    if (a.equal != b.equal) return a.equal > b.equal;
    return a.correlation > b.correlation;
  });
  return out;
}

std::string to_text(const RecipeMatch& m) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.1f%% of elements equal, error correlation %.3f", 100 * m.equal,
                m.correlation);
  return m.recipe + ": " + buf;
}

}  // namespace lmo::oracle
