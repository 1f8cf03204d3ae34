// The gpu backend's adapters of oracle/backends/gpu_positional.h:
// oracle/backends/positional_adapters.h's and rope_adapters.h's templates on gpu/api.h and
// gpu/api_positional.h.
#include "oracle/backends/gpu_positional.h"

#include "oracle/backends/positional_adapters.h"
#include "oracle/backends/rope_adapters.h"

namespace lmo::oracle {
namespace {

// gpu/'s position kernels as a kernel library of oracle/backends/positional_adapters.h and
// rope_adapters.h.
struct GpuPositional {
  using Storage = gpu::Storage;
  static constexpr auto* rope = &gpu::rope;
  static constexpr auto* rope_table = &gpu::rope_table;
  static constexpr auto* sinusoidal_pe = &gpu::sinusoidal_pe;
  static constexpr auto* learned_position = &gpu::learned_position;
  static constexpr auto* shaw_logits = &gpu::shaw_logits;
  static constexpr auto* t5_bias = &gpu::t5_bias;
};

}  // namespace

void run_gpu_rope(const Op& op, gpu::Storage s, const InputSet& in,
                  std::vector<GuardedBuffer>& out) {
  op_adapters::run_rope<GpuPositional>(op, s, in, out);
}

void run_gpu_sinusoidal_pe(const Op& op, gpu::Storage s, const InputSet& in,
                           std::vector<GuardedBuffer>& out) {
  op_adapters::run_sinusoidal_pe<GpuPositional>(op, s, in, out);
}

void run_gpu_learned_position(const Op& op, gpu::Storage s, const InputSet& in,
                              std::vector<GuardedBuffer>& out) {
  op_adapters::run_learned_position<GpuPositional>(op, s, in, out);
}

void run_gpu_shaw_logits(const Op& op, gpu::Storage s, const InputSet& in,
                         std::vector<GuardedBuffer>& out) {
  op_adapters::run_shaw_logits<GpuPositional>(op, s, in, out);
}

void run_gpu_t5_bias(const Op& op, gpu::Storage s, const InputSet& in,
                     std::vector<GuardedBuffer>& out) {
  op_adapters::run_t5_bias<GpuPositional>(op, s, in, out);
}

}  // namespace lmo::oracle
