// Tests of the oracle itself: deliberately wrong kernels, each a small function run through the
// very judging `lmoracle verify` uses (run_and_judge), must be caught; the correct kernel on the
// same case must pass. Each mutant is the bug a real kernel has been known to ship with.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "tests/support/oracle_harness.h"

namespace lmo::oracle {
namespace {

using lmo::testing::careful_f32;
using lmo::testing::expect_caught;
using lmo::testing::exact_rounded;
using lmo::testing::Harness;
using nlohmann::json;
using ref::Format;

json norm_case(double eps, double x_std) {
  json c = json::parse(R"({"id": "m/rms", "op": "rmsnorm", "seed": 11, "formats": ["f32", "bf16"],
                           "params": {"rows": 4, "d": 256}})");
  c["params"]["eps"] = eps;
  c["inputs"]["x"] = {{"dist", "normal"}, {"mean", 0}, {"std", x_std}};
  return c;
}

TEST(Mutants, RmsNormWithEps1e5WhereTheCaseSays1e6) {
  for (const auto& [storage, x_std] : {std::pair{Format::f32, 1.0}, {Format::bf16, 0.003}}) {
    SCOPED_TRACE(ref::format_name(storage));
    Harness h(norm_case(1e-6, x_std), storage);
    const auto wrong = h.op_with({{"eps", 1e-5}});
    expect_caught(h, [&](const RunContext& c) { return wrong->simulated(Format::f32, c.in); });
  }
}

// Round toward zero from f32 to bf16: Highway 1.0.3's DemoteTo / BF16FromF32.
Outputs<double> truncate_to_bf16(Outputs<double> o) {
  for (OutputValues<double>& out : o) {
    for (double& v : out.values) {
      const float f = static_cast<float>(v);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      b &= 0xFFFF0000u;
      float t;
      std::memcpy(&t, &b, 4);
      v = t;
    }
  }
  return o;
}

TEST(Mutants, Bf16OutputByTruncationInsteadOfRounding) {
  for (const char* c : {R"({"id": "m/gelu", "op": "gelu", "seed": 12, "formats": ["bf16"],
                            "params": {"n": 4096}})",
                        R"({"id": "m/rms", "op": "rmsnorm", "seed": 13, "formats": ["bf16"],
                            "params": {"rows": 4, "d": 1024, "eps": 1e-6}})",
                        R"({"id": "m/sm", "op": "softmax", "seed": 14, "formats": ["bf16"],
                            "params": {"rows": 4, "n": 1024}})"}) {
    Harness h(json::parse(c), Format::bf16);
    SCOPED_TRACE(h.c().op);
    expect_caught(h, [](const RunContext& x) { return truncate_to_bf16(careful_f32(x)); });
  }
}

TEST(Mutants, DroppedSoftCapInCrossEntropy) {
  for (Format storage : {Format::f32, Format::bf16}) {
    Harness h(json::parse(R"({"id": "m/ce", "op": "cross_entropy", "seed": 15,
                              "formats": ["f32", "bf16"],
                              "params": {"rows": 2, "vocab": 4096, "softcap": 30,
                                         "logit_std": 10}})"),
              storage);
    const auto uncapped = h.op_with({{"softcap", nullptr}});
    expect_caught(h, [&](const RunContext& c) { return uncapped->simulated(Format::f32, c.in); });
  }
}

TEST(Mutants, DroppedSoftCapInTheSoftCapOp) {
  Harness h(json::parse(R"({"id": "m/cap", "op": "softcap", "seed": 16, "formats": ["bf16"],
                            "params": {"n": 2048, "cap": 50}})"),
            Format::bf16);
  expect_caught(h, [](const RunContext& c) {
    Outputs<double> o(1);
    o[0].values = c.in.values<double>("z");  // the logits passed through uncapped
    return o;
  });
}

TEST(Mutants, ZLossAppliedToLogZInsteadOfItsSquare) {
  Harness h(json::parse(R"({"id": "m/z", "op": "cross_entropy", "seed": 17, "formats": ["f32"],
                            "params": {"rows": 2, "vocab": 32000, "z_loss": 1e-4}})"),
            Format::f32);
  expect_caught(h, [](const RunContext& c) {
    Outputs<double> o = careful_f32(c);
    const float lambda = 1e-4f;
    for (size_t r = 0; r < o[0].values.size(); ++r) {
      const float lz = static_cast<float>(o[1].values[r]);
      // loss = CE + λ·(log Z)² becomes CE + λ·log Z.
      o[0].values[r] = static_cast<float>(o[0].values[r]) - lambda * lz * lz + lambda * lz;
    }
    return o;
  });
}

TEST(Mutants, GeluTanhWhereExactGeluIsAsked) {
  for (Format storage : {Format::f32, Format::bf16, Format::f16}) {
    SCOPED_TRACE(ref::format_name(storage));
    Harness h(json::parse(R"({"id": "m/gelu", "op": "gelu", "seed": 18,
                              "formats": ["f32", "bf16", "f16"], "params": {"n": 4096}})"),
              storage);
    const Case tanh_case = parse_case(json::parse(R"({"id": "t", "op": "gelu_tanh", "seed": 18,
                              "formats": ["f32"], "params": {"n": 4096}})"),
                                      "<test>", "case");
    const auto tanh_op = make_op(tanh_case);
    expect_caught(h, [&](const RunContext& c) { return tanh_op->simulated(Format::f32, c.in); });
  }
}

TEST(Mutants, CorrectlyRoundedOutputsAlwaysPass) {
  // The exact values rounded once (the `ref` backend) on the same cases: the judge's floor.
  for (const char* c : {R"({"id": "a", "op": "gelu", "seed": 19, "formats": ["bf16"],
                            "params": {"n": 4096}})",
                        R"({"id": "b", "op": "cross_entropy", "seed": 20, "formats": ["bf16"],
                            "params": {"rows": 2, "vocab": 4096, "z_loss": 1e-4,
                                       "softcap": 30}})"}) {
    Harness h(json::parse(c), Format::bf16);
    const VerifyRow r = h.judge("exact", exact_rounded);
    EXPECT_TRUE(r.pass) << r.detail;
    EXPECT_EQ(r.max_ulps, 0);
  }
}

}  // namespace
}  // namespace lmo::oracle
