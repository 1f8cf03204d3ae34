// Gpu-backend adapters (oracle/backends/gpu.cc's op map) for the feed-forward ops ffn and glu_ffn
// (oracle/ops/ffn.h) and the decoder block (oracle/ops/blocks.h) on gpu/api_ffn.h, through the
// templates oracle/backends/ffn_adapters.h shares with the fast backend.
#pragma once

#include <string>
#include <vector>

#include "gpu/api.h"
#include "oracle/core/guarded_buffer.h"
#include "oracle/core/op.h"

namespace lmo::oracle {

// ffn and glu_ffn: output y.
void run_gpu_ffn(const Op& op, gpu::Storage s, const InputSet& in, std::vector<GuardedBuffer>& out);

// decoder_block: output y.
void run_gpu_decoder_block(const Op& op, gpu::Storage s, const InputSet& in,
                           std::vector<GuardedBuffer>& out);

// Why the GPU kernels cannot run this decoder block (a head width d/heads beyond the attention
// kernel's limit), or "" (also for ops of other families).
std::string gpu_decoder_block_unsupported(KernelEntry entry, const Op& op);

}  // namespace lmo::oracle
