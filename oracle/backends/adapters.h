// Adapters from the oracle's ops (parameters and inputs) to a kernel library with the fast/ API
// shape: fast/*.h and gpu/api.h take the same arguments on plain pointers, so the fast and gpu
// backends share one adapter per op family. K names the library:
//   using Storage (enumerators f32, bf16, f16), using Activation (relu, gelu, gelu_tanh, silu),
//   and pointers to rmsnorm, layernorm, activation, glu_gate, softcap, softmax, logsumexp and
//   cross_entropy with the signatures of fast/*.h.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "oracle/backends/backend.h"
#include "oracle/core/kernel_entry.h"
#include "oracle/ops/activations.h"
#include "oracle/ops/norms.h"
#include "oracle/ops/softmax.h"

namespace lmo::oracle::op_adapters {

inline const void* input_ptr(const InputSet& in, std::string_view name) {
  return in.at(name).bytes().data();
}

template <class T>
const T& op_as(const Op& op) {
  const T* p = dynamic_cast<const T*>(&op);
  if (!p)
    throw std::logic_error("backend adapter: the op is not a " + std::string(typeid(T).name()));
  return *p;
}

// Per-row f32 results of a kernel stored into an output of the storage format, rounded to
// nearest-even: what a kernel writing that format would store.
inline void store_floats(const std::vector<float>& v, GuardedBuffer& b) {
  ref::Tensor t(b.dtype(), b.shape());
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, v[static_cast<size_t>(i)]);
  std::copy(t.bytes().begin(), t.bytes().end(), static_cast<uint8_t*>(b.data()));
}

// The library's storage for an oracle format, if it has one.
template <class S>
std::optional<S> storage_of(ref::Format f) {
  switch (f) {
    case ref::Format::f32:
      return S::f32;
    case ref::Format::bf16:
      return S::bf16;
    case ref::Format::f16:
      return S::f16;
    default:
      return std::nullopt;
  }
}

template <class A>
A activation_of(ref::Activation a) {
  switch (a) {
    case ref::Activation::kReLU:
      return A::relu;
    case ref::Activation::kGELU:
      return A::gelu;
    case ref::Activation::kGELUTanh:
      return A::gelu_tanh;
    case ref::Activation::kSiLU:
      return A::silu;
  }
  throw std::logic_error("backend adapter: unknown activation");
}

template <class K>
using Adapter = std::function<void(const Op&, typename K::Storage, const InputSet&,
                                   std::vector<GuardedBuffer>&)>;

template <class K>
void run_norm(const Op& op, typename K::Storage s, const InputSet& in,
              std::vector<GuardedBuffer>& out) {
  const NormParams& p = op_as<NormOp>(op).params();
  const auto eps = static_cast<float>(p.eps);
  if (p.kind == NormKind::kLayer) {
    K::layernorm(s, input_ptr(in, "x"), input_ptr(in, "gamma"), input_ptr(in, "beta"),
                 out[0].data(), p.rows, p.d, eps);
  } else {
    K::rmsnorm(s, input_ptr(in, "x"), input_ptr(in, "gamma"), out[0].data(), p.rows, p.d, eps,
               p.kind == NormKind::kRmsGemma);
  }
}

template <class K>
void run_elementwise(const Op& op, typename K::Storage s, const InputSet& in,
                     std::vector<GuardedBuffer>& out) {
  const ElementwiseParams& p = op_as<ElementwiseOp>(op).params();
  using A = typename K::Activation;
  switch (p.kind) {
    case ElementwiseKind::kActivation:
      K::activation(activation_of<A>(p.act), s, input_ptr(in, "x"), out[0].data(), p.n);
      return;
    case ElementwiseKind::kGluGate:
      K::glu_gate(activation_of<A>(p.act), s, input_ptr(in, "a"), input_ptr(in, "b"), out[0].data(),
                  p.n);
      return;
    case ElementwiseKind::kSoftcap:
      K::softcap(s, input_ptr(in, "z"), out[0].data(), p.n, static_cast<float>(p.cap));
      return;
  }
}

template <class K>
void run_softmax(const Op& op, typename K::Storage s, const InputSet& in,
                 std::vector<GuardedBuffer>& out) {
  const SoftmaxParams& p = op_as<SoftmaxOp>(op).params();
  switch (p.kind) {
    case SoftmaxKind::kSoftmax:
    case SoftmaxKind::kOnline:  // one softmax kernel computes both: the same function
      K::softmax(s, input_ptr(in, "z"), out[0].data(), p.rows, p.n);
      return;
    case SoftmaxKind::kLogsumexp: {
      std::vector<float> lse(static_cast<size_t>(p.rows));
      K::logsumexp(s, input_ptr(in, "z"), lse.data(), p.rows, p.n);
      store_floats(lse, out[0]);
      return;
    }
    case SoftmaxKind::kCrossEntropy: {
      std::vector<float> loss(static_cast<size_t>(p.rows)), logz(loss.size());
      const auto* target = reinterpret_cast<const int64_t*>(input_ptr(in, "target"));
      K::cross_entropy(s, input_ptr(in, "z"), target, p.rows, p.n, static_cast<float>(p.lambda),
                       static_cast<float>(p.cap), loss.data(), logz.data(), out[2].data());
      store_floats(loss, out[0]);
      store_floats(logz, out[1]);
      return;
    }
  }
}

// The adapters of the norm, elementwise and softmax entries (kernel_entry.h); nullptr for the
// other entries, which each library's backend adapts itself.
template <class K>
Adapter<K> common_adapter(KernelEntry e) {
  switch (e) {
    case KernelEntry::kNorm:
      return run_norm<K>;
    case KernelEntry::kElementwise:
      return run_elementwise<K>;
    case KernelEntry::kSoftmax:
      return run_softmax<K>;
    default:
      return nullptr;
  }
}

}  // namespace lmo::oracle::op_adapters
