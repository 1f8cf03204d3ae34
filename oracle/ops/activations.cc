#include "oracle/ops/activations.h"

#include "oracle/ops/families.h"
#include "oracle/ops/limits.h"
#include "reference/activations.h"
#include "reference/ffn.h"
#include "reference/softmax.h"

namespace lmo::oracle {

std::vector<InputDecl> ElementwiseOp::inputs() const {
  switch (p_.kind) {
    case ElementwiseKind::kActivation:
      // σ = 3 reaches both tails (GELU's negative tail is where unstable forms fail).
      return {{"x", {p_.n}, Dist::kNormal, 0, 3}};
    case ElementwiseKind::kGluGate:
      return {{"a", {p_.n}, Dist::kNormal, 0, 3}, {"b", {p_.n}, Dist::kNormal, 0, 1}};
    case ElementwiseKind::kSoftcap:
      // Logits up to about twice the cap: the saturating part of tanh.
      return {{"z", {p_.n}, Dist::kNormal, 0, p_.cap}};
  }
  return {};
}

std::vector<OutputDecl> ElementwiseOp::outputs() const { return {{"y", {p_.n}}}; }

template <class T>
Outputs<T> ElementwiseOp::compute(const InputSet& in) const {
  Outputs<T> out(1);
  std::vector<T>& y = out[0].values;
  switch (p_.kind) {
    case ElementwiseKind::kActivation: {
      const std::vector<T> x = in.values<T>("x");
      y = ref::activate<T>(p_.act, x, p_.literal);
      break;
    }
    case ElementwiseKind::kGluGate: {
      const std::vector<T> a = in.values<T>("a");
      const std::vector<T> b = in.values<T>("b");
      y = ref::glu_gate<T>(a, b, p_.act, p_.literal);
      break;
    }
    case ElementwiseKind::kSoftcap: {
      const std::vector<T> z = in.values<T>("z");
      y = ref::softcap<T>(std::span<const T>(z), T(p_.cap));
      break;
    }
  }
  return out;
}

namespace {

// Condition number of the inner function of the stable evaluations in reference/activations.h
// at the argument a kernel forms from x: erfc at −x/√2 for GELU, κ = |a·erfc'(a)/erfc(a)| =
// 2|a|e^{−a²}/(√π erfc(a)); sigmoid at s = 2√(2/π)(x + 0.044715x³) for GELU-tanh,
// κ = |s|·(1 − σ(s)). Other activations take x itself (exact): κ = 0.
}  // namespace

double activation_condition(ref::Activation act, const ref::mp& x) {
  using ref::mp;
  if (act == ref::Activation::kGELU) {
    const mp a = -x / sqrt(mp(2));
    const mp e = erfc(a);
    if (e == 0) return 0;
    return static_cast<double>(abs(a) * 2 * exp(-a * a) / (sqrt(boost::math::constants::pi<mp>()) * e));
  }
  if (act == ref::Activation::kGELUTanh) {
    const mp s = 2 * ref::gelu_tanh_inner(x);
    return static_cast<double>(abs(s) * (1 - ref::sigmoid(s)));
  }
  return 0;
}

namespace {

OpInfo elementwise_info(std::string name, ElementwiseKind kind, ref::Activation act,
                        std::string catalog, std::string summary) {
  return {std::move(name), std::move(catalog), std::move(summary),
          [kind, act](ParamReader& r) {
            ElementwiseParams p;
            p.kind = kind;
            p.act = act;
            p.n = r.integer("n", 1, int64_t{1} << 28);
            if (kind == ElementwiseKind::kSoftcap) {
              p.cap = r.real("cap", 1e-3, 1e6);
            } else if (act != ref::Activation::kReLU) {
              p.literal = r.flag("literal", false);
            }
            return std::make_unique<ElementwiseOp>(p);
          }};
}

}  // namespace

Outputs<ref::mp> ElementwiseOp::exact(const InputSet& in) const {
  Outputs<ref::mp> out = compute<ref::mp>(in);
  if (p_.kind != ElementwiseKind::kSoftcap &&
      (p_.act == ref::Activation::kGELU || p_.act == ref::Activation::kGELUTanh)) {
    const std::vector<ref::mp> x = in.values<ref::mp>(p_.kind == ElementwiseKind::kGluGate ? "a" : "x");
    out[0].condition.reserve(x.size());
    for (const ref::mp& v : x) out[0].condition.push_back(activation_condition(p_.act, v));
  }
  return out;
}

void add_activation_ops(std::vector<OpInfo>& ops) {
  using ref::Activation;
  constexpr ElementwiseKind kAct = ElementwiseKind::kActivation;
  constexpr ElementwiseKind kGlu = ElementwiseKind::kGluGate;
  ops.push_back(elementwise_info("relu", kAct, Activation::kReLU, "F06", "max(x, 0)"));
  ops.push_back(elementwise_info("gelu", kAct, Activation::kGELU, "F06", "x·Φ(x), exact"));
  ops.push_back(elementwise_info("gelu_tanh", kAct, Activation::kGELUTanh, "F06",
                                 "x/2·(1 + tanh(√(2/π)(x + 0.044715x³)))"));
  ops.push_back(elementwise_info("silu", kAct, Activation::kSiLU, "F06", "x·sigmoid(x)"));
  ops.push_back(elementwise_info("reglu_gate", kGlu, Activation::kReLU, "F05", "relu(a) ⊙ b"));
  ops.push_back(elementwise_info("geglu_gate", kGlu, Activation::kGELU, "F05", "gelu(a) ⊙ b"));
  ops.push_back(elementwise_info("geglu_tanh_gate", kGlu, Activation::kGELUTanh, "F05",
                                 "gelu_tanh(a) ⊙ b (Gemma)"));
  ops.push_back(elementwise_info("swiglu_gate", kGlu, Activation::kSiLU, "F05", "silu(a) ⊙ b"));
  ops.push_back(elementwise_info("softcap", ElementwiseKind::kSoftcap, Activation::kReLU, "F14",
                                 "cap·tanh(z/cap)"));
}

}  // namespace lmo::oracle
