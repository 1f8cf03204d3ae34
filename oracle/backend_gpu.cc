// The gpu backend (built only with CUDA; registered only when gpu/api.h finds a device): the
// CUDA kernels of gpu/ through their host interface. Each op the GPU path implements has an
// adapter here from the oracle's op (its parameters and inputs) to gpu/api.h, the same shapes as
// the fast backend's (backend_fast.cc); other ops are reported unsupported with the reason.
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <typeinfo>

#include "gpu/api.h"
#include "oracle/backend.h"
#include "oracle/backend_registry.h"
#include "oracle/ops/activations.h"
#include "oracle/ops/norms.h"
#include "oracle/ops/rope.h"
#include "oracle/ops/softmax.h"

namespace lmo::oracle {
namespace {

using Adapter =
    std::function<void(const Op&, gpu::Storage, const InputSet&, std::vector<GuardedBuffer>&)>;

const void* ptr(const InputSet& in, std::string_view name) { return in.at(name).bytes().data(); }

template <class T>
const T& as(const Op& op) {
  const T* p = dynamic_cast<const T*>(&op);
  if (!p) throw std::logic_error("gpu backend: the op is not a " + std::string(typeid(T).name()));
  return *p;
}

// Per-row f32 results stored into an output of the storage format, rounded to nearest-even:
// what a kernel writing that format would store.
void store_floats(const std::vector<float>& v, GuardedBuffer& b) {
  ref::Tensor t(b.dtype(), b.shape());
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, v[static_cast<size_t>(i)]);
  std::copy(t.bytes().begin(), t.bytes().end(), static_cast<uint8_t*>(b.data()));
}

gpu::Activation gpu_act(ref::Activation a) {
  switch (a) {
    case ref::Activation::kReLU:
      return gpu::Activation::relu;
    case ref::Activation::kGELU:
      return gpu::Activation::gelu;
    case ref::Activation::kGELUTanh:
      return gpu::Activation::gelu_tanh;
    case ref::Activation::kSiLU:
      return gpu::Activation::silu;
  }
  throw std::logic_error("gpu backend: unknown activation");
}

void run_norm(const Op& op, gpu::Storage s, const InputSet& in, std::vector<GuardedBuffer>& out) {
  const NormParams& p = as<NormOp>(op).params();
  const auto eps = static_cast<float>(p.eps);
  if (p.kind == NormKind::kLayer) {
    gpu::layernorm(s, ptr(in, "x"), ptr(in, "gamma"), ptr(in, "beta"), out[0].data(), p.rows,
                   p.d, eps);
  } else {
    gpu::rmsnorm(s, ptr(in, "x"), ptr(in, "gamma"), out[0].data(), p.rows, p.d, eps,
                 p.kind == NormKind::kRmsGemma);
  }
}

void run_elementwise(const Op& op, gpu::Storage s, const InputSet& in,
                     std::vector<GuardedBuffer>& out) {
  const ElementwiseParams& p = as<ElementwiseOp>(op).params();
  switch (p.kind) {
    case ElementwiseKind::kActivation:
      gpu::activation(gpu_act(p.act), s, ptr(in, "x"), out[0].data(), p.n);
      return;
    case ElementwiseKind::kGluGate:
      gpu::glu_gate(gpu_act(p.act), s, ptr(in, "a"), ptr(in, "b"), out[0].data(), p.n);
      return;
    case ElementwiseKind::kSoftcap:
      gpu::softcap(s, ptr(in, "z"), out[0].data(), p.n, static_cast<float>(p.cap));
      return;
  }
}

void run_softmax(const Op& op, gpu::Storage s, const InputSet& in,
                 std::vector<GuardedBuffer>& out) {
  const SoftmaxParams& p = as<SoftmaxOp>(op).params();
  switch (p.kind) {
    case SoftmaxKind::kSoftmax:
    case SoftmaxKind::kOnline:  // one softmax kernel computes both: the same function
      gpu::softmax(s, ptr(in, "z"), out[0].data(), p.rows, p.n);
      return;
    case SoftmaxKind::kLogsumexp: {
      std::vector<float> lse(static_cast<size_t>(p.rows));
      gpu::logsumexp(s, ptr(in, "z"), lse.data(), p.rows, p.n);
      store_floats(lse, out[0]);
      return;
    }
    case SoftmaxKind::kCrossEntropy: {
      std::vector<float> loss(static_cast<size_t>(p.rows)), logz(loss.size());
      const auto* target = reinterpret_cast<const int64_t*>(ptr(in, "target"));
      gpu::cross_entropy(s, ptr(in, "z"), target, p.rows, p.n, static_cast<float>(p.lambda),
                         static_cast<float>(p.cap), loss.data(), logz.data(), out[2].data());
      store_floats(loss, out[0]);
      store_floats(logz, out[1]);
      return;
    }
  }
}

std::optional<gpu::Storage> storage_of(ref::Format f);

// rope: the frequencies by the case's scaling rule and YaRN's factor evaluated in double on the
// host (as serving stacks compute inv_freq once), the angles on the device; rope_table: the
// table input in its stored format (f32 or the case's storage).
void run_rope(const Op& op, gpu::Storage s, const InputSet& in, std::vector<GuardedBuffer>& out) {
  const RopeParams& p = as<RopeOp>(op).params();
  const gpu::RopeLayout layout = p.layout == ref::RopeLayout::kInterleaved
                                     ? gpu::RopeLayout::interleaved
                                     : gpu::RopeLayout::half_split;
  if (p.from_table) {
    const ref::Tensor& table = in.at("cos_sin");
    const std::optional<gpu::Storage> ts = storage_of(ref::dtype_format(table.dtype()));
    if (!ts) throw std::logic_error("gpu backend: rope_table's cos_sin is not f32, bf16 or f16");
    gpu::rope_table(s, ptr(in, "x"), *ts, table.bytes().data(), out[0].data(), p.tokens, p.heads,
                    p.head_dim, p.rotary_dims, layout);
    return;
  }
  const std::vector<double> inv_freq = rope_frequencies<double>(p);
  const std::vector<int64_t> positions = in.ints("positions");
  gpu::rope(s, ptr(in, "x"), positions.data(), inv_freq.data(), rope_cos_sin_factor<double>(p),
            out[0].data(), p.tokens, p.heads, p.head_dim, p.rotary_dims, layout);
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
      {"rope", run_rope},
      {"rope_table", run_rope},
  };
  return m;
}

std::optional<gpu::Storage> storage_of(ref::Format f) {
  switch (f) {
    case ref::Format::f32:
      return gpu::Storage::f32;
    case ref::Format::bf16:
      return gpu::Storage::bf16;
    case ref::Format::f16:
      return gpu::Storage::f16;
    default:
      return std::nullopt;
  }
}

class GpuBackend : public Backend {
 public:
  explicit GpuBackend(gpu::DeviceInfo dev) : dev_(std::move(dev)) {}
  std::string name() const override { return "gpu"; }
  std::string description() const override {
    return "CUDA kernels (gpu/) on " + dev_.name + " (sm_" + std::to_string(dev_.compute_major) +
           std::to_string(dev_.compute_minor) + "), f32/bf16/f16 storage, f32 results";
  }
  std::string unsupported(const Case& c, const Op&, ref::Format storage) const override {
    if (!adapters().count(c.op)) return "no GPU kernel for " + c.op + " yet";
    if (!storage_of(storage)) return "the GPU kernels store f32, bf16 and f16 only";
    return "";
  }
  void run(const RunContext& ctx, std::vector<GuardedBuffer>& outputs) override {
    adapters().find(ctx.c.op)->second(ctx.op, *storage_of(ctx.storage), ctx.in, outputs);
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
