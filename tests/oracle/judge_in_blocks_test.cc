// `check` and `verify` of an op with independent rows in blocks of rows (oracle/judge/
// judging.h's blocked path (check and verify): what makes cross-entropy at 4096 × 128256 fit
// in memory) give the verdicts of the whole op judged at once: pass or fail, failure counts by
// reason, the first failure and its message, the metrics and their worst element, the naive bound.
// The kernel outputs are a naive f32 run rounded to the output formats, as is and with planted
// errors (a relative error of 2^-5 in scattered elements, a NaN) in several blocks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "oracle/cases/case.h"
#include "oracle/cases/case_inputs.h"
#include "oracle/core/certified.h"
#include "oracle/core/row_slice.h"
#include "oracle/check/check.h"
#include "oracle/golden/golden.h"
#include "oracle/golden/safetensors.h"
#include "oracle/judge/judge.h"
#include "reference/ball.h"
#include "reference/double_double.h"
#include "tests/support/oracle_harness.h"
#include "tests/support/same_verdict.h"
#include "tests/support/splitmix.h"

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

// The NMSE's sums are merged as wholes (MetricsAccumulator::merge).
void expect_same_verdict(const Verdict& a, const Verdict& b, const std::string& at) {
  testing::expect_same_verdict(a, b, at, 1e-12);
}

void expect_same_report(const CheckReport& whole, const CheckReport& blocked,
                        const std::string& what) {
  EXPECT_EQ(whole.pass, blocked.pass) << what;
  ASSERT_EQ(whole.outputs.size(), blocked.outputs.size()) << what;
  for (size_t k = 0; k < whole.outputs.size(); ++k) {
    const CheckedOutput& a = whole.outputs[k];
    const CheckedOutput& b = blocked.outputs[k];
    const std::string at = what + ", out." + a.name;
    expect_same_verdict(a.verdict, b.verdict, at);
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

// check judges each block against the maximum of the blocks so far, which is at most the whole
// tensor's (check.cc): an element of the first row whose error lies between twice that row's
// max|naive − x| and twice the tensor's fails there at first and must pass in the end, as it does
// in the whole check.
TEST(CheckBlocks, AnErrorWithinTheWholeBoundButBeyondTheFirstBlocksPasses) {
  const Case c = parse_case(nlohmann::json::parse(R"({"id": "ce", "op": "cross_entropy",
      "seed": 78, "formats": ["f32"], "params": {"rows": 8, "vocab": 200, "z_loss": 0.0001}})"),
                            "<check_blocks_test>", "case");
  const std::unique_ptr<Op> op = make_op(c);
  const InputSet in = make_inputs(c, *op, ref::Format::f32);
  const Outputs<ref::mp> exact = exact_outputs(*op, in);
  const Outputs<double> naive = op->simulated(ref::Format::f32, in);
  const size_t k = 2;  // grad, judged as one group
  const std::span<const mp> x = exact[k].values;
  const std::span<const double> y = naive[k].values;
  int64_t excluded = 0;
  const mp first = naive_max_error(x.subspan(0, 200), y.subspan(0, 200), excluded);
  const mp whole = naive_max_error(x, y, excluded);
  ASSERT_GT(whole, first * 1.5) << "the seed must give row 0 a smaller error than the tensor's";
  size_t j = 0;  // row 0's smallest |x|: f32's rounding of x + first + whole is exact enough
  for (size_t i = 1; i < 200; ++i) {
    if (abs(x[i]) < abs(x[j])) j = i;
  }
  std::map<std::string, ref::Tensor> outs = kernel_outputs(c, 0, -1);
  outs.at("grad").set(static_cast<int64_t>(j), static_cast<double>(x[j] + first + whole));
  set_row_block_elements_for_testing(int64_t{1} << 40);
  const CheckReport one = check_outputs(c, outs, {});
  set_row_block_elements_for_testing(202);  // one row a block
  const CheckReport blocks = check_outputs(c, outs, {});
  set_row_block_elements_for_testing(int64_t{1} << 22);
  EXPECT_TRUE(one.pass);
  expect_same_report(one, blocks, "one row a block");
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

// verify: the backends' rows judged in blocks equal run_and_judge's on the whole op, for a
// correct kernel (the naive f32 run), one with errors in late rows, one that leaves an element
// unwritten (the poison) and one that throws.
TEST(VerifyBlocks, BlocksOfRowsGiveRunAndJudgesRows) {
  const char* cases[] = {
      R"({"id": "ce", "op": "cross_entropy", "seed": 81, "formats": ["bf16"],
          "params": {"rows": 7, "vocab": 300, "z_loss": 0.0001, "softcap": 30}})",
      R"({"id": "rmsnorm", "op": "rmsnorm", "seed": 82, "formats": ["f16"],
          "params": {"rows": 9, "d": 130, "eps": 1e-5}})",
      R"({"id": "silu", "op": "silu", "seed": 83, "formats": ["bf16"], "params": {"n": 2000}})"};
  for (const char* text : cases) {
    testing::Harness h(nlohmann::json::parse(text), ref::Format::f32);
    const Op& op = h.op();
    const auto naive = [](const RunContext& x) { return x.simulated(ref::Format::f32); };
    const auto late_errors = [](const RunContext& x) {
      Outputs<double> o = x.simulated(ref::Format::f32);
      for (OutputValues<double>& v : o) {
        for (size_t i = v.values.size() * 2 / 3; i < v.values.size(); i += 41) v.values[i] *= 1.05;
      }
      return o;
    };
    const auto throws = [](const RunContext&) -> Outputs<double> {
      throw std::runtime_error("no kernel");
    };
    std::vector<std::unique_ptr<testing::FnBackend>> owned;
    owned.push_back(std::make_unique<testing::FnBackend>("naive", naive));
    owned.push_back(std::make_unique<testing::FnBackend>("late-errors", late_errors));
    owned.push_back(std::make_unique<testing::FnBackend>("throws", throws));
    std::vector<Backend*> backends;
    for (const auto& b : owned) backends.push_back(b.get());
    // Stores the naive run but for the last output's element 5 (or last) of its last row, left
    // poisoned,
    // and one byte past the end of the first output (the guard).
    class Sloppy : public Backend {
     public:
      std::string name() const override { return "sloppy"; }
      std::string description() const override { return "test kernel"; }
      std::string unsupported(const Case&, const Op&, ref::Format) const override { return ""; }
      void run(const RunContext& x, std::vector<GuardedBuffer>& out) override {
        std::vector<uint8_t> keep(8);
        GuardedBuffer& last = out.back();
        const size_t size = ref::dtype_size(last.dtype());
        const auto per_row = static_cast<size_t>(last.numel() / x.op.independent_rows());
        const size_t at =
            (static_cast<size_t>(last.numel()) - per_row + std::min<size_t>(5, per_row - 1)) * size;
        std::memcpy(keep.data(), static_cast<uint8_t*>(last.data()) + at, size);
        store_outputs(x.simulated(ref::Format::f32), out);
        std::memcpy(static_cast<uint8_t*>(last.data()) + at, keep.data(), size);
        static_cast<uint8_t*>(out.front().data())[out.front().nbytes()] ^= 1;
      }
    } sloppy;
    backends.push_back(&sloppy);
    set_row_block_elements_for_testing(int64_t{1} << 40);
    // The exact values as verify gets them (the certified path: ball midpoints where they
    // decide), not the harness's MPFR ones, whose last digits differ.
    const ref::Format storage = h.storage();
    std::optional<Outputs<ref::mp>> exact;
    std::map<ref::Format, Outputs<double>> sims;
    const RunContext x{h.c(),
                       op,
                       storage,
                       h.inputs(),
                       [&]() -> const Outputs<ref::mp>& {
                         if (!exact) exact = exact_outputs(op, h.inputs(), {&storage, 1});
                         return *exact;
                       },
                       [&](ref::Format f) -> const Outputs<double>& {
                         auto it = sims.find(f);
                         if (it == sims.end())
                           it = sims.emplace(f, op.simulated(f, h.inputs())).first;
                         return it->second;
                       }};
    std::vector<VerifyRow> whole;
    for (Backend* b : backends) whole.push_back(run_and_judge(h.c(), op, storage, *b, x));
    int64_t total = 0;
    for (const OutputDecl& d : op.outputs()) total += ref::checked_numel(d.shape);
    for (const int64_t block : {int64_t{1}, total / 3}) {
      set_row_block_elements_for_testing(block);
      const int64_t block_rows = rows_per_block(op, op.outputs());
      ASSERT_GT(block_rows, 0) << h.c().id;
      const std::vector<VerifyRow> blocked =
          run_and_judge(h.c(), op, storage, backends, x, nullptr, block_rows);
      ASSERT_EQ(blocked.size(), whole.size());
      for (size_t r = 0; r < whole.size(); ++r) {
        const std::string what = h.c().id + ", " + whole[r].backend + ", blocks of " +
                                 std::to_string(block) + " elements";
        EXPECT_EQ(whole[r].backend, blocked[r].backend) << what;
        EXPECT_EQ(whole[r].pass, blocked[r].pass) << what;
        EXPECT_EQ(whole[r].max_ulps, blocked[r].max_ulps) << what;
        EXPECT_EQ(whole[r].max_rel, blocked[r].max_rel) << what;
        // The diagnosis is ranked on the failure's block, not the whole op.
        const auto first = [](const std::string& d) { return d.substr(0, d.find(" (diagnosis:")); };
        EXPECT_EQ(first(whole[r].detail), first(blocked[r].detail)) << what;
        ASSERT_EQ(whole[r].outputs.size(), blocked[r].outputs.size()) << what;
        for (size_t k = 0; k < whole[r].outputs.size(); ++k) {
          expect_same_verdict(whole[r].outputs[k].verdict, blocked[r].outputs[k].verdict,
                              what + ", out." + whole[r].outputs[k].name);
        }
      }
      EXPECT_TRUE(blocked[0].pass) << h.c().id << ": " << blocked[0].detail;
      EXPECT_FALSE(blocked[1].pass) << h.c().id;
      EXPECT_FALSE(blocked[2].pass) << h.c().id;
      EXPECT_EQ(blocked[3].outputs.back().verdict.count(FailReason::kUnwritten), 1) << h.c().id;
      EXPECT_EQ(blocked[3].outputs.front().verdict.reason, FailReason::kOverrun) << h.c().id;
    }
  }
  set_row_block_elements_for_testing(int64_t{1} << 22);
}

// The first pass on balls (judge.h, naive_max_error on ref::Ball) gives the maximum and the count
// left out that the mp midpoints give, bit for bit: midpoints of every magnitude with and without
// low words, naive values near and far, equal to the high word, non-finite ends, and near-ties
// (two elements whose errors differ by one unit of the low word only).
TEST(NaiveMaxOnBalls, SameMaximumAsTheMidpointsInMp) {
  testing::SplitMix64 g{29};
  for (int trial = 0; trial < 60; ++trial) {
    std::vector<ref::Ball> balls;
    std::vector<double> naive;
    const int n = 1 + static_cast<int>(g.next() % 3000);
    for (int i = 0; i < n; ++i) {
      const double hi = std::ldexp(g.unit() - 0.5, static_cast<int>(g.next() % 80) - 60);
      const double lo = g.next() % 4 == 0 ? 0.0 : std::ldexp(g.unit() - 0.5, std::ilogb(hi) - 53);
      const ref::dd::DD m = ref::dd::fast_two_sum(hi, lo);
      balls.push_back(ref::Ball::from_parts(m.hi, m.lo, std::fabs(m.hi) * 0x1p-100));
      double y = static_cast<double>(static_cast<float>(m.hi));
      switch (g.next() % 6) {
        case 0:
          y = m.hi;
          break;
        case 1:
          y = m.hi * (1 + g.unit());
          break;
        case 2:
          y = std::nextafter(m.hi, 1.0);
          break;
        case 3:
          if (trial % 5 == 0) y = std::numeric_limits<double>::infinity();
          break;
        default:
          break;
      }
      naive.push_back(y);
    }
    if (trial % 7 == 0) {  // an exact value not finite
      balls[0] = ref::Ball::from_parts(std::numeric_limits<double>::infinity(), 0, 0);
    }
    if (trial % 3 == 0 && n > 2) {  // a near-tie at the top: the same error but for a low word
      naive[1] = 1e30;
      naive[2] = 1e30;
      balls[1] = ref::Ball::from_parts(1.0, 0x1p-60, 0x1p-100);
      balls[2] = ref::Ball::from_parts(1.0, 0x1p-61, 0x1p-100);
    }
    std::vector<mp> mids;
    for (const ref::Ball& b : balls) mids.push_back(ref::to_mp(b));
    int64_t out_mp = 0, out_balls = 0;
    const mp want = naive_max_error(mids, naive, out_mp);
    const mp got = naive_max_error(balls, naive, out_balls);
    ASSERT_EQ(got, want) << "trial " << trial;
    ASSERT_EQ(out_balls, out_mp) << "trial " << trial;
  }
}

}  // namespace
}  // namespace lmo::oracle
