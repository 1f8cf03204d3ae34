// The fast backend's adapters for the position ops (oracle/ops/positional.h, oracle/ops/rope.h):
// the shared templates of oracle/backends/positional_adapters.h and rope_adapters.h on
// fast/sinusoidal_pe.h, fast/learned_position.h, fast/shaw_logits.h, fast/t5_bias.h and
// fast/rope.h.
#include "fast/learned_position.h"
#include "fast/rope.h"
#include "fast/shaw_logits.h"
#include "fast/sinusoidal_pe.h"
#include "fast/t5_bias.h"
#include "oracle/backends/fast_adapters.h"
#include "oracle/backends/positional_adapters.h"
#include "oracle/backends/rope_adapters.h"

namespace lmo::oracle::fast_adapters {
namespace {

// fast/'s position kernels as a kernel library of oracle/backends/positional_adapters.h and
// rope_adapters.h.
struct FastPositional {
  using Storage = fast::Storage;
  static constexpr auto* rope = &fast::rope;
  static constexpr auto* rope_table = &fast::rope_table;
  static constexpr auto* sinusoidal_pe = &fast::sinusoidal_pe;
  static constexpr auto* learned_position = &fast::learned_position;
  static constexpr auto* shaw_logits = &fast::shaw_logits;
  static constexpr auto* t5_bias = &fast::t5_bias;
};

}  // namespace

void run_rope(const Op& op, fast::Storage s, const InputSet& in, std::vector<GuardedBuffer>& out) {
  op_adapters::run_rope<FastPositional>(op, s, in, out);
}

void run_sinusoidal_pe(const Op& op, fast::Storage s, const InputSet& in,
                       std::vector<GuardedBuffer>& out) {
  op_adapters::run_sinusoidal_pe<FastPositional>(op, s, in, out);
}

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
