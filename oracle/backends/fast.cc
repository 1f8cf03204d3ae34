// The fast backends: one per Highway target this build compiled and this CPU supports
// ("fast-avx2", "fast-sse4", ...), each forcing dynamic dispatch to its target for the call.
// Each op the fast path implements has an adapter here from the oracle's op (its parameters and
// inputs) to the plain-pointer API of fast/. Ops without an adapter are reported unsupported.
#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <stdexcept>

#include "fast/activations.h"
#include "fast/cross_entropy.h"
#include "fast/glu.h"
#include "fast/norms.h"
#include "fast/softcap.h"
#include "fast/softmax.h"
#include "fast/target_scope.h"
#include "fast/targets.h"
#include "oracle/backends/backend.h"
#include "oracle/backends/adapters.h"
#include "oracle/backends/fast_adapters.h"
#include "oracle/backends/fast_attention.h"
#include "oracle/backends/fast_rope.h"
#include "oracle/backends/registry.h"

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

const std::map<std::string, Adapter, std::less<>>& adapters() {
  static const std::map<std::string, Adapter, std::less<>> m = {
      {"rmsnorm", run_norm},
      {"fused_add_rmsnorm", run_fused_add_rmsnorm},
      {"rmsnorm_gemma", run_norm},
      {"layernorm", run_norm},
      {"relu", run_elementwise},
      {"gelu", run_elementwise},
      {"gelu_tanh", run_elementwise},
      {"silu", run_elementwise},
      {"reglu_gate", run_elementwise},
      {"geglu_gate", run_elementwise},
      {"geglu_tanh_gate", run_elementwise},
      {"swiglu_gate", run_elementwise},
      {"softcap", run_elementwise},
      {"softmax", run_softmax},
      {"online_softmax", run_softmax},
      {"logsumexp", run_softmax},
      {"cross_entropy", run_softmax},
      {"attention", run_fast_attention},
      {"attention_decode", run_fast_attention},
      {"paged_attention_decode", run_fast_paged_decode},
      {"mla_decode", run_fast_mla_decode},
      {"paged_mla_decode", run_fast_paged_mla_decode},
      {"rope", run_fast_rope},
      {"rope_table", run_fast_rope},
      {"sinusoidal_pe", run_fast_sinusoidal_pe},
      {"learned_position", fast_adapters::run_learned_position},
      {"shaw_logits", fast_adapters::run_shaw_logits},
      {"t5_bias", fast_adapters::run_t5_bias},
      {"moe_router", fast_adapters::run_moe_router},
      {"load_balance_loss", fast_adapters::run_load_balance_loss},
      {"aux_free_update", fast_adapters::run_aux_free_update},
      {"moe_layer", fast_adapters::run_moe_layer},
      {"ffn", fast_adapters::run_ffn},
      {"glu_ffn", fast_adapters::run_ffn},
      {"decoder_block", fast_adapters::run_decoder_block},
      {"fp8_quantize", fast_adapters::run_fp8_quantize},
      {"fp8_dequantize", fast_adapters::run_fp8_dequantize},
      {"fp8_linear", fast_adapters::run_fp8_linear},
  };
  return m;
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
    if (!adapters().count(c.op)) return "no fast kernel for " + c.op;
    if (!storage_of(storage)) return "the fast kernels store f32, bf16 and f16 only";
    return "";
  }
  void run(const RunContext& ctx, std::vector<GuardedBuffer>& outputs) override {
    const fast::ScopedTarget scope(target_.id);
    adapters().find(ctx.c.op)->second(ctx.op, *storage_of(ctx.storage), ctx.in, outputs);
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
