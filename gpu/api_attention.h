// CUDA-free host interface (gpu/api.h's conventions) of the attention family: F15 attention
// forward, the F16 decode step and F19's absorbed MLA decode, with fast/attention.h's and
// fast/mla_decode.h's argument shapes and validation (std::invalid_argument naming the function,
// the parameter and the expectation, before any CUDA call).
//
// Numerics: every dot product, exponential, sum and quotient in double (the online softmax of
// gpu/attention_math.h over chunks of keys), each output rounded once to f32 and then to the
// storage, nearest-even. Rows whose every key is masked, or with a NaN or +∞ logit, or only −∞
// logits, are NaN in every component (the reference's 0/0, docs/nan-inf.md); hidden keys are
// never read. Fixed-order reductions, no atomics: identical results run to run.
//
// Limits of the kernels (one block per query row and head, the query row in shared memory, the
// value components in registers): head_dim ≤ kGpuAttentionMaxDim; for MLA latent_dim ≤
// kGpuAttentionMaxDim and latent_dim + rope_dim ≤ kGpuAttentionMaxKeyDim. Larger shapes are
// refused with std::invalid_argument.
#pragma once

#include <cstdint>

#include "kernels/api/attention_args.h"
#include "gpu/api.h"

namespace lmo::gpu {

inline constexpr int64_t kGpuAttentionMaxDim = 1024;
inline constexpr int64_t kGpuAttentionMaxKeyDim = 2048;

// kernels/api/attention_args.h's argument types, shared with fast/attention.h and fast/mla_decode.h.
using kernels::AttentionArgs;
using kernels::AttentionMask;
using kernels::MlaDecodeArgs;

void attention(Storage s, const void* q, const void* k, const void* v, void* o,
               const AttentionArgs& a);

// One query token against a KV cache of cache_len rows (the last is the current token's):
// causal, or a sliding window of `window` keys when window > 0 (fast::attention_decode).
void attention_decode(Storage s, const void* q, const void* k, const void* v, void* o,
                      int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t cache_len,
                      int64_t window = 0, float softcap = 0, float scale = 0);

void mla_decode(Storage s, const void* q_c, const void* q_r, const void* c_kv, const void* k_r,
                const void* w_uk, void* o, const MlaDecodeArgs& a);

}  // namespace lmo::gpu
