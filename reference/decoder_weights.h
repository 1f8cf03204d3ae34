// The weights of a decoder stack built from a model preset (decoder.h), their shapes, and one
// walk over them by name, in a fixed order, that allocation, validation, loading from files and
// deterministic initialization in tests all share.
//
// Shapes follow the row-vector convention `x W` (FORMULAS.md): every W is in × out. With d the
// model width, h heads, g KV heads, d_h the head width and f the FFN width:
//   norms            gamma (d), beta (d) for LayerNorm with bias only
//   attention        w_q d × h·d_h, w_k and w_v d × g·d_h, w_o h·d_h × d;
//                    with biases b_q (h·d_h), b_k, b_v (g·d_h), b_o (d)
//   MLA (F19)        the MlaWeights of mla.h (no biases)
//   dense FFN        w1 d × f, v d × f for a GLU (F05), w2 f × d; with biases b1 (f), b2 (d)
//   MoE (F20)        router d × N (logit z_i = u·e_i, e_i column i), balance_bias (N) when the
//                    preset uses F22's bias, and each shared and routed expert a dense FFN of
//                    width d_ff_expert
//   T5 (F09)         relative_bias num_buckets × h, shared by every layer (as in T5)
// Names: "layers.<l>.<slot>.<tensor>" ("layers.0.attn_norm.gamma", "layers.1.attn.w_q",
// "layers.3.moe.routed.5.w2"), "final_norm.gamma", "relative_bias".
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "reference/linalg.h"
#include "reference/mla.h"
#include "reference/presets.h"

namespace lmo::ref {

template <class T>
struct NormWeights {
  std::vector<T> gamma;
  std::vector<T> beta;  // LayerNorm with bias only (NormKind::kLayerNorm)
};

template <class T>
struct AttentionWeights {
  Mat<T> w_q, w_k, w_v, w_o;
  std::vector<T> b_q, b_k, b_v, b_o;  // with ModelPreset::biases only
};

template <class T>
struct FfnWeights {
  Mat<T> w1;  // W of a GLU
  Mat<T> v;   // V of a GLU only
  Mat<T> w2;
  std::vector<T> b1, b2;  // with ModelPreset::biases only
};

template <class T>
struct MoeWeights {
  Mat<T> router;
  std::vector<T> balance_bias;  // F22 c_i, when MoeDims::balance_bias
  std::vector<FfnWeights<T>> shared;
  std::vector<FfnWeights<T>> routed;
};

// One layer. Only the members the preset uses are filled; the others stay empty.
template <class T>
struct LayerWeights {
  // Norm slots, by where they sit (see layer_norm_slots in decoder.h's comment):
  NormWeights<T> attn_norm;       // before attention (pre-LN, double, parallel: the shared one);
                                  // post-LN: the norm after the attention residual
  NormWeights<T> attn_post_norm;  // on the attention output (double norm, OLMo 2)
  NormWeights<T> ffn_norm;        // before the FFN (pre-LN, double); post-LN: after its residual
  NormWeights<T> ffn_post_norm;   // on the FFN output (double norm, OLMo 2)
  AttentionWeights<T> attn;       // standard attention
  MlaWeights<T> mla;              // MLA presets instead of attn
  FfnWeights<T> ffn;              // dense layers
  MoeWeights<T> moe;              // MoE layers instead of ffn
};

template <class T>
struct DecoderWeights {
  std::vector<LayerWeights<T>> layers;
  NormWeights<T> final_norm;  // every layout but post-LN
  Mat<T> relative_bias;       // T5 relative position bias table (num_buckets × h)
};

// Which norm slots a layer of this preset uses.
struct NormSlots {
  bool attn_norm = false, attn_post_norm = false, ffn_norm = false, ffn_post_norm = false;
  bool final_norm = false;
};

inline NormSlots layer_norm_slots(const ModelPreset& p) {
  NormSlots s;
  if (p.parallel_block) {
    if (p.layout != BlockLayout::kPreNorm) {
      throw std::invalid_argument("decoder: preset " + std::string(p.name) +
                                  " combines a parallel block with a layout other than pre-norm, "
                                  "which no model does and the decoder does not support");
    }
    s.attn_norm = s.final_norm = true;
    return s;
  }
  switch (p.layout) {
    case BlockLayout::kPostNorm:
      s.attn_norm = s.ffn_norm = true;
      break;
    case BlockLayout::kPreNorm:
      s.attn_norm = s.ffn_norm = s.final_norm = true;
      break;
    case BlockLayout::kDoubleNorm:
      s.attn_norm = s.attn_post_norm = s.ffn_norm = s.ffn_post_norm = s.final_norm = true;
      break;
    case BlockLayout::kOutputNorm:
      s.attn_post_norm = s.ffn_post_norm = s.final_norm = true;
      break;
  }
  return s;
}

// Whether layer l of the preset has a MoE FFN (F20) instead of a dense one.
inline bool is_moe_layer(const ModelPreset& p, int64_t layer) {
  return p.moe.has_value() && layer >= p.moe->dense_layers;
}

namespace decoder_detail {

[[noreturn]] inline void fail(const ModelPreset& p, const std::string& what) {
  throw std::invalid_argument("decoder (preset " + std::string(p.name) + "): " + what);
}

inline int64_t required(const ModelPreset& p, const std::optional<int64_t>& v, const char* name) {
  if (!v) fail(p, std::string(name) + " is not set; reduce() the preset with a value for it");
  return *v;
}

// The container sizes and feature combinations the decoder supports; throws otherwise.
inline void check_preset_structure(const ModelPreset& p) {
  auto pos = [&](int64_t v, const char* name) {
    if (v <= 0) fail(p, std::string(name) + " must be positive, got " + std::to_string(v));
  };
  pos(p.d_model, "d_model");
  pos(p.n_heads, "n_heads");
  pos(p.n_kv_heads, "n_kv_heads");
  pos(p.d_head, "d_head");
  pos(required(p, p.n_layers, "n_layers"), "n_layers");
  pos(required(p, p.d_ff, "d_ff"), "d_ff");
  if (p.n_heads % p.n_kv_heads != 0) {
    fail(p, "n_kv_heads " + std::to_string(p.n_kv_heads) + " must divide n_heads " +
                std::to_string(p.n_heads));
  }
  if (p.gated && p.biases) fail(p, "a GLU FFN with biases is in no preset and not supported");
  if ((p.mla || p.moe) && p.biases) fail(p, "MLA and MoE are supported without biases only");
  if (p.position == PositionKind::kRelativeBias) {
    pos(required(p, p.relative_buckets, "relative_buckets"), "relative_buckets");
    required(p, p.relative_max_distance, "relative_max_distance");
  }
  if (p.moe) {
    pos(p.moe->n_routed, "moe.n_routed");
    if (p.moe->n_shared < 0) fail(p, "moe.n_shared must be >= 0");
    pos(p.moe->d_ff_expert, "moe.d_ff_expert");
    if (p.moe->dense_layers < 0) fail(p, "moe.dense_layers must be >= 0");
  }
  layer_norm_slots(p);
}

inline std::string layer_prefix(int64_t l) { return "layers." + std::to_string(l) + "."; }

// f(name, tensor, rows, cols) for one norm; vectors are 1 × n.
template <class N, class F>
void visit_norm(N& n, const ModelPreset& p, const std::string& name, F& f) {
  f(name + ".gamma", n.gamma, 1, p.d_model);
  if (p.norm == NormKind::kLayerNorm) f(name + ".beta", n.beta, 1, p.d_model);
}

template <class W, class F>
void visit_ffn(W& w, const ModelPreset& p, int64_t width, const std::string& name, F& f) {
  f(name + ".w1", w.w1, p.d_model, width);
  if (p.biases) f(name + ".b1", w.b1, 1, width);
  if (p.gated) f(name + ".v", w.v, p.d_model, width);
  f(name + ".w2", w.w2, width, p.d_model);
  if (p.biases) f(name + ".b2", w.b2, 1, p.d_model);
}

template <class V>
void check_count(const ModelPreset& p, const V& v, int64_t n, const std::string& what) {
  if (static_cast<int64_t>(v.size()) != n) {
    fail(p, what + " has " + std::to_string(v.size()) + " entries, expected " + std::to_string(n));
  }
}

}  // namespace decoder_detail

// Calls f(name, tensor, rows, cols) for every weight the preset uses, in a fixed order (layers in
// order; within a layer its norms, attention or MLA, FFN or MoE; then the final norm and the T5
// table). tensor is the Mat<T> or std::vector<T> member (const when W is), rows × cols its
// expected shape (1 × n for a vector). The layer and expert containers must already have the
// preset's sizes (zero_decoder_weights makes them so); otherwise std::invalid_argument.
template <class W, class F>
void for_each_weight(W& w, const ModelPreset& p, F&& f) {
  using namespace decoder_detail;
  check_preset_structure(p);
  const NormSlots slots = layer_norm_slots(p);
  const int64_t d = p.d_model, hd = p.n_heads * p.d_head, gd = p.n_kv_heads * p.d_head;
  check_count(p, w.layers, *p.n_layers, "layers");
  for (int64_t l = 0; l < *p.n_layers; ++l) {
    auto& layer = w.layers[static_cast<size_t>(l)];
    const std::string at = layer_prefix(l);
    if (slots.attn_norm) visit_norm(layer.attn_norm, p, at + "attn_norm", f);
    if (slots.attn_post_norm) visit_norm(layer.attn_post_norm, p, at + "attn_post_norm", f);
    if (slots.ffn_norm) visit_norm(layer.ffn_norm, p, at + "ffn_norm", f);
    if (slots.ffn_post_norm) visit_norm(layer.ffn_post_norm, p, at + "ffn_post_norm", f);
    if (p.mla) {
      const MlaDims& m = *p.mla;
      const int64_t h = p.n_heads;
      f(at + "mla.w_dq", layer.mla.w_dq, d, m.d_c_q);
      f(at + "mla.w_uq", layer.mla.w_uq, m.d_c_q, h * m.d_h);
      f(at + "mla.w_qr", layer.mla.w_qr, m.d_c_q, h * m.d_rope);
      f(at + "mla.w_dkv", layer.mla.w_dkv, d, m.d_c);
      f(at + "mla.w_uk", layer.mla.w_uk, m.d_c, h * m.d_h);
      f(at + "mla.w_kr", layer.mla.w_kr, d, m.d_rope);
      f(at + "mla.w_uv", layer.mla.w_uv, m.d_c, h * m.d_h);
      f(at + "mla.w_o", layer.mla.w_o, h * m.d_h, d);
    } else {
      f(at + "attn.w_q", layer.attn.w_q, d, hd);
      if (p.biases) f(at + "attn.b_q", layer.attn.b_q, 1, hd);
      f(at + "attn.w_k", layer.attn.w_k, d, gd);
      if (p.biases) f(at + "attn.b_k", layer.attn.b_k, 1, gd);
      f(at + "attn.w_v", layer.attn.w_v, d, gd);
      if (p.biases) f(at + "attn.b_v", layer.attn.b_v, 1, gd);
      f(at + "attn.w_o", layer.attn.w_o, hd, d);
      if (p.biases) f(at + "attn.b_o", layer.attn.b_o, 1, d);
    }
    if (is_moe_layer(p, l)) {
      const MoeDims& m = *p.moe;
      f(at + "moe.router", layer.moe.router, d, m.n_routed);
      if (m.balance_bias) f(at + "moe.balance_bias", layer.moe.balance_bias, 1, m.n_routed);
      check_count(p, layer.moe.shared, m.n_shared, at + "moe.shared");
      check_count(p, layer.moe.routed, m.n_routed, at + "moe.routed");
      for (int64_t i = 0; i < m.n_shared; ++i) {
        visit_ffn(layer.moe.shared[static_cast<size_t>(i)], p, m.d_ff_expert,
                  at + "moe.shared." + std::to_string(i), f);
      }
      for (int64_t i = 0; i < m.n_routed; ++i) {
        visit_ffn(layer.moe.routed[static_cast<size_t>(i)], p, m.d_ff_expert,
                  at + "moe.routed." + std::to_string(i), f);
      }
    } else {
      visit_ffn(layer.ffn, p, *p.d_ff, at + "ffn", f);
    }
  }
  if (slots.final_norm) visit_norm(w.final_norm, p, "final_norm", f);
  if (p.position == PositionKind::kRelativeBias) {
    f(std::string("relative_bias"), w.relative_bias, *p.relative_buckets, p.n_heads);
  }
}

// The values of a weight tensor (Mat<T> or std::vector<T>), for visitors of for_each_weight.
template <class T>
std::vector<T>& weight_data(Mat<T>& m) {
  return m.data;
}
template <class T>
const std::vector<T>& weight_data(const Mat<T>& m) {
  return m.data;
}
template <class T>
std::vector<T>& weight_data(std::vector<T>& v) {
  return v;
}
template <class T>
const std::vector<T>& weight_data(const std::vector<T>& v) {
  return v;
}

// Weights of the preset's shapes, every value zero (to be filled through for_each_weight).
template <class T>
DecoderWeights<T> zero_decoder_weights(const ModelPreset& p) {
  decoder_detail::check_preset_structure(p);
  DecoderWeights<T> w;
  w.layers.resize(static_cast<size_t>(*p.n_layers));
  for (int64_t l = 0; l < *p.n_layers; ++l) {
    if (!is_moe_layer(p, l)) continue;
    w.layers[static_cast<size_t>(l)].moe.shared.resize(static_cast<size_t>(p.moe->n_shared));
    w.layers[static_cast<size_t>(l)].moe.routed.resize(static_cast<size_t>(p.moe->n_routed));
  }
  for_each_weight(w, p, [](const std::string&, auto& t, int64_t rows, int64_t cols) {
    using Tensor = std::decay_t<decltype(t)>;
    if constexpr (std::is_same_v<Tensor, Mat<T>>) {
      t = Mat<T>(rows, cols);
    } else {
      t.assign(static_cast<size_t>(rows * cols), T(0));
    }
  });
  return w;
}

// Throws std::invalid_argument naming the first weight whose shape differs from the preset's.
template <class T>
void validate_decoder_weights(const DecoderWeights<T>& w, const ModelPreset& p) {
  for_each_weight(w, p, [&](const std::string& name, const auto& t, int64_t rows, int64_t cols) {
    using Tensor = std::decay_t<decltype(t)>;
    int64_t r = 1, c = static_cast<int64_t>(weight_data(t).size());
    if constexpr (std::is_same_v<Tensor, Mat<T>>) {
      r = t.rows;
      c = t.cols;
      if (static_cast<int64_t>(t.data.size()) != r * c) {
        decoder_detail::fail(p, name + " holds " + std::to_string(t.data.size()) +
                                    " values for its " + std::to_string(r) + "x" +
                                    std::to_string(c) + " shape");
      }
    }
    if (r != rows || c != cols) {
      decoder_detail::fail(p, name + " is " + std::to_string(r) + "x" + std::to_string(c) +
                                  ", expected " + std::to_string(rows) + "x" +
                                  std::to_string(cols));
    }
  });
}

}  // namespace lmo::ref
