// The fast backend's adapters for the learned and relative position ops (oracle/ops/positional.h):
// the shared templates of oracle/backends/positional_adapters.h on fast/learned_position.h,
// fast/shaw_logits.h and fast/t5_bias.h. (sinusoidal_pe's adapter sits with RoPE's in
// backend_fast_rope.cc: both form angles.)
#include "fast/learned_position.h"
#include "fast/shaw_logits.h"
#include "fast/t5_bias.h"
#include "oracle/backends/fast_adapters.h"
#include "oracle/backends/positional_adapters.h"

namespace lmo::oracle::fast_adapters {
namespace {

// fast/'s position kernels as a kernel library of oracle/backends/positional_adapters.h.
struct FastPositional {
  using Storage = fast::Storage;
  static constexpr auto* learned_position = &fast::learned_position;
  static constexpr auto* shaw_logits = &fast::shaw_logits;
  static constexpr auto* t5_bias = &fast::t5_bias;
};

}  // namespace

void run_learned_position(const Op& op, fast::Storage s, const InputSet& in,
                          std::vector<GuardedBuffer>& out) {
  op_adapters::run_learned_position<FastPositional>(op, s, in, out);
}

void run_shaw_logits(const Op& op, fast::Storage s, const InputSet& in,
                     std::vector<GuardedBuffer>& out) {
  op_adapters::run_shaw_logits<FastPositional>(op, s, in, out);
}

void run_t5_bias(const Op& op, fast::Storage s, const InputSet& in,
                 std::vector<GuardedBuffer>& out) {
  op_adapters::run_t5_bias<FastPositional>(op, s, in, out);
}

}  // namespace lmo::oracle::fast_adapters
