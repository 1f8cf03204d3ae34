// The MoE part of the fast backend (backend_fast_moe.cc): fast/moe_router.h as a kernel library
// of oracle/backends/moe_adapters.h (also what tests/support/moe_cases.h's shared checks take),
// and the oracle's router parameters as the configuration of fast::moe_router.
#pragma once

#include "fast/moe_router.h"
#include "oracle/ops/moe.h"

namespace lmo::oracle::fast_adapters {

struct FastMoe {
  using Storage = fast::Storage;
  using RouterConfig = fast::RouterConfig;
  static constexpr auto* moe_router = &fast::moe_router;
  static constexpr auto* expert_balance = &fast::expert_balance;
  static constexpr auto* load_balance_loss = &fast::load_balance_loss;
  static constexpr auto* aux_free_update = &fast::aux_free_update;
};

// Every routing parameter of the op, routed_scale rounded once to f32 (as the naive f32 run does).
fast::RouterConfig router_config(const RouterParams& p);

}  // namespace lmo::oracle::fast_adapters
