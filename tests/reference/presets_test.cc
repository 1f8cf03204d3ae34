// The M-row presets: every catalog row present, lookups by ID and short name, the catalog's
// dimensions (with errata E06 and E07 applied), and internal consistency.
#include "reference/presets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

namespace lmo::ref {
namespace {

TEST(Presets, EveryRowPresentAndNamesUnique) {
  std::set<std::string_view> names;
  for (const ModelPreset& p : model_presets()) {
    EXPECT_TRUE(names.insert(p.name).second) << p.name;
    EXPECT_FALSE(p.source.empty()) << p.name;
  }
  for (int row = 1; row <= 12; ++row) {
    const std::string id = (row < 10 ? "M0" : "M") + std::to_string(row);
    const size_t expect = (row == 5 || row == 9) ? 2 : 1;
    EXPECT_EQ(presets_for_id(id).size(), expect) << id;
  }
  EXPECT_EQ(model_presets().size(), 14u);
}

TEST(Presets, LookupByIdAndShortName) {
  EXPECT_EQ(&preset("M04"), &preset("llama2-70b"));
  EXPECT_EQ(preset("M12").name, "t5-11b");
  EXPECT_EQ(preset("deepseek-v3").id, "M09");
  EXPECT_THROW(preset("M99"), std::invalid_argument);
  EXPECT_THROW(preset("llama"), std::invalid_argument);
  try {
    preset("M05");
    FAIL() << "M05 names two models";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("llama3-8b"), std::string::npos) << m;
    EXPECT_NE(m.find("llama3.1-405b"), std::string::npos) << m;
  }
}

TEST(Presets, CatalogDimensions) {
  const ModelPreset& m01 = preset("M01");
  EXPECT_EQ(m01.d_model, 512);
  EXPECT_EQ(m01.n_heads, 8);
  EXPECT_EQ(*m01.d_ff, 2048);
  EXPECT_EQ(m01.layout, BlockLayout::kPostNorm);
  EXPECT_EQ(m01.position, PositionKind::kSinusoidal);
  EXPECT_TRUE(m01.biases);

  const ModelPreset& m02 = preset("M02");
  EXPECT_EQ(m02.d_model, 768);
  EXPECT_EQ(*m02.context, 1024);
  EXPECT_EQ(*m02.norm_eps, "1e-5");
  EXPECT_EQ(m02.activation, Activation::kGELUTanh);
  EXPECT_EQ(m02.position, PositionKind::kLearned);

  const ModelPreset& m03 = preset("M03");
  EXPECT_EQ(m03.d_model, 12288);
  EXPECT_EQ(m03.d_head, 128);
  EXPECT_EQ(*m03.d_ff, 49152);
  EXPECT_EQ(*m03.context, 2048);
  EXPECT_EQ(m03.layer_attention(0), AttentionLayer::kGlobal);
  EXPECT_EQ(m03.layer_attention(1), AttentionLayer::kBandedSparse);

  const ModelPreset& m04 = preset("M04");
  EXPECT_EQ(m04.n_kv_heads, 8);
  EXPECT_EQ(*m04.d_ff, 28672);
  EXPECT_EQ(*m04.rope_base, "10000");
  EXPECT_EQ(m04.norm, NormKind::kRmsNorm);

  const ModelPreset& l3 = preset("llama3.1-405b");
  EXPECT_EQ(l3.d_model, 16384);
  EXPECT_EQ(l3.n_heads, 128);
  EXPECT_EQ(*l3.d_ff, 53248);  // E07
  EXPECT_EQ(*l3.context, 131072);
  EXPECT_EQ(*l3.rope_base, "500000");
  EXPECT_EQ(l3.rope_scaling->kind, RopeScalingKind::kLlama3);
  EXPECT_EQ(l3.rope_scaling->factor, "8");
  EXPECT_EQ(l3.rope_scaling->low_freq_factor, "1");
  EXPECT_EQ(l3.rope_scaling->high_freq_factor, "4");
  EXPECT_EQ(l3.rope_scaling->original_context, 8192);
  EXPECT_TRUE(l3.document_mask);
  EXPECT_EQ(preset("llama3-8b").d_model, 4096);
  EXPECT_EQ(*preset("llama3-8b").d_ff, 14336);

  const ModelPreset& m06 = preset("M06");
  EXPECT_EQ(*m06.window, 4096);
  EXPECT_EQ(m06.layer_attention(17), AttentionLayer::kSlidingWindow);

  const ModelPreset& m07 = preset("M07");
  EXPECT_EQ(m07.d_model, 3584);
  EXPECT_EQ(m07.d_head, 256);
  EXPECT_EQ(m07.norm, NormKind::kRmsNormUnitOffset);
  EXPECT_EQ(m07.layout, BlockLayout::kDoubleNorm);
  EXPECT_TRUE(m07.gated);
  EXPECT_EQ(m07.activation, Activation::kGELUTanh);
  EXPECT_EQ(*m07.attn_softcap, "50");
  EXPECT_EQ(*m07.final_softcap, "30");
  EXPECT_EQ(m07.layer_attention(0), AttentionLayer::kSlidingWindow);
  EXPECT_EQ(m07.layer_attention(1), AttentionLayer::kGlobal);

  const ModelPreset& m08 = preset("M08");
  EXPECT_EQ(m08.d_head, 256);    // E06, not 258
  EXPECT_EQ(m08.n_kv_heads, 1);  // MQA
  EXPECT_TRUE(m08.parallel_block);
  EXPECT_FALSE(m08.biases);
  EXPECT_EQ(*m08.z_loss, "1e-4");
  EXPECT_EQ(*m08.vocab, 256000);
  // E06: 18432 / (48·256) = 1.5 exactly.
  EXPECT_EQ(m08.d_model * 2, m08.attention_width() * 3);

  const ModelPreset& v3 = preset("deepseek-v3");
  EXPECT_EQ(v3.d_model, 7168);
  EXPECT_EQ(v3.mla->d_c, 512);
  EXPECT_EQ(v3.mla->d_c_q, 1536);
  EXPECT_EQ(v3.mla->d_h, 128);
  EXPECT_EQ(v3.mla->d_rope, 64);
  EXPECT_EQ(v3.moe->n_routed, 256);
  EXPECT_EQ(v3.moe->n_shared, 1);
  EXPECT_EQ(v3.moe->top_k, 8);
  EXPECT_EQ(v3.moe->score, RouterScore::kSigmoid);
  EXPECT_EQ(v3.moe->n_group, 8);
  EXPECT_EQ(v3.moe->topk_group, 4);
  EXPECT_EQ(v3.moe->routed_scale, "2.5");
  EXPECT_EQ(v3.moe->d_ff_expert, 2048);
  EXPECT_EQ(v3.rope_scaling->kind, RopeScalingKind::kYarn);
  EXPECT_EQ(preset("deepseek-v2").d_model, 5120);

  const ModelPreset& m10 = preset("M10");
  EXPECT_TRUE(m10.parallel_block);
  EXPECT_EQ(m10.attention_pattern.size(), 4u);
  EXPECT_EQ(m10.layer_attention(2), AttentionLayer::kSlidingWindow);
  EXPECT_EQ(m10.layer_attention(3), AttentionLayer::kGlobalNoPosition);

  EXPECT_EQ(preset("M11").layout, BlockLayout::kOutputNorm);
  EXPECT_EQ(preset("M12").position, PositionKind::kRelativeBias);
  EXPECT_EQ(preset("M12").norm, NormKind::kRmsNorm);
}

TEST(Presets, InternallyConsistent) {
  for (const ModelPreset& p : model_presets()) {
    SCOPED_TRACE(std::string(p.name));
    EXPECT_GE(p.n_kv_heads, 1);
    EXPECT_EQ(p.n_heads % p.n_kv_heads, 0);  // g divides h
    EXPECT_FALSE(p.attention_pattern.empty());
    const bool windowed = std::count(p.attention_pattern.begin(), p.attention_pattern.end(),
                                     AttentionLayer::kSlidingWindow) > 0;
    EXPECT_EQ(windowed, p.window.has_value());
    EXPECT_EQ(p.position == PositionKind::kRope, p.rope_base.has_value() || p.name == "palm-540b");
    if (p.moe) {
      EXPECT_EQ(p.moe->n_routed % p.moe->n_group, 0);
      EXPECT_LE(p.moe->topk_group, p.moe->n_group);
      EXPECT_LE(p.moe->top_k, p.moe->topk_group * (p.moe->n_routed / p.moe->n_group));
    }
  }
  // h·d equals the width except where the notes' head table says otherwise (000 §2.2).
  for (const char* name : {"transformer-base", "gpt2-small", "gpt3-175b", "llama2-70b", "llama3-8b",
                           "llama3.1-405b", "mistral-7b", "olmo2-7b"}) {
    EXPECT_EQ(preset(name).attention_width(), preset(name).d_model) << name;
  }
  EXPECT_EQ(preset("t5-11b").attention_width(), 16 * preset("t5-11b").d_model);
}

}  // namespace
}  // namespace lmo::ref
