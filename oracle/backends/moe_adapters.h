// Adapters of the MoE ops (oracle/ops/moe.h, moe_balance.h) shared by the fast and gpu backends:
// fast/moe_router.h and gpu/api_moe.h take the same arguments, so one template per op serves
// both. K names the library: using Storage (f32, bf16, f16) and RouterConfig (fields and
// enumerators of fast::RouterConfig), and pointers to moe_router, expert_balance,
// load_balance_loss and aux_free_update with fast/moe_router.h's signatures.
//   moe_router:        the gates and experts outputs;
//   load_balance_loss: routes the sequence the same way keeping the f32 affinities, then
//                      expert_balance's P_i and counts into load_balance_loss;
//   aux_free_update:   the new bias.
#pragma once

#include <cstdint>
#include <vector>

#include "oracle/backends/adapters.h"
#include "oracle/ops/moe.h"
#include "oracle/ops/moe_balance.h"

namespace lmo::oracle::op_adapters {

// Every routing parameter of the op, routed_scale rounded once to f32 (as the naive f32 run does).
template <class Config>
Config router_config(const RouterParams& p) {
  Config c;
  using Score = decltype(c.score);
  using Group = decltype(c.group_score);
  c.experts = p.experts;
  c.top_k = p.top_k;
  c.score = p.score == ref::RouterScore::kSigmoid ? Score::sigmoid : Score::softmax;
  c.n_group = p.n_group;
  c.topk_group = p.topk_group;
  c.group_score = p.group_score == ref::GroupScore::kTopTwoSum ? Group::top2_sum : Group::max;
  c.normalize = p.normalize;
  c.routed_scale = static_cast<float>(p.routed_scale);
  return c;
}

inline const void* router_bias(const RouterParams& p, const InputSet& in) {
  return p.bias ? input_ptr(in, "bias") : nullptr;
}

template <class K>
void run_moe_router(const Op& op, typename K::Storage s, const InputSet& in,
                    std::vector<GuardedBuffer>& out) {
  const RouterParams& p = op_as<MoeRouterOp>(op).params();
  // Outputs of moe_router: gates [tokens, K] in s, experts [tokens, K] as i64.
  K::moe_router(s, input_ptr(in, "logits"), router_bias(p, in), p.tokens,
                router_config<typename K::RouterConfig>(p), static_cast<int64_t*>(out[1].data()),
                out[0].data(), nullptr);
}

template <class K>
void run_load_balance_loss(const Op& op, typename K::Storage s, const InputSet& in,
                           std::vector<GuardedBuffer>& out) {
  const RouterParams& p = op_as<MoeRouterOp>(op).params();
  const auto tk = static_cast<size_t>(p.tokens * p.top_k);
  std::vector<int64_t> experts(tk);
  std::vector<uint8_t> gates(tk * (s == K::Storage::f32 ? 4 : 2));
  std::vector<float> affinities(static_cast<size_t>(p.tokens * p.experts));
  K::moe_router(s, input_ptr(in, "logits"), router_bias(p, in), p.tokens,
                router_config<typename K::RouterConfig>(p), experts.data(), gates.data(),
                affinities.data());
  std::vector<int64_t> counts(static_cast<size_t>(p.experts));
  std::vector<float> mean(counts.size());
  // Sigmoid affinities are normalized over all N experts; softmax ones already sum to 1.
  K::expert_balance(p.tokens, p.experts, p.top_k, experts.data(), affinities.data(),
                    p.score == ref::RouterScore::kSigmoid, counts.data(), mean.data());
  const float loss = K::load_balance_loss(counts.data(), mean.data(), p.tokens, p.experts, p.top_k,
                                          static_cast<float>(p.alpha));
  // Outputs of load_balance_loss: loss [1] and p [N], both in s.
  store_floats({loss}, out[0]);
  store_floats(mean, out[1]);
}

template <class K>
void run_aux_free_update(const Op& op, typename K::Storage s, const InputSet& in,
                         std::vector<GuardedBuffer>& out) {
  const AuxFreeParams& p = op_as<AuxFreeUpdateOp>(op).params();
  const auto* load = reinterpret_cast<const int64_t*>(input_ptr(in, "load"));
  // γ held as an f32 constant, as a kernel would (the policy's arg_error accounts for it).
  K::aux_free_update(s, input_ptr(in, "bias"), load, p.experts, static_cast<float>(p.gamma),
                     out[0].data());
}

}  // namespace lmo::oracle::op_adapters
