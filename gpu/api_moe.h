// CUDA-free host interface (gpu/api.h's conventions) of the MoE family: F20 routing, F21's
// per-expert statistics and load-balance loss, F22's bias update, with fast/moe_router.h's
// argument shapes and validation (kernels/api/validate_moe.h: std::invalid_argument naming the
// function, the parameter and the expectation, before any CUDA call).
//
// Numerics: affinities, selection scores, group scores and gates in double (gpu/moe_route.h, one
// thread per token), so the selection orders as the exact scores do wherever they differ by more
// than double's rounding, and exact ties follow the reference's rule (larger score, then lower
// index; a NaN above every number). Each output rounded once to f32 and then to the storage,
// nearest-even. The sums over tokens and experts of expert_balance and load_balance_loss in
// double, in a fixed order (no atomics): identical results run to run. moe_layer computes in f32
// (below).
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

// The whole F20 MoE layer (oracle/ops/moe_layer.h's op), in f32 with the rounding points of the
// fast backend's layer (gpu/moe_layer_math.h): logits = x·router, the routing of moe_router on
// the f32 logits, then y = (x +) Σ_shared φ_s(x) + Σ_selected g_i φ_i(x), every expert a GLU FFN
// (act(x W) ⊙ x V) W2 whose hidden layer is f32, the sum in the reference's order, rounded once to
// s. x [tokens, d], router [d, N], bias [N] (null: none), w and v [N, d, d_ff], w2 [N, d_ff, d],
// the shared experts' ws and vs [shared, d, d_ff] and w2s [shared, d_ff, d] (null when shared is
// 0), y [tokens, d], all in s. Throws std::invalid_argument as moe_router and glu_ffn do, and for
// shared < 0 or a null shared expert's weight.
void moe_layer(Activation act, Storage s, const void* x, const void* router, const void* bias,
               int64_t tokens, const RouterConfig& cfg, int64_t d, int64_t d_ff, const void* w,
               const void* v, const void* w2, int64_t shared, const void* ws, const void* vs,
               const void* w2s, bool residual, void* y);

}  // namespace lmo::gpu
