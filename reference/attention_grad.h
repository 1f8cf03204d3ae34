// Gradient of F15 attention. For one query head with P = softmax(S), S the scaled (and capped)
// logits, O = P V and a given dO = ∂L/∂O:
//   dV = Pᵀ dO,   dP = dO Vᵀ,   dS = P ⊙ (dP − rowsum(dO ⊙ O)),
//   dQ = dS_raw K · scale,   dK = dS_rawᵀ Q · scale,
// where dS_raw = dS ⊙ (1 − tanh²(s_raw/cap)) with soft-capping (chain rule through
// cap·tanh(s_raw/cap); see soft_cap_slope) and dS_raw = dS without it. A logit bias (T5) is added
// after the cap and, being constant, changes P but not the chain rule. With GQA/MQA, dK and dV of a
// KV head sum the contributions of every query head reading it. Masked entries have P = 0 and
// contribute nothing; a fully masked row has NaN probabilities (see attention.h), and its NaN
// reaches dQ of that row and dK, dV of its KV head, as the formula implies.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/attention.h"
#include "reference/linalg.h"
#include "reference/numeric.h"
#include "reference/parallel.h"
#include "reference/softmax.h"

namespace lmo::ref {

// d/ds cap·tanh(s/cap) = 1 − tanh²(s/cap): softmax.h's softcap_grad in its stable form
// 4e/(1 + e)², e = e^{−2|s/cap|}; the literal form cancels to exactly 0 once tanh rounds to ±1
// (|s/cap| ≳ 3.5 in bfloat16), this one keeps its relative accuracy for every s.
template <class T>
T soft_cap_slope(const T& s, const T& cap) {
  return softcap_grad(s, cap);
}

template <class T>
struct AttentionGrads {
  Mat<T> dq;  // T_q × h·d
  Mat<T> dk;  // T_k × g·d
  Mat<T> dv;  // T_k × g·d_v
};

// ∂L/∂Q, ∂L/∂K, ∂L/∂V of attention(q, k, v, cfg) given d_out = ∂L/∂O (T_q × h·d_v). Every sum
// accumulates in Acc, left to right: over keys j for dQ and dP; over query heads of the group,
// then query rows i, for dK and dV; then is rounded once to T (and scaled in T).
template <class T, class Acc = T>
AttentionGrads<T> attention_backward(const Mat<T>& q, const Mat<T>& k, const Mat<T>& v,
                                     const Mat<T>& d_out, const AttentionConfig& cfg) {
  const bool contract = fma_contraction();  // the products of every sum below (mul_add)
  validate_attention(cfg, q.rows, q.cols, k.rows, k.cols, v.rows, v.cols, "attention_backward");
  const int64_t h = cfg.heads, d = cfg.head_dim, dv = cfg.v_dim(), tq = q.rows, tk = k.rows;
  if (d_out.rows != tq || d_out.cols != h * dv) {
    throw std::invalid_argument("attention_backward: d_out must be " + std::to_string(tq) + "x" +
                                std::to_string(h * dv) + ", got " + std::to_string(d_out.rows) +
                                "x" + std::to_string(d_out.cols));
  }
  const T scale = attention_scale<T>(cfg);
  const std::optional<T> cap = attention_cap<T>(cfg);
  const Mat<T> out = attention<T, Acc>(q, k, v, cfg);

  std::vector<Mat<T>> p(static_cast<size_t>(h), Mat<T>(tq, tk));
  std::vector<Mat<T>> ds(static_cast<size_t>(h), Mat<T>(tq, tk));  // dS_raw
  AttentionGrads<T> g{Mat<T>(tq, h * d), Mat<T>(tk, cfg.kv_heads * d),
                      Mat<T>(tk, cfg.kv_heads * dv)};

  // Per query row and head: P, dS_raw and dQ.
  parallel_for(tq * h, [&](int64_t task) {
    const int64_t i = task / h, head = task % h, kv = kv_head_of(head, cfg);
    std::vector<T> raw, capped(static_cast<size_t>(tk));
    std::vector<char> vis;
    attention_row_logits<T, Acc>(q, k, cfg, scale, std::nullopt, i, head, raw, vis, false);
    for (int64_t j = 0; j < tk; ++j) {
      T s = soft_cap_logit(raw[static_cast<size_t>(j)], cap);
      if (!cfg.logit_bias.empty()) s = s + attention_logit_bias<T>(cfg, i, j, head);
      capped[static_cast<size_t>(j)] = s;
    }
    const std::vector<T> pi = masked_softmax<T, Acc>(capped, vis, cfg.subtract_max);
    const std::span<const T> doi =
        d_out.row(i).subspan(static_cast<size_t>(head * dv), static_cast<size_t>(dv));
    const std::span<const T> oi =
        out.row(i).subspan(static_cast<size_t>(head * dv), static_cast<size_t>(dv));
    const T delta = convert<T>(dot<T, Acc>(doi, oi));  // rowsum(dO ⊙ O)
    Mat<T>& ph = p[static_cast<size_t>(head)];
    Mat<T>& dsh = ds[static_cast<size_t>(head)];
    for (int64_t j = 0; j < tk; ++j) {
      const T pij = pi[static_cast<size_t>(j)];
      ph(i, j) = pij;
      // Masked keys have dS = 0; a fully masked row (P all NaN) falls through and stays NaN.
      if (!vis[static_cast<size_t>(j)] && pij == 0) continue;
      const std::span<const T> vj =
          v.row(j).subspan(static_cast<size_t>(kv * dv), static_cast<size_t>(dv));
      const T dp = convert<T>(dot<T, Acc>(doi, vj));
      T dsij = T(pij * T(dp - delta));
      if (cap) dsij = T(dsij * soft_cap_slope(raw[static_cast<size_t>(j)], *cap));
      dsh(i, j) = dsij;
    }
    for (int64_t c = 0; c < d; ++c) {
      Acc acc(0);
      for (int64_t j = 0; j < tk; ++j) {
        acc = mul_add(dsh(i, j), k(j, kv * d + c), acc, contract);
      }
      g.dq(i, head * d + c) = T(convert<T>(acc) * scale);
    }
  });

  // Per key and KV head: dK and dV, summed over the query heads that read this KV head.
  const int64_t group = h / cfg.kv_heads;
  parallel_for(tk * cfg.kv_heads, [&](int64_t task) {
    const int64_t j = task / cfg.kv_heads, kv = task % cfg.kv_heads;
    for (int64_t c = 0; c < dv; ++c) {
      Acc acc(0);
      for (int64_t head = kv * group; head < (kv + 1) * group; ++head) {
        for (int64_t i = 0; i < tq; ++i) {
          acc = mul_add(p[static_cast<size_t>(head)](i, j), d_out(i, head * dv + c), acc, contract);
        }
      }
      g.dv(j, kv * dv + c) = convert<T>(acc);
    }
    for (int64_t c = 0; c < d; ++c) {
      Acc acc(0);
      for (int64_t head = kv * group; head < (kv + 1) * group; ++head) {
        for (int64_t i = 0; i < tq; ++i) {
          acc = mul_add(ds[static_cast<size_t>(head)](i, j), q(i, head * d + c), acc, contract);
        }
      }
      g.dk(j, kv * d + c) = T(convert<T>(acc) * scale);
    }
  });
  return g;
}

}  // namespace lmo::ref
