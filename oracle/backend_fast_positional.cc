// The fast backend's adapters for the learned and relative position ops (oracle/ops/positional.h):
// learned_position (fast/learned_position.h), shaw_logits (fast/shaw_logits.h) and t5_bias
// (fast/t5_bias.h). Each reads the op's parameters and inputs and calls the plain-pointer API
// into the guarded output buffer. (sinusoidal_pe's adapter sits with RoPE's in
// backend_fast_rope.cc: both form angles.)
#include <stdexcept>
#include <string>
#include <string_view>

#include "fast/learned_position.h"
#include "fast/shaw_logits.h"
#include "fast/t5_bias.h"
#include "oracle/backend_fast_adapters.h"
#include "oracle/ops/positional.h"

namespace lmo::oracle::fast_adapters {
namespace {

// The op's parameters, which must be of the given kind.
const PositionalParams& positional(const Op& op, PositionalKind kind, const char* name) {
  const PositionalParams& p = as<PositionalOp>(op).params();
  if (p.kind != kind) throw std::logic_error(std::string("fast backend: the op is not ") + name);
  return p;
}

const int64_t* ints(const InputSet& in, std::string_view name) {
  return static_cast<const int64_t*>(ptr(in, name));
}

fast::T5BiasShape t5_bias_shape(const PositionalParams& p) {
  return {p.num_buckets, p.heads, p.n_q, p.n_k, p.bidirectional, p.max_distance, p.query_offset};
}

}  // namespace

void run_learned_position(const Op& op, fast::Storage s, const InputSet& in,
                          std::vector<GuardedBuffer>& out) {
  const PositionalParams& p = positional(op, PositionalKind::kLearned, "learned_position");
  fast::learned_position(s, ptr(in, "token_table"), p.vocab, ptr(in, "position_table"),
                         p.positions.max, ints(in, "token_ids"), ints(in, "positions"),
                         out[0].data(), p.tokens, p.d);
}

void run_shaw_logits(const Op& op, fast::Storage s, const InputSet& in,
                     std::vector<GuardedBuffer>& out) {
  const PositionalParams& p = positional(op, PositionalKind::kShaw, "shaw_logits");
  fast::shaw_logits(s, ptr(in, "q"), ptr(in, "k"), ptr(in, "rel_k"), out[0].data(), p.n_q, p.n_k,
                    p.d, p.max_relative);
}

void run_t5_bias(const Op& op, fast::Storage s, const InputSet& in,
                 std::vector<GuardedBuffer>& out) {
  const PositionalParams& p = positional(op, PositionalKind::kT5, "t5_bias");
  fast::t5_bias(s, ptr(in, "table"), out[0].data(), t5_bias_shape(p));
}

}  // namespace lmo::oracle::fast_adapters
