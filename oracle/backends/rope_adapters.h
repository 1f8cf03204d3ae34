// The adapter of the rope and rope_table ops (oracle/ops/rope.h) shared by the fast and gpu
// backends: fast/rope.h and gpu/api.h take the same arguments (kernels/api/'s RopeShape and
// RopeFrequencies), so one template serves both. K names the library: using Storage (f32, bf16,
// f16), and rope and rope_table with fast/rope.h's signatures.
#pragma once

#include <optional>
#include <stdexcept>
#include <vector>

#include "kernels/api/rope_frequencies.h"
#include "kernels/api/rope_shape.h"
#include "oracle/backends/adapters.h"
#include "oracle/ops/rope.h"

namespace lmo::oracle::op_adapters {

// The kernels' description of a rope / rope_table case: its shape and frequency rule.
inline kernels::RopeShape kernel_rope_shape(const RopeParams& p) {
  return {p.tokens, p.heads, p.head_dim, p.rotary_dims,
          p.layout == ref::RopeLayout::kInterleaved ? kernels::RopeLayout::interleaved
                                                    : kernels::RopeLayout::half_split};
}

inline kernels::RopeScaling kernel_rope_scaling(RopeScalingRule r) {
  switch (r) {
    case RopeScalingRule::kNone:
      return kernels::RopeScaling::none;
    case RopeScalingRule::kPi:
      return kernels::RopeScaling::pi;
    case RopeScalingRule::kNtk:
      return kernels::RopeScaling::ntk;
    case RopeScalingRule::kYarn:
      return kernels::RopeScaling::yarn;
    case RopeScalingRule::kLlama31:
      return kernels::RopeScaling::llama31;
  }
  throw std::logic_error("backend adapter: unknown RoPE scaling rule");
}

inline kernels::RopeFrequencies kernel_rope_frequencies(const RopeParams& p) {
  kernels::RopeFrequencies f;
  f.base = p.base;
  f.scaling = kernel_rope_scaling(p.scaling);
  f.factor = p.factor;
  f.original_context = p.original_context;
  f.low_freq_factor = p.low_freq_factor;
  f.high_freq_factor = p.high_freq_factor;
  f.beta_fast = p.beta_fast;
  f.beta_slow = p.beta_slow;
  f.attention_factor = p.attention_factor;
  return f;
}

// rope: x and positions; rope_table: x and the cos_sin table in its stored format (f32, or the
// case's storage: the op's "table"). Output y.
template <class K>
void run_rope(const Op& op, typename K::Storage s, const InputSet& in,
              std::vector<GuardedBuffer>& out) {
  const RopeParams& p = op_as<RopeOp>(op).params();
  if (p.from_table) {
    const ref::Tensor& table = in.at("cos_sin");
    const std::optional<typename K::Storage> ts =
        storage_of<typename K::Storage>(ref::dtype_format(table.dtype()));
    if (!ts) {
      throw std::logic_error("backend adapter: rope_table's cos_sin is not f32, bf16 or f16");
    }
    K::rope_table(s, input_ptr(in, "x"), *ts, table.bytes().data(), out[0].data(),
                  kernel_rope_shape(p));
    return;
  }
  K::rope(s, input_ptr(in, "x"), static_cast<const int64_t*>(input_ptr(in, "positions")),
          out[0].data(), kernel_rope_shape(p), kernel_rope_frequencies(p));
}

}  // namespace lmo::oracle::op_adapters
