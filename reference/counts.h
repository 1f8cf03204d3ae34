// F23 closed-form counts: parameters, FLOPs and memory (in elements) of the attention and FFN
// sublayers, as the notes give them (seeds/000 §2.1, §4.1, §4.2; 001 §4-2). Exact integers;
// every product is checked and overflow throws std::overflow_error.
//
// Notation (000 §4.1): b batch, T sequence length, h query heads, g key/value heads, d head
// dimension, D = h·d the model width the notes assume. Where a model's width differs from h·d
// (Gemma 2: 3584 vs 16·256), the general forms take the width D separately; the notes' forms are
// the special case D = h·d, and a test checks that they agree.
//
// FLOPs count a multiply and an add as one each, so a (m×k)(k×n) product is 2mkn. The notes
// keep the four projections and the two attention products QKᵀ and PV; the softmax
// ("n × bhT²") and the 1/√d scaling are lower order and excluded — C18 compares exactly these
// kept terms with an instrumented run (tests/reference/counts_instrumented_test.cc).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

namespace lmo::ref {

namespace counts_detail {

inline int64_t mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    throw std::overflow_error("counts: " + std::to_string(a) + " * " + std::to_string(b) +
                              " overflows int64");
  }
  return r;
}

inline int64_t add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) {
    throw std::overflow_error("counts: " + std::to_string(a) + " + " + std::to_string(b) +
                              " overflows int64");
  }
  return r;
}

inline int64_t prod(std::initializer_list<int64_t> xs) {
  int64_t r = 1;
  for (int64_t x : xs) r = mul(r, x);
  return r;
}

inline int64_t total(std::initializer_list<int64_t> xs) {
  int64_t r = 0;
  for (int64_t x : xs) r = add(r, x);
  return r;
}

// Every named dimension ≥ 0.
inline void nonnegative(const char* fn,
                        std::initializer_list<std::pair<const char*, int64_t>> dims) {
  for (const auto& [name, v] : dims) {
    if (v < 0) {
      throw std::invalid_argument(std::string(fn) + ": " + name + " = " + std::to_string(v) +
                                  ", expected >= 0");
    }
  }
}

// h ≥ 1, 1 ≤ g ≤ h, g divides h (every KV head serves h/g query heads).
inline void heads(const char* fn, int64_t h, int64_t g) {
  if (h < 1 || g < 1 || h % g != 0) {
    throw std::invalid_argument(std::string(fn) + ": h = " + std::to_string(h) + ", g = " +
                                std::to_string(g) + ", expected h >= 1 and g a divisor of h");
  }
}

}  // namespace counts_detail

// --- parameters (000 §2.1, §4.1, §4.2) ---------------------------------------------------------

// F23 standard FFN: d·d_ff + d_ff·d = 2·d·d_ff (8d² at d_ff = 4d); with biases (F03) + d_ff + d.
inline int64_t ffn_params(int64_t d, int64_t d_ff, bool biases = false) {
  using namespace counts_detail;
  nonnegative("ffn_params", {{"d", d}, {"d_ff", d_ff}});
  const int64_t w = prod({2, d, d_ff});
  return biases ? total({w, d_ff, d}) : w;
}

// F23 GLU FFN (F05, bias-free): content, gate and output projections, 3·d·d_ff.
inline int64_t glu_ffn_params(int64_t d, int64_t d_ff) {
  using namespace counts_detail;
  nonnegative("glu_ffn_params", {{"d", d}, {"d_ff", d_ff}});
  return prod({3, d, d_ff});
}

// F23 MHA projections W_Q, W_K, W_V, W_O as the notes count them: 4(hd)².
inline int64_t mha_params(int64_t h, int64_t d) {
  using namespace counts_detail;
  heads("mha_params", h, h);
  nonnegative("mha_params", {{"d", d}});
  const int64_t hd = mul(h, d);
  return prod({4, hd, hd});
}

// F23 GQA/MQA projections (000 §4.2): W_Q and W_O (hd)² each, W_K and W_V (hd)(gd) each:
// 2(hd)² + 2(hd)(gd).
inline int64_t gqa_params(int64_t h, int64_t g, int64_t d) {
  using namespace counts_detail;
  heads("gqa_params", h, g);
  nonnegative("gqa_params", {{"d", d}});
  const int64_t hd = mul(h, d), gd = mul(g, d);
  return add(prod({2, hd, hd}), prod({2, hd, gd}));
}

// Attention projections for a model width D that may differ from h·d:
// W_Q (D×hd) + W_K, W_V (D×gd each) + W_O (hd×D) = 2·D·hd + 2·D·gd.
inline int64_t attention_params(int64_t D, int64_t h, int64_t g, int64_t d) {
  using namespace counts_detail;
  heads("attention_params", h, g);
  nonnegative("attention_params", {{"D", D}, {"d", d}});
  return add(prod({2, D, h, d}), prod({2, D, g, d}));
}

// MoE FFN with GLU experts (F20; DeepSeek-V3): (n_routed + n_shared) experts of 3·d·d_ff plus the
// router's d·n_routed centroids. Beyond the notes.
inline int64_t moe_params(int64_t d, int64_t d_ff_expert, int64_t n_routed, int64_t n_shared) {
  using namespace counts_detail;
  nonnegative("moe_params", {{"n_routed", n_routed}, {"n_shared", n_shared}});
  return add(mul(add(n_routed, n_shared), glu_ffn_params(d, d_ff_expert)), mul(d, n_routed));
}

// Parameters one token uses in that MoE FFN: K routed + the shared experts, and the router.
inline int64_t moe_active_params(int64_t d, int64_t d_ff_expert, int64_t n_routed, int64_t n_shared,
                                 int64_t top_k) {
  using namespace counts_detail;
  nonnegative("moe_active_params", {{"n_routed", n_routed}});
  if (top_k < 0 || top_k > n_routed) {
    throw std::invalid_argument("moe_active_params: top_k = " + std::to_string(top_k) +
                                ", expected 0 … n_routed = " + std::to_string(n_routed));
  }
  return add(mul(add(top_k, n_shared), glu_ffn_params(d, d_ff_expert)), mul(d, n_routed));
}

// --- FLOPs (000 §4.1; 001 §4-2) ----------------------------------------------------------------

// The terms of one attention forward, each 2 × (multiply-adds) of its matrix product.
struct AttentionFlops {
  int64_t q = 0, k = 0, v = 0, o = 0;  // projections
  int64_t scores = 0;                  // Q Kᵀ
  int64_t values = 0;                  // P V
  int64_t projections() const { return counts_detail::total({q, k, v, o}); }
  int64_t core() const { return counts_detail::add(scores, values); }
  int64_t total() const { return counts_detail::add(projections(), core()); }
};

// Full (unmasked; a causal mask computes the same T² scores) attention over T tokens:
// Q 2bT·D·hd, K and V 2bT·D·gd each, O 2bT·hd·D, QKᵀ 2bhT²d, PV 2bhT²d.
inline AttentionFlops attention_flops(int64_t b, int64_t T, int64_t D, int64_t h, int64_t g,
                                      int64_t d) {
  using namespace counts_detail;
  heads("attention_flops", h, g);
  nonnegative("attention_flops", {{"b", b}, {"T", T}, {"D", D}, {"d", d}});
  AttentionFlops f;
  f.q = prod({2, b, T, D, h, d});
  f.k = prod({2, b, T, D, g, d});
  f.v = f.k;
  f.o = f.q;
  f.scores = prod({2, b, h, T, T, d});
  f.values = f.scores;
  return f;
}

// F23 the notes' total for MHA with D = hd: 8bTD² + 4bhT²d.
inline int64_t attention_flops_mha(int64_t b, int64_t T, int64_t h, int64_t d) {
  using namespace counts_detail;
  heads("attention_flops_mha", h, h);
  nonnegative("attention_flops_mha", {{"b", b}, {"T", T}, {"d", d}});
  const int64_t D = mul(h, d);
  return add(prod({8, b, T, D, D}), prod({4, b, h, T, T, d}));
}

// One decoding step with a KV cache (F16): the new token's q, k, v and output projection, and
// its attention over the t cached positions (itself included): Q 2b·D·hd, K and V 2b·D·gd each,
// O 2b·hd·D, q·Kᵀ 2bhtd, p·V 2bhtd.
inline AttentionFlops decode_step_flops(int64_t b, int64_t t, int64_t D, int64_t h, int64_t g,
                                        int64_t d) {
  using namespace counts_detail;
  heads("decode_step_flops", h, g);
  nonnegative("decode_step_flops", {{"b", b}, {"t", t}, {"D", D}, {"d", d}});
  AttentionFlops f;
  f.q = prod({2, b, D, h, d});
  f.k = prod({2, b, D, g, d});
  f.v = f.k;
  f.o = f.q;
  f.scores = prod({2, b, h, t, d});
  f.values = f.scores;
  return f;
}

// F23 the notes' cached step for MHA, D = hd: 8bD² + 4bhtd.
inline int64_t decode_step_flops_mha(int64_t b, int64_t t, int64_t h, int64_t d) {
  using namespace counts_detail;
  heads("decode_step_flops_mha", h, h);
  nonnegative("decode_step_flops_mha", {{"b", b}, {"t", t}, {"d", d}});
  const int64_t D = mul(h, d);
  return add(prod({8, b, D, D}), prod({4, b, h, t, d}));
}

// F23 the step without a cache: everything is recomputed over the t tokens, 8btD² + 4bht²d
// (= attention_flops_mha(b, t, h, d)). The catalog's "step at length t+1 costs
// 8b(t+1)D² + 4bh(t+1)²d" is this function at t + 1.
inline int64_t decode_step_flops_uncached_mha(int64_t b, int64_t t, int64_t h, int64_t d) {
  return attention_flops_mha(b, t, h, d);
}

// --- memory, in elements (000 §4.1, §4.2; 004 MLA) ----------------------------------------------

// F23 KV cache of one layer: K and V for t positions, g heads of d: 2·b·g·t·d (MHA: g = h,
// 2·b·h·t·d).
inline int64_t kv_cache_elements(int64_t b, int64_t t, int64_t g, int64_t d) {
  using namespace counts_detail;
  nonnegative("kv_cache_elements", {{"b", b}, {"t", t}, {"g", g}, {"d", d}});
  return prod({2, b, g, t, d});
}

// F23 MLA cache of one layer (F19, C23): the latent c^KV (d_c) and the shared RoPE key k^R
// (d_h^R) per position: b·t·(d_c + d_h^R).
inline int64_t mla_cache_elements(int64_t b, int64_t t, int64_t d_c, int64_t d_rope) {
  using namespace counts_detail;
  nonnegative("mla_cache_elements", {{"b", b}, {"t", t}, {"d_c", d_c}, {"d_rope", d_rope}});
  return prod({b, t, add(d_c, d_rope)});
}

// Intermediate activations of one attention forward (000 §4.1 "intermediate activations",
// §4.2): input bTD, Q bhTd, K and V 2bgTd, attention weights after the softmax bhT². The
// output bTD is the next layer's input and "often not counted for this layer": it is reported
// but left out of total().
struct AttentionActivations {
  int64_t input = 0, q = 0, kv = 0, weights = 0, output = 0;
  int64_t total() const { return counts_detail::total({input, q, kv, weights}); }
};

inline AttentionActivations attention_activations(int64_t b, int64_t T, int64_t D, int64_t h,
                                                  int64_t g, int64_t d) {
  using namespace counts_detail;
  heads("attention_activations", h, g);
  nonnegative("attention_activations", {{"b", b}, {"T", T}, {"D", D}, {"d", d}});
  AttentionActivations a;
  a.input = prod({b, T, D});
  a.q = prod({b, h, T, d});
  a.kv = prod({2, b, g, T, d});
  a.weights = prod({b, h, T, T});
  a.output = a.input;
  return a;
}

// F23 the notes' MHA memory total (000 §4.1): weights 4(hd)² + activations bTD + 3bhTd + bhT².
inline int64_t attention_memory_mha(int64_t b, int64_t T, int64_t h, int64_t d) {
  using namespace counts_detail;
  heads("attention_memory_mha", h, h);
  nonnegative("attention_memory_mha", {{"b", b}, {"T", T}, {"d", d}});
  const int64_t hd = mul(h, d);
  return total({prod({4, hd, hd}), prod({b, T, hd}), prod({3, b, h, T, d}), prod({b, h, T, T})});
}

// F23 the notes' GQA memory total (000 §4.2, k = g key/value heads):
// 2(hd)² + 2hgd² + 2bTD + 2bgdT + bhT².
inline int64_t attention_memory_gqa(int64_t b, int64_t T, int64_t h, int64_t g, int64_t d) {
  using namespace counts_detail;
  heads("attention_memory_gqa", h, g);
  nonnegative("attention_memory_gqa", {{"b", b}, {"T", T}, {"d", d}});
  const int64_t hd = mul(h, d);
  return total({prod({2, hd, hd}), prod({2, h, g, d, d}), prod({2, b, T, hd}),
                prod({2, b, g, d, T}), prod({b, h, T, T})});
}

// F23 inference memory with a KV cache (000 §4.1, MHA): weights 4(hd)² + cache 2bhtd.
inline int64_t inference_memory_mha(int64_t b, int64_t t, int64_t h, int64_t d) {
  return counts_detail::add(mha_params(h, d), kv_cache_elements(b, t, h, d));
}

}  // namespace lmo::ref
