// F20 mixture-of-experts routing, the F21 load-balance loss and the F22 bias update on plain
// pointers, mirroring reference/moe.h (route, load_balance_loss, update_balance_bias). Logits,
// bias and gates in storage s; f32 compute.
//
// moe_router, per token (one row of N router logits z):
//  1. affinities s_i = sigmoid(z_i) (the overflow-free form) or softmax(z)_i (row max subtracted;
//     a row with a NaN, a +inf, or only −inf logits gives NaN affinities, as the reference does);
//  2. selection scores s_i + c_i, the balancing bias c used only here;
//  3. group-limited routing when n_group > 1: a group's score is the sum of its two best
//     selection scores (DeepSeek-V3) or its best (V2); the topk_group best groups are kept and
//     the experts of the other groups never compete;
//  4. the top_k best selection scores among the remaining experts;
//  5. gates from the unbiased affinities, g_i = s_i / Σ_selected s_j (the sum in ascending expert
//     order) or s_i, times routed_scale; stored rounded to nearest-even in s.
// The ranking rule is the reference's, so selections are the same wherever the f32 scores order
// as the exact ones: larger score first, on equal scores the lower index, a NaN above every
// number (torch.topk's order), NaNs among themselves by index. Outputs per token are the top_k
// experts in ascending index order and their gates in the same order.
//
// Tokens run in parallel (fast/threads.h, a fixed grain); each token's result depends on its own
// row only, so the outputs are bitwise identical for any thread count.
#pragma once

#include <cstdint>

#include "fast/storage.h"

namespace lmo::fast {

// logits [tokens, N] and bias [N] (null: none) in s; writes experts [tokens, K], gates
// [tokens, K] in s and, when not null, the f32 affinities [tokens, N] (what expert_balance
// reads). Throws std::invalid_argument for tokens < 0, a configuration the reference rejects
// (K outside 1 … N, n_group not dividing N, topk_group outside 1 … n_group, a top-2-sum group
// score on groups of one expert, K beyond the experts of the kept groups), a routed_scale that
// is not finite, or a null pointer that the call would use.
void moe_router(Storage s, const void* logits, const void* bias, int64_t tokens,
                const RouterConfig& cfg, int64_t* experts, void* gates,
                float* affinities = nullptr);

// F21's per-expert statistics over a sequence of `tokens` routings: counts[i] = the tokens that
// selected expert i (experts: [tokens, top_k] indices), and p[i] = P_i = (1/T) Σ_t s'_{i,t}
// with s' the affinities [tokens, N] normalized over all N experts (normalize_affinities, for
// sigmoid routing: s'_{i,t} = s_{i,t} / Σ_j s_{j,t}) or taken as they are (softmax routing).
// The sum over t runs in ascending token order, so P_i does not depend on the thread count.
// Throws std::invalid_argument for tokens < 1, N < 1, top_k outside 1 … N, a null pointer, or
// an expert index out of range or repeated within a token.
void expert_balance(int64_t tokens, int64_t n_experts, int64_t top_k, const int64_t* experts,
                    const float* affinities, bool normalize_affinities, int64_t* counts, float* p);

// L = α Σ_i f_i P_i with f_i = N·counts[i] / (K·T): the products and the sum formed in double
// (f_i is then exact), the result rounded once to f32. Throws std::invalid_argument for
// tokens < 1, N < 1, top_k < 1, a null pointer, or an α that is not finite.
float load_balance_loss(const int64_t* counts, const float* p, int64_t tokens, int64_t n_experts,
                        int64_t top_k, float alpha);

// F22, one auxiliary-loss-free balancing step (reference/moe.h update_balance_bias): new_bias[i]
// = c_i + γ for an expert loaded below the mean over the N experts, c_i − γ above it, c_i (bit
// for bit) at it; the comparison N·load_i against Σ_j load_j is exact in integers. c and
// new_bias in s (new_bias == bias allowed); each c_i ± γ is one f32 sum, rounded to nearest-even
// in s. Throws std::invalid_argument for n < 1, a null pointer, a negative load, a load total
// beyond 2^62 / N, or a γ that is not finite.
void aux_free_update(Storage s, const void* bias, const int64_t* load, int64_t n, float gamma,
                     void* new_bias);

}  // namespace lmo::fast
