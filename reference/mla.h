// F19 Multi-head Latent Attention with decoupled RoPE (DeepSeek-V2), equations 37–47 of
// seeds/004, for one sequence h_1 … h_T at positions 0 … T−1:
//   c^Q_t = h_t W^DQ                  q^C_t = c^Q_t W^UQ            (per head q^C_{t,i}, d_h)
//   q^R_{t,i} = RoPE(c^Q_t W^QR, t)   per head, d_h^R
//   c^KV_t = h_t W^DKV                k^C_t = c^KV_t W^UK           v^C_t = c^KV_t W^UV
//   k^R_t = RoPE(h_t W^KR, t)         one d_h^R vector shared by all heads
//   s_{t,j,i} = [q^C_{t,i}; q^R_{t,i}]·[k^C_{j,i}; k^R_j] / √(d_h + d_h^R)
//   o_{t,i} = Σ_{j ≤ t} softmax_j(s_{t,j,i}) v^C_{j,i}
//   u_t = [o_{t,1}; …; o_{t,h}] W^O
// Convention: row vectors, `x W` (FORMULAS.md), so every W here is the transpose of the paper's
// (in × out). RoPE is F10 (rope.h; F11 scaling when rope_scaling is set) on the d_h^R rotary
// dimensions, layout and base from the config. DeepSeek-V2's RMSNorm on c^Q and c^KV is not in
// equations 37–47 and is not applied.
//
// Two forms, equal in exact arithmetic (C21):
//  - naive: decompress k^C and v^C of every token and run MHA; it caches k^C, v^C of all heads
//    and k^R: 2·h·d_h + d_h^R numbers per token;
//  - absorbed: W^UK moves to the query side, q̃_{t,i} = q^C_{t,i} W^UK_iᵀ (so that
//    q^C_{t,i}·k^C_{j,i} = q̃_{t,i}·c^KV_j), and W^UV is folded into W^O
//    (W̃^O_i = W^UV_i W^O_i); attention then runs over the cached latents [c^KV_j; k^R_j] with a
//    single shared key/value head (MQA), caching d_c + d_h^R numbers per token (C23).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/attention.h"
#include "reference/linalg.h"
#include "reference/numeric.h"
#include "reference/rope.h"
#include "reference/rope_preset.h"

namespace lmo::ref {

enum class MlaScale {
  kStandard,    // 1/√(d_h + d_h^R), eq. 46 as intended
  kLiteralE05,  // 1/√(d_h + d_h²), eq. 46 as printed in 004 (erratum E05), for the claims registry
};

struct MlaConfig {
  int64_t model_dim = 1;      // d
  int64_t heads = 1;          // n_h
  int64_t head_dim = 1;       // d_h
  int64_t rope_dim = 2;       // d_h^R (even)
  int64_t kv_latent_dim = 1;  // d_c
  int64_t q_latent_dim = 1;   // d_c'
  mp rope_base = mp(10000);
  RopeLayout rope_layout = RopeLayout::kInterleaved;
  // F11 scaling of the rotary frequencies (DeepSeek-V2/V3: YaRN); empty: plain F10 frequencies.
  // YaRN's attention temperature, where the scaling names mscale_all_dim, multiplies the softmax
  // scale (mla_scale), not cos and sin: only the d_h^R rotary part of each logit is rotated, so a
  // factor on cos and sin would scale that part alone.
  std::optional<RopeScaling> rope_scaling;
  MlaScale scale = MlaScale::kStandard;
};

// Weights in the row-vector convention (in × out).
template <class T>
struct MlaWeights {
  Mat<T> w_dq;   // d × d_c'
  Mat<T> w_uq;   // d_c' × h·d_h
  Mat<T> w_qr;   // d_c' × h·d_h^R
  Mat<T> w_dkv;  // d × d_c
  Mat<T> w_uk;   // d_c × h·d_h
  Mat<T> w_kr;   // d × d_h^R
  Mat<T> w_uv;   // d_c × h·d_h
  Mat<T> w_o;    // h·d_h × d
};

// What the naive form caches per token: k^C and v^C of every head, and the shared k^R.
template <class T>
struct MlaNaiveCache {
  Mat<T> k_c;  // t × h·d_h
  Mat<T> k_r;  // t × d_h^R
  Mat<T> v_c;  // t × h·d_h
  int64_t length() const { return k_c.rows; }
  int64_t numel() const {
    return static_cast<int64_t>(k_c.data.size() + k_r.data.size() + v_c.data.size());
  }
};

// What the absorbed form caches per token: the latent c^KV and the shared k^R.
template <class T>
struct MlaLatentCache {
  Mat<T> c_kv;  // t × d_c
  Mat<T> k_r;   // t × d_h^R
  int64_t length() const { return c_kv.rows; }
  int64_t numel() const { return static_cast<int64_t>(c_kv.data.size() + k_r.data.size()); }
};

template <class T>
struct MlaNaiveResult {
  Mat<T> u;  // T × d
  MlaNaiveCache<T> cache;
};

template <class T>
struct MlaAbsorbedResult {
  Mat<T> u;  // T × d
  MlaLatentCache<T> cache;
};

// The weights the absorbed form uses: the projections it still applies, and
// W̃^O (h·d_c × d), rows i·d_c … (i+1)·d_c − 1 holding W^UV_i W^O_i.
template <class T>
struct MlaAbsorbedWeights {
  Mat<T> w_dq, w_uq, w_qr, w_dkv, w_uk, w_kr;
  Mat<T> w_o_absorbed;
};

inline void validate_mla_config(const MlaConfig& c, const std::string& where) {
  auto fail = [&](const std::string& what) { throw std::invalid_argument(where + ": " + what); };
  auto pos = [&](int64_t v, const char* name) {
    if (v <= 0) fail(std::string(name) + " must be positive, got " + std::to_string(v));
  };
  pos(c.model_dim, "model_dim");
  pos(c.heads, "heads");
  pos(c.head_dim, "head_dim");
  pos(c.rope_dim, "rope_dim");
  pos(c.kv_latent_dim, "kv_latent_dim");
  pos(c.q_latent_dim, "q_latent_dim");
  if (c.rope_dim % 2 != 0) fail("rope_dim must be even, got " + std::to_string(c.rope_dim));
  if (!(c.rope_base > 0)) fail("rope_base must be positive");
}

template <class T>
void validate_mla_shape(const Mat<T>& m, int64_t rows, int64_t cols, const char* name,
                        const std::string& where) {
  if (m.rows != rows || m.cols != cols) {
    throw std::invalid_argument(where + ": " + name + " must be " + std::to_string(rows) + "x" +
                                std::to_string(cols) + ", got " + std::to_string(m.rows) + "x" +
                                std::to_string(m.cols));
  }
}

template <class T>
void validate_mla_projections(const Mat<T>& w_dq, const Mat<T>& w_uq, const Mat<T>& w_qr,
                              const Mat<T>& w_dkv, const Mat<T>& w_uk, const Mat<T>& w_kr,
                              const MlaConfig& c, const std::string& where) {
  validate_mla_config(c, where);
  const int64_t hd = c.heads * c.head_dim;
  validate_mla_shape(w_dq, c.model_dim, c.q_latent_dim, "w_dq", where);
  validate_mla_shape(w_uq, c.q_latent_dim, hd, "w_uq", where);
  validate_mla_shape(w_qr, c.q_latent_dim, c.heads * c.rope_dim, "w_qr", where);
  validate_mla_shape(w_dkv, c.model_dim, c.kv_latent_dim, "w_dkv", where);
  validate_mla_shape(w_uk, c.kv_latent_dim, hd, "w_uk", where);
  validate_mla_shape(w_kr, c.model_dim, c.rope_dim, "w_kr", where);
}

template <class T>
void validate_mla_weights(const MlaWeights<T>& w, const MlaConfig& c, const std::string& where) {
  validate_mla_projections(w.w_dq, w.w_uq, w.w_qr, w.w_dkv, w.w_uk, w.w_kr, c, where);
  const int64_t hd = c.heads * c.head_dim;
  validate_mla_shape(w.w_uv, c.kv_latent_dim, hd, "w_uv", where);
  validate_mla_shape(w.w_o, hd, c.model_dim, "w_o", where);
}

inline void validate_mla_input(int64_t cols, const MlaConfig& c, const std::string& where) {
  if (cols != c.model_dim) {
    throw std::invalid_argument(where + ": h must have model_dim = " + std::to_string(c.model_dim) +
                                " columns, got " + std::to_string(cols));
  }
}

// The softmax scale of eq. 46 as an exact mp value (rounded once to T by attention()), times
// YaRN's temperature m² for m = yarn_mscale(s, mscale_all_dim) = 0.1·mscale_all_dim·ln s + 1 where
// the scaling asks for it (F11: logits q·k/(t·√d) with √(1/t) = m; DeepSeek's released code
// multiplies its softmax scale by m·m the same way).
inline mp mla_scale(const MlaConfig& c) {
  using std::sqrt;
  const mp dh(c.head_dim), dr(c.rope_dim);
  const mp base = c.scale == MlaScale::kStandard ? mp(mp(1) / sqrt(mp(dh + dr)))
                                                 : mp(mp(1) / sqrt(mp(dh + dh * dh)));
  const std::optional<RopeScaling>& s = c.rope_scaling;
  if (!s || s->kind != RopeScalingKind::kYarn || s->mscale_all_dim.empty()) return base;
  const mp m = yarn_mscale(preset_constant<mp>(s->factor), preset_constant<mp>(s->mscale_all_dim));
  return mp(base * mp(m * m));
}

// Rotates each of the `groups` slices of width r in every row of x; row t is at position
// first_position + t (rounded once to T by rope_position).
template <class T>
Mat<T> mla_rope_rows(const Mat<T>& x, int64_t groups, int64_t first_position, const MlaConfig& c) {
  const std::vector<T> inv =
      rope_inv_freq_for<T>(c.rope_dim, from_mp<T>(c.rope_base), c.rope_scaling);
  const int64_t r = c.rope_dim;
  Mat<T> y(x.rows, x.cols);
  for (int64_t t = 0; t < x.rows; ++t) {
    const T pos = rope_position<T>(first_position + t);
    for (int64_t g = 0; g < groups; ++g) {
      const std::vector<T> rot =
          rope<T>(x.row(t).subspan(static_cast<size_t>(g * r), static_cast<size_t>(r)), pos, inv,
                  c.rope_layout);
      std::copy(rot.begin(), rot.end(), y.row(t).begin() + g * r);
    }
  }
  return y;
}

// Per head i, [a_i; b] (b shared, width wb) or [a_i; b_i] (b per head): the concatenated q or k.
template <class T>
Mat<T> mla_concat_heads(const Mat<T>& a, int64_t wa, const Mat<T>& b, int64_t wb, int64_t heads,
                        bool b_shared) {
  Mat<T> out(a.rows, heads * (wa + wb));
  for (int64_t t = 0; t < a.rows; ++t) {
    for (int64_t i = 0; i < heads; ++i) {
      for (int64_t c = 0; c < wa; ++c) out(t, i * (wa + wb) + c) = a(t, i * wa + c);
      for (int64_t c = 0; c < wb; ++c) {
        out(t, i * (wa + wb) + wa + c) = b(t, (b_shared ? 0 : i * wb) + c);
      }
    }
  }
  return out;
}

// F19 naive form over the whole sequence h (T × d): decompresses k^C, v^C for every token and
// runs causal MHA with head dimension d_h + d_h^R. Returns u (T × d) and the naive cache.
template <class T, class Acc = T>
MlaNaiveResult<T> mla_naive(const Mat<T>& h, const MlaWeights<T>& w, const MlaConfig& c) {
  validate_mla_weights(w, c, "mla_naive");
  validate_mla_input(h.cols, c, "mla_naive");
  const int64_t nh = c.heads, dh = c.head_dim, dr = c.rope_dim;
  const Mat<T> c_q = matmul<T, Acc>(h, w.w_dq);                             // eq. 37
  const Mat<T> q_c = matmul<T, Acc>(c_q, w.w_uq);                           // eq. 38
  const Mat<T> q_r = mla_rope_rows(matmul<T, Acc>(c_q, w.w_qr), nh, 0, c);  // eq. 39
  const Mat<T> c_kv = matmul<T, Acc>(h, w.w_dkv);                           // eq. 41
  MlaNaiveResult<T> res;
  res.cache.k_c = matmul<T, Acc>(c_kv, w.w_uk);                                       // eq. 42
  res.cache.k_r = mla_rope_rows(matmul<T, Acc>(h, w.w_kr), 1, 0, c);                  // eq. 43
  res.cache.v_c = matmul<T, Acc>(c_kv, w.w_uv);                                       // eq. 45
  const Mat<T> q = mla_concat_heads(q_c, dh, q_r, dr, nh, false);                     // eq. 40
  const Mat<T> k = mla_concat_heads(res.cache.k_c, dh, res.cache.k_r, dr, nh, true);  // eq. 44
  AttentionConfig cfg;
  cfg.heads = nh;
  cfg.kv_heads = nh;
  cfg.head_dim = dh + dr;
  cfg.value_dim = dh;
  cfg.scale = mla_scale(c);
  cfg.mask = MaskKind::kCausal;
  const Mat<T> o = attention<T, Acc>(q, k, res.cache.v_c, cfg);  // eq. 46
  res.u = matmul<T, Acc>(o, w.w_o);                              // eq. 47
  return res;
}

// The absorbed form's weights: W̃^O_i = W^UV_i W^O_i (d_c × d) for each head, each entry a dot
// product over d_h accumulated in Acc. The other projections are copied unchanged.
template <class T, class Acc = T>
MlaAbsorbedWeights<T> mla_absorb(const MlaWeights<T>& w, const MlaConfig& c) {
  validate_mla_weights(w, c, "mla_absorb");
  const int64_t dh = c.head_dim, dc = c.kv_latent_dim;
  const bool contract = fma_contraction();  // the W^UV·W^O products (mul_add)
  MlaAbsorbedWeights<T> a{
      w.w_dq, w.w_uq, w.w_qr, w.w_dkv, w.w_uk, w.w_kr, Mat<T>(c.heads * dc, c.model_dim)};
  for (int64_t i = 0; i < c.heads; ++i) {
    for (int64_t r = 0; r < dc; ++r) {
      for (int64_t n = 0; n < c.model_dim; ++n) {
        Acc s(0);
        for (int64_t k = 0; k < dh; ++k) {
          s = mul_add(w.w_uv(r, i * dh + k), w.w_o(i * dh + k, n), s, contract);
        }
        a.w_o_absorbed(i * dc + r, n) = convert<T>(s);
      }
    }
  }
  return a;
}

// The absorbed query q̃_{t,i} = q^C_{t,i} W^UK_iᵀ (rows of q_c: T × h·d_h; result T × h·d_c):
// q̃_{t,i}[r] = Σ_k q^C_{t,i}[k] W^UK[r, i·d_h + k], so that q^C_{t,i}·k^C_{j,i} = q̃_{t,i}·c^KV_j.
// Each entry is a dot product over d_h accumulated in Acc.
template <class T, class Acc = T>
Mat<T> mla_absorbed_query(const Mat<T>& q_c, const Mat<T>& w_uk, const MlaConfig& c) {
  const int64_t nh = c.heads, dh = c.head_dim, dc = c.kv_latent_dim;
  Mat<T> q_tilde(q_c.rows, nh * dc);
  for (int64_t t = 0; t < q_c.rows; ++t) {
    for (int64_t i = 0; i < nh; ++i) {
      const std::span<const T> qi =
          q_c.row(t).subspan(static_cast<size_t>(i * dh), static_cast<size_t>(dh));
      for (int64_t r = 0; r < dc; ++r) {
        const std::span<const T> uk =
            w_uk.row(r).subspan(static_cast<size_t>(i * dh), static_cast<size_t>(dh));
        q_tilde(t, i * dc + r) = convert<T>(dot<T, Acc>(qi, uk));
      }
    }
  }
  return q_tilde;
}

// Eq. 46 in the absorbed form: the rows of [q̃; q^R] (q_r already rotated) attend causally, as
// the last rows of the sequence, over the cached latents [c^KV_j; k^R_j] with ONE key/value head
// shared by every query head (MQA), the values being the latents themselves. Returns each head's
// output in the latent space, T × h·d_c (W^UV is applied afterwards, folded into W̃^O). scale:
// mla_scale(c), i.e. eq. 46's 1/√(d_h + d_h^R), not 1/√(d_c + d_h^R) of the latent width.
// `rounding`: a simulated kernel's rounding points (attention's; none for the reference).
// mla_latent_config: the attention it runs, every query head on the one latent KV head.
inline AttentionConfig mla_latent_config(const MlaConfig& c, const mp& scale) {
  AttentionConfig cfg;
  cfg.heads = c.heads;
  cfg.kv_heads = 1;  // every head reads the same latents
  cfg.head_dim = c.kv_latent_dim + c.rope_dim;
  cfg.value_dim = c.kv_latent_dim;
  cfg.scale = scale;
  cfg.mask = MaskKind::kCausal;
  return cfg;
}
template <class T, class Acc = T>
Mat<T> mla_latent_attention(const Mat<T>& q_tilde, const Mat<T>& q_r,
                            const MlaLatentCache<T>& cache, const MlaConfig& c, const mp& scale,
                            const AttentionRounding<T>& rounding = {}) {
  const int64_t nh = c.heads, dr = c.rope_dim, dc = c.kv_latent_dim;
  const Mat<T> q = mla_concat_heads(q_tilde, dc, q_r, dr, nh, false);
  const Mat<T> k = mla_concat_heads(cache.c_kv, dc, cache.k_r, dr, 1, false);
  return attention<T, Acc>(q, k, cache.c_kv, mla_latent_config(c, scale), rounding);
}

// Appends the latents of the rows of h (at positions cache.length() …) to the cache and returns
// u for those rows, attending causally over everything cached.
template <class T, class Acc = T>
Mat<T> mla_absorbed_attend(const Mat<T>& h, const MlaAbsorbedWeights<T>& w, const MlaConfig& c,
                           MlaLatentCache<T>& cache, const std::string& where) {
  validate_mla_projections(w.w_dq, w.w_uq, w.w_qr, w.w_dkv, w.w_uk, w.w_kr, c, where);
  validate_mla_shape(w.w_o_absorbed, c.heads * c.kv_latent_dim, c.model_dim, "w_o_absorbed", where);
  validate_mla_input(h.cols, c, where);
  const int64_t nh = c.heads, dr = c.rope_dim, dc = c.kv_latent_dim;
  if (cache.length() == 0) {
    cache.c_kv = Mat<T>(0, dc);
    cache.k_r = Mat<T>(0, dr);
  } else if (cache.c_kv.cols != dc || cache.k_r.cols != dr || cache.k_r.rows != cache.c_kv.rows) {
    throw std::invalid_argument(where + ": cache does not match d_c " + std::to_string(dc) +
                                ", d_h^R " + std::to_string(dr));
  }
  const int64_t first = cache.length();
  const Mat<T> c_kv = matmul<T, Acc>(h, w.w_dkv);                            // eq. 41
  const Mat<T> k_r = mla_rope_rows(matmul<T, Acc>(h, w.w_kr), 1, first, c);  // eq. 43
  cache.c_kv.data.insert(cache.c_kv.data.end(), c_kv.data.begin(), c_kv.data.end());
  cache.c_kv.rows += c_kv.rows;
  cache.k_r.data.insert(cache.k_r.data.end(), k_r.data.begin(), k_r.data.end());
  cache.k_r.rows += k_r.rows;

  const Mat<T> c_q = matmul<T, Acc>(h, w.w_dq);                                 // eq. 37
  const Mat<T> q_c = matmul<T, Acc>(c_q, w.w_uq);                               // eq. 38
  const Mat<T> q_r = mla_rope_rows(matmul<T, Acc>(c_q, w.w_qr), nh, first, c);  // eq. 39
  const Mat<T> o_latent = mla_latent_attention<T, Acc>(mla_absorbed_query<T, Acc>(q_c, w.w_uk, c),
                                                       q_r, cache, c, mla_scale(c));
  return matmul<T, Acc>(o_latent, w.w_o_absorbed);
}

// F19 absorbed form over the whole sequence h (T × d): returns u (T × d) and the latent cache.
template <class T, class Acc = T>
MlaAbsorbedResult<T> mla_absorbed(const Mat<T>& h, const MlaAbsorbedWeights<T>& w,
                                  const MlaConfig& c) {
  MlaAbsorbedResult<T> res;
  res.u = mla_absorbed_attend<T, Acc>(h, w, c, res.cache, "mla_absorbed");
  return res;
}

// F19 + F16: one decode step of absorbed MLA. h_t (d values) is the token at position
// cache.length(); its c^KV and k^R are appended and u_t (d values) returned.
template <class T, class Acc = T>
std::vector<T> mla_absorbed_decode_step(std::span<const T> h_t, const MlaAbsorbedWeights<T>& w,
                                        const MlaConfig& c, MlaLatentCache<T>& cache) {
  const Mat<T> h(1, static_cast<int64_t>(h_t.size()), std::vector<T>(h_t.begin(), h_t.end()));
  return mla_absorbed_attend<T, Acc>(h, w, c, cache, "mla_absorbed_decode_step").data;
}

}  // namespace lmo::ref
