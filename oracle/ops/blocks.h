// Oracle op of F18: decoder_block, one transformer block at small dims in one of the layouts of
// reference/blocks.h (post_ln, pre_ln, double_norm, olmo2, parallel), composed of RMSNorm (F02),
// causal attention with h query heads on g KV heads (F15; no positional encoding: RoPE and the
// absolute encodings have their own ops, the block's point is how sublayers, norms and residual
// additions are put together) and a SwiGLU (F05) or GELU (F04) FFN without biases.
//
// Inputs x [tokens, d]; w_q [d, d], w_k and w_v [d, g·d/h], w_o [d, d]; the FFN's weights (SwiGLU:
// w1 = W and v = V [d, d_ff], w2 [d_ff, d]; GELU: w1 and w2); one γ [d] per
// norm the layout has (named as in reference/decoder.h's LayerWeights: attn_norm, ffn_norm,
// attn_post_norm, ffn_post_norm). Output y [tokens, d], the block's output (no final norm: that
// belongs to the stack).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "oracle/core/op_generic.h"
#include "reference/attention.h"
#include "reference/blocks.h"
#include "reference/ffn.h"
#include "reference/norms.h"

namespace lmo::oracle {

enum class BlockLayoutKind : uint8_t { kPostLn, kPreLn, kDoubleNorm, kOlmo2, kParallel };

struct DecoderBlockParams {
  BlockLayoutKind layout = BlockLayoutKind::kPreLn;
  int64_t tokens = 1;
  int64_t d = 1;
  int64_t heads = 1;     // h
  int64_t kv_heads = 1;  // g, a divisor of h
  int64_t d_ff = 1;
  bool swiglu = true;  // else a GELU (exact erf form) FFN
  double eps = 0;

  int64_t head_dim() const { return d / heads; }
  // The γ inputs of the layout's norms, in the order the layout applies them.
  std::vector<std::string> norm_names() const;
};

// The block's sublayers with their weights read from a case's inputs in T: what the op composes
// and what a test's mutant recomposes in a wrong layout.
template <class T>
struct BlockParts {
  DecoderBlockParams p;
  ref::AttentionConfig cfg;
  ref::Mat<T> w_q, w_k, w_v, w_o;
  ref::Mat<T> w1, v, w2;  // SwiGLU: w1 = W (gate), v = V (up); GELU: w1, w2 (v empty)
  std::map<std::string, std::vector<T>> gamma;
  T eps;

  // Causal attention on u (tokens × d): (u W_Q, u W_K, u W_V) → softmax → · W_O.
  ref::Mat<T> attn(const ref::Mat<T>& u) const {
    const ref::Mat<T> o = ref::attention<T>(ref::matmul<T>(u, w_q), ref::matmul<T>(u, w_k),
                                            ref::matmul<T>(u, w_v), cfg);
    return ref::matmul<T>(o, w_o);
  }
  ref::Mat<T> ffn(const ref::Mat<T>& u) const {
    if (p.swiglu) return ref::glu_ffn<T>(u, w1, v, w2, ref::Activation::kSiLU);
    return ref::ffn<T>(u, w1, w2, ref::Activation::kGELU);
  }
  // RMSNorm with the γ input of that name.
  ref::Mat<T> norm(const std::string& name, const ref::Mat<T>& u) const {
    return ref::rmsnorm<T>(u, std::span<const T>(gamma.at(name)), eps);
  }
  // norm(name, ·) as a callable for the layouts of reference/blocks.h.
  auto norm_fn(const std::string& name) const {
    return [this, name](const ref::Mat<T>& u) { return norm(name, u); };
  }
};

template <class T>
BlockParts<T> block_parts(const DecoderBlockParams& p, const InputSet& in) {
  BlockParts<T> b;
  b.p = p;
  b.cfg.heads = p.heads;
  b.cfg.kv_heads = p.kv_heads;
  b.cfg.head_dim = p.head_dim();
  b.cfg.mask = ref::MaskKind::kCausal;
  const int64_t kv = p.kv_heads * p.head_dim();
  b.w_q = ref::Mat<T>(p.d, p.d, in.values<T>("w_q"));
  b.w_k = ref::Mat<T>(p.d, kv, in.values<T>("w_k"));
  b.w_v = ref::Mat<T>(p.d, kv, in.values<T>("w_v"));
  b.w_o = ref::Mat<T>(p.d, p.d, in.values<T>("w_o"));
  b.w1 = ref::Mat<T>(p.d, p.d_ff, in.values<T>("w1"));
  if (p.swiglu) b.v = ref::Mat<T>(p.d, p.d_ff, in.values<T>("v"));
  b.w2 = ref::Mat<T>(p.d_ff, p.d, in.values<T>("w2"));
  for (const std::string& n : p.norm_names()) b.gamma[n] = in.values<T>(n);
  b.eps = ref::from_mp<T>(ref::mp(p.eps));
  return b;
}

// The block in the given layout (the case's own, or a mutant's wrong one where its norms exist).
template <class T>
ref::Mat<T> block_forward(const BlockParts<T>& b, BlockLayoutKind layout, const ref::Mat<T>& x) {
  auto attn = [&b](const ref::Mat<T>& u) { return b.attn(u); };
  auto ffn = [&b](const ref::Mat<T>& u) { return b.ffn(u); };
  switch (layout) {
    case BlockLayoutKind::kPostLn:
      return ref::post_ln_block(x, attn, ffn, b.norm_fn("attn_norm"), b.norm_fn("ffn_norm"));
    case BlockLayoutKind::kPreLn:
      return ref::pre_ln_block(x, attn, ffn, b.norm_fn("attn_norm"), b.norm_fn("ffn_norm"));
    case BlockLayoutKind::kDoubleNorm:
      return ref::double_norm_block(x, attn, ffn, b.norm_fn("attn_norm"),
                                    b.norm_fn("attn_post_norm"), b.norm_fn("ffn_norm"),
                                    b.norm_fn("ffn_post_norm"));
    case BlockLayoutKind::kOlmo2:
      return ref::olmo2_block(x, attn, ffn, b.norm_fn("attn_post_norm"),
                              b.norm_fn("ffn_post_norm"));
    case BlockLayoutKind::kParallel:
      return ref::parallel_block(x, attn, ffn, b.norm_fn("attn_norm"));
  }
  throw std::invalid_argument("block_forward: unknown layout");
}

class DecoderBlockOp : public GenericOp<DecoderBlockOp> {
 public:
  explicit DecoderBlockOp(DecoderBlockParams p) : p_(p) {}
  const DecoderBlockParams& params() const { return p_; }
  std::vector<InputDecl> inputs() const override;
  std::vector<OutputDecl> outputs() const override;
  double cost() const override;
  template <class T>
  Outputs<T> compute(const InputSet& in) const;

 private:
  DecoderBlockParams p_;
};

}  // namespace lmo::oracle
