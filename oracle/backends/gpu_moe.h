// Gpu-backend adapters (oracle/backends/gpu.cc's op map) for the MoE ops (oracle/ops/moe.h,
// moe_balance.h) on gpu/api_moe.h, as fast_moe.cc does for fast/.
#pragma once

#include <vector>

#include "gpu/api.h"
#include "gpu/api_moe.h"
#include "oracle/core/guarded_buffer.h"
#include "oracle/core/op.h"

namespace lmo::oracle {

// gpu/api_moe.h as a kernel library of oracle/backends/moe_adapters.h (also what
// tests/support/moe_cases.h's shared checks take).
struct GpuMoe {
  using Storage = gpu::Storage;
  using RouterConfig = gpu::RouterConfig;
  static constexpr auto* moe_router = &gpu::moe_router;
  static constexpr auto* expert_balance = &gpu::expert_balance;
  static constexpr auto* load_balance_loss = &gpu::load_balance_loss;
  static constexpr auto* aux_free_update = &gpu::aux_free_update;
};

// moe_router (gates, experts), load_balance_loss (loss, p), aux_free_update (the new bias).
void run_gpu_moe_router(const Op& op, gpu::Storage s, const InputSet& in,
                        std::vector<GuardedBuffer>& out);
void run_gpu_load_balance_loss(const Op& op, gpu::Storage s, const InputSet& in,
                               std::vector<GuardedBuffer>& out);
void run_gpu_aux_free_update(const Op& op, gpu::Storage s, const InputSet& in,
                             std::vector<GuardedBuffer>& out);
// moe_layer (y): gpu::moe_layer on the op's inputs, as stored.
void run_gpu_moe_layer(const Op& op, gpu::Storage s, const InputSet& in,
                       std::vector<GuardedBuffer>& out);

}  // namespace lmo::oracle
