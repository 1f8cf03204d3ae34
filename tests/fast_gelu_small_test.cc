// GeluF's exponential-free form for |x| ≤ 3 (GeluSmallF, fast/math-inl.h), on every compiled
// target the CPU supports, against GELU(x) = x·erfc(−x/√2)/2 in long double (erfcl: its error is
// far below an f32 ulp; the argument's rounding in long double costs κ·2^-64): within the
// measured bounds of the error analysis (1.5 ulp for x > 0, 7.5 for x < 0) and within half the
// policy's allowance (4 ulp plus 2u·κ, oracle/policy_table.cc "gelu") over every 127th f32 of
// [−3, 3]; the boundary ±3 itself; and each lane's value independent of its neighbours: a lane
// of a vector that mixes both forms (|x| > 3, ±inf and NaN beside |x| ≤ 3) gets the bits it gets
// in a vector of its own kind.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/fast_gelu_small_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <cstddef>

#include "fast/math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {

// y[i] = GELU(x[i]) for i < n, n a multiple of 16 (every target's lanes divide it), by GeluF.
void GeluVectors(const float* x, float* y, size_t n) {
  const hn::ScalableTag<float> d;
  for (size_t i = 0; i < n; i += hn::Lanes(d)) {
    hn::StoreU(GeluF(d, hn::LoadU(d, x + i)), d, y + i);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "fast/target_scope.h"
#include "fast/targets.h"

namespace lmo::fast {
HWY_EXPORT(GeluVectors);
namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

std::vector<float> run(std::vector<float> x) {
  while (x.size() % 16 != 0) x.push_back(0.0f);
  std::vector<float> y(x.size());
  HWY_DYNAMIC_DISPATCH(GeluVectors)(x.data(), y.data(), x.size());
  return y;
}

long double gelu(float x) {
  return static_cast<long double>(x) * std::erfc(-static_cast<long double>(x) / std::sqrt(2.0L)) /
         2;
}

// erfc's condition at a = −x/√2 (oracle/ops/activations.cc activation_condition).
long double kappa(float x) {
  const long double a = -static_cast<long double>(x) / std::sqrt(2.0L);
  const long double pi = 3.141592653589793238462643383279502884L;
  return std::fabs(a) * 2 * std::exp(-a * a) / (std::sqrt(pi) * std::erfc(a));
}

// The ulp of f32 at the (normal or subnormal) value v.
long double ulp_at(long double v) {
  const long double a = std::fabs(v);
  if (a < std::ldexp(1.0L, -126)) return std::ldexp(1.0L, -149);
  return std::ldexp(1.0L, std::ilogb(a) - 23);
}

// Every 127th f32 from 0 up to 3 (127 is odd: every significand residue), both signs.
std::vector<float> small_inputs() {
  std::vector<float> x;
  for (uint32_t u = 0; u <= 0x40400000u; u += 127) {
    x.push_back(from_bits(u));
    x.push_back(from_bits(u | 0x80000000u));
  }
  return x;
}

TEST(FastGeluSmall, WithinTheMeasuredBoundsAndHalfThePolicyOnEveryTarget) {
  std::vector<float> x = small_inputs();
  for (float b : {3.0f, -3.0f, std::nextafter(3.0f, 0.0f), std::nextafter(-3.0f, 0.0f)}) {
    x.push_back(b);
  }
  for (const SimdTarget& t : compiled_targets()) {
    if (!t.supported) continue;
    ScopedTarget scope(t);
    const std::vector<float> y = run(x);
    double worst_pos = 0, worst_neg = 0, worst_share = 0;
    float at_pos = 0, at_neg = 0, at_share = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const long double exact = gelu(x[i]);
      if (exact == 0) {
        EXPECT_EQ(y[i], 0.0f) << t.name << " x = " << x[i];
        EXPECT_EQ(std::signbit(y[i]), std::signbit(x[i])) << t.name << " x = " << x[i];
        continue;
      }
      const long double ulp = ulp_at(exact);
      const double err = static_cast<double>(std::fabs(y[i] - exact) / ulp);
      // The policy's allowance: 4 ulp plus ⌈2u·κ·|GELU(x)|/ulp⌉ (oracle/judge.cc).
      const double allowance =
          4 + std::ceil(static_cast<double>(2 * kappa(x[i]) * std::ldexp(1.0L, -24) *
                                            std::fabs(exact) / ulp));
      if (x[i] > 0 && err > worst_pos) worst_pos = err, at_pos = x[i];
      if (x[i] < 0 && err > worst_neg) worst_neg = err, at_neg = x[i];
      if (err / allowance > worst_share) worst_share = err / allowance, at_share = x[i];
    }
    std::printf("%s: x > 0 %.3f ulp (x = %.9g), x < 0 %.3f ulp (x = %.9g), %.3f of the policy\n",
                t.name.c_str(), worst_pos, at_pos, worst_neg, at_neg, worst_share);
    EXPECT_LE(worst_pos, 1.5) << t.name << ": at x = " << at_pos;
    EXPECT_LE(worst_neg, 7.5) << t.name << ": at x = " << at_neg;
    EXPECT_LE(worst_share, 0.5) << t.name << ": at x = " << at_share;
  }
}

// In-range values (both signs, ±0, a subnormal) and out-of-range ones (|x| > 3, ±inf, NaN):
// each lane of a mixed vector must carry the bits of the same value in an unmixed vector.
TEST(FastGeluSmall, EachLaneIndependentOfItsNeighbours) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> in = {-2.9f, 0.3f, -0.0f, 1.7f, -1e-40f, 3.0f, -3.0f, 2.5f};
  const std::vector<float> out = {3.5f, -7.0f, inf, -inf, nan, -3.0000002f, 15.0f, -20.0f};
  std::vector<float> mixed, in_only, out_only;
  for (size_t r = 0; r < 16; ++r) {  // every phase of the two kinds against the lanes
    for (size_t i = 0; i < in.size(); ++i) {
      const bool take_in = ((i + r) % 3) != 0;
      mixed.push_back(take_in ? in[i] : out[i]);
      in_only.push_back(in[i]);
      out_only.push_back(out[i]);
    }
  }
  for (const SimdTarget& t : compiled_targets()) {
    if (!t.supported) continue;
    ScopedTarget scope(t);
    const std::vector<float> ym = run(mixed), yi = run(in_only), yo = run(out_only);
    for (size_t k = 0; k < mixed.size(); ++k) {
      const float& want = std::memcmp(&mixed[k], &in_only[k], sizeof(float)) == 0 ? yi[k] : yo[k];
      EXPECT_EQ(std::memcmp(&ym[k], &want, sizeof(float)), 0)
          << t.name << " lane " << k << " x = " << mixed[k] << ": " << ym[k] << " vs " << want;
    }
  }
}

}  // namespace
}  // namespace lmo::fast
#endif  // HWY_ONCE
