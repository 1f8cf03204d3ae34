#include "oracle/judge/recipe_judge.h"
#include "oracle/ops/policy_table.h"
#include "oracle/ops/registry.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
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

// RecipeMatch::correlation: |Pearson| per row, weighted by the row's finite pairs. Two equal
// error vectors correlate fully, even where neither has spread (a row of exact outputs).
struct RowCorrelation {
  double sum = 0;
  size_t n = 0;
  void add(const std::vector<double>& ek, const std::vector<double>& ec) {
    sum += static_cast<double>(ek.size()) * (ek == ec ? 1 : std::fabs(correlation(ek, ec)));
    n += ek.size();
  }
  double mean() const { return n ? sum / static_cast<double>(n) : 0; }
};

// The elements per row of an output of numel elements: the op's independent rows, unless they
// hold too few elements to correlate (then the whole output).
int64_t row_length(const Op& op, int64_t numel) {
  const int64_t rows = op.independent_rows();
  if (rows <= 0 || numel % rows != 0 || numel / rows < 16) return std::max<int64_t>(numel, 1);
  return numel / rows;
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

namespace {

// The candidates: the op's named recipes, the declared one (as judged: with its implied points)
// and, with variants, its neighbours. A candidate with the points of a named recipe takes its
// name; one that does not apply to the op is none.
std::vector<Candidate> candidates(const Op& op, const std::string& op_name,
                                  const Recipe& declared_text, ref::Format storage,
                                  bool variants) {
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
    if (!describes(n, op_name)) continue;  // a named recipe of other ops
    Recipe r;
    r.name = n.name;
    try {
      BoundRecipe b(r, op_name, points, storage);
      named_keys.emplace_back(b.key(), n.name);
      if (seen.insert(b.key()).second) cands.push_back({n.name, std::move(b)});
    } catch (const RecipeError&) {
      // A named recipe whose points this op lacks.
    }
  }
  // The declared recipe as check judges it (bind_recipe): a literal activation's case implies
  // form=literal, and its neighbours keep that form unless they vary it.
  Recipe declared = declared_text;
  try {
    declared = with_implied_points(declared_text, op_name, op);
  } catch (const RecipeError&) {
    // A recipe the case contradicts, refused before judging: the text as given.
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
  return cands;
}

// The fraction of the outputs' elements within c's bound: each output judged under c as the
// judging service judges a declared recipe (judging.cc), c's run in `compute` as its naive run.
double explained_by(const Candidate& c, const std::string& op_name,
                    const std::vector<OutputDecl>& decls, const Outputs<ref::mp>& exact,
                    const std::vector<const ref::Tensor*>& got, const Outputs<double>& run,
                    ref::Format compute) {
  int64_t within = 0, elements = 0;
  for (size_t k = 0; k < got.size() && k < decls.size(); ++k) {
    if (!got[k] || decls[k].topk) continue;
    const RecipeJudging how = judging_under(policy_for(op_name, decls[k].name), decls[k], c.bound);
    const JudgeOptions jo =
        judge_options(how, exact[k], how.uses_naive ? &run[k] : nullptr, compute, c.bound);
    const Verdict v = judge(how.policy, exact[k].values, *got[k], jo);
    within += v.elements - v.failed;
    elements += v.elements;
  }
  return elements ? static_cast<double>(within) / static_cast<double>(elements) : 0;
}

}  // namespace

std::vector<RecipeMatch> diagnose(const Op& op, const std::string& op_name, const InputSet& in,
                                  const Outputs<ref::mp>& exact,
                                  const std::vector<const ref::Tensor*>& got,
                                  const Recipe& declared, ref::Format storage, bool variants,
                                  ref::Format compute) {
  const std::vector<OutputDecl> decls = op.outputs();
  std::vector<RecipeMatch> out;
  for (const Candidate& c : candidates(op, op_name, declared, storage, variants)) {
    // Bit equality and the error correlation on the f32 run (the rounded store of a kernel
    // computing in f32); the bound on the run in the kernel's own compute format.
    const Outputs<double> sim = op.simulated(ref::Format::f32, in, c.bound);
    const std::optional<Outputs<double>> own =
        compute == ref::Format::f32 ? std::nullopt
                                    : std::optional(op.simulated(compute, in, c.bound));
    RecipeMatch m;
    m.recipe = c.text;
    m.explained = explained_by(c, op_name, decls, exact, got, own ? *own : sim, compute);
    int64_t equal = 0, total = 0;
    RowCorrelation row_correlation;
    std::vector<double> ek, ec;  // the errors of one row, where all three values are finite
    for (size_t k = 0; k < got.size() && k < sim.size(); ++k) {
      if (!got[k]) continue;
      const ref::Tensor& t = *got[k];
      const ref::Format f = ref::dtype_format(t.dtype());
      const int64_t row = row_length(op, t.numel());
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
        if ((i + 1) % row == 0) {
          row_correlation.add(ek, ec);
          ek.clear();
          ec.clear();
        }
      }
    }
    m.equal = total ? static_cast<double>(equal) / static_cast<double>(total) : 0;
    m.correlation = row_correlation.mean();
    out.push_back(std::move(m));
  }
  // In f32 a kernel rarely equals any simulated run bit for bit, and a kernel with a chain of
  // roundings equals a wrong one on some elements: what a recipe explains comes first.
  std::stable_sort(out.begin(), out.end(), [](const RecipeMatch& a, const RecipeMatch& b) {
    if (a.explained != b.explained) return a.explained > b.explained;
    if (a.correlation != b.correlation) return a.correlation > b.correlation;
    return a.equal > b.equal;
  });
  return out;
}

bool explains(const RecipeMatch& m) { return m.explained == 1; }

std::string to_text(const RecipeMatch& m) {
  char buf[200];
  // Rounded down, so that 100.0% says every element.
  std::snprintf(buf, sizeof buf,
                "%.1f%% of elements within its bound, error correlation %.3f, %.1f%% equal",
                std::floor(1000 * m.explained) / 10, m.correlation, 100 * m.equal);
  return m.recipe + ": " + buf;
}

}  // namespace lmo::oracle
