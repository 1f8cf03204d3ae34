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

#include "gpu/api.h"

namespace lmo::gpu {

inline constexpr int64_t kGpuAttentionMaxDim = 1024;
inline constexpr int64_t kGpuAttentionMaxKeyDim = 2048;

enum class AttentionMask : uint8_t {
  none,      // every key visible
  causal,    // key t visible to query position p iff t ≤ p
  window,    // iff 0 ≤ p − t < window
  document,  // iff t ≤ p and doc_ids[t] == doc_ids[p]
};

// As fast::AttentionArgs: q [q_len, h·d], k and v [kv_len, g·d], o [q_len, h·d]; query i at
// position kv_len − q_len + i; query head j reads KV head ⌊j·g/h⌋.
struct AttentionArgs {
  int64_t heads = 1;     // h
  int64_t kv_heads = 1;  // g, a divisor of h
  int64_t head_dim = 1;  // d, of q, k and v
  int64_t q_len = 1;     // T_q
  int64_t kv_len = 1;    // T_k
  AttentionMask mask = AttentionMask::causal;
  int64_t window = 0;                // w >= 1 for AttentionMask::window
  const int64_t* doc_ids = nullptr;  // kv_len ids (host) for AttentionMask::document
  float scale = 0;                   // multiplies q·k; 0 means 1/√d (rounded once from double)
  float softcap = 0;                 // 0: none; else s ↦ cap·tanh(s/cap) on the scaled logits
};

void attention(Storage s, const void* q, const void* k, const void* v, void* o,
               const AttentionArgs& a);

// One query token against a KV cache of cache_len rows (the last is the current token's):
// causal, or a sliding window of `window` keys when window > 0 (fast::attention_decode).
void attention_decode(Storage s, const void* q, const void* k, const void* v, void* o,
                      int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t cache_len,
                      int64_t window = 0, float softcap = 0, float scale = 0);

// As fast::MlaDecodeArgs: q_c [1, h·d_h], q_r [1, h·d_r] (rotated here at position t − 1),
// c_kv [t, d_c], k_r [t, d_r], w_uk [d_c, h·d_h]; o [1, h·d_c].
struct MlaDecodeArgs {
  int64_t heads = 1;       // n_h
  int64_t head_dim = 1;    // d_h
  int64_t rope_dim = 2;    // d_h^R, even
  int64_t latent_dim = 1;  // d_c
  int64_t cache_len = 1;   // t
  double rope_base = 10000;
  bool half_split = false;  // RoPE pairs (k, k + d_r/2) instead of (2k, 2k + 1)
  float scale = 0;          // 0: 1/√(d_h + d_h^R), rounded once from double
};

void mla_decode(Storage s, const void* q_c, const void* q_r, const void* c_kv, const void* k_r,
                const void* w_uk, void* o, const MlaDecodeArgs& a);

}  // namespace lmo::gpu
