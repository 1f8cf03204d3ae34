// F15 attention: softmax(Q Kᵀ·scale + mask) V for one sequence, with h query heads sharing g
// key/value heads (MHA g = h, GQA 1 < g < h, MQA g = 1), the masks of the catalog and optional
// logit soft-capping (F14 applied to attention logits, Gemma 2) and an optional additive logit bias
// per head (T5's relative position bias, F09).
//
// Layout (row vectors, as `X W_Q` produces them): Q is a Mat with T_q rows and h·d columns,
// row t = [q_{t,0}; q_{t,1}; …; q_{t,h−1}] (the [T_q, h, d] row-major tensor); K is T_k × g·d and
// V is T_k × g·d_v in the same way; the output is T_q × h·d_v. Query head j reads KV head
// ⌊j·g/h⌋, so consecutive query heads share a KV head.
//
// Positions: key j sits at position j; query i at position T_k − T_q + i, i.e. the queries are the
// last T_q tokens of the sequence (decoding, chunked prefill). With T_q = T_k this is the usual
// square causal mask.
//
// Fully masked rows: the formula adds −∞ to every logit, so the softmax is 0/0 and the row's output
// is NaN (every component). That is what the formula implies; kernels that return 0 there
// (FlashAttention's convention) differ from the reference on purpose.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "reference/attention_f32.h"
#include "reference/linalg.h"
#include "reference/numeric.h"
#include "reference/parallel.h"
#include "reference/softmax.h"

namespace lmo::ref {

enum class MaskKind {
  kNone,           // every key visible
  kCausal,         // key j visible to query position p iff j ≤ p
  kSlidingWindow,  // iff 0 ≤ p − j < window (causal by construction)
  kDocument,       // iff j ≤ p and document_ids[j] == document_ids[p] (Llama 3)
};

struct AttentionConfig {
  int64_t heads = 1;      // h
  int64_t kv_heads = 1;   // g, must divide h
  int64_t head_dim = 1;   // d, the width of q and k
  int64_t value_dim = 0;  // d_v, the width of v; 0 means d
  // Multiplies Q Kᵀ; empty means 1/√d. Rounded once to T, so an exact mp value gives the correctly
  // rounded constant on every type.
  std::optional<mp> scale;
  MaskKind mask = MaskKind::kNone;
  int64_t window = 0;                 // w, for kSlidingWindow
  std::vector<int64_t> document_ids;  // one per key position (length T_k), for kDocument
  // s ↦ cap·tanh(s/cap) on the scaled logits, before the mask. Empty: no capping.
  std::optional<mp> soft_cap;
  // Added to the scaled, capped logits before the mask: one T_q × T_k matrix per query head (T5's
  // relative position bias, F09: s_ij = q_i·k_j + b_{h}(i, j)). Each value is rounded once to T
  // and added in T. Empty: no bias. Held in mp so that one config serves every number type; a
  // bias taken from a table in T is exact in mp.
  std::vector<Mat<mp>> logit_bias;
  // Softmax evaluated as e^{s−m}/Σe^{s−m}, m the row max over visible keys (the default, as every
  // kernel does); false gives the literal e^s/Σe^s, which overflows in narrow formats.
  bool subtract_max = true;

  int64_t v_dim() const { return value_dim == 0 ? head_dim : value_dim; }
};

// Throws std::invalid_argument unless cfg is consistent with Q (T_q × h·d), K (T_k × g·d) and V
// (T_k × g·d_v). `where` names the calling function in the message.
inline void validate_attention(const AttentionConfig& cfg, int64_t t_q, int64_t q_cols, int64_t t_k,
                               int64_t k_cols, int64_t v_rows, int64_t v_cols,
                               const std::string& where) {
  auto fail = [&](const std::string& what) { throw std::invalid_argument(where + ": " + what); };
  auto s = [](int64_t v) { return std::to_string(v); };
  if (cfg.heads <= 0) fail("heads must be positive, got " + s(cfg.heads));
  if (cfg.kv_heads <= 0) fail("kv_heads must be positive, got " + s(cfg.kv_heads));
  if (cfg.heads % cfg.kv_heads != 0) {
    fail("kv_heads must divide heads, got heads " + s(cfg.heads) + ", kv_heads " + s(cfg.kv_heads));
  }
  if (cfg.head_dim <= 0) fail("head_dim must be positive, got " + s(cfg.head_dim));
  if (cfg.value_dim < 0) fail("value_dim must be >= 0 (0: head_dim), got " + s(cfg.value_dim));
  if (q_cols != cfg.heads * cfg.head_dim) {
    fail("Q must have heads*head_dim = " + s(cfg.heads * cfg.head_dim) + " columns, got " +
         s(q_cols));
  }
  if (k_cols != cfg.kv_heads * cfg.head_dim) {
    fail("K must have kv_heads*head_dim = " + s(cfg.kv_heads * cfg.head_dim) + " columns, got " +
         s(k_cols));
  }
  if (v_cols != cfg.kv_heads * cfg.v_dim()) {
    fail("V must have kv_heads*value_dim = " + s(cfg.kv_heads * cfg.v_dim()) + " columns, got " +
         s(v_cols));
  }
  if (v_rows != t_k) fail("V must have as many rows as K (" + s(t_k) + "), got " + s(v_rows));
  if (t_q < 0 || t_k < 0) fail("negative sequence length");
  if (cfg.mask == MaskKind::kSlidingWindow && cfg.window <= 0) {
    fail("window must be positive for a sliding-window mask, got " + s(cfg.window));
  }
  if (cfg.mask == MaskKind::kDocument) {
    if (static_cast<int64_t>(cfg.document_ids.size()) != t_k) {
      fail("document_ids must have one id per key (" + s(t_k) + "), got " +
           s(static_cast<int64_t>(cfg.document_ids.size())));
    }
    if (t_q > t_k) fail("document mask needs T_q <= T_k, got " + s(t_q) + " > " + s(t_k));
  }
  if (cfg.scale && !(*cfg.scale > 0)) fail("scale must be positive");
  if (cfg.soft_cap && !(*cfg.soft_cap > 0)) fail("soft_cap must be positive");
  if (!cfg.logit_bias.empty()) {
    if (static_cast<int64_t>(cfg.logit_bias.size()) != cfg.heads) {
      fail("logit_bias must hold one matrix per query head (" + s(cfg.heads) + "), got " +
           s(static_cast<int64_t>(cfg.logit_bias.size())));
    }
    for (const Mat<mp>& b : cfg.logit_bias) {
      if (b.rows != t_q || b.cols != t_k) {
        fail("logit_bias matrices must be T_q x T_k = " + s(t_q) + "x" + s(t_k) + ", got " +
             s(b.rows) + "x" + s(b.cols));
      }
    }
  }
}

// The KV head query head j reads: ⌊j·g/h⌋.
inline int64_t kv_head_of(int64_t head, const AttentionConfig& cfg) {
  return head * cfg.kv_heads / cfg.heads;
}

// Whether key j is visible to query row i of T_q, with T_k keys (positions: see the top).
inline bool attention_key_visible(const AttentionConfig& cfg, int64_t t_q, int64_t t_k, int64_t i,
                                  int64_t j) {
  const int64_t p = t_k - t_q + i;
  switch (cfg.mask) {
    case MaskKind::kNone:
      return true;
    case MaskKind::kCausal:
      return j <= p;
    case MaskKind::kSlidingWindow:
      return 0 <= p - j && p - j < cfg.window;
    case MaskKind::kDocument:
      return j <= p &&
             cfg.document_ids[static_cast<size_t>(j)] == cfg.document_ids[static_cast<size_t>(p)];
  }
  return false;
}

// The scale in T: cfg.scale, or 1/√d, rounded once.
template <class T>
T attention_scale(const AttentionConfig& cfg) {
  using std::sqrt;
  return from_mp<T>(cfg.scale ? *cfg.scale : mp(mp(1) / sqrt(mp(cfg.head_dim))));
}

// The scaled logit before capping, s = (q·k)·scale: the dot product accumulates in Acc and is
// rounded once to T, then scaled in T (a kernel's GEMM followed by its scaling).
template <class T, class Acc = T>
T attention_raw_logit(std::span<const T> q, std::span<const T> k, const T& scale) {
  return T(convert<T>(dot<T, Acc>(q, k)) * scale);
}

// F14 on a logit: cap·tanh(s/cap) (softmax.h's softcap); identity when cap is empty.
template <class T>
T soft_cap_logit(const T& s, const std::optional<T>& cap) {
  if (!cap) return s;
  return softcap(s, *cap);
}

// The unnormalized softmax of a row of logits over its visible entries: e_j = e^{s_j − m} (m the
// max over visible entries; 0 where hidden, without ever forming −∞, which fp8 E4M3 does not
// have) and their sum z, accumulated in Acc left to right. `round_sum`, where set, is applied to
// the running sum after each addition (a simulated kernel holding it in a narrower format,
// AttentionRounding). any: whether some entry is visible.
template <class T, class Acc = T>
struct SoftmaxParts {
  std::vector<T> e;
  T z = T(0);
  bool any = false;
};
template <class T, class Acc = T>
SoftmaxParts<T, Acc> masked_softmax_parts(std::span<const T> s, std::span<const char> visible,
                                          bool subtract_max = true,
                                          const std::function<T(const T&)>& round_sum = {}) {
  using std::exp;
  if (s.size() != visible.size()) throw std::invalid_argument("masked_softmax: length mismatch");
  SoftmaxParts<T, Acc> r;
  r.e.assign(s.size(), T(0));
  T m(0);
  for (size_t j = 0; j < s.size(); ++j) {
    if (!visible[j]) continue;
    if (subtract_max && (!r.any || s[j] > m)) m = s[j];
    r.any = true;
  }
  if (!r.any) return r;
  Acc total(0);
  for (size_t j = 0; j < s.size(); ++j) {
    if (!visible[j]) continue;
    r.e[j] = exp(T(s[j] - m));
    total = total + convert<Acc>(r.e[j]);
    if (round_sum) total = convert<Acc>(round_sum(convert<T>(total)));
  }
  r.z = convert<T>(total);
  return r;
}

// Softmax over the visible entries of a row of logits; hidden entries get probability 0. No
// visible entry: every probability is NaN (0/0, see the top). The denominator accumulates in
// Acc. Written here rather than in softmax.h because the mask is attention's concern.
template <class T, class Acc = T>
std::vector<T> masked_softmax(std::span<const T> s, std::span<const char> visible,
                              bool subtract_max = true) {
  SoftmaxParts<T, Acc> parts = masked_softmax_parts<T, Acc>(s, visible, subtract_max);
  if (!parts.any) return std::vector<T>(s.size(), std::numeric_limits<T>::quiet_NaN());
  for (size_t j = 0; j < s.size(); ++j) {
    if (visible[j]) parts.e[j] = parts.e[j] / parts.z;
  }
  return std::move(parts.e);
}

// Rounding points of a simulated kernel ([recipes], oracle/rules/recipe.h): each hook, where set, maps
// a value of T to what a kernel holding that intermediate in a narrower format has. The
// reference and the strict naive kernel set none. With hooks, Acc is T (a simulated format).
template <class T>
struct AttentionRounding {
  std::function<T(const T&)> scores;  // the scaled (capped, biased) logits
  std::function<T(const T&)> probs;   // P entering P·V; late_normalize: the unnormalized e^{s−m}
  std::function<T(const T&)> sum;     // the softmax denominator's running sum
  std::function<T(const T&)> acc;     // the P·V accumulator, after each addition
  // o = (Σ_j ẽ_j v_j) / Σ_j e_j, dividing once after P·V (FlashAttention, PyTorch SDPA), instead
  // of Σ_j (e_j / z) v_j. The same value in exact arithmetic.
  bool late_normalize = false;
};

// The logit bias of query row i, key j, head `head` rounded to T; 0 without a bias.
template <class T>
T attention_logit_bias(const AttentionConfig& cfg, int64_t i, int64_t j, int64_t head) {
  if (cfg.logit_bias.empty()) return T(0);
  return from_mp<T>(cfg.logit_bias[static_cast<size_t>(head)](i, j));
}

// Logits (scaled, capped, plus the logit bias unless add_bias is false) of query row i of head
// `head` against every key, and which keys the mask shows; shared by attention, its probabilities
// and its gradient.
template <class T, class Acc = T>
void attention_row_logits(const Mat<T>& q, const Mat<T>& k, const AttentionConfig& cfg,
                          const T& scale, const std::optional<T>& cap, int64_t i, int64_t head,
                          std::vector<T>& logits, std::vector<char>& visible,
                          bool add_bias = true) {
  const int64_t d = cfg.head_dim, kv = kv_head_of(head, cfg);
  const std::span<const T> qi =
      q.row(i).subspan(static_cast<size_t>(head * d), static_cast<size_t>(d));
  logits.assign(static_cast<size_t>(k.rows), T(0));
  visible.assign(static_cast<size_t>(k.rows), 0);
  const auto finish = [&](int64_t j, const T& raw) {
    T s = soft_cap_logit(raw, cap);
    if (add_bias && !cfg.logit_bias.empty()) s = s + attention_logit_bias<T>(cfg, i, j, head);
    logits[static_cast<size_t>(j)] = s;
  };
  // Four visible keys at a time: each dot product is dot()'s left-to-right sequence, the four
  // interleaved so that a simulated format's latency-bound sums overlap (the naive kernel of
  // `check` at real shapes); the values are those of attention_raw_logit, key by key.
  const bool contract = fma_contraction();
  std::array<int64_t, 4> batch{};
  size_t n = 0;
  for (int64_t j = 0; j < k.rows; ++j) {
    if (!attention_key_visible(cfg, q.rows, k.rows, i, j)) continue;
    visible[static_cast<size_t>(j)] = 1;
    batch[n++] = j;
    if (n < batch.size()) continue;
    n = 0;
    std::array<const T*, 4> kp{};
    for (size_t m = 0; m < 4; ++m) kp[m] = k.row(batch[m]).data() + kv * d;
    std::array<Acc, 4> acc{Acc(0), Acc(0), Acc(0), Acc(0)};
    for (int64_t c = 0; c < d; ++c) {
      for (size_t m = 0; m < 4; ++m)
        acc[m] = mul_add(qi[static_cast<size_t>(c)], kp[m][c], acc[m], contract);
    }
    for (size_t m = 0; m < 4; ++m) finish(batch[m], T(convert<T>(acc[m]) * scale));
  }
  for (size_t m = 0; m < n; ++m) {
    const std::span<const T> kj =
        k.row(batch[m]).subspan(static_cast<size_t>(kv * d), static_cast<size_t>(d));
    finish(batch[m], attention_raw_logit<T, Acc>(qi, kj, scale));
  }
}

template <class T>
std::optional<T> attention_cap(const AttentionConfig& cfg) {
  if (!cfg.soft_cap) return std::nullopt;
  return from_mp<T>(*cfg.soft_cap);
}

// Calls body(i, head, kv, logits, visible) for every query row i and query head, in parallel
// (each call writes only its own output slots), with that row's logits and mask from
// attention_row_logits: the part attention, its probabilities and its tiled form share. Head
// by head: a thread's consecutive rows read the same keys, and the threads' contiguous shares
// get equal parts of a causal mask's triangle (row-major halves would give one three times the
// other's work).
template <class T, class Acc, class Body>
void for_each_attention_row(const Mat<T>& q, const Mat<T>& k, const AttentionConfig& cfg,
                            Body body) {
  const T scale = attention_scale<T>(cfg);
  const std::optional<T> cap = attention_cap<T>(cfg);
  parallel_for(q.rows * cfg.heads, [&](int64_t task) {
    const int64_t head = task / q.rows, i = task % q.rows;
    std::vector<T> s;
    std::vector<char> vis;
    attention_row_logits<T, Acc>(q, k, cfg, scale, cap, i, head, s, vis);
    body(i, head, kv_head_of(head, cfg), s, vis);
  });
}

// F15: the attention probabilities P = softmax(Q Kᵀ·scale (+ bias) + mask), one T_q × T_k matrix
// per query head (0 where masked; NaN rows where fully masked).
template <class T, class Acc = T>
std::vector<Mat<T>> attention_probs(const Mat<T>& q, const Mat<T>& k, const AttentionConfig& cfg) {
  validate_attention(cfg, q.rows, q.cols, k.rows, k.cols, k.rows, cfg.kv_heads * cfg.v_dim(),
                     "attention_probs");
  std::vector<Mat<T>> p(static_cast<size_t>(cfg.heads), Mat<T>(q.rows, k.rows));
  for_each_attention_row<T, Acc>(
      q, k, cfg,
      [&](int64_t i, int64_t head, int64_t, const std::vector<T>& s, const std::vector<char>& vis) {
        const std::vector<T> row = masked_softmax<T, Acc>(s, vis, cfg.subtract_max);
        std::copy(row.begin(), row.end(), p[static_cast<size_t>(head)].row(i).begin());
      });
  return p;
}

// One query row i of one head: its outputs o_i (d_v values, written to `o`) from its logits s
// and mask vis (attention_row_logits). The body of attention() and of attention_rows().
template <class T, class Acc = T>
void attention_row_output(const Mat<T>& v, const AttentionConfig& cfg,
                          const AttentionRounding<T>& rounding, bool contract, int64_t kv,
                          std::vector<T>& s, const std::vector<char>& vis, std::span<T> o) {
  const int64_t dv = cfg.v_dim();
  if (rounding.scores) {
    for (size_t j = 0; j < s.size(); ++j) {
      if (vis[j]) s[j] = rounding.scores(s[j]);
    }
  }
  SoftmaxParts<T, Acc> parts = masked_softmax_parts<T, Acc>(s, vis, cfg.subtract_max, rounding.sum);
  std::vector<T>& p = parts.e;
  for (size_t j = 0; j < p.size(); ++j) {
    if (!vis[j]) continue;
    if (!rounding.late_normalize) p[j] = p[j] / parts.z;
    if (rounding.probs) p[j] = rounding.probs(p[j]);
  }
  const auto store = [&](int64_t c, const Acc& acc) {
    T out = parts.any ? convert<T>(acc) : std::numeric_limits<T>::quiet_NaN();
    if (parts.any && rounding.late_normalize) out = out / parts.z;
    o[static_cast<size_t>(c)] = out;
  };
  // Four components at a time, each summed over the keys left to right as below: interleaved
  // so that a simulated format's latency-bound sums overlap.
  int64_t c0 = 0;
  for (; c0 + 4 <= dv; c0 += 4) {
    std::array<Acc, 4> acc{Acc(0), Acc(0), Acc(0), Acc(0)};
    for (int64_t j = 0; j < v.rows; ++j) {
      if (!vis[static_cast<size_t>(j)]) continue;
      const T* vj = v.row(j).data() + kv * dv + c0;
      for (size_t m = 0; m < 4; ++m) {
        acc[m] = mul_add(p[static_cast<size_t>(j)], vj[m], acc[m], contract);
        if (rounding.acc) acc[m] = convert<Acc>(rounding.acc(convert<T>(acc[m])));
      }
    }
    for (size_t m = 0; m < 4; ++m) store(c0 + static_cast<int64_t>(m), acc[m]);
  }
  for (int64_t c = c0; c < dv; ++c) {
    Acc acc(0);
    for (int64_t j = 0; j < v.rows; ++j) {
      if (!vis[static_cast<size_t>(j)]) continue;
      acc = mul_add(p[static_cast<size_t>(j)], v(j, kv * dv + c), acc, contract);
      if (rounding.acc) acc = convert<Acc>(rounding.acc(convert<T>(acc)));
    }
    store(c, acc);
  }
}

// F15: O = softmax(Q Kᵀ·scale + mask) V, per query head, with GQA/MQA sharing of K and V.
// o_i = Σ_j p_ij v_j: each product p_ij·v_j is formed in T and accumulated in Acc over the
// visible keys, left to right (mul_add), then rounded once to T. `rounding`: a simulated kernel's
// rounding points (AttentionRounding; none for the reference).
template <class T, class Acc = T>
Mat<T> attention(const Mat<T>& q, const Mat<T>& k, const Mat<T>& v, const AttentionConfig& cfg,
                 const AttentionRounding<T>& rounding = {}) {
  validate_attention(cfg, q.rows, q.cols, k.rows, k.cols, v.rows, v.cols, "attention");
  const int64_t dv = cfg.v_dim();
  Mat<T> out(q.rows, cfg.heads * dv);
  const bool contract = fma_contraction();  // the P̃V products fused into the sum (mul_add)
  // The strict naive f32 kernel at real shapes: the same values on the hardware's floats.
  if constexpr (std::is_same_v<T, Sim<Format::f32>> && std::is_same_v<Acc, T>) {
    if (!rounding.scores && !rounding.probs && !rounding.sum && !rounding.acc &&
        !rounding.late_normalize && attention_f32_native(q, k, v, cfg, contract, out)) {
      return out;
    }
  }
  for_each_attention_row<T, Acc>(
      q, k, cfg,
      [&](int64_t i, int64_t head, int64_t kv, std::vector<T>& s, const std::vector<char>& vis) {
        attention_row_output<T, Acc>(
            v, cfg, rounding, contract, kv, s, vis,
            out.row(i).subspan(static_cast<size_t>(head * dv), static_cast<size_t>(dv)));
      });
  return out;
}

// The rows of attention() listed in `tasks` (i·h + head each): d_v values per task, in the order
// given, each bit-identical to attention()'s (the same code on the same row). The certified
// path's fallback recomputes only the rows it could not decide, not the whole op.
template <class T, class Acc = T>
std::vector<T> attention_rows(const Mat<T>& q, const Mat<T>& k, const Mat<T>& v,
                              const AttentionConfig& cfg, std::span<const int64_t> tasks) {
  validate_attention(cfg, q.rows, q.cols, k.rows, k.cols, v.rows, v.cols, "attention_rows");
  const int64_t dv = cfg.v_dim();
  std::vector<T> out(tasks.size() * static_cast<size_t>(dv));
  const T scale = attention_scale<T>(cfg);
  const std::optional<T> cap = attention_cap<T>(cfg);
  const bool contract = fma_contraction();
  parallel_for(static_cast<int64_t>(tasks.size()), [&](int64_t t) {
    const int64_t task = tasks[static_cast<size_t>(t)];
    const int64_t i = task / cfg.heads, head = task % cfg.heads;
    std::vector<T> s;
    std::vector<char> vis;
    attention_row_logits<T, Acc>(q, k, cfg, scale, cap, i, head, s, vis);
    attention_row_output<T, Acc>(
        v, cfg, {}, contract, kv_head_of(head, cfg), s, vis,
        std::span<T>(out).subspan(static_cast<size_t>(t * dv), static_cast<size_t>(dv)));
  });
  return out;
}

}  // namespace lmo::ref
