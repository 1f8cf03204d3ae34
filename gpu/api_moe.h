// CUDA-free host interface (gpu/api.h's conventions) of the MoE family: F20 routing, F21's
// per-expert statistics and load-balance loss, F22's bias update, with fast/moe_router.h's
// argument shapes and validation (kernels/api/validate_moe.h: std::invalid_argument naming the function,
// the parameter and the expectation, before any CUDA call).
//
// Numerics: affinities, selection scores, group scores and gates in double (gpu/moe_route.h, one
// thread per token), so the selection orders as the exact scores do wherever they differ by more
// than double's rounding, and exact ties follow the reference's rule (larger score, then lower
// index; a NaN above every number). Each output rounded once to f32 and then to the storage,
// nearest-even. The sums over tokens and experts of expert_balance and load_balance_loss in
// double, in a fixed order (no atomics): identical results run to run.
#pragma once

#include <cstdint>

#include "kernels/api/router_config.h"
#include "gpu/api.h"

namespace lmo::gpu {

// kernels/api/router_config.h's configuration, shared with fast/moe_router.h.
using kernels::GroupScore;
using kernels::RouterConfig;
using kernels::RouterScore;

// logits [tokens, N] and bias [N] (null: none) in s; writes experts [tokens, K] (ascending per
// token), gates [tokens, K] in s (same order) and, when not null, the f32 affinities [tokens, N].
// Throws std::invalid_argument as fast::moe_router does.
void moe_router(Storage s, const void* logits, const void* bias, int64_t tokens,
                const RouterConfig& cfg, int64_t* experts, void* gates,
                float* affinities = nullptr);

// counts[i] = the tokens selecting expert i (experts: [tokens, top_k]); p[i] = P_i = (1/T) Σ_t
// s'_{i,t}, s' the affinities [tokens, N] normalized over the N experts of each token when
// normalize_affinities (sigmoid routing), else as they are. Throws as fast::expert_balance does.
void expert_balance(int64_t tokens, int64_t n_experts, int64_t top_k, const int64_t* experts,
                    const float* affinities, bool normalize_affinities, int64_t* counts, float* p);

// L = α Σ_i f_i P_i, f_i = N·counts[i] / (K·T), rounded once to f32. Throws as
// fast::load_balance_loss does.
float load_balance_loss(const int64_t* counts, const float* p, int64_t tokens, int64_t n_experts,
                        int64_t top_k, float alpha);

// F22: new_bias[i] = c_i + γ below the mean load, c_i − γ above it, c_i bit for bit at it
// (N·load_i against Σ load, exact in integers); new_bias == bias allowed. Throws as
// fast::aux_free_update does.
void aux_free_update(Storage s, const void* bias, const int64_t* load, int64_t n, float gamma,
                     void* new_bias);

}  // namespace lmo::gpu
