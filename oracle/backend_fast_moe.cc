// The fast backend's adapters for the MoE ops: oracle/backend_moe_adapters.h on fast/moe_router.h.
#include "oracle/backend_fast_moe.h"

#include "oracle/backend_fast_adapters.h"
#include "oracle/backend_moe_adapters.h"

namespace lmo::oracle::fast_adapters {
namespace {

// fast/moe_router.h as the kernel library of oracle/backend_moe_adapters.h.
struct FastMoe {
  using Storage = fast::Storage;
  using RouterConfig = fast::RouterConfig;
  static constexpr auto* moe_router = &fast::moe_router;
  static constexpr auto* expert_balance = &fast::expert_balance;
  static constexpr auto* load_balance_loss = &fast::load_balance_loss;
  static constexpr auto* aux_free_update = &fast::aux_free_update;
};

}  // namespace

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
