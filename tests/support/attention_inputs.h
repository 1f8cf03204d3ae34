// The attention kernels' tests' shared pieces (fast/attention.h, fast/mla_decode.h and
// gpu/api_attention.h alike, which take kernels/api/attention_args.h's argument types): a shape, its
// seeded normal inputs in a storage format, the kernel arguments for it, and the reference's
// result on the same stored values in any number type. (tests/support/attention_cases.h loads
// the JSON known-answer cases for the reference-only tests, which link no oracle or fast code.)
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fast/kernel_api.h"
#include "oracle/core/specials.h"
#include "reference/attention.h"
#include "reference/mla.h"
#include "reference/rope_preset.h"  // preset_constant
#include "tests/support/fast_cases.h"

namespace lmo::testdata {

// h query heads on g KV heads of width d; T_q queries, the last of T_k keys.
struct AttentionShape {
  AttentionShape(int64_t h_, int64_t g_, int64_t d_, int64_t t_q_, int64_t t_k_,
                 fast::AttentionMask mask_ = fast::AttentionMask::causal, int64_t window_ = 0)
      : h(h_), g(g_), d(d_), t_q(t_q_), t_k(t_k_), mask(mask_), window(window_) {}
  AttentionShape& docs(std::vector<int64_t> ids) {
    mask = fast::AttentionMask::document;
    doc_ids = std::move(ids);
    return *this;
  }
  AttentionShape& capped(double c, double std) {
    cap = c;
    qk_std = std;
    return *this;
  }
  int64_t h, g, d, t_q, t_k;
  fast::AttentionMask mask;
  int64_t window;
  std::vector<int64_t> doc_ids;  // t_k ids for the document mask
  double cap = 0;
  double qk_std = 1;    // of q and k
  bool decode = false;  // through attention_decode (t_q = 1, causal or window)
};

inline ref::MaskKind ref_mask(fast::AttentionMask m) {
  switch (m) {
    case fast::AttentionMask::none:
      return ref::MaskKind::kNone;
    case fast::AttentionMask::causal:
      return ref::MaskKind::kCausal;
    case fast::AttentionMask::window:
      return ref::MaskKind::kSlidingWindow;
    case fast::AttentionMask::document:
      return ref::MaskKind::kDocument;
  }
  return ref::MaskKind::kNone;
}

// Document ids of t positions in three runs: [0, first) is document 0, [first, second)
// document 1, the rest document 2.
inline std::vector<int64_t> three_documents(int64_t t, int64_t first, int64_t second) {
  std::vector<int64_t> ids(static_cast<size_t>(t), 0);
  for (int64_t j = first; j < t; ++j) ids[static_cast<size_t>(j)] = j < second ? 1 : 2;
  return ids;
}

// Document ids that are not runs, (7·j) mod 3: hidden keys inside a block's visible range.
inline std::vector<int64_t> interleaved_documents(int64_t t) {
  std::vector<int64_t> ids(static_cast<size_t>(t));
  for (int64_t j = 0; j < t; ++j) ids[static_cast<size_t>(j)] = (j * 7) % 3;
  return ids;
}

struct AttentionInputs {
  ref::Tensor q, k, v;
};

// q, k (σ = qk_std) and v (σ = 1) in storage s, then the special values placed in k and v.
inline AttentionInputs attention_inputs(const AttentionShape& c, fast::Storage s, uint64_t seed,
                                        const std::vector<oracle::SpecialAt>& k_specials = {},
                                        const std::vector<oracle::SpecialAt>& v_specials = {}) {
  AttentionInputs in{fast_normal(seed, "q", s, {c.t_q, c.h * c.d}, 0, c.qk_std),
                     fast_normal(seed, "k", s, {c.t_k, c.g * c.d}, 0, c.qk_std),
                     fast_normal(seed, "v", s, {c.t_k, c.g * c.d})};
  oracle::place_specials(in.k, k_specials);
  oracle::place_specials(in.v, v_specials);
  return in;
}

template <class T>
std::vector<T> reference_attention(const AttentionShape& c, const AttentionInputs& in) {
  ref::AttentionConfig cfg;
  cfg.heads = c.h;
  cfg.kv_heads = c.g;
  cfg.head_dim = c.d;
  cfg.mask = ref_mask(c.mask);
  cfg.window = c.window;
  cfg.document_ids = c.doc_ids;
  if (c.cap > 0) cfg.soft_cap = ref::mp(c.cap);
  const ref::Mat<T> q(c.t_q, c.h * c.d, values_as<T>(in.q));
  const ref::Mat<T> k(c.t_k, c.g * c.d, values_as<T>(in.k));
  const ref::Mat<T> v(c.t_k, c.g * c.d, values_as<T>(in.v));
  return ref::attention<T>(q, k, v, cfg).data;
}

// The kernels' arguments for the shape (the default scale 1/√d, the reference's).
inline fast::AttentionArgs attention_args(const AttentionShape& c) {
  fast::AttentionArgs a;
  a.heads = c.h;
  a.kv_heads = c.g;
  a.head_dim = c.d;
  a.q_len = c.t_q;
  a.kv_len = c.t_k;
  a.mask = c.mask;
  a.window = c.window;
  a.doc_ids = c.doc_ids.empty() ? nullptr : c.doc_ids.data();
  a.softcap = static_cast<float>(c.cap);
  return a;
}

// "decode h8 g2 t300 w0": a decode step's name in failure messages.
inline std::string decode_name(int64_t h, int64_t g, int64_t t, int64_t window) {
  return "decode h" + std::to_string(h) + " g" + std::to_string(g) + " t" + std::to_string(t) +
         " w" + std::to_string(window);
}

// Absorbed MLA decode: n_h heads, d_h, d_h^R, d_c, a cache of t latents; optionally an F11
// scaling of the rotary frequencies (DeepSeek's YaRN, with mscale_all_dim its temperature).
struct MlaShape {
  int64_t h, dh, dr, dc, t;
  bool half_split = false;
  double base = 10000;
  std::optional<ref::RopeScaling> scaling = std::nullopt;
};

struct MlaInputs {
  ref::Tensor q_c, q_r, c_kv, k_r, w_uk;
};

// Normal inputs in storage s, W^UK of σ = 1/√d_h (as an initialized projection).
inline MlaInputs mla_inputs(const MlaShape& c, fast::Storage s, uint64_t seed) {
  return {fast_normal(seed, "q_c", s, {1, c.h * c.dh}),
          fast_normal(seed, "q_r", s, {1, c.h * c.dr}), fast_normal(seed, "c_kv", s, {c.t, c.dc}),
          fast_normal(seed, "k_r", s, {c.t, c.dr}),
          fast_normal(seed, "w_uk", s, {c.dc, c.h * c.dh}, 0,
                      1 / std::sqrt(static_cast<double>(c.dh)))};
}

template <class T>
std::vector<T> reference_mla(const MlaShape& c, const MlaInputs& in) {
  ref::MlaConfig cfg;
  cfg.heads = c.h;
  cfg.head_dim = c.dh;
  cfg.rope_dim = c.dr;
  cfg.kv_latent_dim = c.dc;
  cfg.rope_base = ref::mp(c.base);
  cfg.rope_layout = c.half_split ? ref::RopeLayout::kHalfSplit : ref::RopeLayout::kInterleaved;
  cfg.rope_scaling = c.scaling;
  const ref::Mat<T> q_c(1, c.h * c.dh, values_as<T>(in.q_c));
  const ref::Mat<T> q_r(1, c.h * c.dr, values_as<T>(in.q_r));
  const ref::Mat<T> w_uk(c.dc, c.h * c.dh, values_as<T>(in.w_uk));
  ref::MlaLatentCache<T> cache;
  cache.c_kv = ref::Mat<T>(c.t, c.dc, values_as<T>(in.c_kv));
  cache.k_r = ref::Mat<T>(c.t, c.dr, values_as<T>(in.k_r));
  return ref::mla_latent_attention<T>(ref::mla_absorbed_query<T>(q_c, w_uk, cfg),
                                      ref::mla_rope_rows(q_r, c.h, c.t - 1, cfg), cache, cfg,
                                      ref::mla_scale(cfg))
      .data;
}

// The kernels' arguments for the shape: the default scale 1/√(d_h + d_h^R), or with YaRN's
// temperature the reference's scale (mla_scale) rounded once to f32; a YaRN scaling's decimals
// each rounded once to double.
inline fast::MlaDecodeArgs mla_args(const MlaShape& c) {
  fast::MlaDecodeArgs a;
  a.heads = c.h;
  a.head_dim = c.dh;
  a.rope_dim = c.dr;
  a.latent_dim = c.dc;
  a.cache_len = c.t;
  a.rope.base = c.base;
  a.half_split = c.half_split;
  if (c.scaling) {
    const ref::RopeScaling& y = *c.scaling;
    if (y.kind != ref::RopeScalingKind::kYarn) throw std::logic_error("mla_args: YaRN only");
    a.rope.scaling = fast::RopeScaling::yarn;
    a.rope.factor = ref::preset_constant<double>(y.factor);
    a.rope.original_context = y.original_context;
    a.rope.beta_fast = ref::preset_constant<double>(y.beta_fast);
    a.rope.beta_slow = ref::preset_constant<double>(y.beta_slow);
    if (!y.mscale_all_dim.empty()) {
      ref::MlaConfig cfg;
      cfg.head_dim = c.dh, cfg.rope_dim = c.dr, cfg.rope_scaling = c.scaling;
      a.scale = ref::from_mp<float>(ref::mla_scale(cfg));
    }
  }
  return a;
}

// "MLA h2 t150 interleaved": an MLA shape's name in failure messages.
inline std::string mla_name(const MlaShape& c) {
  return "MLA h" + std::to_string(c.h) + " t" + std::to_string(c.t) +
         (c.half_split ? " half-split" : " interleaved") + (c.scaling ? " scaled" : "");
}

}  // namespace lmo::testdata
