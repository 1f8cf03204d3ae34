// `check` of an op with independent rows in blocks of rows (golden/check.cc,
// judge_outputs_in_blocks: what makes cross-entropy at 4096 × 128256 fit in memory) gives the
// verdicts of the whole op judged at once: pass or fail, failure counts by reason, the first
// failure and its message, the metrics and their worst element, the naive bound. The kernel
// outputs are a naive f32 run rounded to the output formats, as is and with planted errors
// (a relative error of 2^-5 in scattered elements, a NaN) in several blocks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "oracle/core/case.h"
#include "oracle/core/case_inputs.h"
#include "oracle/core/row_slice.h"
#include "oracle/golden/check.h"
#include "oracle/golden/golden.h"
#include "oracle/golden/safetensors.h"

namespace lmo::oracle {
namespace {

// The naive f32 run's outputs rounded to their formats; every `stride`-th element of each
// output multiplied by 1 + 2^-5 (stride 0: none), and element `nan_at` of the last output NaN.
std::map<std::string, ref::Tensor> kernel_outputs(const Case& c, int64_t stride, int64_t nan_at) {
  const std::unique_ptr<Op> op = make_op(c);
  const ref::Format f = c.formats.front();
  const InputSet in = make_inputs(c, *op, f);
  const Outputs<double> naive = op->simulated(ref::Format::f32, in);
  const std::vector<OutputDecl> decls = op->outputs();
  std::map<std::string, ref::Tensor> out;
  for (size_t k = 0; k < decls.size(); ++k) {
    ref::Tensor t(ref::format_dtype(output_format(decls[k], f)), decls[k].shape);
    for (int64_t i = 0; i < t.numel(); ++i) {
      double v = naive[k].values[static_cast<size_t>(i)];
      if (stride > 0 && i % stride == stride / 2) v *= 1 + std::ldexp(1.0, -5);
      if (k + 1 == decls.size() && i == nan_at) v = NAN;
      t.set(i, v);
    }
    out.emplace(decls[k].name, std::move(t));
  }
  return out;
}

void expect_same_report(const CheckReport& whole, const CheckReport& blocked,
                        const std::string& what) {
  EXPECT_EQ(whole.pass, blocked.pass) << what;
  ASSERT_EQ(whole.outputs.size(), blocked.outputs.size()) << what;
  for (size_t k = 0; k < whole.outputs.size(); ++k) {
    const CheckedOutput& a = whole.outputs[k];
    const CheckedOutput& b = blocked.outputs[k];
    const std::string at = what + ", out." + a.name;
    EXPECT_EQ(a.verdict.pass, b.verdict.pass) << at;
    EXPECT_EQ(a.verdict.reason, b.verdict.reason) << at;
    EXPECT_EQ(a.verdict.first_index, b.verdict.first_index) << at;
    EXPECT_EQ(a.verdict.detail, b.verdict.detail) << at;
    EXPECT_EQ(a.verdict.elements, b.verdict.elements) << at;
    EXPECT_EQ(a.verdict.failed, b.verdict.failed) << at;
    EXPECT_EQ(a.verdict.by_reason, b.verdict.by_reason) << at;
    EXPECT_EQ(a.verdict.forgiven, b.verdict.forgiven) << at;
    EXPECT_EQ(a.verdict.naive_bound, b.verdict.naive_bound) << at;
    EXPECT_EQ(a.verdict.naive_excluded, b.verdict.naive_excluded) << at;
    EXPECT_EQ(a.verdict.metrics.compared, b.verdict.metrics.compared) << at;
    EXPECT_EQ(a.verdict.metrics.max_ulps, b.verdict.metrics.max_ulps) << at;
    EXPECT_EQ(a.verdict.metrics.max_ulps_index, b.verdict.metrics.max_ulps_index) << at;
    EXPECT_TRUE(a.verdict.metrics.max_abs == b.verdict.metrics.max_abs) << at;
    EXPECT_TRUE(a.verdict.metrics.max_rel == b.verdict.metrics.max_rel) << at;
    EXPECT_EQ(a.verdict.metrics.min_significant_bits, b.verdict.metrics.min_significant_bits) << at;
    // The NMSE's sums are merged as wholes (MetricsAccumulator::merge).
    EXPECT_NEAR(a.verdict.metrics.nmse, b.verdict.metrics.nmse,
                1e-12 * std::fabs(a.verdict.metrics.nmse))
        << at;
    EXPECT_EQ(a.worst_index, b.worst_index) << at;
    EXPECT_EQ(a.worst_actual, b.worst_actual) << at;
    EXPECT_EQ(a.worst_expected, b.worst_expected) << at;
    EXPECT_EQ(a.worst_ulps, b.worst_ulps) << at;
    EXPECT_EQ(a.bound, b.bound) << at;
  }
}

TEST(CheckBlocks, BlocksOfRowsGiveTheWholeOpsVerdicts) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("lmo_check_blocks_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path golden_file = dir / "golden.safetensors";
  const std::filesystem::path actual_file = dir / "actual.safetensors";
  const char* cases[] = {
      // Every output judged as one group: the two-pass bound.
      R"({"id": "ce", "op": "cross_entropy", "seed": 71, "formats": ["bf16"],
          "params": {"rows": 7, "vocab": 300, "z_loss": 0.0001, "softcap": 30}})",
      R"({"id": "softmax", "op": "softmax", "seed": 72, "formats": ["f16"],
          "params": {"rows": 6, "n": 257}})",
      R"({"id": "rmsnorm", "op": "rmsnorm", "seed": 73, "formats": ["bf16"],
          "params": {"rows": 9, "d": 130, "eps": 1e-5}})",
      R"({"id": "rope", "op": "rope", "seed": 74, "formats": ["f32"],
          "params": {"tokens": 11, "heads": 2, "head_dim": 16, "layout": "half_split",
                     "base": 10000, "max_position": 4096}})",
      R"({"id": "gelu", "op": "gelu", "seed": 75, "formats": ["bf16"], "params": {"n": 3000}})"};
  for (const char* text : cases) {
    const Case c = parse_case(nlohmann::json::parse(text), "<check_blocks_test>", "case");
    const std::unique_ptr<Op> op = make_op(c);
    ASSERT_GT(op->independent_rows(), 1) << c.id;
    int64_t total = 0;
    for (const OutputDecl& d : op->outputs()) total += ref::checked_numel(d.shape);
    set_row_block_elements_for_testing(int64_t{1} << 40);
    write_safetensors(golden_file, golden_content(c));
    for (const int64_t stride : {int64_t{0}, int64_t{97}}) {
      for (const int64_t nan_at : {int64_t{-1}, total / 3}) {
        const std::map<std::string, ref::Tensor> outs = kernel_outputs(c, stride, nan_at);
        set_row_block_elements_for_testing(int64_t{1} << 40);
        ASSERT_EQ(rows_per_block(*op, op->outputs()), 0);
        const CheckReport whole = check_outputs(c, outs, {});
        // The same through files, as `check --golden --actual` reads them: the golden file's
        // outputs are compared with the reference block by block too.
        SafetensorsContent actual;
        for (const auto& [name, t] : outs) actual.tensors.emplace("out." + name, t);
        write_safetensors(actual_file, actual);
        const CheckReport whole_file = check_golden(golden_file, actual_file);
        expect_same_report(whole, whole_file, c.id + " from files");
        for (const int64_t block : {int64_t{1}, total / 3, total / 2}) {  // 1 row, 2, several
          set_row_block_elements_for_testing(block);
          ASSERT_GT(rows_per_block(*op, op->outputs()), 0) << c.id;
          const std::string what = c.id + ", stride " + std::to_string(stride) + ", NaN at " +
                                   std::to_string(nan_at) + ", blocks of " + std::to_string(block) +
                                   " elements";
          expect_same_report(whole, check_outputs(c, outs, {}), what);
          expect_same_report(whole, check_golden(golden_file, actual_file), what + " from files");
        }
        if (stride > 0 || nan_at >= 0) {
          EXPECT_FALSE(whole.pass) << c.id << ": planted errors";
        }
      }
    }
  }
  set_row_block_elements_for_testing(int64_t{1} << 22);
  std::filesystem::remove_all(dir);
}

// A kernel whose errors lie in one late row only: the blocked check fails it there, as the
// whole one does, and the diagnosis is taken on that row's block.
TEST(CheckBlocks, AFailureInALateBlockIsFoundAndDiagnosed) {
  const Case c = parse_case(nlohmann::json::parse(R"({"id": "ce", "op": "cross_entropy",
      "seed": 76, "formats": ["bf16"], "params": {"rows": 8, "vocab": 200, "z_loss": 0.0001}})"),
                            "<check_blocks_test>", "case");
  std::map<std::string, ref::Tensor> outs = kernel_outputs(c, 0, -1);
  ref::Tensor& grad = outs.at("grad");
  grad.set(6 * 200 + 17, grad.get(6 * 200 + 17) * 2);  // row 6
  set_row_block_elements_for_testing(2 * 202);         // blocks of 2 rows
  const CheckReport r = check_outputs(c, outs, {});
  set_row_block_elements_for_testing(int64_t{1} << 22);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.outputs.at(2).verdict.first_index, 6 * 200 + 17);
  EXPECT_EQ(r.outputs.at(2).verdict.failed, 1);
  EXPECT_TRUE(r.outputs.at(0).verdict.pass);
  EXPECT_FALSE(r.diagnosis.empty());
}

// A golden file whose outputs were edited in a late row is refused in blocks too.
TEST(CheckBlocks, AnEditedGoldenFileIsRefusedInALateBlock) {
  const Case c = parse_case(nlohmann::json::parse(R"({"id": "ce", "op": "cross_entropy",
      "seed": 77, "formats": ["bf16"], "params": {"rows": 8, "vocab": 200}})"),
                            "<check_blocks_test>", "case");
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("lmo_check_edited_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  SafetensorsContent golden = golden_content(c);
  ref::Tensor& grad = golden.tensors.at("out.grad.bf16");
  grad.set_bits(7 * 200 + 3, grad.bits(7 * 200 + 3) ^ 1);  // row 7, the last block
  write_safetensors(dir / "golden.safetensors", golden);
  SafetensorsContent actual;
  for (const auto& [name, t] : kernel_outputs(c, 0, -1)) actual.tensors.emplace("out." + name, t);
  write_safetensors(dir / "actual.safetensors", actual);
  set_row_block_elements_for_testing(2 * 202);
  EXPECT_THROW(check_golden(dir / "golden.safetensors", dir / "actual.safetensors"), InputError);
  set_row_block_elements_for_testing(int64_t{1} << 22);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lmo::oracle
