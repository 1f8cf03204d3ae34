// The preset-driven decoder stack (decoder.h) on every model preset M01–M12 reduced to tiny
// dimensions: mp, float128 and double agree; properties a causal decoder must have hold
// (causality, windows, document masks, relative positions); the result does not depend on the
// thread count; reduce() keeps each preset's structure and refuses reductions that would not.
#include "reference/decoder.h"

#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

#include "reference/ffn.h"
#include "reference/parallel.h"
#include "reference/preset_reduce.h"
#include "tests/support/decoder_cases.h"
#include "tests/support/typed_numbers.h"

namespace lmo::ref {
namespace {

using testdata::bitwise_equal;
using testdata::convert_matrix;
using testdata::convert_weights;
using testdata::iota_positions;
using testdata::lcg_matrix;
using testdata::lcg_weights;
using testdata::normwise_error;
using testdata::tiny_preset;
using testdata::tiny_presets;

constexpr int64_t kTokens = 5;

// Rows [begin, end) of m.
template <class T>
Mat<T> rows_of(const Mat<T>& m, int64_t begin, int64_t end) {
  return Mat<T>(end - begin, m.cols,
                std::vector<T>(m.data.begin() + begin * m.cols, m.data.begin() + end * m.cols));
}

// mp and double (and float128) on the same weights and inputs (exact doubles). Each output is
// a 2- or 4-layer composition whose every step is a well-conditioned O(1) computation (dot
// products of ≤ 16 terms, norms of rows with standard deviation of order 1, softmax over ≤ 5
// keys, activations): a few hundred roundings per output, each amplified at most ~10 times by
// the norms, so double stays within ~1e-14 normwise and float128 within ~1e-31. Asserted:
// 1e-13 and 1e-30. Measured: double ≤ 6e-16, float128 ≤ 5e-34 (printed below).
TEST(DecoderStack, EveryPresetReducedAgreesInMpFloat128AndDouble) {
  const std::vector<ReducedPreset> all = tiny_presets();
  ASSERT_EQ(all.size(), model_presets().size());
  for (const ReducedPreset& r : all) {
    const ModelPreset& p = r.preset;
    SCOPED_TRACE(r.describe());
    const DecoderWeights<double> w = lcg_weights<double>(p, 7);
    const Mat<double> x = lcg_matrix<double>(kTokens, p.d_model, 17);
    const std::vector<int64_t> pos = iota_positions(kTokens);
    const Mat<mp> ym = decoder_stack<mp>(convert_matrix<mp>(x), pos, convert_weights<mp>(w, p), p);
    const Mat<float128> yq = decoder_stack<float128>(convert_matrix<float128>(x), pos,
                                                     convert_weights<float128>(w, p), p);
    const Mat<double> yd = decoder_stack<double>(x, pos, w, p);
    ASSERT_EQ(ym.rows, kTokens);
    ASSERT_EQ(ym.cols, p.d_model);
    EXPECT_TRUE(testdata::all_finite(yd.data));
    const mp ed = normwise_error(yd, ym), eq = normwise_error(yq, ym);
    EXPECT_LT(ed, mp("1e-13"));
    EXPECT_LT(eq, mp("1e-30"));
    std::cout << r.describe() << ": |double − mp| " << ed.str(2) << ", |float128 − mp| "
              << eq.str(2) << "\n";
  }
}

// DeepSeek (M09): MLA in its naive and absorbed forms (C21) gives the same stack output, to the
// rounding of two different evaluation orders (~1e-49 measured; 1e-40 asserted), and the MoE
// layers keep the first dense layer and route over the reduced experts.
TEST(DecoderStack, DeepSeekMlaFormsAgreeAndMoeLayersFollowThePreset) {
  for (const char* name : {"deepseek-v2", "deepseek-v3"}) {
    const ModelPreset& p = tiny_preset(name).preset;
    const DecoderWeights<mp> w = lcg_weights<mp>(p, 9);
    ASSERT_TRUE(w.layers[0].moe.routed.empty());
    ASSERT_EQ(w.layers[0].ffn.w1.cols, *p.d_ff);
    ASSERT_EQ(w.layers[1].moe.routed.size(), 8u);
    ASSERT_EQ(static_cast<int64_t>(w.layers[1].moe.shared.size()), p.moe->n_shared);
    ASSERT_EQ(w.layers[1].moe.balance_bias.size(), p.moe->balance_bias ? 8u : 0u);
    const Mat<mp> x = lcg_matrix<mp>(kTokens, p.d_model, 19);
    const std::vector<int64_t> pos = iota_positions(kTokens);
    DecoderOptions absorbed;
    absorbed.mla_form = MlaForm::kAbsorbed;
    const Mat<mp> a = decoder_stack<mp>(x, pos, w, p),
                  b = decoder_stack<mp>(x, pos, w, p, absorbed);
    EXPECT_LT(normwise_error(b, a), mp("1e-40")) << name;
    std::cout << name << ": |absorbed − naive| " << normwise_error(b, a).str(2) << "\n";
  }
  // V3 selects with F22's bias: a large bias on expert 7 puts it in every token's top-2, which
  // changes the output; the gates still come from the unbiased affinities (moe.h).
  const ModelPreset& v3 = tiny_preset("deepseek-v3").preset;
  DecoderWeights<mp> w = lcg_weights<mp>(v3, 9);
  const Mat<mp> x = lcg_matrix<mp>(kTokens, v3.d_model, 19);
  const std::vector<int64_t> pos = iota_positions(kTokens);
  const Mat<mp> before = decoder_stack<mp>(x, pos, w, v3);
  w.layers[1].moe.balance_bias[7] = mp(10);
  EXPECT_GT(normwise_error(decoder_stack<mp>(x, pos, w, v3), before), mp("1e-3"));
}

// A causal decoder: row i depends only on tokens 0 … i, so the first 3 rows of a 5-token run
// equal a 3-token run, bitwise (every sum over keys runs over the same visible keys in the same
// order; MoE routing and experts are per token).
TEST(DecoderStack, OutputsAreCausal) {
  for (const ReducedPreset& r : tiny_presets()) {
    const ModelPreset& p = r.preset;
    const DecoderWeights<double> w = lcg_weights<double>(p, 11);
    const Mat<double> x = lcg_matrix<double>(kTokens, p.d_model, 21);
    const Mat<double> full = decoder_stack<double>(x, iota_positions(kTokens), w, p);
    const Mat<double> prefix = decoder_stack<double>(rows_of(x, 0, 3), iota_positions(3), w, p);
    EXPECT_TRUE(bitwise_equal(rows_of(full, 0, 3), prefix)) << p.name;
  }
}

// Mistral's sliding window of 2 over 2 layers: token 4 sees tokens 3, 4 in layer 0 and, through
// them, token 2 in layer 1; tokens 0 and 1 cannot reach it, so changing them leaves row 4
// bitwise unchanged, while the global-attention Llama 2 row 4 changes.
TEST(DecoderStack, SlidingWindowLimitsTheReceptiveField) {
  for (const char* name : {"mistral-7b", "llama2-70b"}) {
    const ModelPreset& p = tiny_preset(name).preset;
    const DecoderWeights<double> w = lcg_weights<double>(p, 12);
    Mat<double> x = lcg_matrix<double>(kTokens, p.d_model, 22);
    const Mat<double> a = decoder_stack<double>(x, iota_positions(kTokens), w, p);
    for (int64_t c = 0; c < p.d_model; ++c) x(0, c) = -x(0, c), x(1, c) = x(1, c) / 2;
    const Mat<double> b = decoder_stack<double>(x, iota_positions(kTokens), w, p);
    const bool same = bitwise_equal(rows_of(a, 4, 5), rows_of(b, 4, 5));
    EXPECT_EQ(same, std::string(name) == "mistral-7b") << name;
    EXPECT_FALSE(bitwise_equal(rows_of(a, 2, 3), rows_of(b, 2, 3))) << name;
  }
}

// Llama 3's document mask: tokens 2 … 4 of document 1 never see document 0, so their rows equal
// a run on those tokens alone at the same positions, bitwise.
TEST(DecoderStack, DocumentMaskSeparatesDocuments) {
  const ModelPreset& p = tiny_preset("llama3-8b").preset;
  const DecoderWeights<double> w = lcg_weights<double>(p, 13);
  const Mat<double> x = lcg_matrix<double>(kTokens, p.d_model, 23);
  DecoderOptions docs;
  docs.document_ids = {0, 0, 1, 1, 1};
  const Mat<double> full = decoder_stack<double>(x, iota_positions(kTokens), w, p, docs);
  DecoderOptions one;
  one.document_ids = {1, 1, 1};
  const Mat<double> alone =
      decoder_stack<double>(rows_of(x, 2, 5), iota_positions(3, 2), w, p, one);
  EXPECT_TRUE(bitwise_equal(rows_of(full, 2, 5), alone));
  EXPECT_FALSE(bitwise_equal(full, decoder_stack<double>(x, iota_positions(kTokens), w, p)));
  docs.document_ids = {0, 1};
  EXPECT_THROW(decoder_stack<double>(x, iota_positions(kTokens), w, p, docs),
               std::invalid_argument);
}

// RoPE and T5's bias see only relative positions: shifting every position by 1000 leaves the
// output unchanged in exact arithmetic; in mp it moves by the rounding of the larger angles
// (~1e-47 measured; 1e-40 asserted). GPT-2 (learned positions, added before the stack) has no
// position inside the stack at all: bitwise unchanged.
TEST(DecoderStack, RelativePositionsOnly) {
  for (const char* name : {"llama2-70b", "gemma2-9b", "olmo2-7b", "cohere2-r7b", "t5-11b",
                           "llama3.1-405b", "gpt2-small"}) {
    const ModelPreset& p = tiny_preset(name).preset;
    const DecoderWeights<mp> w = lcg_weights<mp>(p, 14);
    const Mat<mp> x = lcg_matrix<mp>(kTokens, p.d_model, 24);
    const Mat<mp> a = decoder_stack<mp>(x, iota_positions(kTokens), w, p);
    const Mat<mp> b = decoder_stack<mp>(x, iota_positions(kTokens, 1000), w, p);
    EXPECT_LT(normwise_error(b, a), mp("1e-40")) << name;
    if (std::string(name) == "gpt2-small") {
      EXPECT_TRUE(bitwise_equal(a, b));
    }
  }
}

// The result is the same bitwise for 1, 2 and 3 threads (parallel_for gives each row, head or
// token its own slot and computes it as the serial loop does).
TEST(DecoderStack, ThreadCountDoesNotChangeTheResult) {
  for (const ReducedPreset& r : tiny_presets()) {
    const ModelPreset& p = r.preset;
    const DecoderWeights<double> w = lcg_weights<double>(p, 15);
    const Mat<double> x = lcg_matrix<double>(kTokens, p.d_model, 25);
    set_reference_threads(1);
    const Mat<double> one = decoder_stack<double>(x, iota_positions(kTokens), w, p);
    set_reference_threads(2);
    const Mat<double> two = decoder_stack<double>(x, iota_positions(kTokens), w, p);
    set_reference_threads(3);
    const Mat<double> three = decoder_stack<double>(x, iota_positions(kTokens), w, p);
    EXPECT_TRUE(bitwise_equal(one, two)) << p.name;
    EXPECT_TRUE(bitwise_equal(one, three)) << p.name;
  }
  for (const char* name : {"deepseek-v3", "gemma2-9b"}) {
    const ModelPreset& p = tiny_preset(name).preset;
    const DecoderWeights<mp> w = lcg_weights<mp>(p, 16);
    const Mat<mp> x = lcg_matrix<mp>(kTokens, p.d_model, 26);
    set_reference_threads(1);
    const Mat<mp> one = decoder_stack<mp>(x, iota_positions(kTokens), w, p);
    set_reference_threads(2);
    EXPECT_TRUE(bitwise_equal(one, decoder_stack<mp>(x, iota_positions(kTokens), w, p))) << name;
  }
  set_reference_threads(0);
}

// GPT-2's FFN (GELU-tanh with biases) is ffn_with_bias; with ReLU it is F03 exactly.
TEST(DecoderStack, FfnWithBiasIsF03ForRelu) {
  const Mat<double> x = lcg_matrix<double>(3, 4, 31), w1 = lcg_matrix<double>(4, 6, 32),
                    w2 = lcg_matrix<double>(6, 4, 33);
  const Mat<double> b1 = lcg_matrix<double>(1, 6, 34), b2 = lcg_matrix<double>(1, 4, 35);
  EXPECT_TRUE(bitwise_equal(ffn_with_bias<double>(x, w1, b1.data, w2, b2.data, Activation::kReLU),
                            ffn_relu_bias<double>(x, w1, b1.data, w2, b2.data)));
  const Mat<bfloat16> xb = convert_matrix<bfloat16>(x), w1b = convert_matrix<bfloat16>(w1),
                      w2b = convert_matrix<bfloat16>(w2), b1b = convert_matrix<bfloat16>(b1),
                      b2b = convert_matrix<bfloat16>(b2);
  EXPECT_TRUE(
      bitwise_equal(ffn_with_bias<bfloat16>(xb, w1b, b1b.data, w2b, b2b.data, Activation::kReLU),
                    ffn_relu_bias<bfloat16>(xb, w1b, b1b.data, w2b, b2b.data)));
  EXPECT_THROW(ffn_with_bias<double>(x, w1, b2.data, w2, b2.data, Activation::kGELU),
               std::invalid_argument);
}

// reduce() keeps the structure and says what it did.
TEST(Reduce, KeepsStructureAndRecordsTheReduction) {
  const ReducedPreset& g = tiny_preset("gemma2-9b");
  EXPECT_EQ(g.describe(),
            "gemma2-9b reduced: d_model 4, n_heads 4, n_kv_heads 2, d_head 4, d_ff 6, n_layers 2, "
            "window 2");
  EXPECT_EQ(g.preset.norm, NormKind::kRmsNormUnitOffset);
  EXPECT_EQ(*g.preset.attn_softcap, "50");
  EXPECT_EQ(g.preset.layout, BlockLayout::kDoubleNorm);
  EXPECT_EQ(*g.preset.window, 2);
  EXPECT_EQ(g.preset.vocab, preset("gemma2-9b").vocab);
  const ReducedPreset& palm = tiny_preset("palm-540b");
  EXPECT_NE(palm.describe().find("norm_eps 1e-5 (filled in), rope_base 10000 (filled in)"),
            std::string::npos)
      << palm.describe();
  const ReducedPreset& v3 = tiny_preset("deepseek-v3");
  EXPECT_EQ(v3.preset.moe->n_routed, 8);
  EXPECT_EQ(v3.preset.moe->routed_scale, "2.5");
  EXPECT_TRUE(v3.preset.moe->balance_bias);
  EXPECT_EQ(v3.preset.mla->d_rope, 4);
  EXPECT_NE(v3.describe().find("moe {n_routed 8, n_shared 1, top_k 2"), std::string::npos);
}

void expect_refused(const ModelPreset& p, const ReducedDims& r, const std::string& fragment) {
  try {
    reduce(p, r);
    ADD_FAILURE() << "expected std::invalid_argument containing '" << fragment << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Reduce, RefusesReductionsThatChangeTheStructure) {
  ReducedDims r = tiny_preset("llama2-70b").dims;
  const ModelPreset& llama = preset("llama2-70b");
  ReducedDims bad = r;
  bad.n_kv_heads = 3;
  expect_refused(llama, bad, "n_kv_heads = 3 must divide n_heads = 4");
  bad = r;
  bad.n_kv_heads = 4;
  expect_refused(llama, bad, "is not GQA");
  bad = r;
  bad.n_kv_heads = 1;
  expect_refused(llama, bad, "is not GQA");
  bad = r;
  bad.d_head = 3;
  expect_refused(llama, bad, "d_head = 3 must be even for RoPE");
  bad = r;
  bad.d_model = 9000;
  expect_refused(llama, bad, "d_model = 9000, expected 1 … 8192");
  bad = r;
  bad.window = 2;
  expect_refused(llama, bad, "no windowed layers");
  bad = r;
  bad.norm_eps = "1e-6";
  expect_refused(llama, bad, "has its own ε");
  bad = r;
  bad.moe = MoeReduction{};
  expect_refused(llama, bad, "does not use MoE");

  ReducedDims c = tiny_preset("cohere2-r7b").dims;
  c.n_layers = 3;
  expect_refused(preset("cohere2-r7b"), c, "would cut the attention pattern of 4");
  ReducedDims m = tiny_preset("palm-540b").dims;
  m.n_kv_heads = 2;
  expect_refused(preset("palm-540b"), m, "n_kv_heads = 2, expected 1 … 1");

  const ModelPreset& v3 = preset("deepseek-v3");
  ReducedDims d = tiny_preset("deepseek-v3").dims;
  ReducedDims dd = d;
  dd.moe->top_k = 5;
  expect_refused(v3, dd, "moe.top_k = 5 exceeds the 4 experts of the kept groups");
  dd = d;
  dd.moe->n_group = 3;
  expect_refused(v3, dd, "moe.n_group = 3 must divide moe.n_routed = 8");
  dd = d;
  dd.moe->n_group = 1;
  expect_refused(v3, dd, "changes whether routing is group-limited");
  dd = d;
  dd.moe->n_group = 8;
  dd.moe->topk_group = 2;
  expect_refused(v3, dd, "top-2-sum group score needs at least 2");
  dd = d;
  dd.moe->dense_layers = 0;
  expect_refused(v3, dd, "moe.dense_layers = 0");
  dd = d;
  dd.n_layers = 1;
  expect_refused(v3, dd, "leaves no MoE layer");
  dd = d;
  dd.mla->d_v = 1;
  expect_refused(v3, dd, "mla.d_v = 1 must equal mla.d_h = 2");
  dd = d;
  dd.mla->d_rope = 3;
  expect_refused(v3, dd, "mla.d_rope = 3 must be even");
  dd = d;
  dd.mla.reset();
  expect_refused(v3, dd, "give reduced mla dimensions");
}

// The decoder names what is missing or malformed.
TEST(DecoderStack, RefusesIncompleteOrInconsistentInput) {
  auto expect_msg = [](auto f, const std::string& fragment) {
    try {
      f();
      ADD_FAILURE() << "expected std::invalid_argument containing '" << fragment << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  // M01 without the ε it does not publish; M03 without a band width.
  ReducedDims r = tiny_preset("gpt2-small").dims;
  const ReducedPreset m01 = reduce(preset("transformer-base"), r);
  const Mat<double> x = lcg_matrix<double>(3, 4, 41);
  const std::vector<int64_t> pos = iota_positions(3);
  expect_msg([&] { decoder_stack<double>(x, pos, lcg_weights<double>(m01.preset, 1), m01.preset); },
             "norm_eps is not set");
  r.norm_eps = "1e-5";
  const ReducedPreset m03 = reduce(preset("gpt3-175b"), r);
  expect_msg([&] { decoder_stack<double>(x, pos, lcg_weights<double>(m03.preset, 1), m03.preset); },
             "layer 1 is windowed but the preset has no window");
  // A weight of the wrong shape, a wrong input width, a wrong number of positions.
  const ModelPreset& p = tiny_preset("llama2-70b").preset;
  DecoderWeights<double> w = lcg_weights<double>(p, 1);
  w.layers[1].attn.w_k = Mat<double>(4, 3);
  expect_msg([&] { decoder_stack<double>(x, pos, w, p); },
             "layers.1.attn.w_k is 4x3, expected 4x8");
  w = lcg_weights<double>(p, 1);
  expect_msg([&] { decoder_stack<double>(Mat<double>(3, 5), pos, w, p); }, "x has 5 columns");
  expect_msg([&] { decoder_stack<double>(x, iota_positions(2), w, p); },
             "2 positions for 3 tokens");
  // MLA places tokens at 0 … T−1; a document mask with windows is not supported.
  const ModelPreset& v2 = tiny_preset("deepseek-v2").preset;
  expect_msg(
      [&] { decoder_stack<double>(x, iota_positions(3, 1), lcg_weights<double>(v2, 1), v2); },
      "MLA runs at positions 0 … T−1");
  const ModelPreset& mistral = tiny_preset("mistral-7b").preset;
  DecoderOptions docs;
  docs.document_ids = {0, 0, 1};
  expect_msg([&] { decoder_stack<double>(x, pos, lcg_weights<double>(mistral, 1), mistral, docs); },
             "document mask with sliding-window layers");
  // The weights a preset uses, by name and in order.
  std::vector<std::string> names;
  const ModelPreset& gemma = tiny_preset("gemma2-9b").preset;
  const DecoderWeights<double> gw = lcg_weights<double>(gemma, 1);
  for_each_weight(gw, gemma,
                  [&](const std::string& n, const auto&, int64_t, int64_t) { names.push_back(n); });
  const std::vector<std::string> first{"layers.0.attn_norm.gamma", "layers.0.attn_post_norm.gamma",
                                       "layers.0.ffn_norm.gamma",  "layers.0.ffn_post_norm.gamma",
                                       "layers.0.attn.w_q",        "layers.0.attn.w_k",
                                       "layers.0.attn.w_v",        "layers.0.attn.w_o",
                                       "layers.0.ffn.w1",          "layers.0.ffn.v",
                                       "layers.0.ffn.w2"};
  ASSERT_EQ(names.size(), 2 * first.size() + 1);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 11), first);
  EXPECT_EQ(names.back(), "final_norm.gamma");
}

}  // namespace
}  // namespace lmo::ref
