// F08 learned absolute position embedding (GPT-2's wte + wpe) on plain pointers, mirroring
// reference/positional.h learned_position_embed and the oracle's op learned_position
// (oracle/ops/positional.h):
//   h[t, c] = V[id_t, c] + U[pos_t, c],   t < tokens, c < d,
// V the token table (vocab × d), U the position table (max_positions × d), both and h in storage
// s. The two values are read exactly into f32, added in f32 and the sum rounded once to s
// (nearest-even): in f32 storage the result is the correctly rounded sum; in bf16 and f16 the f32
// sum is itself rounded (error ≤ 2^-24 relative) before the store, so only a sum within that of a
// rounding midpoint of s can differ from the correctly rounded one (the margin of the policy).
//
// Every id and position is checked against its table before any row is read: a gather with an
// index out of range is an out-of-bounds read in a kernel, here a std::invalid_argument naming
// the index, its value and the table's rows. Tokens run in parallel (fast/threads.h) in chunks
// of a fixed number of tokens; each row depends only on its own two table rows, so results are
// bitwise identical for any thread count.
#pragma once

#include <cstdint>

#include "fast/storage.h"

namespace lmo::fast {

// Throws std::invalid_argument for tokens < 0, d < 1, vocab < 1, max_positions < 1, a null
// pointer with tokens > 0, an unknown storage, or token_ids[t] outside [0, vocab) or
// positions[t] outside [0, max_positions) (the message names t, the value and the bound).
void learned_position(Storage s, const void* token_table, int64_t vocab, const void* position_table,
                      int64_t max_positions, const int64_t* token_ids, const int64_t* positions,
                      void* h, int64_t tokens, int64_t d);

}  // namespace lmo::fast
