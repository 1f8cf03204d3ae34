// Loading the attention and MLA known-answer cases (tests/data/attention.json, mla.json) into the
// reference's types.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "reference/attention.h"
#include "reference/linalg.h"
#include "reference/mla.h"
#include "tests/support/test_data.h"

namespace lmo::testdata {

// A matrix of exact hex doubles, each converted to T (exact for mp, float128, double).
template <class T>
ref::Mat<T> hex_matrix(const nlohmann::json& rows) {
  ref::Mat<T> m(static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows.at(0).size()));
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t c = 0; c < m.cols; ++c) m(r, c) = ref::convert<T>(exact_double(rows[r][c]));
  }
  return m;
}

inline ref::Mat<ref::mp> expected_matrix(const nlohmann::json& rows) {
  ref::Mat<ref::mp> m(static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows.at(0).size()));
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t c = 0; c < m.cols; ++c) m(r, c) = expected(rows[r][c]);
  }
  return m;
}

inline ref::AttentionConfig attention_config(const nlohmann::json& c) {
  ref::AttentionConfig cfg;
  cfg.heads = c["heads"];
  cfg.kv_heads = c["kv_heads"];
  cfg.head_dim = c["head_dim"];
  cfg.value_dim = c["value_dim"];
  const std::string mask = c["mask"];
  cfg.mask = mask == "causal"           ? ref::MaskKind::kCausal
             : mask == "sliding_window" ? ref::MaskKind::kSlidingWindow
             : mask == "document"       ? ref::MaskKind::kDocument
                                        : ref::MaskKind::kNone;
  cfg.window = c["window"];
  cfg.document_ids = c["document_ids"].get<std::vector<int64_t>>();
  if (!c["scale"].is_null()) cfg.scale = ref::mp(c["scale"].get<std::string>());
  if (!c["soft_cap"].is_null()) cfg.soft_cap = ref::mp(c["soft_cap"].get<std::string>());
  return cfg;
}

inline ref::MlaConfig mla_config(const nlohmann::json& c) {
  ref::MlaConfig cfg;
  cfg.model_dim = c["model_dim"];
  cfg.heads = c["heads"];
  cfg.head_dim = c["head_dim"];
  cfg.rope_dim = c["rope_dim"];
  cfg.kv_latent_dim = c["kv_latent_dim"];
  cfg.q_latent_dim = c["q_latent_dim"];
  cfg.rope_base = ref::mp(c["rope_base"].get<std::string>());
  cfg.rope_layout = c["rope_layout"] == "interleaved" ? ref::RopeLayout::kInterleaved
                                                      : ref::RopeLayout::kHalfSplit;
  return cfg;
}

template <class T>
ref::MlaWeights<T> mla_weights(const nlohmann::json& w) {
  return {hex_matrix<T>(w["w_dq"]),  hex_matrix<T>(w["w_uq"]), hex_matrix<T>(w["w_qr"]),
          hex_matrix<T>(w["w_dkv"]), hex_matrix<T>(w["w_uk"]), hex_matrix<T>(w["w_kr"]),
          hex_matrix<T>(w["w_uv"]),  hex_matrix<T>(w["w_o"])};
}

// max_i |a_i| in mp.
template <class T>
ref::mp max_abs(const ref::Mat<T>& m) {
  ref::mp r = 0;
  for (const T& x : m.data) r = std::max(r, ref::mp(abs(ref::to_mp(x))));
  return r;
}

// max_i |a_i − b_i| in mp.
template <class T>
ref::mp max_abs_diff(const ref::Mat<T>& a, const ref::Mat<ref::mp>& b) {
  ref::mp r = 0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    r = std::max(r, ref::mp(abs(ref::to_mp(a.data[i]) - b.data[i])));
  }
  return r;
}

// An a priori bound on max|O_T − O| for attention run in a format of unit roundoff u (T = Acc),
// from first-order error analysis. With S = max_ij scale·Σ_c|q_ic k_jc| (so |s| ≤ S):
//  - a logit is a d-term dot product, rounded, scaled, and capped (3 roundings more, slope ≤ 1):
//    |Δs| ≤ (d + 5)·u·S;
//  - s − m carries 2·(d + 5)·u·S + 2u·S, so e^{s−m} has relative error ≤ (2d + 12)·u·S + u;
//  - p_j = e_j / Σ_k e_k doubles that and adds T·u (sum) and u (division);
//  - o = Σ_j p_j v_j adds T·u, on values of size ≤ max|V|.
// In all u·((4d + 24)·S + 2T + 3)·max|V|; twice that is asserted, leaving room for second-order
// terms (for fp8 the first-order bound is no longer small, and the check only says that the
// output stays of the size of V).
template <class T>
ref::mp attention_error_bound(const ref::mp& u, const ref::Mat<T>& q, const ref::Mat<T>& k,
                              const ref::Mat<T>& v, const ref::AttentionConfig& cfg) {
  const ref::mp scale = ref::to_mp(ref::attention_scale<ref::mp>(cfg));
  ref::mp s_max = 0;
  for (int64_t head = 0; head < cfg.heads; ++head) {
    const int64_t kv = ref::kv_head_of(head, cfg);
    for (int64_t i = 0; i < q.rows; ++i) {
      for (int64_t j = 0; j < k.rows; ++j) {
        ref::mp s = 0;
        for (int64_t c = 0; c < cfg.head_dim; ++c) {
          s += abs(ref::to_mp(q(i, head * cfg.head_dim + c)) *
                   ref::to_mp(k(j, kv * cfg.head_dim + c)));
        }
        s_max = std::max(s_max, ref::mp(s * scale));
      }
    }
  }
  const ref::mp first_order = (4 * cfg.head_dim + 24) * s_max + 2 * k.rows + 3;
  return 2 * u * first_order * max_abs(v);
}

// A bound on max|u_T − u| / max|u| for MLA run in a format of unit roundoff u (T = Acc). Let K be
// the number of roundings on the longest chain from an input to an output: h W^DQ, c^Q W^QR and
// RoPE, the logit dot product and its scaling, the softmax's exp, sum and division, the value
// sum, and o W^O: K = d + d_c' + 4 + (d_h + d_h^R + 2) + (T + 3) + (T + 1) + h·d_h. The worst
// case to first order is K·u times each dot product's ratio Σ|terms| / |result| (a few units for
// these weights of size ≈ 1/√fan-in); rounding errors of independent-looking operations grow like
// √K·u instead. K·u lies between the two, and the measured errors sit ~20× below it in every
// format (double 3e-16 against 6e-15, bfloat16 1.4e-2 against 0.23). For fp8 (K·u > 1) it only
// says the result is of the size of u.
inline ref::mp mla_error_bound(const ref::mp& u, const ref::MlaConfig& c, int64_t tokens) {
  const int64_t k = c.model_dim + c.q_latent_dim + 4 + (c.head_dim + c.rope_dim + 2) +
                    (tokens + 3) + (tokens + 1) + c.heads * c.head_dim;
  return k * u;
}

}  // namespace lmo::testdata
