// The gpu backend's adapters of oracle/backends/gpu_moe.h: the MoE ops through the shared
// templates of oracle/backends/moe_adapters.h.
#include "oracle/backends/gpu_moe.h"

#include "oracle/backends/moe_adapters.h"
#include "oracle/ops/moe_layer.h"

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

void run_gpu_moe_layer(const Op& op, gpu::Storage s, const InputSet& in,
                       std::vector<GuardedBuffer>& out) {
  const MoeLayerParams& p = op_adapters::op_as<MoeLayerOp>(op).params();
  const RouterParams& r = p.router;
  const auto input = [&](const char* name) { return op_adapters::input_ptr(in, name); };
  const bool shared = p.shared > 0;
  gpu::moe_layer(
      op_adapters::activation_of<gpu::Activation>(p.act), s, input("x"), input("router"),
      op_adapters::router_bias(r, in), r.tokens, op_adapters::router_config<gpu::RouterConfig>(r),
      p.d, p.d_ff, input("w"), input("v"), input("w2"), p.shared, shared ? input("ws") : nullptr,
      shared ? input("vs") : nullptr, shared ? input("w2s") : nullptr, p.residual, out[0].data());
}

}  // namespace lmo::oracle
