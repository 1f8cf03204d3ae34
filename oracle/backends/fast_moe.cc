// The fast backend's adapters for the MoE ops: oracle/backends/moe_adapters.h on fast/moe_router.h.
#include "oracle/backends/fast_moe.h"

#include "oracle/backends/fast_adapters.h"
#include "oracle/backends/moe_adapters.h"

namespace lmo::oracle::fast_adapters {

fast::RouterConfig router_config(const RouterParams& p) {
  return op_adapters::router_config<fast::RouterConfig>(p);
}

void run_moe_router(const Op& op, fast::Storage s, const InputSet& in,
                    std::vector<GuardedBuffer>& out) {
  op_adapters::run_moe_router<FastMoe>(op, s, in, out);
}

void run_load_balance_loss(const Op& op, fast::Storage s, const InputSet& in,
                           std::vector<GuardedBuffer>& out) {
  op_adapters::run_load_balance_loss<FastMoe>(op, s, in, out);
}

void run_aux_free_update(const Op& op, fast::Storage s, const InputSet& in,
                         std::vector<GuardedBuffer>& out) {
  op_adapters::run_aux_free_update<FastMoe>(op, s, in, out);
}

}  // namespace lmo::oracle::fast_adapters
