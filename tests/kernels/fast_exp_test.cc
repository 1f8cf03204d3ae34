// ExpNonPosTimes2Pow64F (fast/math-inl.h), the exponential of the softmax, log-sum-exp and
// cross-entropy kernels, on every compiled target the CPU supports, against std::exp in double
// (its error is below 1 ulp of double, 2^-29 of an f32 ulp): within 1.01 ulp of e^x·2^64 over a
// stride through every f32 in [−128, 0] (an exhaustive run over all 1.1·10^9 of them measured
// 1.006 ulp on the code of a target without FMA, where Highway's Exp measured 1.032), exact at 0
// (the row maximum's own term must be exactly 2^64), and the clamp below −128 (−inf included)
// giving a normal value far below any term that matters next to a sum ≥ 2^64. Its lockstep form
// (fast/exp_lockstep-inl.h, what the kernels run on four vectors at a time) gives the same values
// bit for bit.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/kernels/fast_exp_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <cstddef>

#include "fast/exp_lockstep-inl.h"
#include "fast/math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {

// y[i] = e^{x[i]}·2^64 for i < n, n a multiple of 64 (four vectors of every target's lanes
// divide it): one vector at a time, or (lockstep) four at a time through
// ExpNonPosTimes2Pow64Lockstep, the form the softmax kernels run.
void ScaledExp(const float* x, float* y, size_t n, bool lockstep) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  if (lockstep) {
    for (size_t i = 0; i < n; i += 4 * N) {
      hn::Vec<decltype(d)> v[4];
      for (size_t k = 0; k < 4; ++k) v[k] = hn::LoadU(d, x + i + k * N);
      ExpNonPosTimes2Pow64Lockstep(d, v);
      for (size_t k = 0; k < 4; ++k) hn::StoreU(v[k], d, y + i + k * N);
    }
    return;
  }
  for (size_t i = 0; i < n; i += N) {
    hn::StoreU(ExpNonPosTimes2Pow64F(d, hn::LoadU(d, x + i)), d, y + i);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "fast/target_scope.h"
#include "fast/targets.h"

namespace lmo::fast {
HWY_EXPORT(ScaledExp);
namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

std::vector<float> run(const std::vector<float>& x, bool lockstep = false) {
  std::vector<float> y(x.size());
  HWY_DYNAMIC_DISPATCH(ScaledExp)(x.data(), y.data(), x.size(), lockstep);
  return y;
}

// Every 61st f32 from −0 down to −128 (61 is odd, so every significand residue is visited),
// padded to a multiple of 64.
std::vector<float> stride_inputs() {
  std::vector<float> x;
  for (uint32_t u = 0x80000000u; u <= 0xC3000000u; u += 61) x.push_back(from_bits(u));
  while (x.size() % 64 != 0) x.push_back(-128.0f);
  return x;
}

TEST(FastExp, ScaledExpWithinAnUlpOnEveryTarget) {
  const std::vector<float> x = stride_inputs();
  for (const SimdTarget& t : compiled_targets()) {
    if (!t.supported) continue;
    ScopedTarget scope(t);
    const std::vector<float> y = run(x);
    double worst = 0;
    float worst_x = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double exact = std::ldexp(std::exp(static_cast<double>(x[i])), 64);
      const double ulp = std::ldexp(1.0, std::ilogb(exact) - 23);
      const double err = std::fabs(static_cast<double>(y[i]) - exact) / ulp;
      if (err > worst) {
        worst = err;
        worst_x = x[i];
      }
    }
    EXPECT_LE(worst, 1.01) << t.name << ": at x = " << worst_x;
  }
}

// The lockstep form runs the same operations on every lane: the same values, bit for bit, over
// the stride and the special inputs.
TEST(FastExp, LockstepIsBitForBitTheOneVectorForm) {
  std::vector<float> x = stride_inputs();
  const float ninf = -std::numeric_limits<float>::infinity();
  for (float v : {0.0f, -0.0f, -1000.0f, -3e38f, ninf}) x.push_back(v);
  while (x.size() % 64 != 0) x.push_back(-1.0f);
  for (const SimdTarget& t : compiled_targets()) {
    if (!t.supported) continue;
    ScopedTarget scope(t);
    const std::vector<float> a = run(x), b = run(x, true);
    size_t differ = 0;
    for (size_t i = 0; i < x.size(); ++i) differ += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
    EXPECT_EQ(differ, 0u) << t.name;
  }
}

TEST(FastExp, ScaledExpExactAtZeroAndClampedBelow) {
  const float ninf = -std::numeric_limits<float>::infinity();
  std::vector<float> x = {0.0f, -0.0f, -128.0f, -1000.0f, -3e38f, ninf};
  x.resize(64, 0.0f);
  for (const SimdTarget& t : compiled_targets()) {
    if (!t.supported) continue;
    ScopedTarget scope(t);
    const std::vector<float> y = run(x);
    EXPECT_EQ(y[0], 0x1p64f) << t.name;
    EXPECT_EQ(y[1], 0x1p64f) << t.name;
    // e^{−128}·2^64 ≈ 4.6e-37: normal, and below 2^-150 of any sum ≥ 2^64.
    const double at_clamp = std::ldexp(std::exp(-128.0), 64);
    for (size_t i = 2; i < 6; ++i) {
      EXPECT_NEAR(y[i], at_clamp, at_clamp * 1e-6) << t.name << " x = " << x[i];
      EXPECT_GE(y[i], std::numeric_limits<float>::min()) << t.name << " x = " << x[i];
    }
  }
}

}  // namespace
}  // namespace lmo::fast
#endif  // HWY_ONCE
