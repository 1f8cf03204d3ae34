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
#include "oracle/backend.h"
#include "oracle/backend_fast_attention.h"
#include "oracle/backend_fast_rope.h"
#include "oracle/backend_fast_adapters.h"
#include "oracle/backend_registry.h"
#include "oracle/ops/activations.h"
#include "oracle/ops/norms.h"
#include "oracle/ops/softmax.h"

namespace lmo::oracle {

void fast_adapters::store_floats(const std::vector<float>& v, GuardedBuffer& b) {
  ref::Tensor t(b.dtype(), b.shape());
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, v[static_cast<size_t>(i)]);
  std::copy(t.bytes().begin(), t.bytes().end(), static_cast<uint8_t*>(b.data()));
}

namespace {

using fast_adapters::Adapter;
using fast_adapters::as;
using fast_adapters::ptr;
using fast_adapters::store_floats;

fast::Activation fast_act(ref::Activation a) {
  switch (a) {
    case ref::Activation::kReLU:
      return fast::Activation::relu;
    case ref::Activation::kGELU:
      return fast::Activation::gelu;
    case ref::Activation::kGELUTanh:
      return fast::Activation::gelu_tanh;
    case ref::Activation::kSiLU:
      return fast::Activation::silu;
  }
  throw std::logic_error("fast backend: unknown activation");
}

void run_norm(const Op& op, fast::Storage s, const InputSet& in, std::vector<GuardedBuffer>& out) {
  const NormParams& p = as<NormOp>(op).params();
  const auto eps = static_cast<float>(p.eps);
  if (p.kind == NormKind::kLayer) {
    fast::layernorm(s, ptr(in, "x"), ptr(in, "gamma"), ptr(in, "beta"), out[0].data(), p.rows, p.d,
                    eps);
  } else {
    fast::rmsnorm(s, ptr(in, "x"), ptr(in, "gamma"), out[0].data(), p.rows, p.d, eps,
                  p.kind == NormKind::kRmsGemma);
  }
}

void run_elementwise(const Op& op, fast::Storage s, const InputSet& in,
                     std::vector<GuardedBuffer>& out) {
  const ElementwiseParams& p = as<ElementwiseOp>(op).params();
  switch (p.kind) {
    case ElementwiseKind::kActivation:
      fast::activation(fast_act(p.act), s, ptr(in, "x"), out[0].data(), p.n);
      return;
    case ElementwiseKind::kGluGate:
      fast::glu_gate(fast_act(p.act), s, ptr(in, "a"), ptr(in, "b"), out[0].data(), p.n);
      return;
    case ElementwiseKind::kSoftcap:
      fast::softcap(s, ptr(in, "z"), out[0].data(), p.n, static_cast<float>(p.cap));
      return;
  }
}

void run_softmax(const Op& op, fast::Storage s, const InputSet& in,
                 std::vector<GuardedBuffer>& out) {
  const SoftmaxParams& p = as<SoftmaxOp>(op).params();
  switch (p.kind) {
    case SoftmaxKind::kSoftmax:
    case SoftmaxKind::kOnline:  // the fast softmax is the kernel for both: the same function
      fast::softmax(s, ptr(in, "z"), out[0].data(), p.rows, p.n);
      return;
    case SoftmaxKind::kLogsumexp: {
      std::vector<float> lse(static_cast<size_t>(p.rows));
      fast::logsumexp(s, ptr(in, "z"), lse.data(), p.rows, p.n);
      store_floats(lse, out[0]);
      return;
    }
    case SoftmaxKind::kCrossEntropy: {
      std::vector<float> loss(static_cast<size_t>(p.rows)), logz(loss.size());
      const auto* target = reinterpret_cast<const int64_t*>(ptr(in, "target"));
      fast::cross_entropy(s, ptr(in, "z"), target, p.rows, p.n, static_cast<float>(p.lambda),
                          static_cast<float>(p.cap), loss.data(), logz.data(), out[2].data());
      store_floats(loss, out[0]);
      store_floats(logz, out[1]);
      return;
    }
  }
}

const std::map<std::string, Adapter, std::less<>>& adapters() {
  static const std::map<std::string, Adapter, std::less<>> m = {
      {"rmsnorm", run_norm},
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
      {"mla_decode", run_fast_mla_decode},
      {"rope", run_fast_rope},
      {"rope_table", run_fast_rope},
      {"sinusoidal_pe", run_fast_sinusoidal_pe},
      {"moe_router", fast_adapters::run_moe_router},
      {"load_balance_loss", fast_adapters::run_load_balance_loss},
      {"aux_free_update", fast_adapters::run_aux_free_update},
  };
  return m;
}

std::optional<fast::Storage> storage_of(ref::Format f) {
  switch (f) {
    case ref::Format::f32:
      return fast::Storage::f32;
    case ref::Format::bf16:
      return fast::Storage::bf16;
    case ref::Format::f16:
      return fast::Storage::f16;
    default:
      return std::nullopt;
  }
}

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
