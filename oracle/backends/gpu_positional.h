// Gpu-backend adapters (oracle/backends/gpu.cc's op map) for the position ops rope and rope_table
// (oracle/ops/rope.h), sinusoidal_pe, learned_position, shaw_logits and t5_bias
// (oracle/ops/positional.h) on gpu/api.h and gpu/api_positional.h, through the templates
// oracle/backends/positional_adapters.h and rope_adapters.h share with the fast backend.
#pragma once

#include <vector>

#include "gpu/api.h"
#include "oracle/core/guarded_buffer.h"
#include "oracle/core/op.h"

namespace lmo::oracle {

// rope, rope_table: output y.
void run_gpu_rope(const Op& op, gpu::Storage s, const InputSet& in,
                  std::vector<GuardedBuffer>& out);
// sinusoidal_pe: output pe.
void run_gpu_sinusoidal_pe(const Op& op, gpu::Storage s, const InputSet& in,
                           std::vector<GuardedBuffer>& out);
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
