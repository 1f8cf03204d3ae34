// CUDA-free host interface (gpu/api.h's conventions) of the position family: F07 the sinusoidal
// encoding, F08 the learned absolute embedding, F09 Shaw's relative logits and T5's bucketed
// bias, with fast/sinusoidal_pe.h's, fast/learned_position.h's, fast/shaw_logits.h's and
// fast/t5_bias.h's argument shapes and validation (std::invalid_argument naming the function, the
// parameter and the expectation, before any CUDA call).
//
// Numerics of the sinusoidal encoding: the frequencies 1/base^(2i/d) in turns, formed on the host
// in long double as fast/sinusoidal_pe.h does; the angle's whole turns dropped exactly and cos and
// sin evaluated in double on the device (gpu/angles.h, the same operations as the fast kernel's),
// each value rounded once to f32 and then to the storage, nearest-even. At positions up to 2^20
// every f32 value lies within 2^-24 of the exact one (the naive f32 encoding misses by 2^-5 rad
// there).
#pragma once

#include <cstdint>

#include "kernels/api/t5_bias_shape.h"
#include "gpu/api.h"

namespace lmo::gpu {

// pe[t, 2i] = sin(p_t / base^(2i/d)), pe[t, 2i+1] = cos(p_t / base^(2i/d)), i < d/2, for the
// integer positions p_t; pe is tokens × d in s. Throws std::invalid_argument for tokens < 0, d < 2
// or odd, a null pointer with tokens > 0, a position beyond 2^53 in magnitude, or base not finite
// or ≤ 1.
void sinusoidal_pe(Storage s, const int64_t* positions, void* pe, int64_t tokens, int64_t d,
                   double base = 10000);

// h[t, c] = V[token_ids[t], c] + U[positions[t], c] (fast/learned_position.h): the two values
// added exactly and rounded once to f32, then to s, as the fast kernel's f32 sum. Throws as
// fast::learned_position does (every index checked against its table before any CUDA call).
void learned_position(Storage s, const void* token_table, int64_t vocab, const void* position_table,
                      int64_t max_positions, const int64_t* token_ids, const int64_t* positions,
                      void* h, int64_t tokens, int64_t d);

// e[i, j] = q_i·(k_j + rel_k[clip(j − i, −K, K) + K])/√d_k (fast/shaw_logits.h), each logit in
// double in the reference's order (gpu/relative_position.h) and rounded once to f32, then to s.
// Throws as fast::shaw_logits does.
void shaw_logits(Storage s, const void* q, const void* k, const void* rel_k, void* e, int64_t n_q,
                 int64_t n_k, int64_t d_k, int64_t max_relative_position);

// bias[h, i, j] = table[bucket(j − (query_offset + i)), h] (fast/t5_bias.h): the buckets by
// kernels::T5Buckets' exact integer thresholds (found on the host, the comparisons on the device),
// the values copied bit for bit. Throws as fast::t5_bias does.
using kernels::T5BiasShape;
void t5_bias(Storage s, const void* table, void* bias, const T5BiasShape& shape);

}  // namespace lmo::gpu
