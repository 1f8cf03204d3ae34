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

#include "fast/attention_args.h"  // MlaDecodeArgs
#include "fast/storage.h"

namespace lmo::fast {

// Throws std::invalid_argument naming the parameter for a bad shape, base, scale, storage or a
// null pointer.
void mla_decode(Storage s, const void* q_c, const void* q_r, const void* c_kv, const void* k_r,
                const void* w_uk, void* o, const MlaDecodeArgs& a);

// The angles (t − 1)·θ_k, k < d_r/2, of the query's RoPE, in double: θ_k = base^(−2k/d_r) for
// a.rope.scaling none (any finite base > 0), else rope_inv_freq(d_r, a.rope) of fast/rope.h (long
// double, the product rounded once to double). Shared with gpu::mla_decode, which takes the same
// arguments. Throws std::invalid_argument, prefixed with fn, for a base or scaling parameter out of
// its domain or a.rope.attention_factor set (the temperature belongs in a.scale).
std::vector<double> mla_rope_angles(const char* fn, const MlaDecodeArgs& a);

}  // namespace lmo::fast
