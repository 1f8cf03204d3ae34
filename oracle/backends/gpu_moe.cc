// The gpu backend's adapters of oracle/backends/gpu_moe.h: the MoE ops through the shared
// templates of oracle/backends/moe_adapters.h, the sinusoidal encoding directly.
#include "oracle/backends/gpu_moe.h"

#include <cstdint>
#include <stdexcept>

#include "oracle/backends/moe_adapters.h"
#include "oracle/ops/positional.h"

namespace lmo::oracle {

void run_gpu_sinusoidal_pe(const Op& op, gpu::Storage s, const InputSet& in,
                           std::vector<GuardedBuffer>& out) {
  const PositionalParams& p = op_adapters::op_as<PositionalOp>(op).params();
  if (p.kind != PositionalKind::kSinusoidal) {
    throw std::logic_error("gpu backend: the op is not sinusoidal_pe");
  }
  const auto* positions = reinterpret_cast<const int64_t*>(op_adapters::input_ptr(in, "positions"));
  gpu::sinusoidal_pe(s, positions, out[0].data(), p.tokens, p.d, p.base);
}

void run_gpu_moe_router(const Op& op, gpu::Storage s, const InputSet& in,
                        std::vector<GuardedBuffer>& out) {
  op_adapters::run_moe_router<GpuMoe>(op, s, in, out);
}

void run_gpu_load_balance_loss(const Op& op, gpu::Storage s, const InputSet& in,
                               std::vector<GuardedBuffer>& out) {
  op_adapters::run_load_balance_loss<GpuMoe>(op, s, in, out);
}

void run_gpu_aux_free_update(const Op& op, gpu::Storage s, const InputSet& in,
                             std::vector<GuardedBuffer>& out) {
  op_adapters::run_aux_free_update<GpuMoe>(op, s, in, out);
}

}  // namespace lmo::oracle
