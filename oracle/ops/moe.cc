#include "oracle/ops/moe.h"

#include <stdexcept>
#include <string>

#include "oracle/ops/families.h"
#include "oracle/ops/limits.h"

namespace lmo::oracle {

std::vector<InputDecl> MoeRouterOp::inputs() const {
  std::vector<InputDecl> v = {{"logits", {p_.tokens, p_.experts}, Dist::kNormal, 0, p_.logit_std}};
  if (p_.bias) v.push_back({"bias", {p_.experts}, Dist::kNormal, 0, p_.bias_std});
  return v;
}

std::vector<OutputDecl> MoeRouterOp::outputs() const {
  if (loss_) return {{"loss", {1}}, {"p", {p_.experts}}};
  OutputDecl experts("experts", {p_.tokens, p_.top_k});
  experts.topk = true;
  experts.topk_experts = p_.experts;
  experts.topk_groups = {p_.n_group, p_.topk_group, p_.group_score == ref::GroupScore::kTopTwoSum};
  return {{"gates", {p_.tokens, p_.top_k}}, experts};
}

template <class T>
Outputs<T> MoeRouterOp::compute(const InputSet& in) const {
  const ref::RouterConfig<T> cfg = p_.config<T>();
  return outputs_of<T>(route_case<T>(p_, in, &cfg), cfg);
}

std::unique_ptr<Op> MoeRouterOp::with_selection(std::vector<int64_t> experts) const {
  if (loss_) return nullptr;
  if (static_cast<int64_t>(experts.size()) != p_.tokens * p_.top_k) {
    throw std::invalid_argument("moe_router: a selection of " + std::to_string(experts.size()) +
                                " experts for " + std::to_string(p_.tokens) + " tokens of top_k " +
                                std::to_string(p_.top_k));
  }
  return std::make_unique<MoeRouterOp>(p_, false, std::move(experts));
}

std::vector<RoundingPoint> MoeRouterOp::rounding_points() const {
  if (loss_) return {};
  return {{"scores", {}, "f32", "each affinity s_i (sigmoid or softmax of the logit) as held"},
          {"sum", {}, "f32", "the gate denominator Σ_selected s_j"},
          {"normalized", {}, "f32", "s_i / Σ before the routed scale"}};
}

template <class T>
Outputs<T> MoeRouterOp::compute(const InputSet& in, const BoundRecipe& recipe) const {
  ref::RouterConfig<T> cfg = p_.config<T>();
  if (!loss_) {
    cfg.round_scores = point_rounding<T>(recipe, "scores");
    cfg.round_sum = point_rounding<T>(recipe, "sum");
    cfg.round_normalized = point_rounding<T>(recipe, "normalized");
  }
  return outputs_of<T>(route_case<T>(p_, in, &cfg), cfg);
}

template <class T>
Outputs<T> MoeRouterOp::outputs_of(std::vector<ref::Routing<T>> routings,
                                   const ref::RouterConfig<T>& cfg) const {
  if (!selection_.empty()) {
    // The gates of the fixed selection (with_selection); the selection scores stay the op's.
    for (size_t t = 0; t < routings.size(); ++t) {
      const auto first = selection_.begin() + static_cast<std::ptrdiff_t>(t) * p_.top_k;
      routings[t].experts.assign(first, first + p_.top_k);
      ref::set_gates<T>(routings[t], cfg);
    }
  }
  if (loss_) {
    const ref::BalanceLoss<T> l =
        ref::load_balance_loss<T>(routings, ref::from_mp<T>(ref::mp(p_.alpha)));
    Outputs<T> out(2);
    out[0].values = {l.loss};
    out[1].values = l.p;
    return out;
  }
  Outputs<T> out(2);
  for (const ref::Routing<T>& r : routings) {
    out[0].values.insert(out[0].values.end(), r.gates.begin(), r.gates.end());
    out[1].indices.insert(out[1].indices.end(), r.experts.begin(), r.experts.end());
    // The selection scores the judge compares; it derives the group scores from them
    // (OutputDecl::topk_groups).
    out[1].values.insert(out[1].values.end(), r.selection_scores.begin(),
                         r.selection_scores.end());
  }
  return out;
}

// Explicit instantiations: code that builds a MoeRouterOp and calls exact or simulated on it
// instantiates GenericOp's members in its own translation unit, and the compute functions,
// small enough to be inlined here, would otherwise have no definition to link to.
#define LMO_MOE_COMPUTE(T)                                                     \
  template Outputs<T> MoeRouterOp::compute<T>(const InputSet&) const;          \
  template Outputs<T> MoeRouterOp::compute<T>(const InputSet&, const BoundRecipe&) const;
LMO_MOE_COMPUTE(ref::mp)
LMO_MOE_COMPUTE(ref::Ball)
LMO_MOE_COMPUTE(double)
LMO_MOE_COMPUTE(ref::Sim<ref::Format::f32>)
LMO_MOE_COMPUTE(ref::tf32)
LMO_MOE_COMPUTE(ref::bfloat16)
LMO_MOE_COMPUTE(ref::float16)
LMO_MOE_COMPUTE(ref::fp8_e4m3)
LMO_MOE_COMPUTE(ref::fp8_e5m2)
#undef LMO_MOE_COMPUTE

RouterParams read_router_params(ParamReader& r, bool generated_logits) {
  RouterParams p;
  p.tokens = r.integer("tokens", 1, kMaxRows);
  p.experts = r.integer("experts", 1, kMaxWidth);
  p.top_k = r.integer("top_k", 1, p.experts);
  p.score = r.choice("score", {"sigmoid", "softmax"}) == "sigmoid" ? ref::RouterScore::kSigmoid
                                                                   : ref::RouterScore::kSoftmax;
  p.n_group = r.integer("groups", 1, p.experts, 1);
  if (p.experts % p.n_group != 0) {
    r.fail("groups", "expected a divisor of experts = " + std::to_string(p.experts));
  }
  if (p.n_group > 1) {
    const int64_t group_size = p.experts / p.n_group;
    p.topk_group = r.integer("topk_groups", 1, p.n_group);
    p.group_score = r.choice("group_score", {"top2_sum", "max"}, "top2_sum") == "top2_sum"
                        ? ref::GroupScore::kTopTwoSum
                        : ref::GroupScore::kMax;
    if (p.group_score == ref::GroupScore::kTopTwoSum && group_size < 2) {
      r.fail("group_score",
             "top2_sum needs at least 2 experts per group, got " + std::to_string(group_size));
    }
    if (p.top_k > p.topk_group * group_size) {
      r.fail("top_k", "expected at most the " + std::to_string(p.topk_group * group_size) +
                          " experts of the kept groups, got " + std::to_string(p.top_k));
    }
  }
  p.normalize = r.flag("normalize", true);
  p.routed_scale = r.real("routed_scale", 1e-3, 1e3, 1.0);
  p.bias = r.flag("bias", false);
  if (p.bias) p.bias_std = r.real("bias_std", 1e-6, 10, 0.05);
  if (generated_logits) p.logit_std = r.real("logit_std", 1e-3, 1e3, 1.0);
  return p;
}

void add_moe_ops(std::vector<OpInfo>& ops) {
  ops.push_back(
      {"moe_router",
       "F20",
       "sigmoid|softmax affinities, selection bias, group-limited top-k, gates over the "
       "selected experts × routed scale",
       [](ParamReader& r) { return std::make_unique<MoeRouterOp>(read_router_params(r), false); },
       KernelEntry::kMoeRouter,
       {reduction_output("gates", naive_policy(),
                         "s_i / Σ_selected s_j × routed scale: a reduction over the selected "
                         "experts"),
        selection_output("experts", topk_policy(1.0 / 128),
                         "scores (a logit dot product) may be stored in bf16 (2^-9): 2^-7 of the "
                         "row scale is a tie")},
       {"deepseek-v3-gate"}});
  ops.push_back(
      {"load_balance_loss",
       "F21",
       "α Σ f_i P_i over the routings of a sequence (P from affinities normalized over "
       "all experts)",
       [](ParamReader& r) {
         RouterParams p = read_router_params(r);
         p.alpha = r.real("alpha", 0, 1e3);
         return std::make_unique<MoeRouterOp>(p, true);
       },
       KernelEntry::kLoadBalanceLoss,
       {reduction_output(naive_policy(), "α·N·Σ f_i·P_i: reductions over tokens and experts")}});
}

}  // namespace lmo::oracle
