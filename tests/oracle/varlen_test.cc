// Ragged prefill ([workloads] item 2): attention over sequences packed with cu_seqlens
// (FlashAttention's varlen interface) and RoPE positions that restart per sequence or continue
// a cached prefix. Checked against independent truths: a causal packing equals the reference's
// own document mask (another code path), each sequence is isolated from the others, the fast
// kernels pass on every target, and kernels that attend across a boundary fail.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "oracle/backends/backend.h"
#include "oracle/cases/case.h"
#include "oracle/check/check.h"
#include "oracle/verify/verify.h"
#include "tests/support/oracle_harness.h"

namespace lmo::oracle {
namespace {

Case make_case(const nlohmann::json& j) { return parse_case(j, "varlen_test", "case"); }

nlohmann::json attention_json(const std::string& mask, const std::vector<int64_t>& cu,
                              int64_t window = 3) {
  nlohmann::json p = {{"h", 4}, {"g", 2}, {"d", 16}, {"tokens", cu.back()}, {"mask", mask}};
  if (!cu.empty()) p["cu_seqlens"] = cu;
  if (mask == "window") p["window"] = window;
  return {{"id", "varlen"}, {"op", "attention"}, {"seed", 5}, {"formats", {"bf16"}},
          {"params", p}};
}

TEST(Varlen, CausalPackingEqualsTheDocumentMask) {
  const std::vector<int64_t> cu = {0, 1, 9, 20, 23};
  const Case packed = make_case(attention_json("causal", cu));
  nlohmann::json doc = attention_json("document", {0, 23});
  doc["params"].erase("cu_seqlens");
  doc["params"]["doc_starts"] = std::vector<int64_t>{1, 9, 20};
  const Case documents = make_case(doc);
  const InputSet in = reference_inputs(packed, ref::Format::bf16);
  const Outputs<ref::mp> a = make_op(packed)->exact(in);
  const Outputs<ref::mp> b = make_op(documents)->exact(in);
  ASSERT_EQ(a[0].values.size(), b[0].values.size());
  for (size_t i = 0; i < a[0].values.size(); ++i) ASSERT_EQ(a[0].values[i], b[0].values[i]) << i;
}

TEST(Varlen, EachSequenceIsIsolated) {
  // Changing the last sequence's keys leaves the first sequence's outputs as they were; one
  // sequence spanning every row is plain attention.
  for (const char* mask : {"none", "window"}) {
    const Case c = make_case(attention_json(mask, {0, 7, 16}, 3));
    InputSet in = reference_inputs(c, ref::Format::bf16);
    const Outputs<ref::mp> before = make_op(c)->exact(in);
    InputSet changed;
    for (const auto& [name, t] : in.all()) {
      ref::Tensor u = t;
      if (name == "k") {
        for (int64_t i = 7 * u.shape()[1]; i < u.numel(); ++i) u.set(i, -u.get(i));
      }
      changed.add(name, u);
    }
    const Outputs<ref::mp> after = make_op(c)->exact(changed);
    const size_t first = 7 * 4 * 16;
    for (size_t i = 0; i < first; ++i) ASSERT_EQ(before[0].values[i], after[0].values[i]) << mask;
    bool moved = false;
    for (size_t i = first; i < after[0].values.size(); ++i) {
      moved = moved || before[0].values[i] != after[0].values[i];
    }
    EXPECT_TRUE(moved) << mask;
  }
  const Case one = make_case(attention_json("causal", {0, 12}));
  nlohmann::json plain = attention_json("causal", {0, 12});
  plain["params"].erase("cu_seqlens");
  const InputSet in = reference_inputs(one, ref::Format::bf16);
  EXPECT_EQ(make_op(one)->exact(in)[0].values, make_op(make_case(plain))->exact(in)[0].values);
}

TEST(Varlen, BadPackingsAreRefused) {
  for (const std::vector<int64_t>& cu :
       std::vector<std::vector<int64_t>>{{1, 12}, {0, 11}, {0, 5, 5, 12}, {0}}) {
    nlohmann::json j = attention_json("causal", {0, 12});
    j["params"]["cu_seqlens"] = cu;
    EXPECT_THROW(make_case(j), InputError);
  }
  nlohmann::json doc = attention_json("document", {0, 12});
  doc["params"]["doc_starts"] = std::vector<int64_t>{4};
  EXPECT_THROW(make_case(doc), InputError);
}

// Every kernel backend that runs the packed case passes it; the outputs of a kernel that
// ignores the packing (one causal sequence over all rows), or shifts a boundary by one, fail.
TEST(Varlen, KernelsPassAndBoundaryBugsFail) {
  const std::vector<int64_t> cu = {0, 6, 13, 30};
  const Case c = make_case(attention_json("causal", cu));
  const InputSet in = reference_inputs(c, ref::Format::bf16);
  testing::Harness h(c.source, ref::Format::bf16);
  EXPECT_GT(h.expect_kernel_backends_pass(), 0);
  for (const std::vector<int64_t>& wrong :
       std::vector<std::vector<int64_t>>{{0, 30}, {0, 7, 13, 30}, {0, 6, 12, 30}}) {
    nlohmann::json j = attention_json("causal", wrong);
    const Case bug = make_case(j);
    std::map<std::string, ref::Tensor> outs;
    const Outputs<ref::mp> y = make_op(bug)->exact(in);
    ref::Tensor t(ref::DType::bf16, {30, 64});
    for (int64_t i = 0; i < t.numel(); ++i) {
      t.set_bits(i, ref::encode(ref::Format::bf16, y[0].values[static_cast<size_t>(i)]));
    }
    outs.emplace("o", t);
    EXPECT_FALSE(check_outputs(c, outs).pass) << nlohmann::json(wrong).dump();
  }
}

TEST(Varlen, RopePositionsRestartOrContinuePerSequence) {
  const Case c = make_case({{"id", "rope"},
                            {"op", "rope"},
                            {"seed", 3},
                            {"formats", {"bf16"}},
                            {"params",
                             {{"tokens", 9},
                              {"heads", 1},
                              {"head_dim", 8},
                              {"layout", "half_split"},
                              {"max_position", 5000},
                              {"cu_seqlens", {0, 3, 9}},
                              {"position_offsets", {0, 4000}}}}});
  const InputSet in = reference_inputs(c, ref::Format::bf16);
  EXPECT_EQ(in.ints("positions"),
            (std::vector<int64_t>{0, 1, 2, 4000, 4001, 4002, 4003, 4004, 4005}));
  nlohmann::json beyond = c.source;
  beyond["params"]["position_offsets"] = {0, 4996};
  EXPECT_THROW(make_case(beyond), InputError);
  beyond["params"]["position_offsets"] = {0};
  EXPECT_THROW(make_case(beyond), InputError);
}

}  // namespace
}  // namespace lmo::oracle
