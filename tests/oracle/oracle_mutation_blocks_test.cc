// Tests of the oracle itself for F18 block layouts and F22 auxiliary-loss-free balancing:
// deliberately wrong kernels, run through the very judging `lmoracle verify` uses
// (run_and_judge), must be caught by the tolerance policy, and the correct kernel (the reference
// formula in f32, every operation rounded once) on the same case must pass. Each mutant is a
// mistake a model port can make: the wrong block layout for a checkpoint, a missing norm, the
// balancing update's sign inverted.
#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "oracle/core/op_generic.h"
#include "oracle/ops/blocks.h"
#include "oracle/ops/moe_balance.h"
#include "tests/support/oracle_harness.h"

namespace lmo::oracle {
namespace {

using lmo::testing::expect_caught;
using lmo::testing::Harness;
using nlohmann::json;
using ref::Format;
using F32 = ref::Sim<Format::f32>;

// A block case as cases/blocks.json writes them, in the given layout.
json block_case(const char* layout) {
  json c = json::parse(R"({"id": "m/block", "op": "decoder_block", "seed": 18,
      "formats": ["f32", "bf16"],
      "params": {"tokens": 8, "d": 64, "h": 4, "g": 2, "d_ff": 256, "ffn": "swiglu",
                 "eps": 1e-6}})");
  c["params"]["layout"] = layout;
  return c;
}

const DecoderBlockParams& block_params(const RunContext& c) {
  return dynamic_cast<const DecoderBlockOp&>(c.op).params();
}

ref::Mat<F32> block_input(const RunContext& c) {
  const DecoderBlockParams& p = block_params(c);
  return ref::Mat<F32>(p.tokens, p.d, c.in.values<F32>("x"));
}

Outputs<double> as_output(ref::Mat<F32> y) {
  Outputs<F32> o(1);
  o[0].values = std::move(y.data);
  return outputs_as_double(o);
}

// A post-LN checkpoint (the original Transformer, BERT) run by a pre-LN implementation: the same
// weights, the norms moved from the residual stream to the sublayer inputs.
TEST(BlockMutants, PreLnWherePostLnIsAsked) {
  for (Format storage : {Format::f32, Format::bf16}) {
    SCOPED_TRACE(ref::format_name(storage));
    Harness h(block_case("post_ln"), storage);
    expect_caught(h, [](const RunContext& c) {
      const BlockParts<F32> b = block_parts<F32>(block_params(c), c.in);
      return as_output(block_forward<F32>(b, BlockLayoutKind::kPreLn, block_input(c)));
    });
  }
}

// The double-norm block in f32 with its post-sublayer norms replaced by the identity where
// `drop_attn_post` / `drop_ffn_post` say so.
Outputs<double> double_norm_dropping(const RunContext& c, bool drop_attn_post, bool drop_ffn_post) {
  const BlockParts<F32> b = block_parts<F32>(block_params(c), c.in);
  auto attn = [&b](const ref::Mat<F32>& u) { return b.attn(u); };
  auto ffn = [&b](const ref::Mat<F32>& u) { return b.ffn(u); };
  auto post = [&b](const char* name, bool drop) {
    return [&b, name, drop](const ref::Mat<F32>& u) { return drop ? u : b.norm(name, u); };
  };
  return as_output(ref::double_norm_block(
      block_input(c), attn, ffn, b.norm_fn("attn_norm"), post("attn_post_norm", drop_attn_post),
      b.norm_fn("ffn_norm"), post("ffn_post_norm", drop_ffn_post)));
}

// Gemma 2's double norm with the norms after the sublayers dropped (the block then is pre-LN):
// the sublayer outputs enter the residual stream unnormalized.
TEST(BlockMutants, DoubleNormWithoutItsPostSublayerNorms) {
  for (Format storage : {Format::f32, Format::bf16}) {
    SCOPED_TRACE(ref::format_name(storage));
    Harness h(block_case("double_norm"), storage);
    expect_caught(h, [](const RunContext& c) { return double_norm_dropping(c, true, true); });
  }
}

// Only the post-FFN norm dropped: the attention half of the block is right, so only the FFN's
// contribution to the residual stream is off.
TEST(BlockMutants, DoubleNormWithoutThePostFfnNorm) {
  for (Format storage : {Format::f32, Format::bf16}) {
    SCOPED_TRACE(ref::format_name(storage));
    Harness h(block_case("double_norm"), storage);
    expect_caught(h, [](const RunContext& c) { return double_norm_dropping(c, false, true); });
  }
}

// DeepSeek-V3's balancing step, as cases/moe_balance.json has it.
json aux_free_case() {
  return json::parse(R"({"id": "m/aux-free", "op": "aux_free_update", "seed": 22,
      "formats": ["f32", "bf16"],
      "params": {"experts": 256, "gamma": 0.001, "max_load": 128}})");
}

// The update in f32 with the given γ and the sign of the step for an under-loaded expert (+1
// right, −1 the mutation).
Outputs<double> update_f32(const RunContext& c, F32 gamma, int under_sign) {
  const std::vector<F32> bias = c.in.values<F32>("bias");
  const std::vector<int64_t> load = c.in.ints("load");
  const auto n = static_cast<int64_t>(bias.size());
  int64_t total = 0;
  for (int64_t l : load) total += l;
  const F32 up = under_sign > 0 ? gamma : F32(-gamma);
  Outputs<F32> o(1);
  for (size_t i = 0; i < bias.size(); ++i) {
    const int64_t scaled = n * load[i];
    F32 y = bias[i];
    if (scaled < total) y = F32(y + up);
    if (scaled > total) y = F32(y - up);
    o[0].values.push_back(y);
  }
  return outputs_as_double(o);
}

double case_gamma(const RunContext& c) {
  return dynamic_cast<const AuxFreeUpdateOp&>(c.op).params().gamma;
}

// The update with its sign flipped (bias += γ·sign(load − mean)): over-loaded experts are pushed
// up, so they win still more tokens and the routing collapses instead of balancing.
TEST(AuxFreeMutants, SignFlipped) {
  for (Format storage : {Format::f32, Format::bf16}) {
    SCOPED_TRACE(ref::format_name(storage));
    Harness h(aux_free_case(), storage);
    expect_caught(h, [](const RunContext& c) {
      return update_f32(c, ref::from_mp<F32>(ref::mp(case_gamma(c))), -1);
    });
  }
}

// γ held in bf16 (the update done in the parameters' dtype): 0.001 becomes 0.00099945…, a
// relative error of about 2^-11 that arg_error = 1 (one f32 rounding of γ) must not excuse. Seen
// only when the bias is stored in f32.
TEST(AuxFreeMutants, GammaRoundedToBf16) {
  Harness h(aux_free_case(), Format::f32);
  expect_caught(h, [](const RunContext& c) {
    const auto g = ref::from_mp<ref::bfloat16>(ref::mp(case_gamma(c)));
    return update_f32(c, F32(ref::to_double(g)), +1);
  });
}

// The step's loads are drawn so that both directions occur: the mutant above is tested on
// experts moved up and moved down, not on a degenerate all-equal load.
TEST(AuxFreeMutants, CaseMovesExpertsBothWays) {
  Harness h(aux_free_case(), Format::f32);
  const std::vector<int64_t> load = h.inputs().ints("load");
  int64_t total = 0;
  for (int64_t l : load) total += l;
  int64_t under = 0, over = 0;
  for (int64_t l : load) {
    under += 256 * l < total;
    over += 256 * l > total;
  }
  EXPECT_GT(under, 64);
  EXPECT_GT(over, 64);
}

}  // namespace
}  // namespace lmo::oracle
