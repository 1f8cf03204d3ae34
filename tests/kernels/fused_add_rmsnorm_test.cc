// The fused residual add + RMSNorm kernel of one kernel library (tests/support/kernel_libraries.h:
// fast/ on every Highway target, or gpu/) on every storage, at widths with and without a vector
// tail (and below, at and above a CUDA block's 256 threads), judged by the op's policies
// (check_outputs: the exact reference and the policy table); the residual updated in place; the
// library's repeatability check (thread counts, or a second run on the device); argument
// validation, which holds on any machine.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "oracle/cases/case.h"
#include "oracle/check/check.h"
#include "tests/support/fast_cases.h"
#include "tests/support/kernel_libraries.h"

namespace lmo::testdata {
namespace {

using fast::Storage;

oracle::Case fused_case(ref::Format f, int64_t rows, int64_t d, double eps, uint64_t seed) {
  return oracle::parse_case({{"id", "fused"},
                             {"op", "fused_add_rmsnorm"},
                             {"seed", seed},
                             {"formats", {std::string(ref::format_name(f))}},
                             {"params", {{"rows", rows}, {"d", d}, {"eps", eps}}}},
                            "fused_add_rmsnorm_test", "case");
}

template <class Lib>
class KernelFusedAddRmsnorm : public ::testing::Test {};
TYPED_TEST_SUITE(KernelFusedAddRmsnorm, TestedKernels);

TYPED_TEST(KernelFusedAddRmsnorm, EveryStorageAndWidth) {
  LMO_REQUIRE_KERNELS(TypeParam);
  constexpr int64_t kRows = 3;
  for (Storage s : fast::kAllStorages) {
    const ref::Format f = format_of(s);
    for (int64_t d : {1, 7, 64, 256, 257, 7168 + 3}) {
      const oracle::Case c = fused_case(f, kRows, d, 1e-6, 40 + static_cast<uint64_t>(d));
      const oracle::InputSet in = oracle::reference_inputs(c, f);
      oracle::GuardedBuffer h(ref::format_dtype(f), {kRows, d}),
          y(ref::format_dtype(f), {kRows, d});
      const auto run = [&](const void* residual, void* residual_out) {
        y.arm();
        TypeParam::fused_add_rmsnorm(s, in.at("x").bytes().data(), residual,
                                     in.at("gamma").bytes().data(), residual_out, y.data(), kRows,
                                     d, 1e-6f);
      };
      const std::string where = std::string(fast::storage_name(s)) + " d=" + std::to_string(d);
      TypeParam::for_each_variant([&](const std::string& variant) {
        h.arm();
        run(in.at("residual").bytes().data(), h.data());
        std::map<std::string, ref::Tensor> outs;
        outs.emplace("residual", h.tensor());
        outs.emplace("y", y.tensor());
        const oracle::CheckReport r = oracle::check_outputs(c, outs);
        EXPECT_TRUE(r.pass) << variant << " " << where << "\n" << to_text(r);
        // In place: the residual buffer holds the inputs' residual and receives x + r.
        ref::Tensor inplace = in.at("residual");
        const ref::Tensor y_first = y.tensor();
        run(inplace.bytes().data(), inplace.bytes().data());
        EXPECT_EQ(inplace, outs.at("residual")) << variant << " " << where;
        EXPECT_EQ(y.tensor(), y_first) << variant << " " << where;
      });
      TypeParam::expect_repeatable(
          [&] {
            h.arm();
            run(in.at("residual").bytes().data(), h.data());
            return bytes_of({&h, &y});
          },
          "fused_add_rmsnorm " + where);
    }
  }
}

// Validation happens before any kernel runs (before any CUDA call), so it holds on every machine.
TYPED_TEST(KernelFusedAddRmsnorm, Validation) {
  float x[4] = {1, 2, 3, 4}, r[4] = {0, 1, 0, 1}, y[4];
  const Storage f = Storage::f32;
  EXPECT_THROW(TypeParam::fused_add_rmsnorm(f, x, r, x, r, y, -1, 4, 0.0f), std::invalid_argument);
  EXPECT_THROW(TypeParam::fused_add_rmsnorm(f, x, r, x, r, y, 1, 0, 0.0f), std::invalid_argument);
  EXPECT_THROW(TypeParam::fused_add_rmsnorm(f, x, r, x, r, y, 1, 4, -1.0f), std::invalid_argument);
  EXPECT_THROW(TypeParam::fused_add_rmsnorm(f, x, nullptr, x, r, y, 1, 4, 0.0f),
               std::invalid_argument);
  EXPECT_THROW(TypeParam::fused_add_rmsnorm(f, x, r, x, nullptr, y, 1, 4, 0.0f),
               std::invalid_argument);
  EXPECT_THROW(TypeParam::fused_add_rmsnorm(static_cast<Storage>(7), x, r, x, r, y, 1, 4, 0.0f),
               std::invalid_argument);
  EXPECT_NO_THROW(
      TypeParam::fused_add_rmsnorm(f, nullptr, nullptr, nullptr, nullptr, nullptr, 0, 4, 0.0f));
}

}  // namespace
}  // namespace lmo::testdata
