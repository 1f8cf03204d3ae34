// Oracle op of the whole F20 MoE layer, as one fused kernel runs it: moe_layer on x [tokens, d]
//   logits = x W_r (W_r "router" [d, N]), the routing of moe_router's parameters (every F20
//   mode: sigmoid or softmax scores, the balancing bias, group-limited top-k, the routed
//   scale), then y = (x +) Σ_shared φ_s(x) + Σ_selected g_i φ_i(x), every expert φ a GLU FFN
//   (F05: (act(x W) ⊙ x V) W2, W and V [d, d_ff], W2 [d_ff, d]).
// Inputs: x, router, bias [N] (with "bias": true), w, v [N, d, d_ff] and w2 [N, d_ff, d] of the
// routed experts, ws, vs [S, d, d_ff] and w2s [S, d_ff, d] of the S shared ones. Output y.
// The reference is reference/moe.h's route_tokens and moe_layer over reference/ffn.h's glu_ffn:
// the same functions the decoder block's MoE sublayer runs (reference/decoder.h).
#pragma once

#include <cstdint>

#include "oracle/core/op_generic.h"
#include "oracle/ops/moe.h"
#include "reference/activation_kind.h"

namespace lmo::oracle {

struct MoeLayerParams {
  RouterParams router;  // tokens, experts, top_k and the routing rules
  int64_t d = 1;
  int64_t d_ff = 1;    // every expert's hidden width
  int64_t shared = 0;  // S shared experts
  ref::Activation act = ref::Activation::kSiLU;
  bool residual = false;  // y includes x (DeepSeek's code adds the residual in the block)
};

class MoeLayerOp : public GenericOp<MoeLayerOp> {
 public:
  explicit MoeLayerOp(MoeLayerParams p) : p_(p) {}
  const MoeLayerParams& params() const { return p_; }
  std::vector<InputDecl> inputs() const override;
  std::vector<OutputDecl> outputs() const override { return {{"y", {p_.router.tokens, p_.d}}}; }
  double cost() const override;
  template <class T>
  Outputs<T> compute(const InputSet& in) const;

 private:
  MoeLayerParams p_;
};

}  // namespace lmo::oracle
