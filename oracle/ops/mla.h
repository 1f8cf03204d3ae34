// Oracle op of F19: mla_decode, one decode step of absorbed Multi-head Latent Attention over a
// cache of t latents (what FlashMLA computes). Inputs, for the token at position t − 1:
//   q_c  [1, h·d_h]   the content query q^C (after W^UQ);
//   q_r  [1, h·d_h^R] the rotary query before RoPE (rotated here at position t − 1, F10);
//   c_kv [t, d_c]     the cached latents c^KV (the last row is the current token's);
//   k_r  [t, d_h^R]   the cached shared rotary key k^R, as cached: already rotated;
//   w_uk [d_c, h·d_h] W^UK, absorbed into the query: q̃_i = q^C_i W^UK_iᵀ.
// Output o [1, h·d_c]: each head's softmax([q̃_i; q^R_i]·[c^KV_j; k^R_j] / √(d_h + d_h^R)) c^KV,
// the latent output that W̃^O = W^UV W^O multiplies afterwards (reference/mla.h).
// Optionally DeepSeek-V2/V3's YaRN (F11, M09): q^R's frequencies by the released YaRN rule
// (ref::rope_inv_freq_yarn) and, with mscale_all_dim > 0, the softmax scale times YaRN's
// temperature m² (m = 0.1·mscale_all_dim·ln s + 1), as MlaConfig::rope_scaling does in
// reference/mla.h (mla_rope_rows, mla_scale).
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "oracle/core/op_generic.h"
#include "oracle/ops/attention.h"  // attention's rounding points, probs_error_scale
#include "reference/mla.h"

namespace lmo::oracle {

// YaRN on the rotary part (the rope op's yarn keys, oracle/ops/rope.h, and DeepSeek's
// mscale_all_dim), each number as decimal text, as reference/presets.h's RopeScaling holds a
// model's: the shortest decimal that reads back as the case's double (oracle/core/decimal_text.h), so
// the reference rounds the case's own constant once to T.
struct MlaYarn {
  std::string factor;  // s
  int64_t original_context = 0;
  std::string beta_fast, beta_slow;
  std::string mscale_all_dim;  // the temperature's coefficient; empty: no temperature (m = 1)
};

struct MlaDecodeParams {
  int64_t heads = 1;       // n_h
  int64_t head_dim = 1;    // d_h
  int64_t rope_dim = 2;    // d_h^R
  int64_t latent_dim = 1;  // d_c
  int64_t cache_len = 1;   // t
  double rope_base = 10000;
  ref::RopeLayout layout = ref::RopeLayout::kInterleaved;
  std::optional<MlaYarn> yarn;  // empty: plain F10 frequencies and eq. 46's scale

  // The reference's configuration; its rope_scaling views this object's text, so the config must
  // not outlive it.
  ref::MlaConfig config() const {
    ref::MlaConfig c;
    c.heads = heads;
    c.head_dim = head_dim;
    c.rope_dim = rope_dim;
    c.kv_latent_dim = latent_dim;
    c.rope_base = ref::mp(rope_base);
    c.rope_layout = layout;
    if (yarn) {
      c.rope_scaling = ref::RopeScaling{.kind = ref::RopeScalingKind::kYarn,
                                        .factor = yarn->factor,
                                        .original_context = yarn->original_context,
                                        .beta_fast = yarn->beta_fast,
                                        .beta_slow = yarn->beta_slow,
                                        .mscale_all_dim = yarn->mscale_all_dim};
    }
    return c;
  }
};

// One decode step's operands: the query of the token at position t − 1 and the cache of t
// latents (as the op's inputs hold them, or gathered from pages by paged_mla_decode).
template <class T>
struct MlaStep {
  ref::Mat<T> q_c, q_r, w_uk;  // [1, h·d_h], [1, h·d_h^R], [d_c, h·d_h]
  ref::MlaLatentCache<T> cache;
};

// The decode step with the softmax scale given (the op passes ref::mla_scale; the oracle's
// mutation tests pass wrong ones), every operation in T, q^R rotated at position t − 1 (t the
// cache's rows). A recipe's simulated kernel rounds the query (q̃ and the rotated q^R, as the
// attention kernel reads them) with `query` and the attention with `rounding`.
template <class T>
std::vector<T> mla_decode_step(const MlaDecodeParams& p, const MlaStep<T>& x, const ref::mp& scale,
                               const std::function<T(const T&)>& query = {},
                               const ref::AttentionRounding<T>& rounding = {},
                               const BoundRecipe* recipe = nullptr,
                               std::vector<double>* error_scale = nullptr) {
  const ref::MlaConfig c = p.config();
  const int64_t t = x.cache.c_kv.rows;
  ref::Mat<T> q_tilde = ref::mla_absorbed_query<T>(x.q_c, x.w_uk, c);
  ref::Mat<T> q_rot = ref::mla_rope_rows(x.q_r, p.heads, t - 1, c);
  if (query) {
    for (T& v : q_tilde.data) v = query(v);
    for (T& v : q_rot.data) v = query(v);
  }
  if (recipe && error_scale) {
    // The a priori bound of P̃'s rounding (oracle/ops/attention.h), over the latent attention.
    const int64_t dc = p.latent_dim, dr = p.rope_dim;
    const ref::Mat<T> q = ref::mla_concat_heads(q_tilde, dc, q_rot, dr, p.heads, false);
    const ref::Mat<T> k = ref::mla_concat_heads(x.cache.c_kv, dc, x.cache.k_r, dr, 1, false);
    *error_scale = probs_error_scale<T>(*recipe, x.cache.c_kv, [&](const ref::Mat<T>& values) {
      return ref::attention<T>(q, k, values, ref::mla_latent_config(c, scale)).data;
    });
  }
  return ref::mla_latent_attention<T>(q_tilde, q_rot, x.cache, c, scale, rounding).data;
}

// mla_decode_step on the mla_decode op's inputs q_c, q_r, c_kv, k_r and w_uk.
template <class T>
std::vector<T> mla_decode_latent(const MlaDecodeParams& p, const InputSet& in, const ref::mp& scale,
                                 const std::function<T(const T&)>& query = {},
                                 const ref::AttentionRounding<T>& rounding = {},
                                 const BoundRecipe* recipe = nullptr,
                                 std::vector<double>* error_scale = nullptr) {
  MlaStep<T> x;
  x.q_c = ref::Mat<T>(1, p.heads * p.head_dim, in.values<T>("q_c"));
  x.q_r = ref::Mat<T>(1, p.heads * p.rope_dim, in.values<T>("q_r"));
  x.w_uk = ref::Mat<T>(p.latent_dim, p.heads * p.head_dim, in.values<T>("w_uk"));
  x.cache.c_kv = ref::Mat<T>(p.cache_len, p.latent_dim, in.values<T>("c_kv"));
  x.cache.k_r = ref::Mat<T>(p.cache_len, p.rope_dim, in.values<T>("k_r"));
  return mla_decode_step<T>(p, x, scale, query, rounding, recipe, error_scale);
}

// The parameters of an MLA decode step (h, d_h, d_rope, d_c, rope_base, rope_layout, YaRN),
// and cache_len where the op takes a dense cache.
MlaDecodeParams read_mla_params(ParamReader& r, bool dense_cache);

// query (q̃ = q^C·W^UKᵀ and the rotated q^R as stored for the attention kernel), then
// attention's scores, probs, sum, acc and normalize: mla_decode's and paged_mla_decode's.
std::vector<RoundingPoint> mla_rounding_points();

class MlaDecodeOp : public GenericOp<MlaDecodeOp> {
 public:
  explicit MlaDecodeOp(MlaDecodeParams p) : p_(p) {}
  const MlaDecodeParams& params() const { return p_; }
  std::vector<InputDecl> inputs() const override;
  std::vector<OutputDecl> outputs() const override;
  // The absorption (h·d_c·d_h) and, per head, QKᵀ and PV over the cache.
  double cost() const override {
    const double h = static_cast<double>(p_.heads), dc = static_cast<double>(p_.latent_dim);
    return 2 * h * dc * static_cast<double>(p_.head_dim) +
           h * static_cast<double>(p_.cache_len) *
               (4 * dc + 2 * static_cast<double>(p_.rope_dim) + 40);
  }
  template <class T>
  Outputs<T> compute(const InputSet& in) const {
    Outputs<T> out(1);
    out[0].values = mla_decode_latent<T>(p_, in, ref::mla_scale(p_.config()));
    return out;
  }
  // query (q̃ = q^C·W^UKᵀ and the rotated q^R as stored for the attention kernel), then
  // attention's scores, probs, sum, acc and normalize.
  std::vector<RoundingPoint> rounding_points() const override;
  template <class T>
  Outputs<T> compute(const InputSet& in, const BoundRecipe& recipe) const;

 private:
  MlaDecodeParams p_;
};

}  // namespace lmo::oracle
