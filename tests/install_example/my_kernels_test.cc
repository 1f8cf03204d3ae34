// A kernel author's tests, built against the installed package: a scalar RMSNorm "kernel" that
// computes in f32 and rounds once to bf16 at the store passes EXPECT_MATCHES_REFERENCE on a
// built-in case; the same kernel storing by truncation (a classic bf16 bug) is caught.
#include <gtest/gtest-spi.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>

#include "oracle/check/gtest_reference.h"

namespace {

using lmo::ref::Tensor;

// bf16 from f32: round to nearest-even (correct) or chop the low half (the bug).
uint16_t to_bf16(float v, bool truncate) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  if (!truncate && !std::isnan(v)) u += 0x7FFF + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

// The kernel under test: y = x / sqrt(mean(x²) + ε) · γ per row, f32 arithmetic, f64 sum.
Tensor my_rmsnorm(const Tensor& x, const Tensor& gamma, float eps, bool truncate) {
  const int64_t rows = x.shape()[0], d = x.shape()[1];
  Tensor y(lmo::ref::DType::bf16, x.shape());
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < d; ++i) ss += x.get(r * d + i) * x.get(r * d + i);
    const float inv = 1.0f / std::sqrt(static_cast<float>(ss / d) + eps);
    for (int64_t i = 0; i < d; ++i) {
      const float v = static_cast<float>(x.get(r * d + i)) * inv * static_cast<float>(gamma.get(i));
      y.set_bits(r * d + i, to_bf16(v, truncate));
    }
  }
  return y;
}

constexpr const char* kCase = "rmsnorm/tiny-rows";  // rows 16, d 64, ε = 1e-6

TEST(MyKernels, RmsNormMatchesTheReference) {
  const lmo::oracle::InputSet in = lmo::oracle::reference_inputs(kCase, "bf16");
  std::map<std::string, Tensor> out;
  out.emplace("y", my_rmsnorm(in.at("x"), in.at("gamma"), 1e-6f, false));
  EXPECT_MATCHES_REFERENCE(kCase, out);
}

TEST(MyKernels, TruncatingStoreIsCaught) {
  const lmo::oracle::InputSet in = lmo::oracle::reference_inputs(kCase, "bf16");
  std::map<std::string, Tensor> out;
  out.emplace("y", my_rmsnorm(in.at("x"), in.at("gamma"), 1e-6f, true));
  EXPECT_NONFATAL_FAILURE(EXPECT_MATCHES_REFERENCE(kCase, out), "elements fail");
}

TEST(MyKernels, MissingOutputIsReported) {
  EXPECT_NONFATAL_FAILURE(EXPECT_MATCHES_REFERENCE(kCase, (std::map<std::string, Tensor>{})),
                          "missing");
}

// The package's own copy of the cases is used, not the source tree it was built from.
TEST(MyKernels, CasesComeFromTheInstalledPackage) {
  EXPECT_NE(lmo::oracle::reference_cases_dir(), lmo::oracle::builtin_cases_dir());
  EXPECT_EQ(lmo::oracle::find_case(kCase, lmo::oracle::reference_cases_dir()).op, "rmsnorm");
}

}  // namespace
