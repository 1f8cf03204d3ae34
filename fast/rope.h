// F10 RoPE with the long-context frequency rules of F11, on plain pointers. Mirrors
// reference/rope.h and reference/rope_scaling.h (and the oracle's ops rope / rope_table,
// oracle/ops/rope.h):
//   x, y: [tokens, heads · head_dim] in storage s (the [tokens, heads, head_dim] layout
//   flattened); in every head the first rotary_dims dimensions are rotated in pairs (a, b) of the
//   layout — interleaved (2k, 2k+1) or half-split (k, k + r/2) —
//     y_a = x_a·c_k − x_b·s_k,   y_b = x_a·s_k + x_b·c_k,
//   and dimensions r … head_dim − 1 are copied unchanged (partial rotary). Products and sums in
//   f32 (one FMA where the target has it), the store rounded to nearest-even.
//
// c_k and s_k come either
//  - from positions (rope): c_k = m·cos(p·θ_k), s_k = m·sin(p·θ_k), θ_k by the scaling rule and
//    m YaRN's attention factor (or 1). f32 cannot hold the angle: at p = 2^20 its ulp is 2^-4
//    rad, and an f32 product p·θ_k misplaces every pair by up to that much. Here θ_k is formed
//    in long double (rope_inv_freq below), turned into a frequency in turns f_k = θ_k / 2π held
//    as two doubles, and p·f_k is formed exactly (an FMA residual, or Dekker's product) before
//    the whole turns are dropped; the remaining angle is in error by about |p·θ_k|·2^-59 (the
//    long double θ_k; 2^-50 where long double is double) plus 2^-52 rad. cos and sin of it are
//    evaluated in double and rounded once to f32: at p·θ_k = 2^20 rad the error before that
//    rounding is ≈ 2^-15 f32 ulp, so c_k and s_k are the correctly rounded f32 values except
//    next to a rounding midpoint;
//  - from a table (rope_table): row t of cos_sin [tokens, rotary_dims] holds c_k for k < r/2 in
//    its first r/2 columns and s_k in its last r/2 (FlashInfer's cos_sin_cache row, gathered
//    per token), in storage `table` (f32, or the activations' format), read exactly into f32.
//
// Tokens run in parallel (fast/threads.h) in chunks of a fixed number of tokens; every token's
// result depends only on its own inputs, so results are bitwise identical for any thread count.
// y may be x itself (in place); otherwise the two must not overlap.
#pragma once

#include <cstdint>

#include "fast/storage.h"  // Storage, RopeShape, RopeFrequencies, rope_inv_freq (kernels/api/)

namespace lmo::fast {

// Angles from positions (i64, |p| ≤ 2^53). Throws std::invalid_argument for tokens < 0,
// heads < 1, head_dim < 2, rotary_dims odd or outside [2, head_dim], a null pointer with
// tokens > 0, a position beyond 2^53, base not finite or ≤ 1, or a scaling parameter out of its
// domain (factor not finite or ≤ 0; original_context < 1 for yarn and llama31; ntk with
// rotary_dims ≤ 2; beta_fast or beta_slow ≤ 0; not 0 < low_freq_factor < high_freq_factor).
void rope(Storage s, const void* x, const int64_t* positions, void* y, const RopeShape& shape,
          const RopeFrequencies& freq);

// Angles from a cos/sin table in storage `table`. Throws std::invalid_argument for the shape
// errors above, a null pointer with tokens > 0, or an unknown storage.
void rope_table(Storage s, const void* x, Storage table, const void* cos_sin, void* y,
                const RopeShape& shape);

}  // namespace lmo::fast
