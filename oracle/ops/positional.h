// Oracle ops of the additive and relative position encodings (reference/positional.h):
//   sinusoidal_pe     F07: positions [tokens] (i64) → pe [tokens, d];
//   learned_position  F08: token_table [vocab, d], position_table [max_positions, d], token_ids
//                     and positions [tokens] (i64) → h [tokens, d], h_t = V[id_t] + U[pos_t];
//   shaw_logits       F09 (Shaw et al.): q [n_q, d_k], k [n_k, d_k], rel_k [2K + 1, d_k]
//                     → e [n_q, n_k], e_ij = q_i·(k_j + rel_k[clip(j − i, −K, K) + K]) / √d_k;
//   t5_bias           F09 (T5): table [num_buckets, heads] → bias [heads, query_len, key_len],
//                     queries at positions query_offset + i, keys at 0 … key_len − 1.
// RoPE (F10, F11) is in rope.h.
#pragma once

#include <cstdint>
#include <optional>

#include "oracle/core/op_generic.h"

namespace lmo::oracle {

enum class PositionalKind : uint8_t { kSinusoidal, kLearned, kShaw, kT5 };

// Integer positions (i64) uniform in [min, max): long-context values (10^5 … 10^6) are the point,
// so max reaches kMaxPosition. Shared with rope.h.
struct PositionRange {
  int64_t min = 0;
  int64_t max = 0;
};
// Reads max_key (required unless default_max is given) and "min_position" (default 0), with
// min < max.
PositionRange read_position_range(ParamReader& r, const char* max_key,
                                  std::optional<int64_t> default_max = std::nullopt);
// The input "positions" [tokens] drawn from the range, which bounds a user's positions too.
InputDecl positions_input(int64_t tokens, PositionRange range);
// The input "token_ids" [tokens], below vocab.
InputDecl token_ids_input(int64_t tokens, int64_t vocab);

struct PositionalParams {
  PositionalKind kind = PositionalKind::kSinusoidal;
  int64_t tokens = 0;   // kSinusoidal, kLearned
  int64_t d = 0;        // kSinusoidal, kLearned: the model width; kShaw: d_k
  double base = 10000;  // kSinusoidal
  // kSinusoidal, kLearned: the positions' range (kLearned: max is the position table's rows).
  PositionRange positions;
  int64_t vocab = 0;           // kLearned
  int64_t n_q = 0, n_k = 0;    // kShaw: query and key rows; kT5: query_len and key_len
  int64_t max_relative = 0;    // kShaw: K
  int64_t heads = 0;           // kT5
  int64_t num_buckets = 32;    // kT5
  int64_t max_distance = 128;  // kT5
  bool bidirectional = false;  // kT5
  int64_t query_offset = 0;    // kT5
};

class PositionalOp : public GenericOp<PositionalOp> {
 public:
  explicit PositionalOp(PositionalParams p) : p_(p) {}
  const PositionalParams& params() const { return p_; }
  std::vector<InputDecl> inputs() const override;
  std::vector<OutputDecl> outputs() const override;
  double cost() const override;
  // compute<mp>, plus the Shaw logits' error scale (naive-relative policy, rule (2)).
  void annotate_exact(const InputSet& in, Outputs<ref::mp>& out) const override;
  template <class T>
  Outputs<T> compute(const InputSet& in) const;
  // The sinusoidal encoding's angle point ([recipes]): a kernel that forms p/base^(2i/d), its
  // sine and cosine in f64 and rounds once says angle=f64, and is held to that much tighter
  // bound. The other kinds have none (only +ftz and +fma apply).
  std::vector<RoundingPoint> rounding_points() const override;
  template <class T>
  Outputs<T> compute(const InputSet& in, const BoundRecipe& recipe) const;

 private:
  PositionalParams p_;
};

}  // namespace lmo::oracle
