// Oracle ops of the feed-forward sublayers (reference/ffn.h), on x [tokens, d] → y [tokens, d]:
//   ffn      F03/F04: act(x W1 (+ b1)) W2 (+ b2), W1 [d, d_ff], W2 [d_ff, d]; "bias": true is
//            F03's biased form (with ReLU, the original Transformer; GPT-2 uses GELU-tanh);
//   glu_ffn  F05: (act(x W) ⊙ x V) W2, W and V [d, d_ff], W2 [d_ff, d]: ReGLU, GeGLU, GeGLU-tanh
//            (Gemma), SwiGLU (Llama, PaLM) by "activation".
// Every product accumulates in the compute type (a naive kernel's GEMM) and is rounded once.
#pragma once

#include <cstdint>

#include "oracle/core/op_generic.h"
#include "reference/activation_kind.h"

namespace lmo::oracle {

struct FfnParams {
  bool gated = false;  // glu_ffn
  bool bias = false;   // ffn only
  ref::Activation act = ref::Activation::kReLU;
  int64_t tokens = 0;
  int64_t d = 0;
  int64_t d_ff = 0;
};

// A case's "activation": relu, gelu, gelu_tanh or silu (required: the choice is the point).
ref::Activation read_activation(ParamReader& r);

class FfnOp : public GenericOp<FfnOp> {
 public:
  explicit FfnOp(FfnParams p) : p_(p) {}
  const FfnParams& params() const { return p_; }
  std::vector<InputDecl> inputs() const override;
  std::vector<OutputDecl> outputs() const override { return {{"y", {p_.tokens, p_.d}}}; }
  double cost() const override {
    return (p_.gated ? 6.0 : 4.0) * static_cast<double>(p_.tokens) * static_cast<double>(p_.d) *
           static_cast<double>(p_.d_ff);
  }
  // Rows are tokens: x per row, the weights and biases read whole.
  int64_t independent_rows() const override { return p_.tokens; }
  std::unique_ptr<Op> with_rows(int64_t rows) const override {
    FfnParams p = p_;
    p.tokens = rows;
    return std::make_unique<FfnOp>(p);
  }
  bool row_input(std::string_view name) const override { return name == "x"; }
  // compute<mp> plus the error scale of the naive-relative policy (ffn_error_scale.h).
  void annotate_exact(const InputSet& in, Outputs<ref::mp>& out) const override;
  template <class T>
  Outputs<T> compute(const InputSet& in) const;
  // hidden (x·W1, x·W and x·V as the first GEMMs store them), act (the activation's output) and,
  // for glu_ffn, gated (act(x·W) ⊙ x·V entering W2): the tensors a framework's MLP stores between
  // its kernels (PyTorch in bf16: each one a bf16 tensor).
  std::vector<RoundingPoint> rounding_points() const override;
  template <class T>
  Outputs<T> compute(const InputSet& in, const BoundRecipe& recipe) const;

 private:
  FfnParams p_;
};

}  // namespace lmo::oracle
