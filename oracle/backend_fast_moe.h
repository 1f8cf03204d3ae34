// The MoE part of the fast backend (backend_fast_moe.cc): the oracle's router parameters as the
// configuration of fast::moe_router.
#pragma once

#include "fast/moe_router.h"
#include "oracle/ops/moe.h"

namespace lmo::oracle::fast_adapters {

// Every routing parameter of the op, routed_scale rounded once to f32 (as the naive f32 run does).
fast::RouterConfig router_config(const RouterParams& p);

}  // namespace lmo::oracle::fast_adapters
