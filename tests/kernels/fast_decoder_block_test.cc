// fast/decoder_block.h against the reference's block (oracle/ops/blocks.h block_forward over
// reference/blocks.h, in mp) on the inputs the oracle draws for a decoder_block case: every
// layout, SwiGLU and GELU FFNs, GQA and MQA, every storage format and supported Highway target,
// judged with the policy table's decoder_block row (naive_relative: the naive run is the
// reference in simulated f32); bitwise identical bytes for 1, 2 and 4 threads; argument checks
// that name the argument.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "fast/decoder_block.h"
#include "oracle/cases/case.h"
#include "oracle/cases/case_inputs.h"
#include "oracle/core/op.h"
#include "oracle/ops/blocks.h"
#include "tests/support/fast_cases.h"

namespace lmo::fast {
namespace {

using namespace lmo::testdata;
using nlohmann::json;

struct Layout {
  const char* name;
  BlockLayout layout;
};
constexpr Layout kLayouts[] = {{"post_ln", BlockLayout::post_ln},
                               {"pre_ln", BlockLayout::pre_ln},
                               {"double_norm", BlockLayout::double_norm},
                               {"olmo2", BlockLayout::olmo2},
                               {"parallel", BlockLayout::parallel}};

// A block small enough for an mp reference in a fraction of a second, with two projection row
// tiles (32 rows each) and GQA.
struct Shape {
  int64_t tokens = 36, d = 32, h = 4, g = 2, d_ff = 48;
  bool swiglu = true;
  double eps = 1e-6;
};

// One case of the oracle's decoder_block op in storage s: its op, inputs and the fast arguments.
struct BlockCase {
  std::unique_ptr<oracle::Op> op;
  oracle::InputSet in;
  DecoderBlockArgs args;
  DecoderBlockWeights w;
};

BlockCase block_case(const Layout& l, const Shape& c, Storage s, uint64_t seed) {
  const json j = {{"id", "t/block"},
                  {"op", "decoder_block"},
                  {"seed", seed},
                  {"formats", {"f32", "bf16", "f16"}},
                  {"params",
                   {{"layout", l.name},
                    {"tokens", c.tokens},
                    {"d", c.d},
                    {"h", c.h},
                    {"g", c.g},
                    {"d_ff", c.d_ff},
                    {"ffn", c.swiglu ? "swiglu" : "gelu"},
                    {"eps", c.eps}}}};
  const oracle::Case k = oracle::parse_case(j, "<test>", "case");
  BlockCase b;
  b.op = oracle::make_op(k);
  b.in = oracle::make_inputs(k, *b.op, format_of(s));
  b.args = {l.layout, c.swiglu ? BlockFfn::swiglu : BlockFfn::gelu,
            c.tokens, c.d,
            c.h,      c.g,
            c.d_ff,   static_cast<float>(c.eps)};
  const auto p = [&](const char* name) { return b.in.at(name).bytes().data(); };
  b.w.w_q = p("w_q");
  b.w.w_k = p("w_k");
  b.w.w_v = p("w_v");
  b.w.w_o = p("w_o");
  b.w.w1 = p("w1");
  if (c.swiglu) b.w.v = p("v");
  b.w.w2 = p("w2");
  const auto& params = dynamic_cast<const oracle::DecoderBlockOp&>(*b.op).params();
  for (const std::string& n : params.norm_names()) {
    const void* g = p(n.c_str());
    if (n == "attn_norm") b.w.attn_norm = g;
    if (n == "ffn_norm") b.w.ffn_norm = g;
    if (n == "attn_post_norm") b.w.attn_post_norm = g;
    if (n == "ffn_post_norm") b.w.ffn_post_norm = g;
  }
  return b;
}

void run(Storage s, const BlockCase& b, oracle::GuardedBuffer& y) {
  y.arm();
  decoder_block(s, b.in.at("x").bytes().data(), b.w, y.data(), b.args);
}

void check(const Layout& l, const Shape& c, uint64_t seed) {
  for (Storage s : kAllStorages) {
    const BlockCase b = block_case(l, c, s, seed);
    const std::vector<ref::mp> exact = b.op->exact(b.in)[0].values;
    const std::vector<double> naive = b.op->simulated(ref::Format::f32, b.in)[0].values;
    const std::string what = std::string(l.name) + (c.swiglu ? " swiglu " : " gelu ") + "g" +
                             std::to_string(c.g) + " " + std::string(storage_name(s));
    oracle::GuardedBuffer y(dtype_of(s), {c.tokens, c.d});
    for_each_target([&](const std::string& target) {
      run(s, b, y);
      expect_judged("decoder_block", "", exact, y, naive, what + " " + target);
    });
    expect_thread_invariant(
        [&] {
          run(s, b, y);
          return bytes_of(y);
        },
        what, {2, 4});
  }
}

TEST(FastDecoderBlock, PostLn) { check(kLayouts[0], {}, 7101); }
TEST(FastDecoderBlock, PreLn) { check(kLayouts[1], {}, 7102); }
TEST(FastDecoderBlock, DoubleNorm) { check(kLayouts[2], {}, 7103); }
TEST(FastDecoderBlock, Olmo2) { check(kLayouts[3], {}, 7104); }
TEST(FastDecoderBlock, Parallel) { check(kLayouts[4], {}, 7105); }
// The GELU FFN, and MQA (one KV head) with few tokens.
TEST(FastDecoderBlock, GeluFfnAndMqa) {
  Shape c;
  c.swiglu = false;
  check(kLayouts[1], c, 7106);
  c.tokens = 5;
  c.g = 1;
  check(kLayouts[4], c, 7107);
}

TEST(FastDecoderBlock, BadArgumentsThrowNamingTheArgument) {
  Shape c;
  c.tokens = 2;
  const BlockCase b = block_case(kLayouts[3], c, Storage::f32, 7108);  // olmo2
  const void* x = b.in.at("x").bytes().data();
  std::vector<float> y(static_cast<size_t>(c.tokens * c.d));
  const auto with = [&](const std::function<void(DecoderBlockArgs&, DecoderBlockWeights&)>& edit,
                        Storage s = Storage::f32) {
    return [=, &b, &y] {
      DecoderBlockArgs a = b.args;
      DecoderBlockWeights w = b.w;
      edit(a, w);
      decoder_block(s, x, w, y.data(), a);
    };
  };
  expect_rejects(with([](auto& a, auto&) { a.layout = static_cast<BlockLayout>(9); }), "layout");
  expect_rejects(with([](auto& a, auto&) { a.ffn = static_cast<BlockFfn>(5); }), "ffn");
  expect_rejects(with([](auto&, auto&) {}, static_cast<Storage>(7)), "storage");
  expect_rejects(with([](auto& a, auto&) { a.tokens = -1; }), "tokens");
  expect_rejects(with([](auto& a, auto&) { a.heads = 5; }), "heads is 5");
  expect_rejects(with([](auto& a, auto&) { a.kv_heads = 3; }), "kv_heads is 3");
  expect_rejects(with([](auto& a, auto&) { a.d_ff = 0; }), "d_ff");
  expect_rejects(with([](auto& a, auto&) { a.eps = -1; }), "eps");
  expect_rejects(with([](auto&, auto& w) { w.attn_post_norm = nullptr; }), "attn_post_norm");
  expect_rejects(with([](auto&, auto& w) { w.ffn_post_norm = nullptr; }), "ffn_post_norm");
  expect_rejects(with([](auto&, auto& w) { w.v = nullptr; }), "v is null");
  expect_rejects(with([](auto&, auto& w) { w.w_k = nullptr; }), "w_k is null");
  expect_rejects([&] { decoder_block(Storage::f32, nullptr, b.w, y.data(), b.args); }, "x is null");
  expect_rejects([&] { decoder_block(Storage::f32, x, b.w, nullptr, b.args); }, "y is null");
  // olmo2 has no pre-sublayer norms: their pointers may stay null.
  EXPECT_EQ(b.w.attn_norm, nullptr);
  EXPECT_NO_THROW(with([](auto&, auto&) {})());
}

}  // namespace
}  // namespace lmo::fast
