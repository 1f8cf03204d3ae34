// Oracle ops of F06 (relu, gelu, gelu_tanh, silu), the GLU gates of F05 (reglu_gate,
// geglu_gate, swiglu_gate: act(a) ⊙ b) and F14's soft-cap, all elementwise over n values.
#pragma once

#include <cstdint>

#include "oracle/core/op_generic.h"
#include "reference/activation_kind.h"

namespace lmo::oracle {

enum class ElementwiseKind : uint8_t { kActivation, kGluGate, kSoftcap };

struct ElementwiseParams {
  ElementwiseKind kind = ElementwiseKind::kActivation;
  ref::Activation act = ref::Activation::kReLU;
  int64_t n = 0;
  double cap = 0;        // kSoftcap
  bool literal = false;  // the printed formula instead of the stable evaluation (activations.h)
};

// The condition number of the inner function of act's stable evaluation at the argument formed
// from x (erfc at −x/√2 for GELU, sigmoid at 2u for GELU-tanh; 0 for the others, whose inner
// function takes x itself): what Policy::arg_error multiplies (policy.h).
double activation_condition(ref::Activation act, const ref::mp& x);

// The error scale S (policy.h rule (2), in units of u = 2^-24) of an f32 kernel evaluating act's
// literal form at x with result y: the magnitude each of its roundings carries to the output,
// with the kernel's erf, tanh and exp within kLibmUlps ulps (activations.cc).
double literal_error_scale(ref::Activation act, double x, double y);

class ElementwiseOp : public GenericOp<ElementwiseOp> {
 public:
  explicit ElementwiseOp(ElementwiseParams p) : p_(p) {}
  const ElementwiseParams& params() const { return p_; }
  std::vector<InputDecl> inputs() const override;
  std::vector<OutputDecl> outputs() const override;
  double cost() const override { return 10.0 * static_cast<double>(p_.n); }
  // Every element its own row.
  int64_t independent_rows() const override { return p_.n; }
  std::unique_ptr<Op> with_rows(int64_t rows) const override {
    ElementwiseParams p = p_;
    p.n = rows;
    return std::make_unique<ElementwiseOp>(p);
  }
  // compute<mp> plus the condition numbers the gelu policies need (policy.h, arg_error).
  void annotate_exact(const InputSet& in, Outputs<ref::mp>& out) const override;
  template <class T>
  Outputs<T> compute(const InputSet& in) const;
  // gelu, gelu_tanh, silu: form (stable | literal).
  std::vector<RoundingPoint> rounding_points() const override;
  // literal: true fixes form=literal, so the case is judged as the literal form it runs.
  std::map<std::string, std::string> implied_points() const override;
  template <class T>
  Outputs<T> compute(const InputSet& in, const BoundRecipe& recipe) const;
  // softcap, and the stable GELU, GELU-tanh and SiLU (gates too): all elements' exponentials at
  // once (reference/softcap_balls.h, sigmoid_balls.h, ball.h's erfc_many); ReLU and the literal
  // forms the formula on balls.
  std::optional<Outputs<ref::Ball>> enclosure(const InputSet& in) const override;

 private:
  ElementwiseParams p_;
};

}  // namespace lmo::oracle
