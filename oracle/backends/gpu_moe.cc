// The gpu backend's adapters of oracle/backends/gpu_moe.h: the MoE ops through the shared
// templates of oracle/backends/moe_adapters.h.
#include "oracle/backends/gpu_moe.h"

#include "oracle/backends/moe_adapters.h"

namespace lmo::oracle {

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
