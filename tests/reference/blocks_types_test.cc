// F18 on all nine number types: every block layout (through the decoder stacks of reduced
// presets) runs, returns finite values and stays within a stated bound of mp on the same
// inputs; C20 (fused parallel projections) holds bitwise in every type.
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <type_traits>
#include <vector>

#include "reference/blocks.h"
#include "reference/decoder.h"
#include "tests/support/decoder_cases.h"
#include "tests/support/typed_numbers.h"

namespace lmo::ref {
namespace {

using testdata::bitwise_equal;
using testdata::eps_of;
using testdata::iota_positions;
using testdata::lcg_matrix;
using testdata::lcg_weights;
using testdata::normwise_error;
using testdata::tiny_preset;

template <class T>
class BlocksTypes : public ::testing::Test {};
TYPED_TEST_SUITE(BlocksTypes, testdata::AllNumberTypes);

template <class T>
bool all_finite(const Mat<T>& m) {
  return testdata::all_finite(m.data);
}

// The preset as run in T. FP8 E4M3's largest value is 448: the RoPE bases (10000 and up) and
// YaRN's original context (4096) become NaN there, and so does every output (checked below). A
// naive E4M3 kernel computing its frequencies in E4M3 cannot run these models; to show that the
// layouts themselves run, E4M3 uses base 100 without scaling.
template <class T>
ModelPreset preset_for_type(const ModelPreset& p) {
  ModelPreset q = p;
  if constexpr (std::is_same_v<T, fp8_e4m3>) {
    if (q.rope_base) q.rope_base = "100";
    q.rope_scaling.reset();
  }
  return q;
}

// Weights of twice the unit-gain scale keep the sublayer outputs of order 1 (with gain 1 the
// SwiGLU outputs are ~0.01–0.1): the norms on sublayer outputs (double norm, OLMo 2) square
// them, and E4M3's smallest value is 2^-9 ≈ 0.002, so a mean of squares of ~1e-4 underflows to 0,
// ε = 1e-6 rounds to 0 too, and a naive E4M3 RMSNorm returns 0/0.
constexpr double kGain = 2;

// The layouts (post-LN M01, pre-LN M02, double norm M07, OLMo 2 M11, parallel M08 and M10), T5's
// biased attention (M12) and DeepSeek's MLA + MoE (M09) in T, against mp on the T-rounded inputs.
// Bound, normwise relative to max|y| (~1–2): 128·ε_T. Counting the roundings on the longest
// chain of dependent operations of one layer: norm ≈ 5 (mean of squares, sqrt, divide, weight),
// projection 4 (dot of d = 4), RoPE 2, logit 4 + scale + cap 3, softmax ≈ 6, value sum 4,
// output projection 16 (dot of h·d_h), post-norm 5, residual 1; FFN norm 5, W and V 4, activation
// ≈ 5, gate 1, W2 6, post-norm 5, residual 1: ≈ 75 per layer, ≈ 155 for two layers and the
// final norm, each ≤ ε/2 relative to values of order max|y|, the norms amplifying by ≲ 1.6
// (rms of the normalized rows ≳ 0.6·max|y|): ≈ 125·ε to first order. Measured (printed): ≤ 33·ε
// (double, Gemma 2). For FP8 (ε = 1/8, 1/4) the bound exceeds the outputs' size: there the test
// shows that every layout runs and stays finite, which is what a simulated naive FP8 kernel can
// be asked to do.
TYPED_TEST(BlocksTypes, EveryLayoutRunsAndStaysNearMp) {
  using T = TypeParam;
  for (const char* name : {"transformer-base", "gpt2-small", "gemma2-9b", "olmo2-7b", "palm-540b",
                           "cohere2-r7b", "t5-11b", "deepseek-v3"}) {
    const ModelPreset p = preset_for_type<T>(tiny_preset(name).preset);
    const DecoderWeights<T> w = lcg_weights<T>(p, 5, kGain);
    const Mat<T> x = lcg_matrix<T>(4, p.d_model, 15);
    const std::vector<int64_t> pos = iota_positions(4);
    const Mat<T> y = decoder_stack<T>(x, pos, w, p);
    const Mat<mp> ym = decoder_stack<mp>(testdata::convert_matrix<mp>(x), pos,
                                         testdata::convert_weights<mp>(w, p), p);
    EXPECT_TRUE(all_finite(y)) << name;
    const mp err = normwise_error(y, ym);
    std::cout << name << ": " << (err / eps_of<T>()).str(3) << " ε\n";
    EXPECT_LE(err, 128 * eps_of<T>()) << name;
    if (std::is_same_v<T, fp8_e4m3> && tiny_preset(name).preset.position == PositionKind::kRope) {
      const ModelPreset& real = tiny_preset(name).preset;
      const Mat<T> nan = decoder_stack<T>(x, pos, lcg_weights<T>(real, 5, kGain), real);
      EXPECT_FALSE(all_finite(nan)) << name << ": E4M3 with the preset's RoPE base";
    }
  }
}

// C20 in every type: the fused projections are the separate products bitwise, and a parallel
// stack with fused input projections equals the unfused one bitwise (PaLM: MQA and SwiGLU;
// Cohere: GQA, windows, interleaved RoPE, layers without positions).
TYPED_TEST(BlocksTypes, FusedParallelProjectionsAreBitwiseEqual) {
  using T = TypeParam;
  const Mat<T> x = lcg_matrix<T>(3, 4, 1), wq = lcg_matrix<T>(4, 4, 2), wk = lcg_matrix<T>(4, 2, 3),
               wv = lcg_matrix<T>(4, 2, 4), w1 = lcg_matrix<T>(4, 6, 5), v = lcg_matrix<T>(4, 6, 6);
  const std::vector<Mat<T>> parts = fused_projections<T>(x, {&wq, &wk, &wv, &w1, &v});
  const Mat<T>* ws[] = {&wq, &wk, &wv, &w1, &v};
  for (size_t i = 0; i < 5; ++i) EXPECT_TRUE(bitwise_equal(parts[i], matmul<T>(x, *ws[i]))) << i;
  DecoderOptions fused;
  fused.fused_parallel = true;
  for (const char* name : {"palm-540b", "cohere2-r7b"}) {
    const ModelPreset& p = tiny_preset(name).preset;
    const DecoderWeights<T> w = lcg_weights<T>(p, 20);
    const Mat<T> xs = lcg_matrix<T>(4, 4, 120);
    const std::vector<int64_t> pos = iota_positions(4);
    EXPECT_TRUE(
        bitwise_equal(decoder_stack<T>(xs, pos, w, p), decoder_stack<T>(xs, pos, w, p, fused)))
        << name;
  }
}

}  // namespace
}  // namespace lmo::ref
