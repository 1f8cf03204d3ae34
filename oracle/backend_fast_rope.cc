#include "oracle/backend_fast_rope.h"

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

// The cos_sin table's storage: f32, or the case's format (the op's "table": "storage").
fast::Storage table_storage(const ref::Tensor& t) {
  switch (t.dtype()) {
    case ref::DType::f32:
      return fast::Storage::f32;
    case ref::DType::bf16:
      return fast::Storage::bf16;
    case ref::DType::f16:
      return fast::Storage::f16;
    default:
      throw std::logic_error("fast backend: a cos_sin table of dtype " +
                             std::string(ref::dtype_name(t.dtype())));
  }
}

}  // namespace

void run_fast_rope(const Op& op, fast::Storage s, const InputSet& in,
                   std::vector<GuardedBuffer>& out) {
  const auto* rope = dynamic_cast<const RopeOp*>(&op);
  if (!rope) throw std::logic_error("fast backend: the op is not a RopeOp");
  const RopeParams& p = rope->params();
  fast::RopeShape shape;
  shape.tokens = p.tokens;
  shape.heads = p.heads;
  shape.head_dim = p.head_dim;
  shape.rotary_dims = p.rotary_dims;
  shape.layout = p.layout == ref::RopeLayout::kInterleaved ? fast::RopeLayout::interleaved
                                                           : fast::RopeLayout::half_split;
  const void* x = in.at("x").bytes().data();
  if (p.from_table) {
    const ref::Tensor& table = in.at("cos_sin");
    fast::rope_table(s, x, table_storage(table), table.bytes().data(), out[0].data(), shape);
    return;
  }
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
  fast::rope(s, x, positions_of(in), out[0].data(), shape, f);
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
