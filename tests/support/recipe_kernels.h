// Plain-float kernels written the way the implementations behind the named recipes are
// (docs/recipes.md), independently of the reference: a FlashAttention-2 forward with key tiles
// and an online softmax, transformers' LlamaRMSNorm and Llama rotary embedding, PyTorch's
// literal GELU, GELU-tanh and SiLU. Each takes knobs for what a recipe fixes (a format, an
// order, a constant) so tests can build both the correct kernel and its mutants.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "reference/formats.h"

namespace lmo::testing {

// x rounded to format f (nothing when empty), as a cast to that dtype does.
inline float round_to(std::optional<ref::Format> f, float x) {
  if (!f) return x;
  return static_cast<float>(ref::decode<double>(*f, ref::encode(*f, static_cast<double>(x))));
}

struct FlashKnobs {
  int64_t tile = 16;                       // keys per tile
  std::optional<ref::Format> probs;        // P̃ = e^(s−m) before P̃V (FlashAttention: storage)
  std::optional<ref::Format> acc;          // the P̃V accumulator after each add (FA: f32 = none)
  bool blocked_dot = false;                // q·k summed in two halves (another GEMM order)
};

// O for q [t_q × h·d], k, v [t_k × g·d] (row-major), causal or not; query head j reads KV head
// ⌊j·g/h⌋; queries at the last t_q positions. FlashAttention 2's forward pass per query row:
// for each key tile, the running max m is raised, the running sum l and the output rescaled by
// e^(m_old − m_new), P̃ formed and added; O / l at the end.
inline std::vector<float> flash_attention(const std::vector<float>& q, const std::vector<float>& k,
                                          const std::vector<float>& v, int64_t t_q, int64_t t_k,
                                          int64_t h, int64_t g, int64_t d, bool causal,
                                          float scale, const FlashKnobs& kn) {
  std::vector<float> out(static_cast<size_t>(t_q * h * d));
  for (int64_t i = 0; i < t_q; ++i) {
    const int64_t pos = t_k - t_q + i;
    for (int64_t head = 0; head < h; ++head) {
      const int64_t kv = head * g / h;
      const float* qi = &q[static_cast<size_t>((i * h + head) * d)];
      float m = -std::numeric_limits<float>::infinity(), l = 0;
      std::vector<float> o(static_cast<size_t>(d), 0.0f), s;
      for (int64_t j0 = 0; j0 < t_k; j0 += kn.tile) {
        const int64_t j1 = std::min(t_k, j0 + kn.tile);
        s.assign(static_cast<size_t>(j1 - j0), 0.0f);
        float tile_max = -std::numeric_limits<float>::infinity();
        for (int64_t j = j0; j < j1; ++j) {
          if (causal && j > pos) continue;
          const float* kj = &k[static_cast<size_t>((j * g + kv) * d)];
          float dot = 0, dot2 = 0;
          for (int64_t c = 0; c < d; ++c) {
            if (kn.blocked_dot && c >= d / 2) {
              dot2 += qi[c] * kj[c];
            } else {
              dot += qi[c] * kj[c];
            }
          }
          const float sj = (dot + dot2) * scale;
          s[static_cast<size_t>(j - j0)] = sj;
          tile_max = std::max(tile_max, sj);
        }
        if (tile_max == -std::numeric_limits<float>::infinity()) continue;  // all masked
        const float m_new = std::max(m, tile_max);
        const float corr = std::exp(m - m_new);  // 0 on the first tile (m = −∞)
        l *= corr;
        for (float& x : o) x = round_to(kn.acc, x * corr);
        for (int64_t j = j0; j < j1; ++j) {
          if (causal && j > pos) continue;
          const float e = std::exp(s[static_cast<size_t>(j - j0)] - m_new);
          l += e;
          const float pe = round_to(kn.probs, e);
          const float* vj = &v[static_cast<size_t>((j * g + kv) * d)];
          for (int64_t c = 0; c < d; ++c) {
            o[static_cast<size_t>(c)] = round_to(kn.acc, o[static_cast<size_t>(c)] + pe * vj[c]);
          }
        }
        m = m_new;
      }
      for (int64_t c = 0; c < d; ++c) {
        out[static_cast<size_t>((i * h + head) * d + c)] = o[static_cast<size_t>(c)] / l;
      }
    }
  }
  return out;
}

// Absorbed MLA decode as DeepSeek's FlashMLA runs it behind vLLM's MLA backend (q_c [1, h·d_h],
// q_r [1, h·d_r], c_kv [t, d_c], k_r [t, d_r], w_uk [d_c, h·d_h], the oracle's mla_decode
// layout): q̃_i = q^C_i·W^UK_iᵀ (f32 sums) and q^R rotated at position t − 1 (interleaved
// pairs, θ_k = 10000^(−2k/r), cos and sin in double, products in f32), both stored rounded to
// `query`; then
// FlashAttention over [q̃_i; q^R_i]·[c^KV_j; k^R_j] with values c^KV_j (padded with zeros to the
// key width, which adds nothing), scale 1/√(d_h + d_r) in f32.
inline std::vector<float> flash_mla(const std::vector<float>& qc, const std::vector<float>& qr,
                                    const std::vector<float>& ckv, const std::vector<float>& kr,
                                    const std::vector<float>& wuk, int64_t h, int64_t dh,
                                    int64_t dr, int64_t dc, int64_t t,
                                    std::optional<ref::Format> query, const FlashKnobs& kn) {
  const int64_t dk = dc + dr;
  std::vector<float> q(static_cast<size_t>(h * dk)), k(static_cast<size_t>(t * dk)),
      v(static_cast<size_t>(t * dk), 0.0f);
  for (int64_t i = 0; i < h; ++i) {
    for (int64_t c = 0; c < dc; ++c) {
      float acc = 0;
      for (int64_t e = 0; e < dh; ++e) {
        acc += qc[static_cast<size_t>(i * dh + e)] *
               wuk[static_cast<size_t>(c * h * dh + i * dh + e)];
      }
      q[static_cast<size_t>(i * dk + c)] = round_to(query, acc);
    }
    for (int64_t k2 = 0; k2 < dr / 2; ++k2) {
      const double angle = static_cast<double>(t - 1) * std::pow(10000.0, -2.0 * k2 / dr);
      const auto cs = static_cast<float>(std::cos(angle));
      const auto sn = static_cast<float>(std::sin(angle));
      const float a = qr[static_cast<size_t>(i * dr + 2 * k2)];
      const float b = qr[static_cast<size_t>(i * dr + 2 * k2 + 1)];
      q[static_cast<size_t>(i * dk + dc + 2 * k2)] = round_to(query, a * cs - b * sn);
      q[static_cast<size_t>(i * dk + dc + 2 * k2 + 1)] = round_to(query, b * cs + a * sn);
    }
  }
  for (int64_t j = 0; j < t; ++j) {
    for (int64_t c = 0; c < dc; ++c) {
      k[static_cast<size_t>(j * dk + c)] = v[static_cast<size_t>(j * dk + c)] =
          ckv[static_cast<size_t>(j * dc + c)];
    }
    for (int64_t c = 0; c < dr; ++c) {
      k[static_cast<size_t>(j * dk + dc + c)] = kr[static_cast<size_t>(j * dr + c)];
    }
  }
  const float scale = static_cast<float>(1 / std::sqrt(static_cast<double>(dh + dr)));
  const std::vector<float> o = flash_attention(q, k, v, 1, t, h, 1, dk, true, scale, kn);
  std::vector<float> out(static_cast<size_t>(h * dc));
  for (int64_t i = 0; i < h; ++i) {
    for (int64_t c = 0; c < dc; ++c) {
      out[static_cast<size_t>(i * dc + c)] = o[static_cast<size_t>(i * dk + c)];
    }
  }
  return out;
}

// transformers' LlamaRMSNorm in a storage dtype: hidden = x in f32; variance = mean(hidden²)
// (summed in blocks of `block`, as a vectorized reduction does); hidden · rsqrt(variance + ε);
// cast to the storage dtype; times the weight, the product rounded to the storage dtype.
inline std::vector<float> hf_rmsnorm(const std::vector<float>& x, const std::vector<float>& w,
                                     int64_t rows, int64_t d, float eps, ref::Format storage,
                                     int64_t block = 8) {
  std::vector<float> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = &x[static_cast<size_t>(r * d)];
    std::vector<float> partial(static_cast<size_t>(block), 0.0f);
    for (int64_t c = 0; c < d; ++c) partial[static_cast<size_t>(c % block)] += xr[c] * xr[c];
    float ss = 0;
    for (float p : partial) ss += p;
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(d) + eps);
    for (int64_t c = 0; c < d; ++c) {
      const float n = round_to(storage, xr[c] * inv);
      y[static_cast<size_t>(r * d + c)] = round_to(storage, n * w[static_cast<size_t>(c)]);
    }
  }
  return y;
}

struct RopeKnobs {
  bool f64_angles = false;                 // θ and p·θ, cos and sin in double
  std::optional<ref::Format> table;        // the cos/sin table's dtype (none: f32)
  std::optional<ref::Format> products;     // x·cos, x·sin and the sum's dtype (none: f32)
};

// transformers' Llama rotary embedding (rotate_half layout) on x [tokens × heads·dim]:
// inv_freq = 1 / base^(2i/dim) in f32, angles = position · inv_freq, cos and sin cast to the
// table dtype, x·cos + rotate_half(x)·sin in the products' dtype.
inline std::vector<float> hf_rope(const std::vector<float>& x, const std::vector<int64_t>& pos,
                                  int64_t tokens, int64_t heads, int64_t dim, float base,
                                  const RopeKnobs& kn) {
  const int64_t half = dim / 2;
  std::vector<float> y(x.size());
  for (int64_t t = 0; t < tokens; ++t) {
    std::vector<float> c(static_cast<size_t>(half)), s(static_cast<size_t>(half));
    for (int64_t i = 0; i < half; ++i) {
      if (kn.f64_angles) {
        const double a = static_cast<double>(pos[static_cast<size_t>(t)]) /
                         std::pow(static_cast<double>(base), 2.0 * static_cast<double>(i) /
                                                                static_cast<double>(dim));
        c[static_cast<size_t>(i)] = round_to(kn.table, static_cast<float>(std::cos(a)));
        s[static_cast<size_t>(i)] = round_to(kn.table, static_cast<float>(std::sin(a)));
      } else {
        const float inv = 1.0f / std::pow(base, static_cast<float>(2 * i) / static_cast<float>(dim));
        const float a = static_cast<float>(pos[static_cast<size_t>(t)]) * inv;
        c[static_cast<size_t>(i)] = round_to(kn.table, std::cos(a));
        s[static_cast<size_t>(i)] = round_to(kn.table, std::sin(a));
      }
    }
    for (int64_t hd = 0; hd < heads; ++hd) {
      const float* xr = &x[static_cast<size_t>((t * heads + hd) * dim)];
      float* yr = &y[static_cast<size_t>((t * heads + hd) * dim)];
      for (int64_t i = 0; i < half; ++i) {
        const float a = xr[i], b = xr[i + half];
        const float ci = c[static_cast<size_t>(i)], si = s[static_cast<size_t>(i)];
        yr[i] = round_to(kn.products,
                         round_to(kn.products, a * ci) - round_to(kn.products, b * si));
        yr[i + half] = round_to(kn.products,
                                round_to(kn.products, b * ci) + round_to(kn.products, a * si));
      }
    }
  }
  return y;
}

// PyTorch's CPU forms in f32: gelu x·0.5·(1 + erf(x·(1/√2))); gelu tanh 0.5·x·(1 +
// tanh(√(2/π)·(x + 0.044715·x³))); silu x / (1 + e^−x).
inline float torch_gelu(float x) {
  return x * 0.5f * (1.0f + std::erf(x * static_cast<float>(M_SQRT1_2)));
}
inline float torch_gelu_tanh(float x) {
  const float k = static_cast<float>(std::sqrt(2.0 / M_PI));
  return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
}
inline float torch_silu(float x) { return x / (1.0f + std::exp(-x)); }

// An MLP as separate PyTorch kernels in a narrow dtype (transformers' LlamaMLP:
// down_proj(act(gate_proj(x)) * up_proj(x)); without v, act(fc1(x)) then fc2): each GEMM
// accumulates in f32 over k in blocks (32 by default; partial sums added at the end, as a tiled
// GEMM does, not the reference's order) and stores its output rounded to `hidden`; the
// activation (f32 inside) is stored rounded to `act`, the gate product to `gated`. x [t, d], w
// and v [d, f], w2 [f, d]; row-major.
struct MlpKnobs {
  std::optional<ref::Format> hidden, act, gated, out;
  int64_t block = 32;  // the GEMMs' k-blocks
};

inline std::vector<float> blocked_gemm(const std::vector<float>& a, const std::vector<float>& b,
                                       int64_t m, int64_t k, int64_t n, int64_t block) {
  std::vector<float> c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float total = 0;
      for (int64_t k0 = 0; k0 < k; k0 += block) {
        float part = 0;
        for (int64_t kk = k0; kk < std::min(k, k0 + block); ++kk) {
          part += a[static_cast<size_t>(i * k + kk)] * b[static_cast<size_t>(kk * n + j)];
        }
        total += part;
      }
      c[static_cast<size_t>(i * n + j)] = total;
    }
  }
  return c;
}

inline std::vector<float> torch_mlp(const std::vector<float>& x, const std::vector<float>& w,
                                    const std::vector<float>* v, const std::vector<float>& w2,
                                    int64_t t, int64_t d, int64_t f, float (*act)(float),
                                    const MlpKnobs& kn) {
  std::vector<float> h = blocked_gemm(x, w, t, d, f, kn.block);
  std::vector<float> u = v ? blocked_gemm(x, *v, t, d, f, kn.block) : std::vector<float>{};
  for (size_t i = 0; i < h.size(); ++i) {
    h[i] = round_to(kn.act, act(round_to(kn.hidden, h[i])));
    if (v) h[i] = round_to(kn.gated, h[i] * round_to(kn.hidden, u[i]));
  }
  std::vector<float> y = blocked_gemm(h, w2, t, f, d, kn.block);
  for (float& e : y) e = round_to(kn.out, e);
  return y;
}

// DeepSeek-V3's reference Gate (inference/model.py) for sigmoid routing, on logits z [t, n] and
// a bias c [n] (empty: none), with n_group groups of which `kept` stay (group score: the sum of
// the top two s + c): s = sigmoid(z) held in `scores`, selection on s + c in f32, the top-k by
// a stable sort on descending s + c (torch.topk's order), the weights gathered from s, divided
// by their f32 sum held in `sum` (each quotient held in `normalized`), times route_scale. Writes
// weights and indices [t, k] in that score order. weights_from_biased: the bug of gathering
// the weights from s + c instead of s.
struct GateKnobs {
  std::optional<ref::Format> scores, sum, normalized;
  bool weights_from_biased = false;
};

inline void deepseek_gate(const std::vector<float>& z, const std::vector<float>& c, int64_t t,
                          int64_t n, int64_t k, int64_t n_group, int64_t kept, float route_scale,
                          const GateKnobs& kn, std::vector<float>& weights,
                          std::vector<int64_t>& indices) {
  const int64_t size = n / n_group;
  weights.assign(static_cast<size_t>(t * k), 0.0f);
  indices.assign(static_cast<size_t>(t * k), 0);
  for (int64_t r = 0; r < t; ++r) {
    std::vector<float> s(static_cast<size_t>(n)), sel(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      s[size_t(i)] = round_to(kn.scores, 1.0f / (1.0f + std::exp(-z[size_t(r * n + i)])));
      sel[size_t(i)] = s[size_t(i)] + (c.empty() ? 0.0f : c[size_t(i)]);
    }
    auto by_score = [](const std::vector<float>& v) {
      return [&v](int64_t a, int64_t b) { return v[size_t(a)] > v[size_t(b)]; };
    };
    if (n_group > 1) {
      std::vector<float> gs(static_cast<size_t>(n_group));
      for (int64_t g = 0; g < n_group; ++g) {
        std::vector<float> m(sel.begin() + g * size, sel.begin() + (g + 1) * size);
        std::sort(m.begin(), m.end(), std::greater<float>());
        gs[size_t(g)] = m[0] + m[1];
      }
      std::vector<int64_t> order(static_cast<size_t>(n_group));
      for (int64_t g = 0; g < n_group; ++g) order[size_t(g)] = g;
      std::stable_sort(order.begin(), order.end(), by_score(gs));
      for (int64_t j = kept; j < n_group; ++j) {
        const int64_t g = order[size_t(j)];
        for (int64_t i = g * size; i < (g + 1) * size; ++i) {
          sel[size_t(i)] = -std::numeric_limits<float>::infinity();
        }
      }
    }
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) order[size_t(i)] = i;
    std::stable_sort(order.begin(), order.end(), by_score(sel));
    float total = 0;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t e = order[size_t(j)];
      indices[size_t(r * k + j)] = e;
      weights[size_t(r * k + j)] = kn.weights_from_biased ? sel[size_t(e)] : s[size_t(e)];
      total += weights[size_t(r * k + j)];
    }
    total = round_to(kn.sum, total);
    for (int64_t j = 0; j < k; ++j) {
      float& w = weights[size_t(r * k + j)];
      w = round_to(kn.normalized, w / total) * route_scale;
    }
  }
}

}  // namespace lmo::testing
