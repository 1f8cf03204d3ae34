// The gpu backend's adapters of oracle/backends/gpu_ffn.h: oracle/backends/ffn_adapters.h's
// templates on gpu/api_ffn.h.
#include "oracle/backends/gpu_ffn.h"

#include "oracle/backends/ffn_adapters.h"

namespace lmo::oracle {
namespace {

// gpu/api_ffn.h as a kernel library of oracle/backends/ffn_adapters.h.
struct GpuFfn {
  using Storage = gpu::Storage;
  using Activation = gpu::Activation;
  static constexpr auto* ffn = &gpu::ffn;
  static constexpr auto* glu_ffn = &gpu::glu_ffn;
  static constexpr auto* decoder_block = &gpu::decoder_block;
};

}  // namespace

void run_gpu_ffn(const Op& op, gpu::Storage s, const InputSet& in,
                 std::vector<GuardedBuffer>& out) {
  op_adapters::run_ffn<GpuFfn>(op, s, in, out);
}

void run_gpu_decoder_block(const Op& op, gpu::Storage s, const InputSet& in,
                           std::vector<GuardedBuffer>& out) {
  op_adapters::run_decoder_block<GpuFfn>(op, s, in, out);
}

std::string gpu_decoder_block_unsupported(KernelEntry entry, const Op& op) {
  if (entry != KernelEntry::kDecoderBlock) return "";
  const DecoderBlockParams& p = op_adapters::op_as<DecoderBlockOp>(op).params();
  if (p.heads > 0 && p.d / p.heads > gpu::kGpuAttentionMaxDim) {
    return "d/heads = " + std::to_string(p.d / p.heads) + " exceeds the GPU attention kernel's " +
           std::to_string(gpu::kGpuAttentionMaxDim);
  }
  return "";
}

}  // namespace lmo::oracle
