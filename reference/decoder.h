// A decoder-only transformer stack driven by a model preset (presets.h, rows M01–M12; usually
// shrunk by preset_reduce.h): L layers of the preset's F18 block layout (blocks.h), each built
// from the F-row functions, then the final norm where the layout has one. Nothing here
// re-derives a formula: norms are norms.h, attention attention.h, RoPE rope.h/rope_scaling.h,
// FFNs ffn.h, MLA mla.h, MoE moe.h; this file only wires them as the preset says.
//
// What the stack takes and honours:
//  - x is the already-embedded input (tokens × d). Additive position encodings (F07 sinusoidal,
//    F08 learned: M01–M03) and embedding scalings (Gemma's √d) are applied to the embeddings by
//    the caller, before the stack; the LM head, the final-logit soft-cap (Gemma 2's 30) and the
//    losses come after it.
//  - positions: one per token, used by RoPE (F10, with the preset's F11 scaling) and by T5's
//    relative position bias (F09, bucket of pos_j − pos_i). Masks are by index: token i sees
//    token j ≤ i (causal), within the preset's window for sliding-window layers, within its
//    document when DecoderOptions::document_ids is given (Llama 3's document mask).
//  - norms: kind and ε from the preset (LayerNorm with β; LayerNorm without β, as LayerNorm with
//    β = 0; RMSNorm; Gemma's (1 + γ) RMSNorm); activation, gating and biases of the FFN; biases
//    of the attention projections; GQA/MQA (n_kv_heads); the attention soft-cap; the attention
//    pattern per layer (global, sliding window, GPT-3's banded layers as a causal band of the
//    preset's window, Cohere's global layers without RoPE); parallel or serial blocks; MLA (F19,
//    naive or absorbed) and MoE (F20, with F22's bias in the selection) for DeepSeek.
//
// Conventions and choices, each where a preset does not say:
//  - RoPE rotates the whole head (no partial rotary in any preset); its pair layout is
//    rope_layout_for(preset).
//  - YaRN (F11) for standard attention multiplies cos and sin by yarn_mscale(s) (HF transformers'
//    default attention factor); for MLA (DeepSeek) the frequencies are scaled and the softmax
//    scale is multiplied by yarn_mscale(s, mscale_all_dim)² (mla.h's mla_scale, as DeepSeek's
//    code does; cos and sin are left alone since its mscale equals mscale_all_dim).
//  - T5 (M12): the relative bias table is shared by every layer, the decoder's causal buckets
//    are used (bidirectional = false), and logits are not scaled by 1/√d (T5 folds that into its
//    initialization). Only the decoder's self-attention is modelled, no cross-attention.
//  - MoE: shared experts are separate FFNs of width d_ff_expert, summed as in F20 (DeepSeek's
//    code runs them as one FFN of width n_shared·d_ff_expert: equal in exact arithmetic).
//  - Not modelled (documented in presets.h or mla.h): OLMo 2's q/k norms, DeepSeek's norms on the
//    MLA latents, dropout.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/activations.h"
#include "reference/attention.h"
#include "reference/blocks.h"
#include "reference/decoder_weights.h"
#include "reference/ffn.h"
#include "reference/linalg.h"
#include "reference/mla.h"
#include "reference/moe.h"
#include "reference/norms.h"
#include "reference/parallel.h"
#include "reference/positional.h"
#include "reference/presets.h"
#include "reference/rope.h"
#include "reference/rope_preset.h"
#include "reference/rope_scaling.h"

namespace lmo::ref {

enum class MlaForm {
  kNaive,     // mla_naive: decompress keys and values, run MHA
  kAbsorbed,  // mla_absorbed: attend over the cached latents (C21: equal in exact arithmetic)
};

struct DecoderOptions {
  MlaForm mla_form = MlaForm::kNaive;
  // Parallel blocks with the attention and MLP input projections fused into one matmul
  // (parallel_block_fused, C20); bitwise equal to the unfused block in every type.
  bool fused_parallel = false;
  // One document id per token: global layers use the document mask (F15) instead of the causal
  // one. Empty: causal.
  std::vector<int64_t> document_ids;
  // Overrides rope_layout_for(preset).
  std::optional<RopeLayout> rope_layout;
};

// The RoPE pair layout of a preset, from the models' published code: interleaved pairs
// (2k, 2k+1) for DeepSeek's MLA (its reference inference code rotates consecutive pairs as
// complex numbers) and Cohere (HF CohereRotaryEmbedding's rotate_half interleaves); half-split
// pairs (k, k + d/2) for the others, HF transformers' rotate_half (Llama 2/3, Mistral, Gemma 2,
// OLMo 2). PaLM's code is not published: half-split is assumed.
inline RopeLayout rope_layout_for(const ModelPreset& p) {
  if (p.mla || p.name.starts_with("cohere")) return RopeLayout::kInterleaved;
  return RopeLayout::kHalfSplit;
}

// What layer l does, from the preset's attention pattern.
struct LayerPlan {
  AttentionLayer kind = AttentionLayer::kGlobal;
  bool rope = false;  // RoPE on q and k (standard attention; MLA rotates inside mla.h)
  MaskKind mask = MaskKind::kCausal;
  int64_t window = 0;
  bool moe = false;
};

inline LayerPlan layer_plan(const ModelPreset& p, int64_t layer, bool documents) {
  LayerPlan plan;
  plan.kind = p.layer_attention(layer);
  plan.moe = is_moe_layer(p, layer);
  plan.rope = p.position == PositionKind::kRope && !p.mla;
  plan.mask = documents ? MaskKind::kDocument : MaskKind::kCausal;
  switch (plan.kind) {
    case AttentionLayer::kGlobal:
      break;
    case AttentionLayer::kGlobalNoPosition:
      plan.rope = false;
      break;
    case AttentionLayer::kSlidingWindow:
    case AttentionLayer::kBandedSparse:
      // GPT-3's "locally banded sparse" layers are taken as a causal band of `window` keys; the
      // band width is not published, so the preset needs one from reduce().
      if (!p.window) {
        decoder_detail::fail(p, "layer " + std::to_string(layer) +
                                    " is windowed but the preset has no window; reduce() it "
                                    "with one");
      }
      if (documents) {
        decoder_detail::fail(p, "a document mask with sliding-window layers is not supported");
      }
      plan.mask = MaskKind::kSlidingWindow;
      plan.window = *p.window;
      break;
  }
  return plan;
}

// Per-stack values shared by every layer: the rope table at the tokens' positions, T5's bias.
template <class T>
struct DecoderContext {
  std::vector<int64_t> positions;
  RopeLayout rope_layout = RopeLayout::kHalfSplit;
  std::optional<RopeTable<T>> rope;    // standard attention with RoPE
  std::vector<Mat<mp>> relative_bias;  // T5: one T × T matrix per head
  DecoderOptions options;
};

// ε of the preset's norms, rounded once to T.
template <class T>
T norm_eps(const ModelPreset& p) {
  if (!p.norm_eps) {
    decoder_detail::fail(p, "norm_eps is not set (not published); reduce() the preset with one");
  }
  return preset_constant<T>(*p.norm_eps);
}

// The preset's norm (F01 or F02) on every row of x.
template <class T, class Acc = T>
Mat<T> apply_norm(const Mat<T>& x, const NormWeights<T>& w, const ModelPreset& p) {
  const T eps = norm_eps<T>(p);
  const std::span<const T> gamma(w.gamma);
  switch (p.norm) {
    case NormKind::kLayerNorm:
      return layernorm<T, Acc>(x, gamma, std::span<const T>(w.beta), eps);
    case NormKind::kLayerNormNoBias: {
      const std::vector<T> zero(w.gamma.size(), T(0));
      return layernorm<T, Acc>(x, gamma, std::span<const T>(zero), eps);
    }
    case NormKind::kRmsNorm:
      return rmsnorm<T, Acc>(x, gamma, eps);
    case NormKind::kRmsNormUnitOffset:
      return rmsnorm_gemma<T, Acc>(x, gamma, eps);
  }
  decoder_detail::fail(p, "unknown norm kind");
}

// y + b on every row (b empty: y unchanged); each sum rounded once to T.
template <class T>
Mat<T> add_row_bias(Mat<T> y, const std::vector<T>& b) {
  if (b.empty()) return y;
  if (static_cast<int64_t>(b.size()) != y.cols) {
    throw std::invalid_argument("add_row_bias: bias has " + std::to_string(b.size()) +
                                " values, expected " + std::to_string(y.cols));
  }
  for (int64_t i = 0; i < y.rows; ++i) {
    for (int64_t j = 0; j < y.cols; ++j) y(i, j) = y(i, j) + b[static_cast<size_t>(j)];
  }
  return y;
}

// The preset's dense FFN: F05 GLU (W, V, W2) when gated; F03 (ReLU) or ffn_with_bias with
// biases; F04 otherwise.
template <class T, class Acc = T>
Mat<T> dense_ffn(const Mat<T>& x, const FfnWeights<T>& w, const ModelPreset& p) {
  if (p.gated) return glu_ffn<T, Acc>(x, w.w1, w.v, w.w2, p.activation);
  if (p.biases) {
    if (p.activation == Activation::kReLU) {
      return ffn_relu_bias<T, Acc>(x, w.w1, std::span<const T>(w.b1), w.w2,
                                   std::span<const T>(w.b2));
    }
    return ffn_with_bias<T, Acc>(x, w.w1, std::span<const T>(w.b1), w.w2, std::span<const T>(w.b2),
                                 p.activation);
  }
  return ffn<T, Acc>(x, w.w1, w.w2, p.activation);
}

// The dense FFN's input weights, for fused projections: [W1], or [W, V] for a GLU.
template <class T>
std::vector<const Mat<T>*> ffn_input_weights(const FfnWeights<T>& w, const ModelPreset& p) {
  if (p.gated) return {&w.w1, &w.v};
  return {&w.w1};
}

// The rest of dense_ffn given its input projections (x W1, or x W and x V): the same operations
// in the same order, so ffn_tail(products of ffn_input_weights) == dense_ffn bitwise.
template <class T, class Acc = T>
Mat<T> ffn_tail(const std::vector<Mat<T>>& pre, const FfnWeights<T>& w, const ModelPreset& p) {
  if (pre.size() != (p.gated ? 2u : 1u)) {
    decoder_detail::fail(p, "ffn_tail: " + std::to_string(pre.size()) +
                                " input projections, expected " + (p.gated ? "2" : "1"));
  }
  const Mat<T>& a = pre[0];
  Mat<T> h(a.rows, a.cols);
  if (p.gated) {
    for (int64_t i = 0; i < a.rows; ++i) {
      const std::vector<T> hi = glu_gate(a.row(i), pre[1].row(i), p.activation);
      for (int64_t j = 0; j < a.cols; ++j) h(i, j) = hi[static_cast<size_t>(j)];
    }
    return matmul<T, Acc>(h, w.w2);
  }
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t j = 0; j < a.cols; ++j) {
      h(i, j) = p.biases ? activate(p.activation, T(a(i, j) + w.b1[static_cast<size_t>(j)]))
                         : activate(p.activation, a(i, j));
    }
  }
  return add_row_bias(matmul<T, Acc>(h, w.w2), p.biases ? w.b2 : std::vector<T>{});
}

// F20 MoE sublayer on u (tokens × d), without the residual (the block adds it): router logits
// u·e_i (one matmul, accumulated in Acc), route() with the preset's rules and F22's bias when
// the preset selects with one, then moe_layer with the shared and routed experts as dense FFNs
// (SwiGLU for DeepSeek).
template <class T, class Acc = T>
Mat<T> moe_sublayer(const Mat<T>& u, const MoeWeights<T>& w, const ModelPreset& p) {
  const MoeDims& m = *p.moe;
  RouterConfig<T> cfg;
  cfg.top_k = m.top_k;
  cfg.score = m.score;
  cfg.n_group = m.n_group;
  cfg.topk_group = m.topk_group;
  cfg.group_score = m.group_score;
  cfg.normalize = m.normalize;
  cfg.routed_scale = preset_constant<T>(m.routed_scale);
  const Mat<T> logits = matmul<T, Acc>(u, w.router);
  const std::span<const T> bias =
      m.balance_bias ? std::span<const T>(w.balance_bias) : std::span<const T>();
  const std::vector<Routing<T>> routing = route_tokens<T, Acc>(logits, bias, cfg);
  auto expert = [&p](const FfnWeights<T>& e) -> ExpertFn<T> {
    return [&e, &p](std::span<const T> row) {
      const Mat<T> x(1, static_cast<int64_t>(row.size()), std::vector<T>(row.begin(), row.end()));
      return dense_ffn<T, Acc>(x, e, p).data;
    };
  };
  std::vector<ExpertFn<T>> shared, routed;
  for (const FfnWeights<T>& e : w.shared) shared.push_back(expert(e));
  for (const FfnWeights<T>& e : w.routed) routed.push_back(expert(e));
  Mat<T> out(u.rows, u.cols);
  parallel_for(u.rows, [&](int64_t t) {
    const std::vector<T> h = moe_layer<T, Acc>(
        u.row(t), routing[static_cast<size_t>(t)], std::span<const ExpertFn<T>>(shared),
        std::span<const ExpertFn<T>>(routed), /*residual=*/false);
    std::copy(h.begin(), h.end(), out.row(t).begin());
  });
  return out;
}

// The F15 configuration of layer `plan` of the preset.
template <class T>
AttentionConfig layer_attention_config(const ModelPreset& p, const LayerPlan& plan,
                                       const DecoderContext<T>& ctx) {
  AttentionConfig cfg;
  cfg.heads = p.n_heads;
  cfg.kv_heads = p.n_kv_heads;
  cfg.head_dim = p.d_head;
  cfg.mask = plan.mask;
  cfg.window = plan.window;
  if (plan.mask == MaskKind::kDocument) cfg.document_ids = ctx.options.document_ids;
  if (p.attn_softcap) cfg.soft_cap = mp(std::string(*p.attn_softcap));
  if (p.position == PositionKind::kRelativeBias) {
    cfg.scale = mp(1);  // T5: no 1/√d
    cfg.logit_bias = ctx.relative_bias;
  }
  return cfg;
}

// Standard attention given its input projections x W_Q, x W_K, x W_V (before biases): biases,
// RoPE on q and k where the layer uses it, attention (F15), output projection.
template <class T, class Acc = T>
Mat<T> attention_tail(const Mat<T>& q_in, const Mat<T>& k_in, const Mat<T>& v_in,
                      const AttentionWeights<T>& w, const ModelPreset& p, const LayerPlan& plan,
                      const DecoderContext<T>& ctx) {
  Mat<T> q = add_row_bias(q_in, w.b_q), k = add_row_bias(k_in, w.b_k);
  const Mat<T> v = add_row_bias(v_in, w.b_v);
  if (plan.rope) {
    q = rope_sequence(q, p.n_heads, *ctx.rope, ctx.rope_layout);
    k = rope_sequence(k, p.n_kv_heads, *ctx.rope, ctx.rope_layout);
  }
  const Mat<T> o = attention<T, Acc>(q, k, v, layer_attention_config(p, plan, ctx));
  return add_row_bias(matmul<T, Acc>(o, w.w_o), w.b_o);
}

template <class T>
std::vector<const Mat<T>*> attention_input_weights(const AttentionWeights<T>& w) {
  return {&w.w_q, &w.w_k, &w.w_v};
}

inline MlaConfig mla_config_for(const ModelPreset& p, RopeLayout layout) {
  const MlaDims& m = *p.mla;
  MlaConfig c;
  c.model_dim = p.d_model;
  c.heads = p.n_heads;
  c.head_dim = m.d_h;
  c.rope_dim = m.d_rope;
  c.kv_latent_dim = m.d_c;
  c.q_latent_dim = m.d_c_q;
  if (!p.rope_base) decoder_detail::fail(p, "rope_base is not set");
  c.rope_base = mp(std::string(*p.rope_base));
  c.rope_layout = layout;
  c.rope_scaling = p.rope_scaling;
  return c;
}

// The attention sublayer of layer `plan`: standard attention (projections, then attention_tail)
// or MLA (F19) in the form the options ask for.
template <class T, class Acc = T>
Mat<T> attention_sublayer(const Mat<T>& x, const LayerWeights<T>& w, const ModelPreset& p,
                          const LayerPlan& plan, const DecoderContext<T>& ctx) {
  if (p.mla) {
    const MlaConfig c = mla_config_for(p, ctx.rope_layout);
    if (ctx.options.mla_form == MlaForm::kAbsorbed) {
      return mla_absorbed<T, Acc>(x, mla_absorb<T, Acc>(w.mla, c), c).u;
    }
    return mla_naive<T, Acc>(x, w.mla, c).u;
  }
  return attention_tail<T, Acc>(matmul<T, Acc>(x, w.attn.w_q), matmul<T, Acc>(x, w.attn.w_k),
                                matmul<T, Acc>(x, w.attn.w_v), w.attn, p, plan, ctx);
}

// The FFN sublayer of layer `plan`: MoE or dense.
template <class T, class Acc = T>
Mat<T> ffn_sublayer(const Mat<T>& x, const LayerWeights<T>& w, const ModelPreset& p,
                    const LayerPlan& plan) {
  if (plan.moe) return moe_sublayer<T, Acc>(x, w.moe, p);
  return dense_ffn<T, Acc>(x, w.ffn, p);
}

// The per-stack context: positions, RoPE table, T5 bias; validates positions and options.
template <class T>
DecoderContext<T> decoder_context(const ModelPreset& p, std::span<const int64_t> positions,
                                  const DecoderWeights<T>& w, const DecoderOptions& options) {
  DecoderContext<T> ctx;
  ctx.positions.assign(positions.begin(), positions.end());
  ctx.options = options;
  ctx.rope_layout = options.rope_layout ? *options.rope_layout : rope_layout_for(p);
  const int64_t n = static_cast<int64_t>(positions.size());
  if (!options.document_ids.empty() && static_cast<int64_t>(options.document_ids.size()) != n) {
    decoder_detail::fail(p, "document_ids has " + std::to_string(options.document_ids.size()) +
                                " ids, expected one per token (" + std::to_string(n) + ")");
  }
  if (p.mla) {
    // mla.h places token t at position t and masks causally.
    for (int64_t t = 0; t < n; ++t) {
      if (positions[static_cast<size_t>(t)] != t) {
        decoder_detail::fail(p, "MLA runs at positions 0 … T−1; position " + std::to_string(t) +
                                    " is " + std::to_string(positions[static_cast<size_t>(t)]));
      }
    }
    if (!options.document_ids.empty()) {
      decoder_detail::fail(p, "a document mask with MLA is not supported");
    }
  }
  if (p.position == PositionKind::kRope && !p.mla) {
    if (!p.rope_base) {
      decoder_detail::fail(p, "rope_base is not set (not published); reduce() the preset with one");
    }
    const std::vector<T> inv =
        rope_inv_freq_for<T>(p.d_head, preset_constant<T>(*p.rope_base), p.rope_scaling);
    std::vector<T> pos;
    for (int64_t q : positions) pos.push_back(rope_position<T>(q));
    const T factor = p.rope_scaling && p.rope_scaling->kind == RopeScalingKind::kYarn
                         ? yarn_mscale(preset_constant<T>(p.rope_scaling->factor))
                         : T(1);
    ctx.rope = rope_table(std::span<const T>(pos), std::span<const T>(inv), factor);
  }
  if (p.position == PositionKind::kRelativeBias) {
    const int64_t buckets = *p.relative_buckets, max_distance = *p.relative_max_distance;
    ctx.relative_bias.assign(static_cast<size_t>(p.n_heads), Mat<mp>(n, n));
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const int64_t bucket = t5_relative_position_bucket(
            positions[static_cast<size_t>(j)] - positions[static_cast<size_t>(i)],
            /*bidirectional=*/false, buckets, max_distance);
        for (int64_t h = 0; h < p.n_heads; ++h) {
          ctx.relative_bias[static_cast<size_t>(h)](i, j) = to_mp(w.relative_bias(bucket, h));
        }
      }
    }
  }
  return ctx;
}

// One layer (F18) of the preset: its block layout with its sublayers.
template <class T, class Acc = T>
Mat<T> decoder_layer(const Mat<T>& x, int64_t layer, const LayerWeights<T>& w, const ModelPreset& p,
                     const DecoderContext<T>& ctx) {
  const LayerPlan plan = layer_plan(p, layer, !ctx.options.document_ids.empty());
  auto attn = [&](const Mat<T>& u) { return attention_sublayer<T, Acc>(u, w, p, plan, ctx); };
  auto ffn = [&](const Mat<T>& u) { return ffn_sublayer<T, Acc>(u, w, p, plan); };
  auto norm = [&](const NormWeights<T>& n) {
    return [&](const Mat<T>& u) { return apply_norm<T, Acc>(u, n, p); };
  };
  if (p.parallel_block) {
    if (!ctx.options.fused_parallel) return parallel_block(x, attn, ffn, norm(w.attn_norm));
    if (p.mla || plan.moe) {
      decoder_detail::fail(p, "fused parallel projections need standard attention and a dense FFN");
    }
    return parallel_block_fused<T, Acc>(
        x, norm(w.attn_norm), attention_input_weights(w.attn), ffn_input_weights(w.ffn, p),
        [&](const std::vector<Mat<T>>& in) {
          return attention_tail<T, Acc>(in[0], in[1], in[2], w.attn, p, plan, ctx);
        },
        [&](const std::vector<Mat<T>>& in) { return ffn_tail<T, Acc>(in, w.ffn, p); });
  }
  switch (p.layout) {
    case BlockLayout::kPostNorm:
      return post_ln_block(x, attn, ffn, norm(w.attn_norm), norm(w.ffn_norm));
    case BlockLayout::kPreNorm:
      return pre_ln_block(x, attn, ffn, norm(w.attn_norm), norm(w.ffn_norm));
    case BlockLayout::kDoubleNorm:
      return double_norm_block(x, attn, ffn, norm(w.attn_norm), norm(w.attn_post_norm),
                               norm(w.ffn_norm), norm(w.ffn_post_norm));
    case BlockLayout::kOutputNorm:
      return olmo2_block(x, attn, ffn, norm(w.attn_post_norm), norm(w.ffn_post_norm));
  }
  decoder_detail::fail(p, "unknown block layout");
}

// F18 decoder stack: x (tokens × d_model, already embedded) through the preset's n_layers layers,
// then the final norm unless the layout is post-LN (pre-LN, double norm, OLMo 2 and parallel
// stacks all end with one: 002's "Final LayerNorm"; Gemma2Model.norm, Olmo2Model.norm).
template <class T, class Acc = T>
Mat<T> decoder_stack(const Mat<T>& x, std::span<const int64_t> positions,
                     const DecoderWeights<T>& w, const ModelPreset& p,
                     const DecoderOptions& options = {}) {
  validate_decoder_weights(w, p);
  if (x.cols != p.d_model) {
    decoder_detail::fail(p, "x has " + std::to_string(x.cols) +
                                " columns, expected d_model = " + std::to_string(p.d_model));
  }
  if (static_cast<int64_t>(positions.size()) != x.rows) {
    decoder_detail::fail(p, std::to_string(positions.size()) + " positions for " +
                                std::to_string(x.rows) + " tokens");
  }
  const DecoderContext<T> ctx = decoder_context(p, positions, w, options);
  Mat<T> y = x;
  for (int64_t l = 0; l < *p.n_layers; ++l) {
    y = decoder_layer<T, Acc>(y, l, w.layers[static_cast<size_t>(l)], p, ctx);
  }
  if (layer_norm_slots(p).final_norm) y = apply_norm<T, Acc>(y, w.final_norm, p);
  return y;
}

}  // namespace lmo::ref
