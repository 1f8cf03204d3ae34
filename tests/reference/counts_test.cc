// F23 closed-form counts: pinned at the M-preset full sizes (tests/data/counts.json, exact
// Python integers from tests/data/make_counts.py), C19, and the general forms reducing to the
// notes' forms. The instrumented comparison (C18) is in counts_instrumented_test.cc.
#include "reference/counts.h"

#include <gtest/gtest.h>

#include <string>

#include "reference/presets.h"
#include "tests/support/test_data.h"

namespace lmo::ref {
namespace {

int64_t pinned(const std::string& key) {
  static const nlohmann::json d = testdata::load("counts.json");
  return std::stoll(d["values"].at(key).get<std::string>());
}

TEST(Counts, PinnedAtPresetFullSizes) {
  const ModelPreset& gpt3 = preset("gpt3-175b");
  const int64_t t3 = *gpt3.context;
  EXPECT_EQ(mha_params(gpt3.n_heads, gpt3.d_head), pinned("gpt3_attention_params"));
  EXPECT_EQ(ffn_params(gpt3.d_model, *gpt3.d_ff), pinned("gpt3_ffn_params"));
  EXPECT_EQ(attention_flops_mha(1, t3, gpt3.n_heads, gpt3.d_head),
            pinned("gpt3_attention_flops_T2048"));
  EXPECT_EQ(kv_cache_elements(1, t3, gpt3.n_kv_heads, gpt3.d_head), pinned("gpt3_kv_cache_T2048"));
  EXPECT_EQ(attention_memory_mha(1, t3, gpt3.n_heads, gpt3.d_head),
            pinned("gpt3_attention_memory_T2048"));

  const ModelPreset& l2 = preset("M04");
  const int64_t t2 = *l2.context;
  // Llama 2 70B attention with GQA: 2(hd)² + 2(hd)(gd) = 150,994,944.
  EXPECT_EQ(gqa_params(l2.n_heads, l2.n_kv_heads, l2.d_head),
            pinned("llama2_70b_attention_params"));
  EXPECT_EQ(gqa_params(l2.n_heads, l2.n_kv_heads, l2.d_head), 150994944);
  EXPECT_EQ(glu_ffn_params(l2.d_model, *l2.d_ff), pinned("llama2_70b_glu_params"));
  EXPECT_EQ(attention_flops(1, t2, l2.d_model, l2.n_heads, l2.n_kv_heads, l2.d_head).total(),
            pinned("llama2_70b_attention_flops_T4096"));
  EXPECT_EQ(kv_cache_elements(1, t2, l2.n_kv_heads, l2.d_head),
            pinned("llama2_70b_kv_cache_T4096"));
  EXPECT_EQ(attention_memory_gqa(1, t2, l2.n_heads, l2.n_kv_heads, l2.d_head),
            pinned("llama2_70b_attention_memory_T4096"));

  const ModelPreset& l3 = preset("llama3.1-405b");
  const int64_t t405 = *l3.context;
  EXPECT_EQ(gqa_params(l3.n_heads, l3.n_kv_heads, l3.d_head),
            pinned("llama31_405b_attention_params"));
  EXPECT_EQ(glu_ffn_params(l3.d_model, *l3.d_ff), pinned("llama31_405b_glu_params"));
  EXPECT_EQ(kv_cache_elements(1, t405, l3.n_kv_heads, l3.d_head),
            pinned("llama31_405b_kv_cache_T131072"));
  EXPECT_EQ(decode_step_flops_mha(1, t405, l3.n_heads, l3.d_head),
            pinned("llama31_405b_decode_cached_t131072"));
  EXPECT_EQ(decode_step_flops_uncached_mha(1, t405 + 1, l3.n_heads, l3.d_head),
            pinned("llama31_405b_decode_uncached_t131073"));

  const ModelPreset& palm = preset("palm-540b");
  EXPECT_EQ(gqa_params(palm.n_heads, palm.n_kv_heads, palm.d_head),
            pinned("palm_attention_params"));
  EXPECT_EQ(glu_ffn_params(palm.d_model, *palm.d_ff), pinned("palm_glu_params"));
  EXPECT_EQ(kv_cache_elements(1, *palm.context, palm.n_kv_heads, palm.d_head),
            pinned("palm_kv_cache_T2048"));

  const ModelPreset& gemma = preset("M07");
  EXPECT_EQ(attention_params(gemma.d_model, gemma.n_heads, gemma.n_kv_heads, gemma.d_head),
            pinned("gemma2_9b_attention_params"));
  EXPECT_EQ(glu_ffn_params(gemma.d_model, *gemma.d_ff), pinned("gemma2_9b_glu_params"));

  const ModelPreset& gpt2 = preset("M02");
  EXPECT_EQ(ffn_params(gpt2.d_model, *gpt2.d_ff, gpt2.biases), pinned("gpt2_ffn_params_biases"));

  const ModelPreset& v3 = preset("deepseek-v3");
  EXPECT_EQ(mla_cache_elements(1, *v3.context, v3.mla->d_c, v3.mla->d_rope),
            pinned("deepseek_v3_mla_cache_T131072"));
  EXPECT_EQ(kv_cache_elements(1, *v3.context, v3.n_heads, v3.d_head),
            pinned("deepseek_v3_mha_cache_T131072"));
  EXPECT_EQ(moe_params(v3.d_model, v3.moe->d_ff_expert, v3.moe->n_routed, v3.moe->n_shared),
            pinned("deepseek_v3_moe_params"));
  EXPECT_EQ(moe_active_params(v3.d_model, v3.moe->d_ff_expert, v3.moe->n_routed, v3.moe->n_shared,
                              v3.moe->top_k),
            pinned("deepseek_v3_moe_active_params"));
}

// C19: a GLU FFN with d_ff = 8/3·d has the parameter count of a standard FFN with d_ff = 4d
// (exactly, whenever 3 divides d so that 8d/3 is a width).
TEST(Counts, C19GluWithEightThirdsWidthMatchesFfnWithFourD) {
  for (int64_t d : {3, 768, 3072, 4608, 12288, 18432}) {
    ASSERT_EQ(d % 3, 0);
    EXPECT_EQ(glu_ffn_params(d, 8 * d / 3), ffn_params(d, 4 * d)) << d;
    EXPECT_EQ(ffn_params(d, 4 * d), 8 * d * d) << d;
  }
  // Real models round the width: Llama 2 70B's 28672 = 3.5·d is above 8/3·d, so its GLU has
  // 3·3.5/8 = 1.3125 times the parameters of a 4d FFN.
  const ModelPreset& l2 = preset("llama2-70b");
  EXPECT_EQ(glu_ffn_params(l2.d_model, *l2.d_ff) * 8,
            ffn_params(l2.d_model, 4 * l2.d_model) * 21 / 2);
}

TEST(Counts, GeneralFormsReduceToTheNotesForms) {
  struct Shape {
    int64_t b, t, h, g, d;
  };
  for (const Shape s : {Shape{1, 1, 1, 1, 1}, Shape{2, 7, 4, 2, 8}, Shape{3, 16, 8, 1, 16},
                        Shape{1, 2048, 96, 96, 128}, Shape{4, 100, 64, 8, 128}}) {
    const int64_t D = s.h * s.d;
    EXPECT_EQ(attention_params(D, s.h, s.h, s.d), mha_params(s.h, s.d));
    EXPECT_EQ(attention_params(D, s.h, s.g, s.d), gqa_params(s.h, s.g, s.d));
    EXPECT_EQ(gqa_params(s.h, s.h, s.d), mha_params(s.h, s.d));  // g = h is MHA
    EXPECT_EQ(attention_flops(s.b, s.t, D, s.h, s.h, s.d).total(),
              attention_flops_mha(s.b, s.t, s.h, s.d));
    EXPECT_EQ(decode_step_flops(s.b, s.t, D, s.h, s.h, s.d).total(),
              decode_step_flops_mha(s.b, s.t, s.h, s.d));
    // GQA changes the projections, not the T² core (000 §4.2: "compute roughly unchanged").
    EXPECT_EQ(attention_flops(s.b, s.t, D, s.h, s.g, s.d).core(),
              attention_flops(s.b, s.t, D, s.h, s.h, s.d).core());
    // Without a cache the step at length t+1 costs 8b(t+1)D² + 4bh(t+1)²d.
    const int64_t t1 = s.t + 1;
    EXPECT_EQ(decode_step_flops_uncached_mha(s.b, t1, s.h, s.d),
              8 * s.b * t1 * D * D + 4 * s.b * s.h * t1 * t1 * s.d);
    // The memory totals of 000 §4.1 and §4.2 are the weights plus the counted activations.
    EXPECT_EQ(attention_memory_mha(s.b, s.t, s.h, s.d),
              mha_params(s.h, s.d) + attention_activations(s.b, s.t, D, s.h, s.h, s.d).total());
    EXPECT_EQ(
        attention_memory_gqa(s.b, s.t, s.h, s.g, s.d),
        gqa_params(s.h, s.g, s.d) + attention_activations(s.b, s.t, D, s.h, s.g, s.d).total());
    EXPECT_EQ(attention_memory_gqa(s.b, s.t, s.h, s.h, s.d),
              attention_memory_mha(s.b, s.t, s.h, s.d));
    EXPECT_EQ(inference_memory_mha(s.b, s.t, s.h, s.d), 4 * D * D + 2 * s.b * s.h * s.t * s.d);
    EXPECT_EQ(kv_cache_elements(s.b, s.t, s.h, s.d), 2 * s.b * s.h * s.t * s.d);
  }
}

// C23: MLA caches d_c + d_h^R numbers per token and layer instead of 2·h·d_h.
TEST(Counts, C23MlaCachesFewerNumbersPerToken) {
  for (const char* name : {"deepseek-v2", "deepseek-v3"}) {
    const ModelPreset& p = preset(name);
    EXPECT_EQ(mla_cache_elements(1, 1, p.mla->d_c, p.mla->d_rope), 576) << name;
    EXPECT_EQ(kv_cache_elements(1, 1, p.n_heads, p.d_head), 32768) << name;
  }
}

TEST(Counts, ValidatesArgumentsAndDetectsOverflow) {
  EXPECT_THROW(gqa_params(64, 7, 128), std::invalid_argument);  // 7 does not divide 64
  EXPECT_THROW(gqa_params(64, 0, 128), std::invalid_argument);
  EXPECT_THROW(attention_flops(-1, 2, 8, 2, 2, 4), std::invalid_argument);
  EXPECT_THROW(moe_active_params(8, 16, 4, 1, 5), std::invalid_argument);
  try {
    kv_cache_elements(1, -5, 8, 128);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("t = -5"), std::string::npos) << e.what();
  }
  EXPECT_THROW(attention_flops_mha(1 << 20, 1 << 20, 128, 128), std::overflow_error);
}

}  // namespace
}  // namespace lmo::ref
