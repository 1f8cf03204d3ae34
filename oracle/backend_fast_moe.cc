// The fast backend's adapters for the MoE ops of oracle/ops/moe.h and moe_balance.h: moe_router
// runs fast::moe_router into the gates and experts outputs; load_balance_loss routes the sequence
// the same way, keeping the f32 affinities, then takes fast::expert_balance's P_i and counts into
// fast::load_balance_loss; aux_free_update runs fast::aux_free_update.
#include "oracle/backend_fast_moe.h"

#include <cstdint>
#include <vector>

#include "oracle/backend_fast_adapters.h"
#include "oracle/ops/moe_balance.h"

namespace lmo::oracle::fast_adapters {

fast::RouterConfig router_config(const RouterParams& p) {
  fast::RouterConfig c;
  c.experts = p.experts;
  c.top_k = p.top_k;
  c.score = p.score == ref::RouterScore::kSigmoid ? fast::RouterScore::sigmoid
                                                  : fast::RouterScore::softmax;
  c.n_group = p.n_group;
  c.topk_group = p.topk_group;
  c.group_score = p.group_score == ref::GroupScore::kTopTwoSum ? fast::GroupScore::top2_sum
                                                               : fast::GroupScore::max;
  c.normalize = p.normalize;
  c.routed_scale = static_cast<float>(p.routed_scale);
  return c;
}

namespace {

const void* bias_ptr(const RouterParams& p, const InputSet& in) {
  return p.bias ? ptr(in, "bias") : nullptr;
}

}  // namespace

void run_moe_router(const Op& op, fast::Storage s, const InputSet& in,
                    std::vector<GuardedBuffer>& out) {
  const RouterParams& p = as<MoeRouterOp>(op).params();
  // Outputs of moe_router: gates [tokens, K] in s, experts [tokens, K] as i64.
  fast::moe_router(s, ptr(in, "logits"), bias_ptr(p, in), p.tokens, router_config(p),
                   static_cast<int64_t*>(out[1].data()), out[0].data());
}

void run_load_balance_loss(const Op& op, fast::Storage s, const InputSet& in,
                           std::vector<GuardedBuffer>& out) {
  const RouterParams& p = as<MoeRouterOp>(op).params();
  const auto tk = static_cast<size_t>(p.tokens * p.top_k);
  std::vector<int64_t> experts(tk);
  std::vector<uint8_t> gates(tk * fast::storage_bytes(s));
  std::vector<float> affinities(static_cast<size_t>(p.tokens * p.experts));
  fast::moe_router(s, ptr(in, "logits"), bias_ptr(p, in), p.tokens, router_config(p),
                   experts.data(), gates.data(), affinities.data());
  std::vector<int64_t> counts(static_cast<size_t>(p.experts));
  std::vector<float> mean(counts.size());
  // Sigmoid affinities are normalized over all N experts; softmax ones already sum to 1.
  fast::expert_balance(p.tokens, p.experts, p.top_k, experts.data(), affinities.data(),
                       p.score == ref::RouterScore::kSigmoid, counts.data(), mean.data());
  const float loss = fast::load_balance_loss(counts.data(), mean.data(), p.tokens, p.experts,
                                             p.top_k, static_cast<float>(p.alpha));
  // Outputs of load_balance_loss: loss [1] and p [N], both in s.
  store_floats({loss}, out[0]);
  store_floats(mean, out[1]);
}

void run_aux_free_update(const Op& op, fast::Storage s, const InputSet& in,
                         std::vector<GuardedBuffer>& out) {
  const AuxFreeParams& p = as<AuxFreeUpdateOp>(op).params();
  const auto* load = reinterpret_cast<const int64_t*>(ptr(in, "load"));
  // γ held as an f32 constant, as a kernel would (the policy's arg_error accounts for it).
  fast::aux_free_update(s, ptr(in, "bias"), load, p.experts, static_cast<float>(p.gamma),
                        out[0].data());
}

}  // namespace lmo::oracle::fast_adapters
