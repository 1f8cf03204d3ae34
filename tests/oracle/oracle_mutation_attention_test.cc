// Tests of the oracle on attention, KV-cache decode, MLA and MoE routing: deliberately wrong
// kernels, each a small function run through the very judging `lmoracle verify` uses
// (run_and_judge), must be caught, while the correct kernel (the reference formula in f32, every
// operation rounded once) passes on the same case. Each mutant is a bug real kernels have shipped
// or nearly shipped.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "oracle/ops/mla.h"
#include "oracle/ops/moe.h"
#include "tests/support/oracle_harness.h"

namespace lmo::oracle {
namespace {

using lmo::testing::expect_caught;
using lmo::testing::Harness;
using nlohmann::json;
using ref::Format;
using F32 = ref::Sim<Format::f32>;

const Format kStorages[] = {Format::f32, Format::bf16};

// DeepSeek-V3 routing with a balancing bias large enough to change selections (F22's c after
// some steps of γ = 0.001 updates is of this order).
json v3_router() {
  return json::parse(R"({"id": "m/router", "op": "moe_router", "seed": 31,
                         "formats": ["f32", "bf16"],
                         "params": {"tokens": 16, "experts": 256, "top_k": 8, "score": "sigmoid",
                                    "groups": 8, "topk_groups": 4, "routed_scale": 2.5,
                                    "bias": true, "bias_std": 0.05, "logit_std": 2}})");
}

TEST(AttentionMutants, BalanceBiasLeaksIntoTheGates) {
  for (Format storage : kStorages) {
    SCOPED_TRACE(ref::format_name(storage));
    Harness h(v3_router(), storage);
    const RouterParams& p = dynamic_cast<const MoeRouterOp&>(h.op()).params();
    expect_caught(h, [&](const RunContext& c) {
      // The right experts, but gates from the biased selection scores s_i + c_i.
      Outputs<double> o(2);
      for (const ref::Routing<F32>& r : route_case<F32>(p, c.in)) {
        F32 denom(0);
        for (int64_t i : r.experts) denom = denom + r.selection_scores[static_cast<size_t>(i)];
        for (int64_t i : r.experts) {
          o[0].values.push_back(
              ref::to_double(F32(r.selection_scores[static_cast<size_t>(i)] / denom * F32(2.5))));
        }
        o[1].indices.insert(o[1].indices.end(), r.experts.begin(), r.experts.end());
      }
      return o;
    });
  }
}

TEST(AttentionMutants, MlaScaleWithoutTheRopeDimensions) {
  for (Format storage : kStorages) {
    SCOPED_TRACE(ref::format_name(storage));
    Harness h(json::parse(R"({"id": "m/mla", "op": "mla_decode", "seed": 32,
                              "formats": ["f32", "bf16"],
                              "params": {"h": 2, "d_h": 128, "d_rope": 64, "d_c": 512,
                                         "cache_len": 64}})"),
              storage);
    const MlaDecodeParams& p = dynamic_cast<const MlaDecodeOp&>(h.op()).params();
    expect_caught(h, [&](const RunContext& c) {
      // 1/√d_h: the scale of plain MHA with the head's content width, forgetting d_h^R.
      Outputs<double> o(1);
      for (const F32& v : mla_decode_latent<F32>(p, c.in, 1 / sqrt(ref::mp(p.head_dim)))) {
        o[0].values.push_back(ref::to_double(v));
      }
      return o;
    });
  }
}

// DeepSeek-V3's YaRN decode (factor 40 over 4096, beta 32/1, mscale_all_dim 1) at position 299.
json v3_yarn_decode() {
  return json::parse(R"({"id": "m/mla-yarn", "op": "mla_decode", "seed": 35,
                         "formats": ["f32", "bf16"],
                         "params": {"h": 2, "d_h": 128, "d_rope": 64, "d_c": 512,
                                    "cache_len": 300, "scaling": "yarn", "factor": 40,
                                    "original_context": 4096, "beta_fast": 32, "beta_slow": 1,
                                    "mscale_all_dim": 1}})");
}

// A kernel given YaRN's frequencies that forgets DeepSeek's temperature (the softmax scale of
// eq. 46 alone, as a generic MLA kernel computes it): logits too cold by (0.1·ln 40 + 1)² ≈ 1.87.
TEST(AttentionMutants, MlaYarnWithoutTheTemperature) {
  for (Format storage : kStorages) {
    SCOPED_TRACE(ref::format_name(storage));
    Harness h(v3_yarn_decode(), storage);
    const MlaDecodeParams& p = dynamic_cast<const MlaDecodeOp&>(h.op()).params();
    expect_caught(h, [&](const RunContext& c) {
      Outputs<double> o(1);
      for (const F32& v :
           mla_decode_latent<F32>(p, c.in, 1 / sqrt(ref::mp(p.head_dim + p.rope_dim)))) {
        o[0].values.push_back(ref::to_double(v));
      }
      return o;
    });
  }
}

// A kernel with the right temperature that rotates q^R by the plain F10 frequencies: YaRN's
// interpolated dimensions (k > 10 of the 32 pairs for d_h^R 64) turn up to 40 times too fast.
TEST(AttentionMutants, MlaYarnWithPlainFrequencies) {
  for (Format storage : kStorages) {
    SCOPED_TRACE(ref::format_name(storage));
    Harness h(v3_yarn_decode(), storage);
    const MlaDecodeParams& p = dynamic_cast<const MlaDecodeOp&>(h.op()).params();
    MlaDecodeParams plain = p;
    plain.yarn.reset();
    expect_caught(h, [&](const RunContext& c) {
      Outputs<double> o(1);
      for (const F32& v : mla_decode_latent<F32>(plain, c.in, ref::mla_scale(p.config()))) {
        o[0].values.push_back(ref::to_double(v));
      }
      return o;
    });
  }
}

TEST(AttentionMutants, SlidingWindowOffByOne) {
  const char* cases[] = {
      R"({"id": "m/win", "op": "attention", "seed": 33, "formats": ["f32", "bf16"],
          "params": {"h": 4, "g": 1, "d": 64, "tokens": 48, "mask": "window", "window": 16}})",
      R"({"id": "m/win-dec", "op": "attention_decode", "seed": 34, "formats": ["f32", "bf16"],
          "params": {"h": 4, "g": 1, "d": 64, "cache_len": 80, "window": 32}})"};
  for (const char* text : cases) {
    for (Format storage : kStorages) {
      Harness h(json::parse(text), storage);
      const int64_t w = h.c().params["window"];
      for (int64_t wrong : {w + 1, w - 1}) {  // 0 ≤ i − j ≤ w, and 0 ≤ i − j < w − 1
        SCOPED_TRACE(h.c().id + " " + std::string(ref::format_name(storage)) + " window " +
                     std::to_string(wrong));
        const auto mutant = h.op_with({{"window", wrong}});
        expect_caught(h, [&](const RunContext& c) { return mutant->simulated(Format::f32, c.in); });
      }
    }
  }
}

// Query head j reading KV head j mod g instead of ⌊j·g/h⌋: the correct kernel run on the query
// heads permuted by π(j) = (j mod g)·(h/g) + ⌊j/g⌋ (whose correct KV head is j mod g), with the
// outputs permuted back.
Outputs<double> gqa_modulo_kernel(const RunContext& c, int64_t h, int64_t g, int64_t d) {
  const ref::Tensor& q = c.in.at("q");
  const int64_t rows = q.shape()[0], r = h / g;
  const auto pi = [&](int64_t j) { return (j % g) * r + j / g; };
  ref::Tensor q2(q.dtype(), q.shape());
  for (int64_t t = 0; t < rows; ++t) {
    for (int64_t j = 0; j < h; ++j) {
      for (int64_t e = 0; e < d; ++e) {
        q2.set_bits((t * h + pi(j)) * d + e, q.bits((t * h + j) * d + e));
      }
    }
  }
  InputSet in;
  in.add("q", std::move(q2));
  in.add("k", c.in.at("k"));
  in.add("v", c.in.at("v"));
  const Outputs<double> permuted = c.op.simulated(Format::f32, in);
  Outputs<double> o(1);
  o[0].values.resize(permuted[0].values.size());
  for (int64_t t = 0; t < rows; ++t) {
    for (int64_t j = 0; j < h; ++j) {
      for (int64_t e = 0; e < d; ++e) {
        o[0].values[static_cast<size_t>((t * h + j) * d + e)] =
            permuted[0].values[static_cast<size_t>((t * h + pi(j)) * d + e)];
      }
    }
  }
  return o;
}

TEST(AttentionMutants, GqaHeadModuloInsteadOfBlocks) {
  const char* cases[] = {
      R"({"id": "m/gqa", "op": "attention", "seed": 35, "formats": ["f32", "bf16"],
          "params": {"h": 16, "g": 2, "d": 64, "tokens": 16, "mask": "causal"}})",
      R"({"id": "m/gqa-dec", "op": "attention_decode", "seed": 36, "formats": ["f32", "bf16"],
          "params": {"h": 8, "g": 2, "d": 64, "cache_len": 64}})"};
  for (const char* text : cases) {
    for (Format storage : kStorages) {
      Harness h(json::parse(text), storage);
      SCOPED_TRACE(h.c().id + " " + std::string(ref::format_name(storage)));
      const json& p = h.c().params;
      expect_caught(
          h, [&](const RunContext& c) { return gqa_modulo_kernel(c, p["h"], p["g"], p["d"]); });
    }
  }
}

TEST(AttentionMutants, SoftCapDroppedOnAttentionLogits) {
  for (Format storage : kStorages) {
    SCOPED_TRACE(ref::format_name(storage));
    Harness h(json::parse(R"({"id": "m/cap", "op": "attention", "seed": 37,
                              "formats": ["f32", "bf16"],
                              "params": {"h": 4, "g": 2, "d": 256, "tokens": 24, "mask": "causal",
                                         "softcap": 50, "qk_std": 2.5}})"),
              storage);
    const auto uncapped = h.op_with({{"softcap", nullptr}});
    expect_caught(h, [&](const RunContext& c) { return uncapped->simulated(Format::f32, c.in); });
  }
}

// The mutants above must be caught for the bug, not for something else in the harness: where the
// case does not exercise the feature, the same mutation computes the correct result and passes
// (MHA: j mod g = ⌊j·g/h⌋; a window as long as the sequence: w and w + 1 see the same keys; a cap
// far above every logit: cap·tanh(s/cap) = s to far below f32's precision).
TEST(AttentionMutants, MutationsAreHarmlessWhereTheFeatureIsAbsent) {
  Harness mha(json::parse(R"({"id": "m/mha", "op": "attention", "seed": 38, "formats": ["f32"],
                              "params": {"h": 4, "g": 4, "d": 32, "tokens": 12,
                                         "mask": "causal"}})"),
              Format::f32);
  VerifyRow r = mha.judge("modulo-on-mha",
                          [](const RunContext& c) { return gqa_modulo_kernel(c, 4, 4, 32); });
  EXPECT_TRUE(r.pass) << r.detail;

  Harness full(json::parse(R"({"id": "m/full", "op": "attention", "seed": 39, "formats": ["f32"],
                               "params": {"h": 2, "g": 1, "d": 32, "tokens": 12, "mask": "window",
                                          "window": 12, "softcap": 1e6}})"),
               Format::f32);
  const auto wider = full.op_with({{"window", 13}});
  r = full.judge("window+1",
                 [&](const RunContext& c) { return wider->simulated(Format::f32, c.in); });
  EXPECT_TRUE(r.pass) << r.detail;
  const auto uncapped = full.op_with({{"softcap", nullptr}});
  r = full.judge("uncapped",
                 [&](const RunContext& c) { return uncapped->simulated(Format::f32, c.in); });
  EXPECT_TRUE(r.pass) << r.detail;
}

}  // namespace
}  // namespace lmo::oracle
