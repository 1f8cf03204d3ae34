// Gpu-backend adapters (oracle/backends/gpu.cc's op map) for the attention family: the ops
// attention, attention_decode (oracle/ops/attention.h) and mla_decode (oracle/ops/mla.h) on
// gpu/api_attention.h, as oracle/backends/fast_attention.h does for fast/.
#pragma once

#include <string>
#include <vector>

#include "gpu/api.h"
#include "oracle/core/guarded_buffer.h"
#include "oracle/core/op.h"

namespace lmo::oracle {

// attention and attention_decode: inputs q, k, v; output o.
void run_gpu_attention(const Op& op, gpu::Storage s, const InputSet& in,
                       std::vector<GuardedBuffer>& out);

// paged_attention_decode: inputs q, k_pages, v_pages, page_table, seq_lens; output o.
void run_gpu_paged_decode(const Op& op, gpu::Storage s, const InputSet& in,
                        std::vector<GuardedBuffer>& out);

// mla_decode: inputs q_c, q_r, c_kv, k_r, w_uk; output o.
void run_gpu_mla_decode(const Op& op, gpu::Storage s, const InputSet& in,
                        std::vector<GuardedBuffer>& out);
void run_gpu_paged_mla_decode(const Op& op, gpu::Storage s, const InputSet& in,
                              std::vector<GuardedBuffer>& out);

// Why the GPU attention kernels cannot run this op's shape (a width beyond
// gpu/api_attention.h's limits), or "" (also for ops of other families).
std::string gpu_attention_unsupported(KernelEntry entry, const Op& op);

}  // namespace lmo::oracle
