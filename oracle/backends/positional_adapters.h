// Adapters of the position ops (oracle/ops/positional.h) shared by the fast and gpu backends:
// fast/sinusoidal_pe.h, fast/learned_position.h, fast/shaw_logits.h, fast/t5_bias.h and
// gpu/api_positional.h take the same arguments (T5's shape is fast::T5BiasShape in both), so one
// template per op serves both (RoPE's: oracle/backends/rope_adapters.h). K names the library:
// using Storage (f32, bf16, f16), and pointers to sinusoidal_pe, learned_position, shaw_logits
// and t5_bias with fast/'s signatures.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fast/kernel_api.h"
#include "oracle/backends/adapters.h"
#include "oracle/ops/positional.h"

namespace lmo::oracle::op_adapters {

// The op's parameters, which must be of the given kind.
inline const PositionalParams& positional_params(const Op& op, PositionalKind kind,
                                                 const char* name) {
  const PositionalParams& p = op_as<PositionalOp>(op).params();
  if (p.kind != kind) throw std::logic_error(std::string("backend adapter: the op is not ") + name);
  return p;
}

inline const int64_t* int_input(const InputSet& in, std::string_view name) {
  return static_cast<const int64_t*>(input_ptr(in, name));
}

inline fast::T5BiasShape t5_bias_shape(const PositionalParams& p) {
  return {p.num_buckets, p.heads, p.n_q, p.n_k, p.bidirectional, p.max_distance, p.query_offset};
}

// sinusoidal_pe: positions; output pe.
template <class K>
void run_sinusoidal_pe(const Op& op, typename K::Storage s, const InputSet& in,
                       std::vector<GuardedBuffer>& out) {
  const PositionalParams& p = positional_params(op, PositionalKind::kSinusoidal, "sinusoidal_pe");
  K::sinusoidal_pe(s, int_input(in, "positions"), out[0].data(), p.tokens, p.d, p.base);
}

// learned_position: token_table, position_table, token_ids, positions; output h.
template <class K>
void run_learned_position(const Op& op, typename K::Storage s, const InputSet& in,
                          std::vector<GuardedBuffer>& out) {
  const PositionalParams& p = positional_params(op, PositionalKind::kLearned, "learned_position");
  K::learned_position(s, input_ptr(in, "token_table"), p.vocab, input_ptr(in, "position_table"),
                      p.positions.max, int_input(in, "token_ids"), int_input(in, "positions"),
                      out[0].data(), p.tokens, p.d);
}

// shaw_logits: q, k, rel_k; output e.
template <class K>
void run_shaw_logits(const Op& op, typename K::Storage s, const InputSet& in,
                     std::vector<GuardedBuffer>& out) {
  const PositionalParams& p = positional_params(op, PositionalKind::kShaw, "shaw_logits");
  K::shaw_logits(s, input_ptr(in, "q"), input_ptr(in, "k"), input_ptr(in, "rel_k"), out[0].data(),
                 p.n_q, p.n_k, p.d, p.max_relative);
}

// t5_bias: table; output bias.
template <class K>
void run_t5_bias(const Op& op, typename K::Storage s, const InputSet& in,
                 std::vector<GuardedBuffer>& out) {
  const PositionalParams& p = positional_params(op, PositionalKind::kT5, "t5_bias");
  K::t5_bias(s, input_ptr(in, "table"), out[0].data(), t5_bias_shape(p));
}

}  // namespace lmo::oracle::op_adapters
