// F18 one decoder block on plain pointers, mirroring the oracle's decoder_block op
// (oracle/ops/blocks.h) and the layouts of reference/blocks.h. With x [tokens, d] and
//   Attn(u) = attention(u W_Q, u W_K, u W_V) W_O   (causal, h query heads on g KV heads of
//             width d/h, scale 1/√(d/h), no positional encoding: fast/attention.h),
//   FFN(u)  = (SiLU(u W1) ⊙ u V) W2 (SwiGLU) or GELU(u W1) W2 (exact GELU), no biases
//             (fast/ffn.h),
//   N_γ(u)  = RMSNorm(u) · γ with the block's ε (fast/norms.h),
// the layouts are
//   post_ln      x³ = N_attn(x + Attn(x)),            y = N_ffn(x³ + FFN(x³));
//   pre_ln       x³ = x + Attn(N_attn(x)),            y = x³ + FFN(N_ffn(x³));
//   double_norm  x³ = x + N_attn_post(Attn(N_attn(x))), y = x³ + N_ffn_post(FFN(N_ffn(x³)));
//   olmo2        x³ = x + N_attn_post(Attn(x)),        y = x³ + N_ffn_post(FFN(x³));
//   parallel     n = N_attn(x),                       y = (x + FFN(n)) + Attn(n).
// Weights: w_q and w_o [d, d], w_k and w_v [d, g·d/h], w1 (and v for SwiGLU) [d, d_ff],
// w2 [d_ff, d], each norm's γ [d]; everything in storage s, y too.
//
// Computation: the composition of the fast kernels on f32 intermediates (each sublayer runs with
// f32 storage, the projections are sgemm on fixed row tiles), the output rounded to nearest-even
// once at the end. Bitwise identical for any thread count, as every kernel it calls is.
#pragma once

#include <cstdint>

#include "fast/storage.h"

namespace lmo::fast {

// Throws std::invalid_argument naming the parameter for a bad layout, FFN kind, storage, shape
// (tokens < 0, d, heads, kv_heads or d_ff < 1, h not dividing d, g not dividing h, a dimension
// ≥ 2^31), ε, or a null pointer the layout reads or writes.
void decoder_block(Storage s, const void* x, const DecoderBlockWeights& w, void* y,
                   const DecoderBlockArgs& a);

}  // namespace lmo::fast
