// F09 relative position logits of Shaw, Uszkoreit & Vaswani (2018, eq. 5) on plain pointers,
// mirroring reference/positional.h shaw_relative_logits_qk and the oracle's op shaw_logits
// (oracle/ops/positional.h): for projected queries q [n_q, d_k] and keys k [n_k, d_k], and the
// table rel_k [2K + 1, d_k] whose row r holds the relative distance r − K,
//   e[i, j] = q_i · (k_j + rel_k[clip(j − i, −K, K) + K]) / sqrt(d_k),
// query i and key j at positions i and j. e is [n_q, n_k]; all four arrays in storage s.
//
// Numerics: f32 compute. The dot product is split as Shaw et al.'s own efficient implementation
// (§3.3) and every framework's (tensor2tensor's _relative_attention_inner, HF BERT's
// relative_key) compute it: q·kᵀ as one matrix product, q·rel_kᵀ against the (at most 2K + 1)
// table rows as a second, then per logit the sum of the two, divided by sqrt(d_k) rounded to f32
// (the reference's order: the scale divides the finished dot product), rounded once to s. The
// products run through OpenBLAS sgemm (fast/blas.h) as a user's kernel would; the relative term
// costs n_q·(2K + 1)·d_k instead of forming k_j + a for each of the n_q·n_k pairs. The price of
// the split is one more rounding (of q·k + q·a) and, where k_j + a nearly cancels, errors of
// the size u·|q|·(|k| + |a|) instead of u·|q|·|k + a|; the naive policy bounds the largest
// error over the tensor, where both forms are alike (verify's transformer-base case: 1.15e-6
// against the naive f32 run's 1.08e-6, the bound 2.8e-6).
//
// Determinism: queries run in blocks of a fixed number of rows (a function of n_k alone), each
// block's two products one single-threaded sgemm call, so results are bitwise identical for any
// thread count (fast/threads.h).
#pragma once

#include <cstdint>

#include "fast/storage.h"

namespace lmo::fast {

// Throws std::invalid_argument for n_q, n_k or max_relative_position < 0 or ≥ 2^30, d_k < 1 or
// ≥ 2^30, a null pointer with n_q·n_k > 0, or an unknown storage.
void shaw_logits(Storage s, const void* q, const void* k, const void* rel_k, void* e, int64_t n_q,
                 int64_t n_k, int64_t d_k, int64_t max_relative_position);

}  // namespace lmo::fast
