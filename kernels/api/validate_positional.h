// Argument checks of the position entry points (rope, rope_table, learned_position, shaw_logits,
// t5_bias of fast/ and gpu/): every violation throws std::invalid_argument naming the
// function, the parameter, its value and the expectation. Indices into a table are checked
// before any row is read, so a bad index never becomes an out-of-bounds read.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/api/rope_shape.h"
#include "kernels/api/storage.h"
#include "kernels/api/t5_bias_shape.h"
#include "kernels/api/validate.h"

namespace lmo::kernels::detail {

// RoPE over x [tokens, heads · head_dim]: tokens ≥ 0, heads ≥ 1, head_dim ≥ 2, rotary_dims even
// in [2, head_dim], a known layout.
inline void check_rope_shape(const char* fn, const RopeShape& sh) {
  check_count(fn, "tokens", sh.tokens, 0);
  check_count(fn, "heads", sh.heads, 1);
  check_count(fn, "head_dim", sh.head_dim, 2);
  if (sh.rotary_dims < 2 || sh.rotary_dims > sh.head_dim || sh.rotary_dims % 2 != 0) {
    throw std::invalid_argument(
        std::string(fn) + ": rotary_dims is " + std::to_string(sh.rotary_dims) +
        ", expected an even number in [2, " + "head_dim = " + std::to_string(sh.head_dim) + "]");
  }
  if (sh.layout != RopeLayout::interleaved && sh.layout != RopeLayout::half_split) {
    throw std::invalid_argument(std::string(fn) + ": layout is " +
                                std::to_string(static_cast<int>(sh.layout)) +
                                ", expected interleaved or half_split");
  }
}

// rope (fast/rope.h, gpu/api.h) apart from its frequency rule, which rope_inv_freq checks: a known
// storage, the shape, the pointers when a token is rotated, each position within 2^53.
inline void check_rope(const char* fn, Storage s, const void* x, const int64_t* positions,
                       const void* y, const RopeShape& shape) {
  check_storage(fn, s);
  check_rope_shape(fn, shape);
  const bool any = shape.tokens > 0;
  check_ptr(fn, "x", x, any);
  check_ptr(fn, "positions", positions, any);
  check_ptr(fn, "y", y, any);
  check_positions(fn, positions, shape.tokens);
}

// rope_table: known storages of the activations and of the table, the shape, the pointers when a
// token is rotated.
inline void check_rope_table(const char* fn, Storage s, const void* x, Storage table,
                             const void* cos_sin, const void* y, const RopeShape& shape) {
  check_storage(fn, s);
  check_storage(fn, table);
  check_rope_shape(fn, shape);
  const bool any = shape.tokens > 0;
  check_ptr(fn, "x", x, any);
  check_ptr(fn, "cos_sin", cos_sin, any);
  check_ptr(fn, "y", y, any);
}

// Every index[t], t < n, in [0, rows): `name` is the index array, `table` the table it reads.
inline void check_row_indices(const char* fn, const char* name, const int64_t* index, int64_t n,
                              int64_t rows, const char* table) {
  for (int64_t t = 0; t < n; ++t) {
    if (index[t] < 0 || index[t] >= rows) {
      throw std::invalid_argument(std::string(fn) + ": " + name + "[" + std::to_string(t) +
                                  "] is " + std::to_string(index[t]) + ", expected a row of " +
                                  table + ", 0 <= row < " + std::to_string(rows));
    }
  }
}

inline void check_learned_position(const char* fn, const void* token_table, int64_t vocab,
                                   const void* position_table, int64_t max_positions,
                                   const int64_t* token_ids, const int64_t* positions,
                                   const void* h, int64_t tokens, int64_t d) {
  check_count(fn, "tokens", tokens, 0);
  check_count(fn, "d", d, 1);
  check_count(fn, "vocab", vocab, 1);
  check_count(fn, "max_positions", max_positions, 1);
  const bool any = tokens > 0;
  check_ptr(fn, "token_table", token_table, any);
  check_ptr(fn, "position_table", position_table, any);
  check_ptr(fn, "token_ids", token_ids, any);
  check_ptr(fn, "positions", positions, any);
  check_ptr(fn, "h", h, any);
  check_row_indices(fn, "token_ids", token_ids, tokens, vocab, "token_table (vocab)");
  check_row_indices(fn, "positions", positions, tokens, max_positions,
                    "position_table (max_positions)");
}

inline void check_shaw_logits(const char* fn, const void* q, const void* k, const void* rel_k,
                              const void* e, int64_t n_q, int64_t n_k, int64_t d_k,
                              int64_t max_relative_position) {
  check_count(fn, "n_q", n_q, 0);
  check_count(fn, "n_k", n_k, 0);
  check_count(fn, "d_k", d_k, 1);
  check_count(fn, "max_relative_position", max_relative_position, 0);
  // The table's 2K + 1 rows and every product of the shapes stay far inside int64 (and BLAS's
  // int) with each dimension below 2^30.
  constexpr int64_t kMaxDim = int64_t{1} << 30;
  for (const auto& [name, v] : {std::pair<const char*, int64_t>{"n_q", n_q},
                                {"n_k", n_k},
                                {"d_k", d_k},
                                {"max_relative_position", max_relative_position}}) {
    if (v >= kMaxDim) {
      throw std::invalid_argument(std::string(fn) + ": " + name + " is " + std::to_string(v) +
                                  ", expected < 2^30");
    }
  }
  const bool any = n_q > 0 && n_k > 0;
  check_ptr(fn, "q", q, any);
  check_ptr(fn, "k", k, any);
  check_ptr(fn, "rel_k", rel_k, any);
  check_ptr(fn, "e", e, any);
}

// T5 bias's shape: heads ≥ 1, query_len, key_len and query_offset ≥ 0, each ≤ 2^53, and at most
// 2^62 output elements. (The bucket parameters are T5Buckets' to check, the pointers after it.)
inline void check_t5_bias_shape(const char* fn, const T5BiasShape& shape) {
  check_count(fn, "heads", shape.heads, 1);
  check_count(fn, "query_len", shape.query_len, 0);
  check_count(fn, "key_len", shape.key_len, 0);
  check_count(fn, "query_offset", shape.query_offset, 0);
  constexpr int64_t kMax53 = int64_t{1} << 53;
  for (const auto& [name, v] : {std::pair<const char*, int64_t>{"heads", shape.heads},
                                {"query_len", shape.query_len},
                                {"key_len", shape.key_len},
                                {"query_offset", shape.query_offset}}) {
    if (v > kMax53) {
      throw std::invalid_argument(std::string(fn) + ": " + name + " is " + std::to_string(v) +
                                  ", expected <= 2^53");
    }
  }
  if (static_cast<double>(shape.heads) * static_cast<double>(shape.query_len) *
          static_cast<double>(shape.key_len) >
      static_cast<double>(int64_t{1} << 62)) {
    throw std::invalid_argument(std::string(fn) +
                                ": heads × query_len × key_len is beyond 2^62 elements");
  }
}

}  // namespace lmo::kernels::detail
