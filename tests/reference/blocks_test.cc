// F18 block layouts: known answers from mpmath for a small stack of every layout (post-LN,
// pre-LN + final norm, double norm, OLMo 2, parallel; plus Cohere's 4-layer pattern, T5's
// relative bias, Llama 3.1's scaled RoPE with a document mask, and DeepSeek-V2/V3's MLA with
// YaRN and MoE routing), C27 (each layout equals the
// explicit composition of the F-row functions) and C20 (fused parallel projections equal the
// separate ones).
#include "reference/blocks.h"

#include <gtest/gtest.h>

#include <iostream>
#include <list>
#include <string>
#include <vector>

#include "reference/attention.h"
#include "reference/decoder.h"
#include "reference/ffn.h"
#include "reference/norms.h"
#include "reference/preset_reduce.h"
#include "reference/rope.h"
#include "tests/support/attention_cases.h"
#include "tests/support/decoder_cases.h"
#include "tests/support/test_data.h"

namespace lmo::ref {
namespace {

using testdata::bitwise_equal;
using testdata::normwise_error;

const nlohmann::json& data() {
  static const nlohmann::json d = testdata::load("blocks.json");
  return d;
}

// ReducedDims keeps views of its fill-in strings: keep the JSON's strings alive.
std::string_view intern(const std::string& s) {
  static std::list<std::string> strings;
  strings.push_back(s);
  return strings.back();
}

ReducedPreset reduced_from_json(const nlohmann::json& c) {
  const nlohmann::json& r = c["reduction"];
  ReducedDims dims;
  dims.d_model = r["d_model"], dims.n_heads = r["n_heads"], dims.n_kv_heads = r["n_kv_heads"];
  dims.d_head = r["d_head"], dims.d_ff = r["d_ff"], dims.n_layers = r["n_layers"];
  if (!r["window"].is_null()) dims.window = r["window"].get<int64_t>();
  if (!r["norm_eps"].is_null()) dims.norm_eps = intern(r["norm_eps"]);
  if (!r["rope_base"].is_null()) dims.rope_base = intern(r["rope_base"]);
  if (!r["mla"].is_null()) {
    const nlohmann::json& m = r["mla"];
    dims.mla = MlaDims{.d_c = m["d_c"],
                       .d_c_q = m["d_c_q"],
                       .d_h = m["d_h"],
                       .d_rope = m["d_rope"],
                       .d_v = m["d_v"]};
  }
  if (!r["moe"].is_null()) {
    const nlohmann::json& m = r["moe"];
    dims.moe = MoeReduction{.n_routed = m["n_routed"],
                            .n_shared = m["n_shared"],
                            .top_k = m["top_k"],
                            .d_ff_expert = m["d_ff_expert"],
                            .n_group = m["n_group"],
                            .topk_group = m["topk_group"],
                            .dense_layers = m["dense_layers"]};
  }
  return reduce(preset(c["preset"].get<std::string>()), dims);
}

// The case's weights, by name; every name of the preset must be in the file and vice versa.
template <class T>
DecoderWeights<T> weights_from_json(const nlohmann::json& c, const ModelPreset& p) {
  DecoderWeights<T> w = zero_decoder_weights<T>(p);
  size_t used = 0;
  for_each_weight(w, p, [&](const std::string& name, auto& t, int64_t rows, int64_t cols) {
    ASSERT_TRUE(c["weights"].contains(name)) << name;
    const std::vector<double> v = testdata::exact_doubles(c["weights"][name]);
    ASSERT_EQ(static_cast<int64_t>(v.size()), rows * cols) << name;
    std::vector<T>& dst = weight_data(t);
    for (size_t i = 0; i < v.size(); ++i) dst[i] = convert<T>(v[i]);
    ++used;
  });
  EXPECT_EQ(used, c["weights"].size()) << "weights in the file the preset does not use";
  return w;
}

template <class T>
Mat<T> run_case(const nlohmann::json& c, const ReducedPreset& r) {
  const DecoderWeights<T> w = weights_from_json<T>(c, r.preset);
  const Mat<T> x = testdata::hex_matrix<T>(c["x"]);
  const std::vector<int64_t> pos = c["positions"].get<std::vector<int64_t>>();
  DecoderOptions opt;
  opt.document_ids = c["document_ids"].get<std::vector<int64_t>>();
  return decoder_stack<T>(x, pos, w, r.preset, opt);
}

// Known answers. Every case is a 2-layer (Cohere: 4-layer) stack on 3 (DeepSeek: 4) tokens, d = 4,
// its outputs O(1) (the last operation is a norm, or a residual sum of normalized terms). mp
// carries 167 bits (u ≈ 3e-51) through a few hundred operations per output whose condition is
// modest (the norms divide by standard deviations of order 1), so 1e-40 normwise leaves ten digits
// of room; measured below 1e-48. float128 (u ≈ 1e-34) is held to 1e-30 and double (u ≈ 1.1e-16) to
// 1e-13: the same few hundred operations times an amplification ≤ ~10 give ≤ ~1e-31 and ≤ 1e-14
// (double measured ≤ 3e-16).
TEST(BlocksKnownAnswers, EveryLayoutMatchesMpmath) {
  ASSERT_EQ(data()["cases"].size(), 10u);
  for (const auto& c : data()["cases"]) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    const ReducedPreset r = reduced_from_json(c);
    const Mat<mp> want = testdata::expected_matrix(c["expected"]);
    const Mat<mp> got = run_case<mp>(c, r);
    ASSERT_EQ(got.rows, want.rows);
    ASSERT_EQ(got.cols, want.cols);
    const mp e_mp = normwise_error(got, want);
    const mp e_q = normwise_error(run_case<float128>(c, r), want);
    const mp e_d = normwise_error(run_case<double>(c, r), want);
    EXPECT_LT(e_mp, mp("1e-40"));
    EXPECT_LT(e_q, mp("1e-30"));
    EXPECT_LT(e_d, mp("1e-13"));
    std::cout << name << " (" << r.describe() << "): mp " << e_mp.str(2) << ", float128 "
              << e_q.str(2) << ", double " << e_d.str(2) << "\n";
  }
}

// ---------------------------------------------------------------------------------------------
// C27: the stack equals the explicit composition of the F-row functions, written out here with
// norms.h, rope.h, attention.h and ffn.h directly: bitwise in mp and double (the same operations
// in the same order).

template <class T>
Mat<T> plus(const Mat<T>& a, const Mat<T>& b) {
  Mat<T> y(a.rows, a.cols);
  for (size_t i = 0; i < a.data.size(); ++i) y.data[i] = a.data[i] + b.data[i];
  return y;
}

template <class T>
Mat<T> plus_row(Mat<T> a, const std::vector<T>& b) {
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t j = 0; j < a.cols; ++j) a(i, j) = a(i, j) + b[static_cast<size_t>(j)];
  }
  return a;
}

template <class T>
Mat<T> explicit_norm(const Mat<T>& x, const NormWeights<T>& w, const ModelPreset& p) {
  const T eps = constant<T>(std::string(*p.norm_eps).c_str());
  switch (p.norm) {
    case NormKind::kLayerNorm:
      return layernorm<T>(x, w.gamma, w.beta, eps);
    case NormKind::kLayerNormNoBias:
      return layernorm<T>(x, w.gamma, std::vector<T>(w.gamma.size(), T(0)), eps);
    case NormKind::kRmsNorm:
      return rmsnorm<T>(x, w.gamma, eps);
    case NormKind::kRmsNormUnitOffset:
      return rmsnorm_gemma<T>(x, w.gamma, eps);
  }
  throw std::logic_error("norm");
}

template <class T>
Mat<T> explicit_attention(const Mat<T>& x, const AttentionWeights<T>& w, const ModelPreset& p,
                          int64_t layer, const std::vector<int64_t>& positions) {
  Mat<T> q = matmul<T>(x, w.w_q), k = matmul<T>(x, w.w_k), v = matmul<T>(x, w.w_v);
  if (p.biases) q = plus_row(q, w.b_q), k = plus_row(k, w.b_k), v = plus_row(v, w.b_v);
  const AttentionLayer kind = p.layer_attention(layer);
  if (p.position == PositionKind::kRope && kind != AttentionLayer::kGlobalNoPosition) {
    const std::vector<T> inv =
        rope_inv_freq<T>(p.d_head, constant<T>(std::string(*p.rope_base).c_str()));
    std::vector<T> pos;
    for (int64_t t : positions) pos.push_back(rope_position<T>(t));
    q = rope_sequence<T>(q, p.n_heads, pos, inv, RopeLayout::kHalfSplit);
    k = rope_sequence<T>(k, p.n_kv_heads, pos, inv, RopeLayout::kHalfSplit);
  }
  AttentionConfig cfg;
  cfg.heads = p.n_heads;
  cfg.kv_heads = p.n_kv_heads;
  cfg.head_dim = p.d_head;
  cfg.mask = kind == AttentionLayer::kSlidingWindow ? MaskKind::kSlidingWindow : MaskKind::kCausal;
  cfg.window = p.window.value_or(0);
  if (p.attn_softcap) cfg.soft_cap = mp(std::string(*p.attn_softcap));
  Mat<T> out = matmul<T>(attention<T>(q, k, v, cfg), w.w_o);
  return p.biases ? plus_row(out, w.b_o) : out;
}

template <class T>
Mat<T> explicit_ffn(const Mat<T>& x, const FfnWeights<T>& w, const ModelPreset& p) {
  if (p.gated) return glu_ffn<T>(x, w.w1, w.v, w.w2, p.activation);
  if (p.biases) return ffn_relu_bias<T>(x, w.w1, w.b1, w.w2, w.b2);  // M01: ReLU
  return ffn<T>(x, w.w1, w.w2, p.activation);
}

template <class T>
Mat<T> N_final(const Mat<T>& x, const DecoderWeights<T>& w, const ModelPreset& p) {
  return explicit_norm(x, w.final_norm, p);
}

template <class T>
Mat<T> explicit_stack(const Mat<T>& x0, const std::vector<int64_t>& pos, const DecoderWeights<T>& w,
                      const ModelPreset& p) {
  Mat<T> x = x0;
  for (int64_t l = 0; l < *p.n_layers; ++l) {
    const LayerWeights<T>& lw = w.layers[static_cast<size_t>(l)];
    auto A = [&](const Mat<T>& u) { return explicit_attention(u, lw.attn, p, l, pos); };
    auto F = [&](const Mat<T>& u) { return explicit_ffn(u, lw.ffn, p); };
    auto N = [&](const Mat<T>& u, const NormWeights<T>& n) { return explicit_norm(u, n, p); };
    if (p.parallel_block) {
      const Mat<T> n = N(x, lw.attn_norm);
      x = plus(plus(x, F(n)), A(n));
      continue;
    }
    switch (p.layout) {
      case BlockLayout::kPostNorm: {
        const Mat<T> x3 = N(plus(x, A(x)), lw.attn_norm);
        x = N(plus(x3, F(x3)), lw.ffn_norm);
        break;
      }
      case BlockLayout::kPreNorm: {
        const Mat<T> x3 = plus(x, A(N(x, lw.attn_norm)));
        x = plus(x3, F(N(x3, lw.ffn_norm)));
        break;
      }
      case BlockLayout::kDoubleNorm: {
        const Mat<T> x3 = plus(x, N(A(N(x, lw.attn_norm)), lw.attn_post_norm));
        x = plus(x3, N(F(N(x3, lw.ffn_norm)), lw.ffn_post_norm));
        break;
      }
      case BlockLayout::kOutputNorm: {
        const Mat<T> x3 = plus(x, N(A(x), lw.attn_post_norm));
        x = plus(x3, N(F(x3), lw.ffn_post_norm));
        break;
      }
    }
  }
  if (p.layout != BlockLayout::kPostNorm || p.parallel_block) x = N_final(x, w, p);
  return x;
}

template <class T>
void expect_c27(const char* name) {
  const ReducedPreset& r = testdata::tiny_preset(name);
  const DecoderWeights<T> w = testdata::lcg_weights<T>(r.preset, 27);
  const Mat<T> x = testdata::lcg_matrix<T>(4, r.preset.d_model, 2027);
  const std::vector<int64_t> pos = testdata::iota_positions(4, 3);
  EXPECT_TRUE(
      bitwise_equal(decoder_stack<T>(x, pos, w, r.preset), explicit_stack(x, pos, w, r.preset)))
      << name;
}

// One preset per layout: post-LN with biases (M01), pre-LN with GQA and RoPE (M04), double norm
// with Gemma's norm, soft-cap and a sliding-window layer (M07), OLMo 2 (M11), parallel with MQA
// (M08).
TEST(BlocksC27, LayoutsEqualTheCompositionOfTheFRows) {
  for (const char* name :
       {"transformer-base", "llama2-70b", "gemma2-9b", "olmo2-7b", "palm-540b"}) {
    expect_c27<mp>(name);
    expect_c27<double>(name);
  }
}

// The generic layouts compose whatever sublayers they are given: with affine maps the layouts'
// equations can be checked by hand on one token.
TEST(BlocksC27, GenericLayoutsFollowTheirEquations) {
  const Mat<double> x(1, 2, {1.0, 2.0});
  auto attn = [](const Mat<double>& u) {
    return Mat<double>(1, 2, {u.data[0] * 2, u.data[1] * 2});
  };
  auto ffn = [](const Mat<double>& u) { return Mat<double>(1, 2, {u.data[0] + 1, u.data[1] + 1}); };
  auto half = [](const Mat<double>& u) {
    return Mat<double>(1, 2, {u.data[0] / 2, u.data[1] / 2});
  };
  auto neg = [](const Mat<double>& u) { return Mat<double>(1, 2, {-u.data[0], -u.data[1]}); };
  // post: x2 = 3x = (3, 6); x3 = (1.5, 3); x5 = x3 + x3 + 1 = (4, 7); out = (2, 3.5).
  EXPECT_EQ(post_ln_block(x, attn, ffn, half, half).data, (std::vector<double>{2, 3.5}));
  // pre: x3 = x + 2·x/2 = (2, 4); out = x3 + (x3/2 + 1) = (4, 7).
  EXPECT_EQ(pre_ln_block(x, attn, ffn, half, half).data, (std::vector<double>{4, 7}));
  // double: x3 = x − 2·x/2 = 0; out = 0 − (0/2 + 1) = (−1, −1).
  EXPECT_EQ(double_norm_block(x, attn, ffn, half, neg, half, neg).data,
            (std::vector<double>{-1, -1}));
  // OLMo 2: x3 = x + x = (2, 4); out = x3 + (x3 + 1)/2 = (3.5, 6.5).
  EXPECT_EQ(olmo2_block(x, attn, ffn, half, half).data, (std::vector<double>{3.5, 6.5}));
  // parallel: n = x/2; y = x + (n + 1) + 2n = (3.5, 6).
  EXPECT_EQ(parallel_block(x, attn, ffn, half).data, (std::vector<double>{3.5, 6}));
  // A sublayer that changes the shape is refused with the layout and the sublayer named.
  auto bad = [](const Mat<double>&) { return Mat<double>(1, 3); };
  try {
    pre_ln_block(x, attn, bad, half, half);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("pre_ln_block: the FFN returned 1x3"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parallel_block(x, bad, ffn, half), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// C20 in mp: fused projections give the separate products exactly (hence to 1e-40), and a
// parallel stack with fused projections equals the unfused one. The typed test repeats this
// bitwise on all nine types.

// GPT-J: a parallel block with LayerNorm (β), a GELU-tanh FFN with biases, interleaved RoPE;
// built from the reduced GPT-2 preset.
ModelPreset gptj_like() {
  ModelPreset p = testdata::tiny_preset("gpt2-small").preset;
  p.parallel_block = true;
  p.position = PositionKind::kRope;
  p.rope_base = "10000";
  return p;
}

TEST(BlocksC20, FusedProjectionsEqualSeparateInMp) {
  const Mat<mp> x = testdata::lcg_matrix<mp>(3, 4, 1), wq = testdata::lcg_matrix<mp>(4, 4, 2),
                wk = testdata::lcg_matrix<mp>(4, 2, 3), wv = testdata::lcg_matrix<mp>(4, 2, 4),
                w1 = testdata::lcg_matrix<mp>(4, 6, 5), v = testdata::lcg_matrix<mp>(4, 6, 6);
  const std::vector<Mat<mp>> parts = fused_projections<mp>(x, {&wq, &wk, &wv, &w1, &v});
  ASSERT_EQ(parts.size(), 5u);
  const Mat<mp>* ws[] = {&wq, &wk, &wv, &w1, &v};
  for (size_t i = 0; i < 5; ++i) {
    const Mat<mp> sep = matmul<mp>(x, *ws[i]);
    EXPECT_TRUE(bitwise_equal(parts[i], sep)) << i;
    EXPECT_LT(normwise_error(parts[i], sep), mp("1e-40")) << i;
  }
  for (const char* name : {"palm-540b", "cohere2-r7b"}) {
    const ModelPreset& p = testdata::tiny_preset(name).preset;
    const DecoderWeights<mp> w = testdata::lcg_weights<mp>(p, 20);
    const Mat<mp> xs = testdata::lcg_matrix<mp>(4, 4, 120);
    const std::vector<int64_t> pos = testdata::iota_positions(4);
    DecoderOptions fused;
    fused.fused_parallel = true;
    const Mat<mp> a = decoder_stack<mp>(xs, pos, w, p), b = decoder_stack<mp>(xs, pos, w, p, fused);
    EXPECT_TRUE(bitwise_equal(a, b)) << name;
    EXPECT_LT(normwise_error(b, a), mp("1e-40")) << name;
  }
  const ModelPreset p = gptj_like();
  const DecoderWeights<mp> w = testdata::lcg_weights<mp>(p, 21);
  const Mat<mp> xs = testdata::lcg_matrix<mp>(4, 4, 121);
  DecoderOptions unfused, fused;
  unfused.rope_layout = fused.rope_layout = RopeLayout::kInterleaved;
  fused.fused_parallel = true;
  const std::vector<int64_t> pos = testdata::iota_positions(4);
  EXPECT_TRUE(bitwise_equal(decoder_stack<mp>(xs, pos, w, p, unfused),
                            decoder_stack<mp>(xs, pos, w, p, fused)));
}

TEST(BlocksC20, SplitAndConcatCheckShapes) {
  const Mat<double> a(2, 3), b(3, 1);
  EXPECT_THROW(concat_columns<double>({&a, &b}), std::invalid_argument);
  EXPECT_THROW(concat_columns<double>({}), std::invalid_argument);
  EXPECT_THROW(split_columns(a, {1, 1}), std::invalid_argument);
  EXPECT_THROW(split_columns(a, {4, -1}), std::invalid_argument);
  const Mat<double> c = concat_columns<double>({&a, &a});
  EXPECT_EQ(c.cols, 6);
  EXPECT_EQ(split_columns(c, {2, 4}).at(1).cols, 4);
}

}  // namespace
}  // namespace lmo::ref
