// Model presets (presets.h) shrunk to dimensions small enough to run in mp: reduce() copies a
// preset with smaller widths, head counts, layers and expert counts, keeps everything that makes
// it that model (norm kind and ε, activation and gating, biases, position encoding and its
// scaling, layout, parallel block, attention pattern, soft-caps, MLA, MoE routing rules) and
// refuses a reduction that would change the structure (MQA becoming MHA, a 4-layer attention
// pattern cut to 3 layers, an odd RoPE head, top-k beyond the kept groups). Cases record the
// reduction they used through ReducedPreset::describe().
//
// A preset field the published configuration leaves empty but the decoder needs (ε for M01, M03,
// M08; the RoPE base of M08; GPT-3's band width, M03) can be filled in by the reduction, and only
// where the preset has none: the description says so.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "reference/presets.h"

namespace lmo::ref {

// MoE dimensions of a reduction; the routing rules (score, group score, normalization, routed
// scale, balancing bias) stay the preset's.
struct MoeReduction {
  int64_t n_routed = 0;
  int64_t n_shared = 0;
  int64_t top_k = 0;
  int64_t d_ff_expert = 0;
  int64_t n_group = 0;
  int64_t topk_group = 0;
  int64_t dense_layers = 0;
};

struct ReducedDims {
  int64_t d_model = 0;
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t d_head = 0;
  int64_t d_ff = 0;
  int64_t n_layers = 0;
  std::optional<int64_t> window;    // sliding-window / banded layers only
  std::optional<MlaDims> mla;       // MLA presets only (required there)
  std::optional<MoeReduction> moe;  // MoE presets only (required there)
  // Fill-ins for fields the preset leaves empty (string literals: the preset keeps a view).
  std::optional<std::string_view> norm_eps;
  std::optional<std::string_view> rope_base;
};

struct ReducedPreset {
  ModelPreset preset;  // the reduced copy (id and name stay the full preset's)
  ReducedDims dims;    // the reduction applied
  // "gemma2-9b reduced: d_model 4, n_heads 4, n_kv_heads 2, d_head 2, d_ff 6, n_layers 2,
  // window 2"; fill-ins are marked "(filled in)".
  std::string describe() const {
    auto s = [](int64_t v) { return std::to_string(v); };
    std::string out = std::string(preset.name) + " reduced: d_model " + s(dims.d_model) +
                      ", n_heads " + s(dims.n_heads) + ", n_kv_heads " + s(dims.n_kv_heads) +
                      ", d_head " + s(dims.d_head) + ", d_ff " + s(dims.d_ff) + ", n_layers " +
                      s(dims.n_layers);
    if (dims.window) out += ", window " + s(*dims.window);
    if (dims.mla) {
      const MlaDims& m = *dims.mla;
      out += ", mla {d_c " + s(m.d_c) + ", d_c_q " + s(m.d_c_q) + ", d_h " + s(m.d_h) +
             ", d_rope " + s(m.d_rope) + ", d_v " + s(m.d_v) + "}";
    }
    if (dims.moe) {
      const MoeReduction& m = *dims.moe;
      out += ", moe {n_routed " + s(m.n_routed) + ", n_shared " + s(m.n_shared) + ", top_k " +
             s(m.top_k) + ", d_ff_expert " + s(m.d_ff_expert) + ", n_group " + s(m.n_group) +
             ", topk_group " + s(m.topk_group) + ", dense_layers " + s(m.dense_layers) + "}";
    }
    if (dims.norm_eps) out += ", norm_eps " + std::string(*dims.norm_eps) + " (filled in)";
    if (dims.rope_base) out += ", rope_base " + std::string(*dims.rope_base) + " (filled in)";
    return out;
  }
};

namespace reduce_detail {

[[noreturn]] inline void fail(const ModelPreset& p, const std::string& what) {
  throw std::invalid_argument("reduce(" + std::string(p.name) + "): " + what);
}

inline void in_range(const ModelPreset& p, const char* name, int64_t v, int64_t full) {
  if (v < 1 || v > full) {
    fail(p, std::string(name) + " = " + std::to_string(v) + ", expected 1 … " +
                std::to_string(full) + " (the preset's value)");
  }
}

inline bool windowed(AttentionLayer a) {
  return a == AttentionLayer::kSlidingWindow || a == AttentionLayer::kBandedSparse;
}

}  // namespace reduce_detail

// The preset with the dimensions of r; throws std::invalid_argument (naming the field, the value
// and what was expected) when r is not a reduction of p or would change its structure.
inline ReducedPreset reduce(const ModelPreset& p, const ReducedDims& r) {
  using reduce_detail::fail;
  using reduce_detail::in_range;
  auto s = [](int64_t v) { return std::to_string(v); };
  in_range(p, "d_model", r.d_model, p.d_model);
  in_range(p, "n_heads", r.n_heads, p.n_heads);
  in_range(p, "n_kv_heads", r.n_kv_heads, p.n_kv_heads);
  in_range(p, "d_head", r.d_head, p.d_head);
  if (!p.d_ff || !p.n_layers) fail(p, "the preset has no d_ff or n_layers to reduce");
  in_range(p, "d_ff", r.d_ff, *p.d_ff);
  in_range(p, "n_layers", r.n_layers, *p.n_layers);
  if (r.n_heads % r.n_kv_heads != 0) {
    fail(p, "n_kv_heads = " + s(r.n_kv_heads) + " must divide n_heads = " + s(r.n_heads));
  }
  // MHA stays MHA, MQA stays MQA, GQA stays GQA.
  const auto sharing = [](int64_t h, int64_t g) { return g == h ? 0 : g == 1 ? 1 : 2; };
  const char* kinds[] = {"MHA (n_kv_heads = n_heads)", "MQA (n_kv_heads = 1 < n_heads)",
                         "GQA (1 < n_kv_heads < n_heads)"};
  if (sharing(p.n_heads, p.n_kv_heads) != sharing(r.n_heads, r.n_kv_heads)) {
    fail(p, "n_heads = " + s(r.n_heads) + ", n_kv_heads = " + s(r.n_kv_heads) + " is not " +
                kinds[sharing(p.n_heads, p.n_kv_heads)] + " as in the preset");
  }
  if (p.position == PositionKind::kRope && !p.mla && r.d_head % 2 != 0) {
    fail(p, "d_head = " + s(r.d_head) + " must be even for RoPE");
  }
  if (p.position == PositionKind::kSinusoidal && r.d_model % 2 != 0) {
    fail(p, "d_model = " + s(r.d_model) + " must be even for the sinusoidal encoding");
  }
  if (r.n_layers < static_cast<int64_t>(p.attention_pattern.size())) {
    fail(p, "n_layers = " + s(r.n_layers) + " would cut the attention pattern of " +
                s(static_cast<int64_t>(p.attention_pattern.size())) +
                " layers; expected at least that many");
  }

  bool has_window = false;
  for (AttentionLayer a : p.attention_pattern)
    has_window = has_window || reduce_detail::windowed(a);
  if (r.window && !has_window) fail(p, "window given but the preset has no windowed layers");
  if (r.window && p.window) in_range(p, "window", *r.window, *p.window);
  if (r.window && *r.window < 1) fail(p, "window = " + s(*r.window) + ", expected >= 1");

  if (r.norm_eps && p.norm_eps) fail(p, "norm_eps given but the preset has its own ε");
  if (r.rope_base && p.rope_base) fail(p, "rope_base given but the preset has its own base");
  if (r.rope_base && p.position != PositionKind::kRope) {
    fail(p, "rope_base given but the preset does not use RoPE");
  }

  ModelPreset q = p;
  q.d_model = r.d_model;
  q.n_heads = r.n_heads;
  q.n_kv_heads = r.n_kv_heads;
  q.d_head = r.d_head;
  q.d_ff = r.d_ff;
  q.n_layers = r.n_layers;
  if (r.window) q.window = *r.window;
  if (r.norm_eps) q.norm_eps = *r.norm_eps;
  if (r.rope_base) q.rope_base = *r.rope_base;

  if (p.mla.has_value() != r.mla.has_value()) {
    fail(p, p.mla ? "the preset uses MLA: give reduced mla dimensions"
                  : "mla dimensions given but the preset does not use MLA");
  }
  if (r.mla) {
    const MlaDims &m = *r.mla, &f = *p.mla;
    in_range(p, "mla.d_c", m.d_c, f.d_c);
    in_range(p, "mla.d_c_q", m.d_c_q, f.d_c_q);
    in_range(p, "mla.d_h", m.d_h, f.d_h);
    in_range(p, "mla.d_rope", m.d_rope, f.d_rope);
    in_range(p, "mla.d_v", m.d_v, f.d_v);
    if (m.d_rope % 2 != 0) fail(p, "mla.d_rope = " + s(m.d_rope) + " must be even for RoPE");
    // mla.h's value heads have the width of the compressed query/key heads, as in DeepSeek.
    if (m.d_v != m.d_h) {
      fail(p, "mla.d_v = " + s(m.d_v) + " must equal mla.d_h = " + s(m.d_h) +
                  " (mla.h uses one head width for keys and values)");
    }
    if (r.d_head != m.d_h) {
      fail(p, "d_head = " + s(r.d_head) + " must equal mla.d_h = " + s(m.d_h) + " for MLA");
    }
    q.mla = m;
  }

  if (p.moe.has_value() != r.moe.has_value()) {
    fail(p, p.moe ? "the preset uses MoE: give reduced moe dimensions"
                  : "moe dimensions given but the preset does not use MoE");
  }
  if (r.moe) {
    const MoeReduction& m = *r.moe;
    const MoeDims& f = *p.moe;
    in_range(p, "moe.n_routed", m.n_routed, f.n_routed);
    in_range(p, "moe.top_k", m.top_k, f.top_k);
    in_range(p, "moe.d_ff_expert", m.d_ff_expert, f.d_ff_expert);
    in_range(p, "moe.n_group", m.n_group, f.n_group);
    if (m.n_shared < 0 || m.n_shared > f.n_shared || (f.n_shared > 0) != (m.n_shared > 0)) {
      fail(p, "moe.n_shared = " + s(m.n_shared) + ", expected 1 … " + s(f.n_shared) +
                  " (shared experts kept, never added)");
    }
    if ((f.n_group > 1) != (m.n_group > 1)) {
      fail(p, "moe.n_group = " + s(m.n_group) + " changes whether routing is group-limited");
    }
    if (m.n_routed % m.n_group != 0) {
      fail(p, "moe.n_group = " + s(m.n_group) + " must divide moe.n_routed = " + s(m.n_routed));
    }
    const int64_t group_size = m.n_routed / m.n_group;
    if (m.n_group > 1) {
      in_range(p, "moe.topk_group", m.topk_group, m.n_group);
      if ((f.topk_group < f.n_group) != (m.topk_group < m.n_group)) {
        fail(p, "moe.topk_group = " + s(m.topk_group) + " changes whether groups are excluded");
      }
      if (f.group_score == GroupScore::kTopTwoSum && group_size < 2) {
        fail(p, "groups of " + s(group_size) +
                    " experts; the top-2-sum group score needs at least 2 per group");
      }
    }
    const int64_t eligible = m.n_group > 1 ? m.topk_group * group_size : m.n_routed;
    if (m.top_k > eligible) {
      fail(p, "moe.top_k = " + s(m.top_k) + " exceeds the " + s(eligible) +
                  " experts of the kept groups");
    }
    if (m.top_k >= m.n_routed) fail(p, "moe.top_k = " + s(m.top_k) + " would select every expert");
    if ((f.dense_layers > 0) != (m.dense_layers > 0) || m.dense_layers > f.dense_layers) {
      fail(p, "moe.dense_layers = " + s(m.dense_layers) + ", expected 1 … " + s(f.dense_layers) +
                  " (the dense first layers kept)");
    }
    if (m.dense_layers >= r.n_layers) {
      fail(p, "n_layers = " + s(r.n_layers) + " leaves no MoE layer after " + s(m.dense_layers) +
                  " dense layers");
    }
    MoeDims d = f;
    d.n_routed = m.n_routed;
    d.n_shared = m.n_shared;
    d.top_k = m.top_k;
    d.d_ff_expert = m.d_ff_expert;
    d.n_group = m.n_group;
    d.topk_group = m.n_group > 1 ? m.topk_group : 1;
    d.dense_layers = m.dense_layers;
    q.moe = d;
  }
  return ReducedPreset{q, r};
}

}  // namespace lmo::ref
