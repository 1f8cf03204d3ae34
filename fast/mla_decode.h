// F19 + F16: one decode step of absorbed Multi-head Latent Attention (DeepSeek-V2) over a cache
// of t latents, on plain pointers, mirroring the oracle's mla_decode op (oracle/ops/mla.h) and
// reference/mla.h's absorbed form. Inputs in storage s, for the token at position t − 1:
//   q_c  [1, h·d_h]   the content query q^C;
//   q_r  [1, h·d_r]   the rotary query before RoPE (rotated here at position t − 1, F10);
//   c_kv [t, d_c]     the cached latents (the last row is the current token's);
//   k_r  [t, d_r]     the cached rotary keys, already rotated;
//   w_uk [d_c, h·d_h] W^UK, absorbed into the query: q̃_i = q^C_i W^UK_iᵀ.
// Output o [1, h·d_c]: per head softmax(([q̃_i; q^R_i]·[c^KV_j; k^R_j])·scale) c^KV.
//
// Computation: f32, rounded once at the store. q̃ is one OpenBLAS sgemv per head; the RoPE
// angles (t − 1)·θ_k (mla_rope_angles) and their cos/sin are formed in double and rounded to f32;
// the attention is fast/attention.h's tiled core with one shared KV head (MQA) whose keys have two
// parts (c^KV and k^R, two sgemm calls summed) and whose values are the latents themselves.
// Bitwise identical for any thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "fast/storage.h"  // Storage, MlaDecodeArgs, mla_rope_angles

namespace lmo::fast {

// Throws std::invalid_argument naming the parameter for a bad shape, base, scale, storage or a
// null pointer.
void mla_decode(Storage s, const void* q_c, const void* q_r, const void* c_kv, const void* k_r,
                const void* w_uk, void* o, const MlaDecodeArgs& a);

}  // namespace lmo::fast
