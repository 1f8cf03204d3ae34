// The gpu backend (built only with CUDA; registered only when gpu/api.h finds a device): the
// CUDA kernels of gpu/ through their host interface, one adapter per kernel entry of the ops'
// records (kernel_entry.h). gpu/api.h has the fast/ API shape, so the
// norm, elementwise and softmax families use the shared adapters of oracle/backends/adapters.h;
// attention's and MLA's are in oracle/backends/gpu_attention.cc, MoE's in gpu_moe.cc, the FFNs'
// and the decoder block's in gpu_ffn.cc, the positions' (RoPE, the sinusoidal encoding, learned
// and relative positions) in gpu_positional.cc, fp8 scaling's in gpu_fp8.cc, fused_add_rmsnorm's
// here. Every kernel entry has its GPU kernel; an op without an entry (kNone: reference-only) is
// reported unsupported with the reason.
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpu/api.h"
#include "oracle/backends/adapters.h"
#include "oracle/backends/backend.h"
#include "oracle/backends/gpu_attention.h"
#include "oracle/backends/gpu_ffn.h"
#include "oracle/backends/gpu_fp8.h"
#include "oracle/backends/gpu_moe.h"
#include "oracle/backends/gpu_positional.h"
#include "oracle/backends/gpu_recipes.h"
#include "oracle/backends/registry.h"
#include "oracle/ops/registry.h"

namespace lmo::oracle {
namespace {

using op_adapters::Adapter;

// gpu/api.h as the kernel library of oracle/backends/adapters.h.
struct GpuKernels {
  using Storage = gpu::Storage;
  using Activation = gpu::Activation;
  static constexpr auto* rmsnorm = &gpu::rmsnorm;
  static constexpr auto* layernorm = &gpu::layernorm;
  static constexpr auto* activation = &gpu::activation;
  static constexpr auto* glu_gate = &gpu::glu_gate;
  static constexpr auto* softcap = &gpu::softcap;
  static constexpr auto* softmax = &gpu::softmax;
  static constexpr auto* logsumexp = &gpu::logsumexp;
  static constexpr auto* cross_entropy = &gpu::cross_entropy;
};

// fused_add_rmsnorm: x and residual in, the updated residual and y out (outputs in op order), as
// fast.cc's adapter.
void run_gpu_fused_add_rmsnorm(const Op& op, gpu::Storage s, const InputSet& in,
                               std::vector<GuardedBuffer>& out) {
  const NormParams& p = op_adapters::op_as<NormOp>(op).params();
  gpu::fused_add_rmsnorm(s, op_adapters::input_ptr(in, "x"), op_adapters::input_ptr(in, "residual"),
                         op_adapters::input_ptr(in, "gamma"), out[0].data(), out[1].data(), p.rows,
                         p.d, static_cast<float>(p.eps));
}

// gpu/'s adapter for each kernel entry of the ops' records (kernel_entry.h); nullptr for kNone.
Adapter<GpuKernels> gpu_adapter(KernelEntry e) {
  switch (e) {
    case KernelEntry::kNorm:
    case KernelEntry::kElementwise:
    case KernelEntry::kSoftmax:
      return op_adapters::common_adapter<GpuKernels>(e);
    case KernelEntry::kFusedAddRmsnorm:
      return run_gpu_fused_add_rmsnorm;
    case KernelEntry::kRope:
      return run_gpu_rope;
    case KernelEntry::kAttention:
      return run_gpu_attention;
    case KernelEntry::kPagedAttentionDecode:
      return run_gpu_paged_decode;
    case KernelEntry::kMlaDecode:
      return run_gpu_mla_decode;
    case KernelEntry::kPagedMlaDecode:
      return run_gpu_paged_mla_decode;
    case KernelEntry::kFfn:
      return run_gpu_ffn;
    case KernelEntry::kDecoderBlock:
      return run_gpu_decoder_block;
    case KernelEntry::kSinusoidalPe:
      return run_gpu_sinusoidal_pe;
    case KernelEntry::kLearnedPosition:
      return run_gpu_learned_position;
    case KernelEntry::kShawLogits:
      return run_gpu_shaw_logits;
    case KernelEntry::kT5Bias:
      return run_gpu_t5_bias;
    case KernelEntry::kMoeRouter:
      return run_gpu_moe_router;
    case KernelEntry::kLoadBalanceLoss:
      return run_gpu_load_balance_loss;
    case KernelEntry::kAuxFreeUpdate:
      return run_gpu_aux_free_update;
    case KernelEntry::kFp8Quantize:
      return run_gpu_fp8_quantize;
    case KernelEntry::kFp8Dequantize:
      return run_gpu_fp8_dequantize;
    case KernelEntry::kFp8Linear:
      return run_gpu_fp8_linear;
    case KernelEntry::kMoeLayer:
      return run_gpu_moe_layer;
    case KernelEntry::kNone:
      return nullptr;
  }
  return nullptr;
}

class GpuBackend : public Backend {
 public:
  explicit GpuBackend(gpu::DeviceInfo dev) : dev_(std::move(dev)) {}
  std::string name() const override { return "gpu"; }
  std::string description() const override {
    return "CUDA kernels (gpu/) on " + dev_.name + " (sm_" + std::to_string(dev_.compute_major) +
           std::to_string(dev_.compute_minor) + "), f32/bf16/f16 storage, f32 results";
  }
  std::string unsupported(const Case& c, const Op& op, ref::Format storage) const override {
    const KernelEntry entry = kernel_entry(c.op);
    if (!gpu_adapter(entry)) return "no GPU kernel for " + c.op;
    if (std::string why = gpu_attention_unsupported(entry, op); !why.empty()) return why;
    if (std::string why = gpu_decoder_block_unsupported(entry, op); !why.empty()) return why;
    if (!op_adapters::storage_of<gpu::Storage>(storage)) {
      return "the GPU kernels store f32, bf16 and f16 only";
    }
    return "";
  }
  // gpu_recipes.cc: what each kernel entry's GPU kernel follows.
  std::optional<Recipe> declared_recipe(KernelEntry entry) const override {
    return gpu_declared_recipe(entry);
  }
  void run(const RunContext& ctx, std::vector<GuardedBuffer>& outputs) override {
    gpu_adapter(kernel_entry(ctx.c.op))(ctx.op, *op_adapters::storage_of<gpu::Storage>(ctx.storage),
                                        ctx.in, outputs);
  }

 private:
  gpu::DeviceInfo dev_;
};

}  // namespace

void add_gpu_backends(std::vector<std::unique_ptr<Backend>>& out) {
  gpu::DeviceInfo dev = gpu::query_device();
  if (dev.present) out.push_back(std::make_unique<GpuBackend>(std::move(dev)));
}

}  // namespace lmo::oracle
