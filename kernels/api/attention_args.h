// The argument types of the attention family, taken by fast/attention.h, fast/mla_decode.h and
// gpu/api_attention.h alike: both libraries take the same shapes on plain pointers. Plain C++17
// with no CUDA, since gpu/api_attention.h is compiled by nvcc too and is installed with it.
#pragma once

#include <cstdint>

#include "kernels/api/rope_frequencies.h"  // RopeFrequencies

namespace lmo::kernels {

enum class AttentionMask : uint8_t {
  none,      // every key visible
  causal,    // key t visible to query position p iff t ≤ p
  window,    // iff 0 ≤ p − t < window
  document,  // iff t ≤ p and doc_ids[t] == doc_ids[p]
};

// q [q_len, h·d], k and v [kv_len, g·d], o [q_len, h·d]; query i at position kv_len − q_len + i;
// query head j reads KV head ⌊j·g/h⌋.
struct AttentionArgs {
  int64_t heads = 1;     // h
  int64_t kv_heads = 1;  // g, a divisor of h
  int64_t head_dim = 1;  // d, of q, k and v
  int64_t q_len = 1;     // T_q
  int64_t kv_len = 1;    // T_k
  AttentionMask mask = AttentionMask::causal;
  int64_t window = 0;                // w >= 1 for AttentionMask::window
  const int64_t* doc_ids = nullptr;  // kv_len ids (host) for AttentionMask::document (T_q <= T_k)
  float scale = 0;                   // multiplies q·k; 0 means 1/√d (rounded once from double)
  float softcap = 0;                 // 0: none; else s ↦ cap·tanh(s/cap) on the scaled logits
};

// Absorbed MLA decode (F19): q_c [1, h·d_h], q_r [1, h·d_r] (rotated at position t − 1),
// c_kv [t, d_c], k_r [t, d_r], w_uk [d_c, h·d_h]; o [1, h·d_c].
struct MlaDecodeArgs {
  int64_t heads = 1;       // n_h
  int64_t head_dim = 1;    // d_h
  int64_t rope_dim = 2;    // d_h^R, even
  int64_t latent_dim = 1;  // d_c
  int64_t cache_len = 1;   // t
  // θ_k of q^R's RoPE: the base (finite, > 0) and an F11 scaling rule as fast/rope.h takes it
  // (DeepSeek-V2/V3: yarn). attention_factor must be false: YaRN's temperature on MLA multiplies
  // the softmax scale (DeepSeek's mscale_all_dim), so a caller folds it into `scale`.
  RopeFrequencies rope;
  bool half_split = false;  // RoPE pairs (k, k + d_r/2) instead of (2k, 2k + 1)
  float scale = 0;          // 0: 1/√(d_h + d_h^R) (eq. 46), rounded once from double
};

}  // namespace lmo::kernels
