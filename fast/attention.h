// F15 attention forward and F15/F16 single-token decode on plain pointers, mirroring
// reference/attention.h:
//   o_{i,j} = Σ_t softmax_t(cap(scale · q_{i,j}·k_{t,kv(j)}) + mask) v_{t,kv(j)},
// with h query heads on g KV heads (query head j reads KV head ⌊j·g/h⌋: MHA g = h, GQA, MQA
// g = 1). Layout (row vectors): q [q_len, h·d], k and v [kv_len, g·d], o [q_len, h·d], all in
// storage s; the queries are the last q_len positions of the kv_len keys (query i sits at
// position kv_len − q_len + i), as in the reference.
//
// Computation: f32 throughout, rounded to nearest-even once at the store. Q Kᵀ and P V are
// OpenBLAS sgemm calls on tiles (one thread inside OpenBLAS); the softmax is online over key
// blocks of fixed size (running max and rescaled sums, the FlashAttention recurrence), its exp,
// soft-cap and rescaling in Highway vectors. Tiles of (KV head, query heads, query rows) run in
// parallel over fast/threads.h with a tiling fixed by the shapes alone, so the result is
// bitwise identical for any thread count.
//
// A row whose every key is masked (possible only with q_len > kv_len or a hand-made document
// layout) is NaN in every component: the reference's 0/0 (reference/attention.h, top).
#pragma once

#include <cstdint>

#include "fast/storage.h"

namespace lmo::fast {

// Throws std::invalid_argument naming the parameter for a bad shape, mask, window, scale,
// soft-cap, storage or a null pointer.
void attention(Storage s, const void* q, const void* k, const void* v, void* o,
               const AttentionArgs& a);

// F16's decode step: one query token q [1, h·d] against a KV cache k, v [cache_len, g·d] whose
// last row is the current token's (the query's position is cache_len − 1); causal, or a sliding
// window of `window` keys when window > 0. scale and softcap as in AttentionArgs.
void attention_decode(Storage s, const void* q, const void* k, const void* v, void* o,
                      int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t cache_len,
                      int64_t window = 0, float softcap = 0, float scale = 0);

}  // namespace lmo::fast
