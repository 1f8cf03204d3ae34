#include "oracle/backends/fast_rope.h"

#include <optional>
#include <stdexcept>
#include <string>

#include "fast/rope.h"
#include "fast/sinusoidal_pe.h"
#include "oracle/ops/positional.h"
#include "oracle/ops/rope.h"

namespace lmo::oracle {
namespace {

const int64_t* positions_of(const InputSet& in) {
  return reinterpret_cast<const int64_t*>(in.at("positions").bytes().data());
}

fast::RopeScaling scaling_of(RopeScalingRule r) {
  switch (r) {
    case RopeScalingRule::kNone:
      return fast::RopeScaling::none;
    case RopeScalingRule::kPi:
      return fast::RopeScaling::pi;
    case RopeScalingRule::kNtk:
      return fast::RopeScaling::ntk;
    case RopeScalingRule::kYarn:
      return fast::RopeScaling::yarn;
    case RopeScalingRule::kLlama31:
      return fast::RopeScaling::llama31;
  }
  throw std::logic_error("fast backend: unknown RoPE scaling rule");
}

}  // namespace

fast::RopeShape fast_rope_shape(const RopeParams& p) {
  return {p.tokens, p.heads, p.head_dim, p.rotary_dims,
          p.layout == ref::RopeLayout::kInterleaved ? fast::RopeLayout::interleaved
                                                    : fast::RopeLayout::half_split};
}

fast::RopeFrequencies fast_rope_frequencies(const RopeParams& p) {
  fast::RopeFrequencies f;
  f.base = p.base;
  f.scaling = scaling_of(p.scaling);
  f.factor = p.factor;
  f.original_context = p.original_context;
  f.low_freq_factor = p.low_freq_factor;
  f.high_freq_factor = p.high_freq_factor;
  f.beta_fast = p.beta_fast;
  f.beta_slow = p.beta_slow;
  f.attention_factor = p.attention_factor;
  return f;
}

void run_fast_rope(const Op& op, fast::Storage s, const InputSet& in,
                   std::vector<GuardedBuffer>& out) {
  const auto* rope = dynamic_cast<const RopeOp*>(&op);
  if (!rope) throw std::logic_error("fast backend: the op is not a RopeOp");
  const RopeParams& p = rope->params();
  const void* x = in.at("x").bytes().data();
  if (p.from_table) {
    // The table's storage: f32, or the case's format (the op's "table": "storage").
    const ref::Tensor& table = in.at("cos_sin");
    const std::optional<fast::Storage> ts = fast::parse_storage(ref::dtype_name(table.dtype()));
    if (!ts) {
      throw std::logic_error("fast backend: a cos_sin table of dtype " +
                             std::string(ref::dtype_name(table.dtype())));
    }
    fast::rope_table(s, x, *ts, table.bytes().data(), out[0].data(), fast_rope_shape(p));
    return;
  }
  fast::rope(s, x, positions_of(in), out[0].data(), fast_rope_shape(p), fast_rope_frequencies(p));
}

void run_fast_sinusoidal_pe(const Op& op, fast::Storage s, const InputSet& in,
                            std::vector<GuardedBuffer>& out) {
  const auto* pe = dynamic_cast<const PositionalOp*>(&op);
  if (!pe || pe->params().kind != PositionalKind::kSinusoidal) {
    throw std::logic_error("fast backend: the op is not sinusoidal_pe");
  }
  const PositionalParams& p = pe->params();
  fast::sinusoidal_pe(s, positions_of(in), out[0].data(), p.tokens, p.d, p.base);
}

}  // namespace lmo::oracle
