// The mla_decode op with DeepSeek's YaRN (oracle/ops/mla.h, F11 on F19): its case parameters reach
// the reference exactly as a model preset's rope_scaling does (reference/mla.h), and its
// temperature multiplies the softmax scale by mpmath's (0.1·mscale_all_dim·ln 40 + 1)².
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "oracle/ops/mla.h"
#include "reference/presets.h"
#include "tests/support/oracle_harness.h"

namespace lmo::oracle {
namespace {

using lmo::testing::Harness;
using nlohmann::json;
using ref::Format;
using ref::mp;
using F32 = ref::Sim<Format::f32>;

// A decode step at position 299 with DeepSeek's released YaRN (factor 40 over 4096, beta_fast
// 32, beta_slow 1) and d_h^R 64 as in the models; mscale_all_dim when given.
json yarn_case(const json& mscale_all_dim) {
  json c = json::parse(R"({"id": "t/mla-yarn", "op": "mla_decode", "seed": 77,
                           "formats": ["f32", "bf16"],
                           "params": {"h": 2, "d_h": 8, "d_rope": 64, "d_c": 16,
                                      "cache_len": 300, "scaling": "yarn", "factor": 40,
                                      "original_context": 4096, "beta_fast": 32,
                                      "beta_slow": 1}})");
  if (!mscale_all_dim.is_null()) c["params"]["mscale_all_dim"] = mscale_all_dim;
  return c;
}

// The reference decode step on the op's inputs, configured by hand with a preset's RopeScaling
// (reference/presets.h), every operation in T.
template <class T>
std::vector<T> preset_step(const InputSet& in, const ref::RopeScaling& s) {
  ref::MlaConfig cfg;
  cfg.heads = 2, cfg.head_dim = 8, cfg.rope_dim = 64, cfg.kv_latent_dim = 16;
  cfg.rope_scaling = s;
  const int64_t t = 300;
  const ref::Mat<T> q_c(1, 16, in.values<T>("q_c"));
  const ref::Mat<T> q_r(1, 128, in.values<T>("q_r"));
  const ref::Mat<T> w_uk(16, 16, in.values<T>("w_uk"));
  ref::MlaLatentCache<T> cache;
  cache.c_kv = ref::Mat<T>(t, 16, in.values<T>("c_kv"));
  cache.k_r = ref::Mat<T>(t, 64, in.values<T>("k_r"));
  return ref::mla_latent_attention<T>(ref::mla_absorbed_query<T>(q_c, w_uk, cfg),
                                      ref::mla_rope_rows(q_r, 2, t - 1, cfg), cache, cfg,
                                      ref::mla_scale(cfg))
      .data;
}

// DeepSeek-V3 (mscale_all_dim 1) and V2 (0.707), each as its config.json writes it: the op's
// exact output is the preset-configured step's, value for value, and so is its f32 simulation.
TEST(MlaDecodeYarn, TheOpIsThePresetsDecodeStep) {
  for (const auto& [preset, mscale] : {std::pair<const char*, json>{"deepseek-v3", 1},
                                       std::pair<const char*, json>{"deepseek-v2", 0.707}}) {
    SCOPED_TRACE(preset);
    const ref::ModelPreset& p = ref::preset(preset);
    ASSERT_TRUE(p.rope_scaling.has_value());
    Harness h(yarn_case(mscale), Format::bf16);
    const std::vector<mp> op = h.op().exact(h.inputs())[0].values;
    const std::vector<mp> want = preset_step<mp>(h.inputs(), *p.rope_scaling);
    ASSERT_EQ(op.size(), want.size());
    for (size_t i = 0; i < op.size(); ++i) EXPECT_EQ(op[i], want[i]) << "element " << i;
    const std::vector<double> sim = h.op().simulated(Format::f32, h.inputs())[0].values;
    const std::vector<F32> want32 = preset_step<F32>(h.inputs(), *p.rope_scaling);
    ASSERT_EQ(sim.size(), want32.size());
    for (size_t i = 0; i < sim.size(); ++i) {
      EXPECT_EQ(sim[i], ref::to_double(want32[i])) << "element " << i;
    }
  }
}

// The temperature: the op with mscale_all_dim equals the op without it run at mpmath's scale
// 1/√(d_h + d_h^R)·(0.1·mscale_all_dim·ln 40 + 1)² (d_h + d_h^R = 72; mpmath, 60 digits), to
// 1e-40 relative; and it moves the output by far more than any format's rounding.
TEST(MlaDecodeYarn, TheTemperatureIsMpmaths) {
  const std::pair<double, const char*> cases[] = {
      {1.0, "0.2208358361316895697529589403225810282618908183192118275"},
      {0.707, "0.1873392401514226950081879628287788969653131657333519085"}};
  Harness cold(yarn_case(nullptr), Format::f32);
  const MlaDecodeParams& p0 = dynamic_cast<const MlaDecodeOp&>(cold.op()).params();
  const std::vector<mp> without = cold.op().exact(cold.inputs())[0].values;
  for (const auto& [mscale, scale] : cases) {
    SCOPED_TRACE(mscale);
    Harness h(yarn_case(mscale), Format::f32);
    const std::vector<mp> with = h.op().exact(h.inputs())[0].values;
    const std::vector<mp> want = mla_decode_latent<mp>(p0, h.inputs(), mp(scale));
    ASSERT_EQ(with.size(), want.size());
    mp largest_change = 0, largest = 0;
    for (size_t i = 0; i < with.size(); ++i) {
      EXPECT_LT(abs(with[i] - want[i]), mp("1e-40") * abs(want[i])) << "element " << i;
      largest_change = std::max(largest_change, mp(abs(with[i] - without[i])));
      largest = std::max(largest, mp(abs(with[i])));
    }
    EXPECT_GT(largest_change, mp("0.01") * largest);
  }
  // mscale_all_dim 0 is no temperature: 0.1·0·ln s + 1 = 1.
  Harness zero(yarn_case(0), Format::f32);
  EXPECT_EQ(zero.op().exact(zero.inputs())[0].values, without);
}

}  // namespace
}  // namespace lmo::oracle
