// Tests of the oracle on the fast FFN kernels (fast/ffn.h): the real kernel, run through the very
// judging `lmoracle verify` uses (run_and_judge), passes on ffn and glu_ffn cases, and the same
// kernel called wrongly, or recomposed from the fast pieces with a mistake, is caught by the
// tolerance policy. Each mutant is a mistake an FFN port can make: GELU-tanh where the model was
// trained with the exact GELU (or the reverse for Gemma's GeGLU), the first bias left out, the
// hidden layer kept in bf16 by a kernel whose storage is f32.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "fast/activations.h"
#include "fast/blas.h"
#include "fast/convert.h"
#include "fast/ffn.h"
#include "oracle/ops/ffn.h"
#include "tests/support/oracle_harness.h"

namespace lmo::oracle {
namespace {

using lmo::testing::expect_caught;
using lmo::testing::Harness;
using nlohmann::json;
using ref::Format;

// An ffn or glu_ffn case in the shape of cases/ffn.json, f32 storage (the harness's inputs are
// then the f32 arrays the kernel reads in place).
json ffn_case(const char* op, const char* activation, bool bias, int64_t tokens = 4,
              int64_t d_ff = 256) {
  json c = json::parse(R"({"id": "m/ffn", "seed": 61, "formats": ["f32"],
                           "params": {"d": 64}})");
  c["params"]["tokens"] = tokens;
  c["params"]["d_ff"] = d_ff;
  c["op"] = op;
  c["params"]["activation"] = activation;
  if (bias) c["params"]["bias"] = true;
  return c;
}

const FfnParams& ffn_params(const RunContext& c) {
  return dynamic_cast<const FfnOp&>(c.op).params();
}

const float* f32_input(const RunContext& c, const char* name) {
  return reinterpret_cast<const float*>(c.in.at(name).bytes().data());
}

Outputs<double> as_output(const std::vector<float>& y) {
  Outputs<double> o(1);
  o[0].values.assign(y.begin(), y.end());
  return o;
}

// fast/ffn.h on the case's inputs with activation `act`; b1 passed only when keep_b1.
Outputs<double> fast_kernel(const RunContext& c, fast::Activation act, bool keep_b1 = true) {
  const FfnParams& p = ffn_params(c);
  std::vector<float> y(static_cast<size_t>(p.tokens * p.d));
  if (p.gated) {
    fast::glu_ffn(act, fast::Storage::f32, f32_input(c, "x"), f32_input(c, "w"), f32_input(c, "v"),
                  f32_input(c, "w2"), y.data(), p.tokens, p.d, p.d_ff);
  } else {
    fast::ffn(act, fast::Storage::f32, f32_input(c, "x"), f32_input(c, "w1"),
              p.bias && keep_b1 ? f32_input(c, "b1") : nullptr, f32_input(c, "w2"),
              p.bias ? f32_input(c, "b2") : nullptr, y.data(), p.tokens, p.d, p.d_ff);
  }
  return as_output(y);
}

// The kernel as the adapter calls it passes, with the case's own activation.
void expect_fast_kernel_passes(Harness& h, fast::Activation act) {
  const VerifyRow r = h.judge("fast", [&](const RunContext& c) { return fast_kernel(c, act); });
  EXPECT_TRUE(r.pass) << r.detail;
}

TEST(FfnMutants, GeluTanhWhereExactGeluIsAsked) {
  Harness h(ffn_case("ffn", "gelu", true), Format::f32);
  expect_fast_kernel_passes(h, fast::Activation::gelu);
  expect_caught(h, [](const RunContext& c) { return fast_kernel(c, fast::Activation::gelu_tanh); });
}

// Gemma's GeGLU is trained with GELU-tanh; a port that calls the exact GELU is caught.
TEST(FfnMutants, ExactGeluInGemmasGeGluTanh) {
  Harness h(ffn_case("glu_ffn", "gelu_tanh", false), Format::f32);
  expect_fast_kernel_passes(h, fast::Activation::gelu_tanh);
  expect_caught(h, [](const RunContext& c) { return fast_kernel(c, fast::Activation::gelu); });
}

TEST(FfnMutants, FirstBiasDropped) {
  Harness h(ffn_case("ffn", "gelu_tanh", true), Format::f32);
  expect_fast_kernel_passes(h, fast::Activation::gelu_tanh);
  expect_caught(h, [](const RunContext& c) {
    return fast_kernel(c, fast::Activation::gelu_tanh, /*keep_b1=*/false);
  });
}

// The bias-free FFN from the fast pieces with its hidden layer rounded to bf16 between the two
// products (a kernel that stages h in a bf16 scratch buffer although its storage is f32). The
// policy's error scale grows with d_ff faster than this mistake's error does (oracle/
// oracle/rules/policy.h, kErrorScaleMultiple), so it is also checked at a width of today's models.
void expect_bf16_hidden_caught(int64_t tokens, int64_t d_ff) {
  Harness h(ffn_case("ffn", "silu", false, tokens, d_ff), Format::f32);
  expect_fast_kernel_passes(h, fast::Activation::silu);
  expect_caught(h, [](const RunContext& c) {
    const FfnParams& p = ffn_params(c);
    const int64_t n = p.tokens * p.d_ff;
    std::vector<float> hid(static_cast<size_t>(n)), y(static_cast<size_t>(p.tokens * p.d));
    std::vector<uint16_t> staged(static_cast<size_t>(n));
    fast::blas_single_threaded();
    fast::sgemm(p.tokens, p.d_ff, p.d, 1.0f, f32_input(c, "x"), p.d, f32_input(c, "w1"), p.d_ff,
                false, 0.0f, hid.data(), p.d_ff);
    fast::activation(fast::Activation::silu, fast::Storage::f32, hid.data(), hid.data(), n);
    fast::convert(fast::Storage::f32, hid.data(), fast::Storage::bf16, staged.data(), n);
    fast::convert(fast::Storage::bf16, staged.data(), fast::Storage::f32, hid.data(), n);
    fast::sgemm(p.tokens, p.d, p.d_ff, 1.0f, hid.data(), p.d_ff, f32_input(c, "w2"), p.d, false,
                0.0f, y.data(), p.d);
    return as_output(y);
  });
}

TEST(FfnMutants, HiddenRoundedToBf16InAnF32Kernel) { expect_bf16_hidden_caught(4, 256); }
TEST(FfnMutants, HiddenRoundedToBf16AtAWideHiddenLayer) { expect_bf16_hidden_caught(1, 8192); }

}  // namespace
}  // namespace lmo::oracle
