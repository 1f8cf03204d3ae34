// The fast backends: one per Highway target this build compiled and this CPU supports
// ("fast-avx2", "fast-sse4", ...), each forcing dynamic dispatch to its target for the call.
// Each kernel entry fast/ implements (kernel_entry.h; an op's record names its entry) has an
// adapter here from the oracle's op (its parameters and inputs) to the plain-pointer API of
// fast/. Ops whose entry has no adapter are reported unsupported.
#include <algorithm>
#include <cctype>
#include <functional>
#include <stdexcept>

#include "fast/activations.h"
#include "fast/cross_entropy.h"
#include "fast/glu.h"
#include "fast/norms.h"
#include "fast/softcap.h"
#include "fast/softmax.h"
#include "fast/target_scope.h"
#include "fast/targets.h"
#include "oracle/backends/adapters.h"
#include "oracle/backends/backend.h"
#include "oracle/backends/fast_adapters.h"
#include "oracle/backends/fast_attention.h"
#include "oracle/backends/registry.h"
#include "oracle/ops/registry.h"

namespace lmo::oracle {

namespace {

// fast/ as the kernel library of the shared adapters (oracle/backends/adapters.h).
struct FastKernels {
  using Storage = fast::Storage;
  using Activation = fast::Activation;
  static constexpr auto* rmsnorm = &fast::rmsnorm;
  static constexpr auto* layernorm = &fast::layernorm;
  static constexpr auto* activation = &fast::activation;
  static constexpr auto* glu_gate = &fast::glu_gate;
  static constexpr auto* softcap = &fast::softcap;
  static constexpr auto* softmax = &fast::softmax;
  static constexpr auto* logsumexp = &fast::logsumexp;
  static constexpr auto* cross_entropy = &fast::cross_entropy;
};
using Adapter = fast_adapters::Adapter;  // = op_adapters::Adapter<FastKernels>
constexpr auto* run_norm = &op_adapters::run_norm<FastKernels>;
constexpr auto* run_elementwise = &op_adapters::run_elementwise<FastKernels>;
constexpr auto* run_softmax = &op_adapters::run_softmax<FastKernels>;

// fused_add_rmsnorm: x and residual in, the updated residual and y out (outputs in op order).
void run_fused_add_rmsnorm(const Op& op, fast::Storage s, const InputSet& in,
                           std::vector<GuardedBuffer>& out) {
  const NormParams& p = op_adapters::op_as<NormOp>(op).params();
  fast::fused_add_rmsnorm(s, op_adapters::input_ptr(in, "x"),
                          op_adapters::input_ptr(in, "residual"),
                          op_adapters::input_ptr(in, "gamma"), out[0].data(), out[1].data(),
                          p.rows, p.d, static_cast<float>(p.eps));
}

// fast/'s adapter for each kernel entry of the ops' records (kernel_entry.h); nullptr: none.
Adapter adapter(KernelEntry e) {
  switch (e) {
    case KernelEntry::kNone:
      return nullptr;
    case KernelEntry::kNorm:
    case KernelEntry::kElementwise:
    case KernelEntry::kSoftmax:
      return op_adapters::common_adapter<FastKernels>(e);
    case KernelEntry::kFusedAddRmsnorm:
      return run_fused_add_rmsnorm;
    case KernelEntry::kAttention:
      return run_fast_attention;
    case KernelEntry::kPagedAttentionDecode:
      return run_fast_paged_decode;
    case KernelEntry::kMlaDecode:
      return run_fast_mla_decode;
    case KernelEntry::kPagedMlaDecode:
      return run_fast_paged_mla_decode;
    case KernelEntry::kRope:
      return fast_adapters::run_rope;
    case KernelEntry::kSinusoidalPe:
      return fast_adapters::run_sinusoidal_pe;
    case KernelEntry::kLearnedPosition:
      return fast_adapters::run_learned_position;
    case KernelEntry::kShawLogits:
      return fast_adapters::run_shaw_logits;
    case KernelEntry::kT5Bias:
      return fast_adapters::run_t5_bias;
    case KernelEntry::kMoeRouter:
      return fast_adapters::run_moe_router;
    case KernelEntry::kLoadBalanceLoss:
      return fast_adapters::run_load_balance_loss;
    case KernelEntry::kAuxFreeUpdate:
      return fast_adapters::run_aux_free_update;
    case KernelEntry::kMoeLayer:
      return fast_adapters::run_moe_layer;
    case KernelEntry::kFfn:
      return fast_adapters::run_ffn;
    case KernelEntry::kDecoderBlock:
      return fast_adapters::run_decoder_block;
    case KernelEntry::kFp8Quantize:
      return fast_adapters::run_fp8_quantize;
    case KernelEntry::kFp8Dequantize:
      return fast_adapters::run_fp8_dequantize;
    case KernelEntry::kFp8Linear:
      return fast_adapters::run_fp8_linear;
  }
  return nullptr;
}

constexpr auto* storage_of = &op_adapters::storage_of<fast::Storage>;

class FastBackend : public Backend {
 public:
  explicit FastBackend(fast::SimdTarget t) : target_(std::move(t)) {}
  std::string name() const override {
    std::string n = target_.name;
    std::transform(n.begin(), n.end(), n.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    return "fast-" + n;
  }
  std::string description() const override {
    return "Highway SIMD kernels (fast/), target " + target_.name +
           ", f32 compute, f32/bf16/f16 storage";
  }
  std::string unsupported(const Case& c, const Op&, ref::Format storage) const override {
    if (!adapter(kernel_entry(c.op))) return "no fast kernel for " + c.op;
    if (!storage_of(storage)) return "the fast kernels store f32, bf16 and f16 only";
    return "";
  }
  void run(const RunContext& ctx, std::vector<GuardedBuffer>& outputs) override {
    const fast::ScopedTarget scope(target_.id);
    adapter(kernel_entry(ctx.c.op))(ctx.op, *storage_of(ctx.storage), ctx.in, outputs);
  }

 private:
  fast::SimdTarget target_;
};

}  // namespace

void add_fast_backends(std::vector<std::unique_ptr<Backend>>& out) {
  for (const fast::SimdTarget& t : fast::compiled_targets()) {
    if (t.supported) out.push_back(std::make_unique<FastBackend>(t));
  }
}

}  // namespace lmo::oracle
