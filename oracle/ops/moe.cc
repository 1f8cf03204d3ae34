#include "oracle/ops/moe.h"

#include <algorithm>
#include <limits>
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
  return {{"gates", {p_.tokens, p_.top_k}}, experts};
}

template <class T>
Outputs<T> MoeRouterOp::compute(const InputSet& in) const {
  const std::vector<ref::Routing<T>> routings = route_case<T>(p_, in);
  if (loss_) {
    const ref::BalanceLoss<T> l =
        ref::load_balance_loss<T>(routings, ref::from_mp<T>(ref::mp(p_.alpha)));
    Outputs<T> out(2);
    out[0].values = {l.loss};
    out[1].values = l.p;
    return out;
  }
  Outputs<T> out(2);
  const int64_t group_size = p_.experts / p_.n_group;
  for (const ref::Routing<T>& r : routings) {
    out[0].values.insert(out[0].values.end(), r.gates.begin(), r.gates.end());
    out[1].indices.insert(out[1].indices.end(), r.experts.begin(), r.experts.end());
    // The selection scores the judge compares, −∞ outside the kept groups.
    for (int64_t i = 0; i < p_.experts; ++i) {
      const bool kept =
          p_.n_group == 1 || std::binary_search(r.groups.begin(), r.groups.end(), i / group_size);
      out[1].values.push_back(kept ? r.selection_scores[static_cast<size_t>(i)]
                                   : T(-std::numeric_limits<T>::infinity()));
    }
  }
  return out;
}

namespace {

RouterParams read_router(ParamReader& r) {
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
  p.logit_std = r.real("logit_std", 1e-3, 1e3, 1.0);
  return p;
}

}  // namespace

void add_moe_ops(std::vector<OpInfo>& ops) {
  ops.push_back(
      {"moe_router", "F20",
       "sigmoid|softmax affinities, selection bias, group-limited top-k, gates over the "
       "selected experts × routed scale",
       [](ParamReader& r) { return std::make_unique<MoeRouterOp>(read_router(r), false); }});
  ops.push_back({"load_balance_loss", "F21",
                 "α Σ f_i P_i over the routings of a sequence (P from affinities normalized over "
                 "all experts)",
                 [](ParamReader& r) {
                   RouterParams p = read_router(r);
                   p.alpha = r.real("alpha", 0, 1e3);
                   return std::make_unique<MoeRouterOp>(p, true);
                 }});
}

}  // namespace lmo::oracle
