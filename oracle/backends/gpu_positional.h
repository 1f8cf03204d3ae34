// Gpu-backend adapters (oracle/backends/gpu.cc's op map) for the learned and relative position
// ops learned_position, shaw_logits and t5_bias (oracle/ops/positional.h) on
// gpu/api_positional.h, through the templates oracle/backends/positional_adapters.h shares with
// the fast backend. (sinusoidal_pe's adapter is in oracle/backends/gpu_moe.h.)
#pragma once

#include <vector>

#include "gpu/api.h"
#include "oracle/core/guarded_buffer.h"
#include "oracle/core/op.h"

namespace lmo::oracle {

// learned_position: output h.
void run_gpu_learned_position(const Op& op, gpu::Storage s, const InputSet& in,
                              std::vector<GuardedBuffer>& out);
// shaw_logits: output e.
void run_gpu_shaw_logits(const Op& op, gpu::Storage s, const InputSet& in,
                         std::vector<GuardedBuffer>& out);
// t5_bias: output bias.
void run_gpu_t5_bias(const Op& op, gpu::Storage s, const InputSet& in,
                     std::vector<GuardedBuffer>& out);

}  // namespace lmo::oracle
