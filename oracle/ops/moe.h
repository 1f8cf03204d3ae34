// Oracle ops of F20/F21: moe_router (the routing of each token from its router logits:
// affinities, selection with the balancing bias, group-limited top-k, gates) and
// load_balance_loss (F21 over the routings of a sequence). See reference/moe.h for the steps.
//
// moe_router outputs
//   gates   [tokens, K]: g_i of the selected experts in ascending expert order (from the unbiased
//           affinities, normalized over the selected experts, times the routed scale);
//   experts [tokens, K]: the selected experts (i64, judged as a set per token against the
//           exact selection scores s_i + c_i, with the group limit: judge.h, judge_topk). A
//           kernel may keep another group where group scores nearly tie, and then pick that
//           group's experts; the gates, in ascending expert order, presume the reference's set.
// load_balance_loss outputs loss [1] = α Σ f_i P_i and p [N], the P_i.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "oracle/core/op_generic.h"
#include "reference/moe.h"

namespace lmo::oracle {

struct RouterParams {
  int64_t tokens = 1;
  int64_t experts = 1;  // N
  int64_t top_k = 1;    // K
  ref::RouterScore score = ref::RouterScore::kSigmoid;
  int64_t n_group = 1;
  int64_t topk_group = 1;
  ref::GroupScore group_score = ref::GroupScore::kTopTwoSum;
  bool normalize = true;
  double routed_scale = 1;
  bool bias = false;     // an input "bias" [N] (F22's c), used for selection only
  double logit_std = 1;  // of the generated router logits
  double bias_std = 0.05;
  double alpha = 0;  // load_balance_loss

  template <class T>
  ref::RouterConfig<T> config() const {
    ref::RouterConfig<T> c;
    c.top_k = top_k;
    c.score = score;
    c.n_group = n_group;
    c.topk_group = topk_group;
    c.group_score = group_score;
    c.normalize = normalize;
    c.routed_scale = ref::from_mp<T>(ref::mp(routed_scale));
    return c;
  }
};

// The routing parameters of a case (tokens, experts, top_k, score, groups, topk_groups,
// group_score, normalize, routed_scale, bias, bias_std, and logit_std where the logits are a
// generated input): moe_router's, and the router of moe_layer (logits x·W_r).
RouterParams read_router_params(ParamReader& r, bool generated_logits = true);

// The routings of every token of the case (the bias when the case has one), by cfg (default:
// the case's own configuration).
template <class T>
std::vector<ref::Routing<T>> route_case(const RouterParams& p, const InputSet& in,
                                        const ref::RouterConfig<T>* cfg = nullptr) {
  const ref::Mat<T> z(p.tokens, p.experts, in.values<T>("logits"));
  const std::vector<T> bias = p.bias ? in.values<T>("bias") : std::vector<T>{};
  return ref::route_tokens<T>(z, bias, cfg ? *cfg : p.config<T>());
}

class MoeRouterOp : public GenericOp<MoeRouterOp> {
 public:
  MoeRouterOp(RouterParams p, bool loss, std::vector<int64_t> selection = {})
      : p_(p), loss_(loss), selection_(std::move(selection)) {}
  const RouterParams& params() const { return p_; }
  std::vector<InputDecl> inputs() const override;
  std::vector<OutputDecl> outputs() const override;
  double cost() const override {
    return 60.0 * static_cast<double>(p_.tokens) * static_cast<double>(p_.experts);
  }
  template <class T>
  Outputs<T> compute(const InputSet& in) const;
  // moe_router: scores, sum, normalized (docs/recipes.md); load_balance_loss: none.
  std::vector<RoundingPoint> rounding_points() const override;
  template <class T>
  Outputs<T> compute(const InputSet& in, const BoundRecipe& recipe) const;
  // moe_router: the gates of the given experts (Op::with_selection).
  std::unique_ptr<Op> with_selection(std::vector<int64_t> experts) const override;

 private:
  template <class T>
  Outputs<T> outputs_of(std::vector<ref::Routing<T>> routings,
                        const ref::RouterConfig<T>& cfg) const;
  RouterParams p_;
  bool loss_;  // load_balance_loss instead of moe_router
  std::vector<int64_t> selection_;  // [tokens · K] fixed experts; empty: the op's own
};

}  // namespace lmo::oracle
