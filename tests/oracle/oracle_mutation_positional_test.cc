// Tests of the oracle itself for RoPE and the FFNs: deliberately wrong kernels, each a small
// function run through the very judging `lmoracle verify` uses (run_and_judge), must be caught,
// and the correct kernel (the reference formula in f32, every operation rounded once) on the
// same case must pass. Each mutant is a bug real kernels have shipped with.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "oracle/core/op_generic.h"
#include "oracle/ops/rope.h"
#include "tests/support/oracle_harness.h"

namespace lmo::oracle {
namespace {

using lmo::testing::careful_f32;
using lmo::testing::exact_rounded;
using lmo::testing::Harness;
using lmo::testing::expect_caught;
using nlohmann::json;
using ref::Format;
using F32 = ref::Sim<Format::f32>;

// Llama 3.1 405B's RoPE at long context: base 500000, the Llama 3.1 rule, half-split pairs.
json llama31_case(const char* op) {
  json c = json::parse(R"({"id": "m/rope", "seed": 31, "formats": ["f32", "bf16"],
      "params": {"tokens": 16, "heads": 2, "head_dim": 128, "layout": "half_split",
                 "base": 500000, "max_position": 131072, "scaling": "llama31", "factor": 8,
                 "low_freq_factor": 1, "high_freq_factor": 4, "original_context": 8192}})");
  c["op"] = op;
  return c;
}

const RopeParams& rope_params(const RunContext& c) {
  return dynamic_cast<const RopeOp&>(c.op).params();
}

// x rotated in f32 with the given table, as a kernel with f32 arithmetic does.
Outputs<double> rotate_f32(const RunContext& c, const ref::RopeTable<F32>& table) {
  const RopeParams& p = rope_params(c);
  const ref::Mat<F32> x(p.tokens, p.heads * p.head_dim, c.in.values<F32>("x"));
  Outputs<F32> o(1);
  o[0].values = ref::rope_sequence(x, p.heads, table, p.layout).data;
  return outputs_as_double(o);
}

// Positions carried in bf16 (an autocast region around inv_freq @ position_ids, the bug HF
// transformers fixed by forcing f32 there): bf16 keeps 8 significant bits, so a position near
// 10^5 moves by up to 256 and every angle with it.
TEST(RopeMutants, AnglesFromABf16RoundedPosition) {
  for (Format storage : {Format::f32, Format::bf16}) {
    SCOPED_TRACE(ref::format_name(storage));
    Harness h(llama31_case("rope"), storage);
    expect_caught(h, [](const RunContext& c) {
      std::vector<F32> pos;
      for (int64_t q : c.in.ints("positions")) {
        pos.push_back(F32(ref::to_double(ref::rope_position<ref::bfloat16>(q))));
      }
      return rotate_f32(c, rope_angles_table<F32>(rope_params(c), std::span<const F32>(pos)));
    });
  }
}

// The f32 cos/sin table read as bf16 (a cache cast to the activations' dtype where the kernel's
// contract is an f32 table): cos and sin lose all but 8 bits.
TEST(RopeMutants, TableStoredInBf16) {
  for (Format storage : {Format::f32, Format::bf16}) {
    SCOPED_TRACE(ref::format_name(storage));
    Harness h(llama31_case("rope_table"), storage);
    expect_caught(h, [](const RunContext& c) {
      const RopeParams& p = rope_params(c);
      const int64_t half = p.rotary_dims / 2;
      const std::vector<F32> cs = c.in.values<F32>("cos_sin");
      const auto bf16 = [](const F32& v) {
        return F32(ref::to_double(ref::bfloat16(static_cast<double>(v))));
      };
      ref::RopeTable<F32> table{ref::Mat<F32>(p.tokens, half), ref::Mat<F32>(p.tokens, half)};
      for (int64_t t = 0; t < p.tokens; ++t) {
        for (int64_t k = 0; k < half; ++k) {
          table.cos(t, k) = bf16(cs[static_cast<size_t>(t * p.rotary_dims + k)]);
          table.sin(t, k) = bf16(cs[static_cast<size_t>(t * p.rotary_dims + half + k)]);
        }
      }
      return rotate_f32(c, table);
    });
  }
}

// Checkpoints converted between Meta's interleaved and HF's half-split convention without the
// weight permutation rotate the wrong pairs.
TEST(RopeMutants, InterleavedWhereHalfSplitIsAsked) {
  for (const char* op : {"rope", "rope_table"}) {
    for (Format storage : {Format::f32, Format::bf16}) {
      SCOPED_TRACE(std::string(op) + " " + std::string(ref::format_name(storage)));
      Harness h(llama31_case(op), storage);
      const auto wrong = h.op_with({{"layout", "interleaved"}});
      expect_caught(h, [&](const RunContext& c) { return wrong->simulated(Format::f32, c.in); });
    }
  }
}

// A long-context model served with plain RoPE (the rope_scaling entry of the config ignored).
TEST(RopeMutants, Llama31ScalingDropped) {
  for (Format storage : {Format::f32, Format::bf16}) {
    SCOPED_TRACE(ref::format_name(storage));
    Harness h(llama31_case("rope"), storage);
    const auto plain = h.op_with({{"scaling", nullptr},
                                  {"factor", nullptr},
                                  {"low_freq_factor", nullptr},
                                  {"high_freq_factor", nullptr},
                                  {"original_context", nullptr}});
    expect_caught(h, [&](const RunContext& c) { return plain->simulated(Format::f32, c.in); });
  }
}

// The tanh approximation where the model was trained with the exact GELU (PyTorch's
// approximate="tanh" left on), in both FFN forms.
TEST(FfnMutants, GeluTanhWhereExactGeluIsAsked) {
  for (const char* c : {R"({"id": "m/ffn", "op": "ffn", "seed": 41, "formats": ["f32", "bf16"],
                            "params": {"tokens": 4, "d": 64, "d_ff": 256, "activation": "gelu"}})",
                        R"({"id": "m/glu", "op": "glu_ffn", "seed": 42, "formats": ["f32", "bf16"],
                            "params": {"tokens": 4, "d": 64, "d_ff": 256,
                                       "activation": "gelu"}})"}) {
    for (Format storage : {Format::f32, Format::bf16}) {
      Harness h(json::parse(c), storage);
      SCOPED_TRACE(h.c().op + " " + std::string(ref::format_name(storage)));
      const auto tanh_op = h.op_with({{"activation", "gelu_tanh"}});
      expect_caught(h, [&](const RunContext& x) { return tanh_op->simulated(Format::f32, x.in); });
    }
  }
}

// The exact values rounded once (the `ref` backend) pass every new op's policy, with 0 ulp, in
// every storage format the fast and GPU kernels write.
TEST(PositionalOps, CorrectlyRoundedOutputsAlwaysPass) {
  for (const char* c :
       {R"({"op": "sinusoidal_pe", "params": {"tokens": 4, "d": 64, "max_position": 1048576}})",
        R"({"op": "learned_position", "params": {"tokens": 8, "d": 2, "vocab": 32,
                                                    "max_positions": 131072,
                                                    "min_position": 100000}})",
        R"({"op": "shaw_logits", "params": {"n_q": 8, "n_k": 8, "d_k": 16,
                                               "max_relative_position": 2}})",
        R"({"op": "t5_bias", "params": {"heads": 2, "query_len": 2, "key_len": 300,
                                           "query_offset": 200000}})",
        R"({"op": "rope", "params": {"tokens": 4, "heads": 1, "head_dim": 64,
                                        "layout": "half_split", "max_position": 1048576,
                                        "scaling": "yarn", "factor": 16,
                                        "original_context": 4096}})",
        R"({"op": "rope_table", "params": {"tokens": 4, "heads": 1, "head_dim": 64,
                                              "layout": "interleaved",
                                              "max_position": 1048576}})",
        R"({"op": "ffn", "params": {"tokens": 2, "d": 16, "d_ff": 32, "activation": "gelu",
                                       "bias": true}})",
        R"({"op": "glu_ffn", "params": {"tokens": 2, "d": 16, "d_ff": 32,
                                           "activation": "gelu_tanh"}})"}) {
    for (Format storage : {Format::f32, Format::bf16, Format::f16}) {
      json j = json::parse(c);
      j["id"] = "exact";
      j["seed"] = 51;
      j["formats"] = {std::string(ref::format_name(storage))};
      Harness h(j, storage);
      SCOPED_TRACE(h.c().op + " " + std::string(ref::format_name(storage)));
      const VerifyRow r = h.judge("exact", exact_rounded);
      EXPECT_TRUE(r.pass) << r.detail;
      EXPECT_EQ(r.max_ulps, 0);
    }
  }
}

// rope_table's derived input: row t of cos_sin holds cos(p_t θ_k), then sin(p_t θ_k), each
// rounded once to the table's format (f32, or the storage format), checked against libm in
// double (θ_k = 10000^(−2k/r); below 2^16 the double angle is within 10^-11 rad, far inside
// half an f32 ulp of almost every value).
TEST(PositionalOps, RopeTableInputIsTheRoundedCosSinOfEachPosition) {
  for (const char* table : {"f32", "storage"}) {
    json c = json::parse(R"({"id": "t", "op": "rope_table", "seed": 61, "formats": ["bf16"],
        "params": {"tokens": 8, "heads": 1, "head_dim": 16, "layout": "half_split",
                   "max_position": 65536}})");
    c["params"]["table"] = table;
    Harness h(c, Format::bf16);
    const ref::Tensor& t = h.inputs().at("cos_sin");
    const Format f = std::string(table) == "f32" ? Format::f32 : Format::bf16;
    SCOPED_TRACE(table);
    ASSERT_EQ(t.dtype(), ref::format_dtype(f));
    const std::vector<int64_t> pos = h.inputs().ints("positions");
    for (int64_t row = 0; row < 8; ++row) {
      for (int64_t k = 0; k < 8; ++k) {
        const double angle =
            static_cast<double>(pos[static_cast<size_t>(row)]) * std::pow(10000.0, -k / 8.0);
        EXPECT_EQ(t.bits(row * 16 + k), ref::encode(f, std::cos(angle))) << row << " " << k;
        EXPECT_EQ(t.bits(row * 16 + 8 + k), ref::encode(f, std::sin(angle))) << row << " " << k;
      }
    }
  }
}

}  // namespace
}  // namespace lmo::oracle
