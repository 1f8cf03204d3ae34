// The gpu backend's adapters for the attention ops: oracle/backends/attention_adapters.h on
// gpu/api_attention.h, and the shapes beyond the GPU kernels' limits.
#include "oracle/backends/gpu_attention.h"

#include <string>

#include "gpu/api_attention.h"
#include "oracle/backends/attention_adapters.h"

namespace lmo::oracle {
namespace {

using op_adapters::op_as;

// gpu/api_attention.h as the kernel library of oracle/backends/attention_adapters.h.
struct GpuAttention {
  using Storage = gpu::Storage;
  static constexpr auto* attention = &gpu::attention;
  static constexpr auto* attention_decode = &gpu::attention_decode;
  static constexpr auto* mla_decode = &gpu::mla_decode;
};

}  // namespace

void run_gpu_attention(const Op& op, gpu::Storage s, const InputSet& in,
                       std::vector<GuardedBuffer>& out) {
  op_adapters::run_attention<GpuAttention>(op, s, in, out);
}

void run_gpu_paged_decode(const Op& op, gpu::Storage s, const InputSet& in,
                        std::vector<GuardedBuffer>& out) {
  op_adapters::run_paged_decode<GpuAttention>(op, s, in, out);
}

void run_gpu_mla_decode(const Op& op, gpu::Storage s, const InputSet& in,
                        std::vector<GuardedBuffer>& out) {
  op_adapters::run_mla_decode<GpuAttention>(op, s, in, out);
}

void run_gpu_paged_mla_decode(const Op& op, gpu::Storage s, const InputSet& in,
                              std::vector<GuardedBuffer>& out) {
  op_adapters::run_paged_mla_decode<GpuAttention>(op, s, in, out);
}

std::string gpu_attention_unsupported(KernelEntry entry, const Op& op) {
  const std::string limit = std::to_string(gpu::kGpuAttentionMaxDim);
  if (entry == KernelEntry::kAttention) {
    if (op_as<AttentionOp>(op).params().head_dim > gpu::kGpuAttentionMaxDim) {
      return "the GPU attention kernel takes d <= " + limit;
    }
  } else if (entry == KernelEntry::kPagedAttentionDecode) {
    if (op_as<PagedDecodeOp>(op).params().heads.head_dim > gpu::kGpuAttentionMaxDim) {
      return "the GPU attention kernel takes d <= " + limit;
    }
  } else if (entry == KernelEntry::kMlaDecode || entry == KernelEntry::kPagedMlaDecode) {
    const MlaDecodeParams& p = entry == KernelEntry::kMlaDecode
                                   ? op_as<MlaDecodeOp>(op).params()
                                   : op_as<PagedMlaDecodeOp>(op).params().mla;
    if (p.latent_dim > gpu::kGpuAttentionMaxDim ||
        p.latent_dim + p.rope_dim > gpu::kGpuAttentionMaxKeyDim) {
      return "the GPU MLA kernel takes d_c <= " + limit +
             " and d_c + d_rope <= " + std::to_string(gpu::kGpuAttentionMaxKeyDim);
    }
  }
  return "";
}

}  // namespace lmo::oracle
