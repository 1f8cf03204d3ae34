// Decoder-stack test support: every model preset reduced to tiny dimensions, deterministic
// weights and inputs from a fixed linear congruential generator (exact doubles, rounded once to
// the type under test), weights converted between number types, and bitwise comparison.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "reference/decoder.h"
#include "reference/decoder_weights.h"
#include "reference/preset_reduce.h"

namespace lmo::testdata {

// Values in [−1, 1): x ← 1664525·x + 1013904223 (mod 2^32), u = (x >> 8)/2^23 − 1, exact in
// double (24 significant bits).
class Lcg {
 public:
  explicit Lcg(uint32_t seed) : x_(seed) {}
  double next() {
    x_ = x_ * 1664525u + 1013904223u;
    return static_cast<double>(x_ >> 8) / 8388608.0 - 1.0;
  }

 private:
  uint32_t x_;
};

// Weights of the preset's shapes: γ near 1 (near 0 for Gemma's stored γ, whose weight is 1 + γ),
// biases and F22's balance bias in [−0.25, 0.25), T5's table in [−0.5, 0.5), matrices uniform in
// ±gain/√(rows) (gain 1: x W keeps the scale of x). Every value an exact double rounded once to T.
template <class T>
ref::DecoderWeights<T> lcg_weights(const ref::ModelPreset& p, uint32_t seed, double gain = 1) {
  ref::DecoderWeights<T> w = ref::zero_decoder_weights<T>(p);
  Lcg g(seed);
  ref::for_each_weight(w, p, [&](const std::string& name, auto& t, int64_t rows, int64_t) {
    const bool gamma = name.size() > 6 && name.ends_with(".gamma");
    const bool vector = rows == 1 && !gamma;
    const double scale = gain / std::sqrt(static_cast<double>(rows));
    for (T& v : ref::weight_data(t)) {
      const double u = g.next();
      double val = 0;
      if (gamma) {
        val = (p.norm == ref::NormKind::kRmsNormUnitOffset ? 0.0 : 1.0) + 0.25 * u;
      } else if (vector) {
        val = 0.25 * u;
      } else if (name == "relative_bias") {
        val = 0.5 * u;
      } else {
        val = scale * u;
      }
      v = ref::convert<T>(val);
    }
  });
  return w;
}

template <class T>
ref::Mat<T> lcg_matrix(int64_t rows, int64_t cols, uint32_t seed) {
  ref::Mat<T> m(rows, cols);
  Lcg g(seed);
  for (T& v : m.data) v = ref::convert<T>(g.next());
  return m;
}

template <class To, class From>
ref::Mat<To> convert_matrix(const ref::Mat<From>& m) {
  ref::Mat<To> out(m.rows, m.cols);
  for (size_t i = 0; i < m.data.size(); ++i) out.data[i] = ref::convert<To>(m.data[i]);
  return out;
}

// The same weights in another type (exact when widening).
template <class To, class From>
ref::DecoderWeights<To> convert_weights(const ref::DecoderWeights<From>& w,
                                        const ref::ModelPreset& p) {
  std::vector<const std::vector<From>*> src;
  ref::for_each_weight(w, p, [&](const std::string&, const auto& t, int64_t, int64_t) {
    src.push_back(&ref::weight_data(t));
  });
  ref::DecoderWeights<To> out = ref::zero_decoder_weights<To>(p);
  size_t k = 0;
  ref::for_each_weight(out, p, [&](const std::string&, auto& t, int64_t, int64_t) {
    std::vector<To>& dst = ref::weight_data(t);
    const std::vector<From>& s = *src[k++];
    for (size_t i = 0; i < s.size(); ++i) dst[i] = ref::convert<To>(s[i]);
  });
  return out;
}

// Every preset of presets.h reduced for tests: d_model 4, d_ff 6, 2 layers (4 for Cohere's
// 4-layer pattern), the preset's kind of head sharing (MHA 2/2, GQA 4/2, MQA 2/1), head width 4
// where RoPE rotates the heads (so half-split and interleaved pairs differ, and the Llama 3.1
// scaling has a smoothed frequency) and 2 otherwise, windows of 2, and for
// DeepSeek MLA {d_c 4, d_c' 6, d_h 2, d_h^R 4} and 8 routed experts, top-2, in 4 groups (V2,
// 2 shared experts, 2 groups kept) or 2 groups (V3, 1 shared, 1 group kept), 1 dense layer.
// Published gaps are filled: ε 1e-5 for M01, M03, M08; RoPE base 10000 for M08; GPT-3's band 2.
inline std::vector<ref::ReducedPreset> tiny_presets() {
  using ref::ReducedDims;
  std::vector<ref::ReducedPreset> out;
  auto add = [&](const char* name, ReducedDims r) {
    out.push_back(ref::reduce(ref::preset(name), r));
  };
  ReducedDims mha;
  mha.d_model = 4, mha.n_heads = 2, mha.n_kv_heads = 2, mha.d_head = 2, mha.d_ff = 6;
  mha.n_layers = 2;
  ReducedDims gqa = mha;
  gqa.n_heads = 4;
  gqa.n_kv_heads = 2;
  gqa.d_head = 4;
  ReducedDims mha_rope = mha;
  mha_rope.d_head = 4;
  ReducedDims r = mha;
  r.norm_eps = "1e-5";
  add("transformer-base", r);
  add("gpt2-small", mha);
  r.window = 2;
  add("gpt3-175b", r);
  add("llama2-70b", gqa);
  add("llama3-8b", gqa);
  add("llama3.1-405b", gqa);
  ReducedDims windowed = gqa;
  windowed.window = 2;
  add("mistral-7b", windowed);
  add("gemma2-9b", windowed);
  ReducedDims mqa = mha_rope;
  mqa.n_kv_heads = 1;
  mqa.norm_eps = "1e-5";
  mqa.rope_base = "10000";
  add("palm-540b", mqa);
  ReducedDims v2 = mha;
  v2.mla = ref::MlaDims{.d_c = 4, .d_c_q = 6, .d_h = 2, .d_rope = 4, .d_v = 2};
  v2.moe = ref::MoeReduction{.n_routed = 8,
                             .n_shared = 2,
                             .top_k = 2,
                             .d_ff_expert = 3,
                             .n_group = 4,
                             .topk_group = 2,
                             .dense_layers = 1};
  add("deepseek-v2", v2);
  ReducedDims v3 = v2;
  v3.moe = ref::MoeReduction{.n_routed = 8,
                             .n_shared = 1,
                             .top_k = 2,
                             .d_ff_expert = 3,
                             .n_group = 2,
                             .topk_group = 1,
                             .dense_layers = 1};
  add("deepseek-v3", v3);
  ReducedDims cohere = windowed;
  cohere.n_layers = 4;
  add("cohere2-r7b", cohere);
  add("olmo2-7b", mha_rope);
  add("t5-11b", mha);
  return out;
}

inline const ref::ReducedPreset& tiny_preset(const std::string& name) {
  static const std::vector<ref::ReducedPreset> all = tiny_presets();
  for (const ref::ReducedPreset& r : all) {
    if (r.preset.name == name) return r;
  }
  throw std::invalid_argument("tiny_preset: no " + name);
}

inline std::vector<int64_t> iota_positions(int64_t n, int64_t first = 0) {
  std::vector<int64_t> p;
  for (int64_t i = 0; i < n; ++i) p.push_back(first + i);
  return p;
}

// Same value, same sign of zero, or both NaN.
template <class T>
bool same_value(const T& a, const T& b) {
  using std::isnan;
  using std::signbit;
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return ref::to_mp(a) == ref::to_mp(b) && signbit(a) == signbit(b);
}

template <class T>
::testing::AssertionResult bitwise_equal(const ref::Mat<T>& a, const ref::Mat<T>& b) {
  if (a.rows != b.rows || a.cols != b.cols) return ::testing::AssertionFailure() << "shapes";
  for (size_t i = 0; i < a.data.size(); ++i) {
    if (!same_value(a.data[i], b.data[i])) {
      return ::testing::AssertionFailure()
             << "element " << i << ": " << ref::to_mp(a.data[i]) << " vs " << ref::to_mp(b.data[i]);
    }
  }
  return ::testing::AssertionSuccess();
}

// max_i |a_i − b_i| / max_i |b_i|, in mp.
template <class T>
ref::mp normwise_error(const ref::Mat<T>& a, const ref::Mat<ref::mp>& b) {
  ref::mp err = 0, scale = 0;
  for (size_t i = 0; i < b.data.size(); ++i) {
    err = std::max(err, ref::mp(abs(ref::to_mp(a.data[i]) - b.data[i])));
    scale = std::max(scale, ref::mp(abs(b.data[i])));
  }
  return err / scale;
}

}  // namespace lmo::testdata
