// Error metrics of the oracle (oracle/judge/metrics.h): the ULP distance against an independent count
// of representable values, the unit-in-the-last-place spacing, relative error and significant
// bits on hand-computed values, the midpoint distance, and NMSE on a small vector.
#include "oracle/judge/metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

namespace lmo::oracle {
namespace {

using ref::Format;

mp pow2(int e) { return boost::multiprecision::ldexp(mp(1), e); }

// Every non-NaN pattern of an at most 16-bit format.
std::vector<uint64_t> non_nan_patterns(Format f) {
  std::vector<uint64_t> out;
  const int bits = ref::spec(f).container_bits;
  for (uint64_t b = 0; b < (uint64_t{1} << bits); ++b) {
    if (!ref::bits_is_nan(f, b)) out.push_back(b);
  }
  return out;
}

// Ordinals agree with value order on every pattern: a < b in value ⇔ ordinal(a) < ordinal(b),
// equal values (only ±0) share an ordinal, and from_ordinal inverts ordinal (giving +0 for 0).
TEST(Ordinal, MonotoneAndInvertibleOnEveryPatternOfTheNarrowFormats) {
  for (Format f : {Format::bf16, Format::f16, Format::e4m3, Format::e5m2}) {
    SCOPED_TRACE(std::string(ref::format_name(f)));
    std::vector<uint64_t> p = non_nan_patterns(f);
    std::sort(p.begin(), p.end(), [&](uint64_t a, uint64_t b) {
      return ref::decode<double>(f, a) < ref::decode<double>(f, b);
    });
    for (size_t i = 1; i < p.size(); ++i) {
      const double a = ref::decode<double>(f, p[i - 1]);
      const double b = ref::decode<double>(f, p[i]);
      if (a == b) {
        EXPECT_EQ(ordinal(f, p[i - 1]), ordinal(f, p[i]));
      } else {
        EXPECT_EQ(ordinal(f, p[i - 1]) + 1, ordinal(f, p[i])) << std::hex << p[i];
      }
    }
    for (uint64_t b : p) {
      const uint64_t back = from_ordinal(f, ordinal(f, b));
      EXPECT_EQ(ref::decode<double>(f, back), ref::decode<double>(f, b));
      if (ref::decode<double>(f, b) != 0) {
        EXPECT_EQ(back, b);
      }
    }
    EXPECT_EQ(from_ordinal(f, 0), 0u);
  }
}

TEST(Ordinal, NanHasNoOrdinalAndTheLineEndsAtInfinity) {
  EXPECT_THROW(ordinal(Format::bf16, 0x7FC0), std::invalid_argument);
  EXPECT_THROW(ordinal(Format::e4m3, 0x7F), std::invalid_argument);
  EXPECT_EQ(from_ordinal(Format::bf16, 0x7F80), 0x7F80u);  // +inf
  EXPECT_THROW(from_ordinal(Format::bf16, 0x7F81), std::out_of_range);
  EXPECT_EQ(from_ordinal(Format::e4m3, -0x7E), 0xFEu);  // −448, the end of e4m3's line
  EXPECT_THROW(from_ordinal(Format::e4m3, 0x7F), std::out_of_range);
  EXPECT_THROW(ulp_distance(Format::f32, 0x7FC00000, 0), std::invalid_argument);
}

// ulp_distance(r, y) equals an independent count: the signed difference of the positions of r
// and y in the sorted list of distinct bf16 values (±0 one value, ±inf at the ends), for every
// non-NaN y and references at 1, ±0, the smallest subnormal, a subnormal, −3.5, the largest
// finite value and −inf.
TEST(UlpDistance, ExhaustiveOverBf16AgainstACountOfDistinctValues) {
  const Format f = Format::bf16;
  std::vector<double> values;
  for (uint64_t b : non_nan_patterns(f)) values.push_back(ref::decode<double>(f, b));
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  auto position = [&](uint64_t b) {
    const double v = ref::decode<double>(f, b);
    return static_cast<int64_t>(std::lower_bound(values.begin(), values.end(), v) - values.begin());
  };
  const uint64_t refs[] = {0x3F80, 0x0000, 0x8000, 0x0001, 0x8042, 0xC060, 0x7F7F, 0xFF80};
  for (uint64_t r : refs) {
    for (uint64_t y : non_nan_patterns(f)) {
      ASSERT_EQ(ulp_distance(f, r, y), position(y) - position(r))
          << std::hex << "r=0x" << r << " y=0x" << y;
    }
  }
}

TEST(UlpDistance, KnownPairs) {
  // bf16 around 1, across zero, subnormals, the top of the range.
  EXPECT_EQ(ulp_distance(Format::bf16, 0x3F80, 0x3F81), 1);
  EXPECT_EQ(ulp_distance(Format::bf16, 0x3F80, 0x3F7F), -1);  // below 1 the spacing halves
  EXPECT_EQ(ulp_distance(Format::bf16, 0x8001, 0x0001), 2);   // −min subnormal → +min subnormal
  EXPECT_EQ(ulp_distance(Format::bf16, 0x8000, 0x0000), 0);   // −0 and +0 are the same value
  EXPECT_EQ(ulp_distance(Format::bf16, 0x8000, 0x0001), 1);
  EXPECT_EQ(ulp_distance(Format::bf16, 0x0001, 0x0080), 127);  // min subnormal → min normal
  EXPECT_EQ(ulp_distance(Format::bf16, 0x7F7F, 0x7F80), 1);    // max finite → +inf
  EXPECT_EQ(ulp_distance(Format::bf16, 0xFF80, 0x7F80), 2 * 0x7F80);
  // f32, tf32 (its 19 bits sit high in the word), f16 and fp8.
  EXPECT_EQ(ulp_distance(Format::f32, 0x3F800000, 0x3F800003), 3);
  EXPECT_EQ(ulp_distance(Format::tf32, 0x3F800000, 0x3F802000), 1);
  EXPECT_EQ(ulp_distance(Format::f16, 0x7BFF, 0x7C00), 1);      // 65504 → +inf
  EXPECT_EQ(ulp_distance(Format::e4m3, 0xFE, 0x7E), 2 * 0x7E);  // −448 → 448
  EXPECT_EQ(ulp_distance(Format::e5m2, 0x7B, 0x7C), 1);         // 57344 → +inf
  EXPECT_EQ(ulp_distance(Format::e5m2, 0x00, 0x04), 4);         // 3 subnormals and 2^-14
  // f64: 1 → 1 + 2^-52, and the full range saturates at the int64 limit.
  EXPECT_EQ(ulp_distance(Format::f64, 0x3FF0000000000000, 0x3FF0000000000001), 1);
  const uint64_t max64 = ref::max_finite_bits(Format::f64);
  const uint64_t lowest64 = ref::max_finite_bits(Format::f64, true);
  EXPECT_EQ(ulp_distance(Format::f64, lowest64, max64), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ulp_distance(Format::f64, max64, lowest64), -std::numeric_limits<int64_t>::max());
}

TEST(UlpAt, SpacingOfTheBinadeOfX) {
  EXPECT_EQ(ulp_at(Format::bf16, mp(1)), pow2(-7));
  EXPECT_EQ(ulp_at(Format::bf16, mp("0.99")), pow2(-8));
  EXPECT_EQ(ulp_at(Format::bf16, mp(-3)), pow2(-6));
  EXPECT_EQ(ulp_at(Format::bf16, mp(0)), pow2(-133));        // smallest subnormal
  EXPECT_EQ(ulp_at(Format::bf16, mp("1e-40")), pow2(-133));  // subnormal range: fixed
  EXPECT_EQ(ulp_at(Format::bf16, pow2(200)), pow2(120));     // beyond max: the spacing at max
  EXPECT_EQ(ulp_at(Format::f32, mp(1)), pow2(-23));
  EXPECT_EQ(ulp_at(Format::f16, mp(65504)), mp(32));
  EXPECT_EQ(ulp_at(Format::e4m3, mp(448)), mp(32));
  EXPECT_EQ(ulp_at(Format::e4m3, std::numeric_limits<mp>::infinity()), mp(32));
  EXPECT_EQ(unit_roundoff(Format::bf16), pow2(-8));
  EXPECT_EQ(unit_roundoff(Format::f32), pow2(-24));
}

TEST(Errors, HandComputedBf16Values) {
  const Format f = Format::bf16;
  // 1 vs 1 + 2^-7: one ulp, relative error 2^-7 = 2u: 7 significant bits.
  ElementMetrics m = element_metrics(f, mp(1), 0x3F81);
  EXPECT_EQ(m.reference, 0x3F80u);
  EXPECT_TRUE(m.has_ulps);
  EXPECT_EQ(m.ulps, 1);
  EXPECT_EQ(m.abs_error, pow2(-7));
  EXPECT_EQ(m.rel_error, pow2(-7));
  EXPECT_DOUBLE_EQ(m.error_in_u, 2.0);
  EXPECT_DOUBLE_EQ(m.significant_bits, 7.0);
  // 1.5 vs 1.5 + 2^-7: relative 2^-7/1.5, −log2 = 7 + log2(1.5).
  m = element_metrics(f, mp("1.5"), 0x3FC1);
  EXPECT_NEAR(m.significant_bits, 7 + std::log2(1.5), 1e-12);
  EXPECT_NEAR(m.error_in_u, 256.0 / 128 / 1.5, 1e-12);
  // 1/3 correctly rounded is 171/512: error 1/1536, relative exactly 2^-9 = u/2; the format
  // holds 8 bits, so the significant bits are capped at 8.
  const mp third = mp(1) / 3;
  m = element_metrics(f, third, ref::encode(f, third));
  EXPECT_EQ(m.reference, 0x3EABu);
  EXPECT_EQ(m.ulps, 0);
  EXPECT_LT(abs(m.rel_error - pow2(-9)), pow2(-150));  // 1/3 itself is rounded in mp
  EXPECT_NEAR(m.error_in_u, 0.5, 1e-15);
  EXPECT_DOUBLE_EQ(m.significant_bits, 8.0);
  // Exact results: 0 error, p bits.
  m = element_metrics(f, mp(3), 0x4040);
  EXPECT_EQ(m.rel_error, 0);
  EXPECT_DOUBLE_EQ(m.significant_bits, 8.0);
  // x = 0: relative error 0 for ±0, +inf for anything else (0 significant bits).
  EXPECT_EQ(rel_error(f, mp(0), 0x8000), 0);
  EXPECT_TRUE(boost::multiprecision::isinf(rel_error(f, mp(0), 0x0001)));
  EXPECT_DOUBLE_EQ(significant_bits(f, rel_error(f, mp(0), 0x0001)), 0.0);
  EXPECT_DOUBLE_EQ(significant_bits(f, mp(2)), 0.0);  // relative error ≥ 1
  // Infinities: the same infinity is exact, anything else infinitely wrong; NaN is NaN.
  const mp inf = std::numeric_limits<mp>::infinity();
  EXPECT_EQ(abs_error(f, inf, 0x7F80), 0);
  EXPECT_TRUE(boost::multiprecision::isinf(abs_error(f, inf, 0xFF80)));
  EXPECT_TRUE(boost::multiprecision::isinf(abs_error(f, mp(1), 0x7F80)));
  EXPECT_TRUE(boost::multiprecision::isnan(abs_error(f, mp(1), 0x7FC0)));
  EXPECT_TRUE(std::isnan(significant_bits(f, rel_error(f, mp(1), 0x7FC0))));
  EXPECT_FALSE(element_metrics(f, mp(1), 0x7FC0).has_ulps);
}

TEST(MidpointDistance, HandComputedBf16AndE4m3Values) {
  const Format f = Format::bf16;
  EXPECT_DOUBLE_EQ(midpoint_distance(f, 1 + pow2(-8)), 0.0);  // between 1 and 1 + 2^-7
  EXPECT_DOUBLE_EQ(midpoint_distance(f, mp(1)), 0.5);         // representable
  EXPECT_DOUBLE_EQ(midpoint_distance(f, 1 + pow2(-9)), 0.25);
  EXPECT_DOUBLE_EQ(midpoint_distance(f, 1 + pow2(-8) + pow2(-12)), 1.0 / 32);
  EXPECT_DOUBLE_EQ(midpoint_distance(f, -(1 + pow2(-8) - pow2(-12))), 1.0 / 32);
  EXPECT_DOUBLE_EQ(midpoint_distance(f, 2 - pow2(-8)), 0.0);    // 2 − 2^-7 … 2
  EXPECT_DOUBLE_EQ(midpoint_distance(f, 1 - pow2(-9)), 0.0);    // below 1 the gap is 2^-8
  EXPECT_DOUBLE_EQ(midpoint_distance(f, 3 * pow2(-134)), 0.0);  // subnormal: 1.5 min subnormal
  EXPECT_DOUBLE_EQ(midpoint_distance(f, mp(0)), 0.5);
  // The top: the overflow threshold max + ulp/2 is the last midpoint.
  const mp max = ref::decode<mp>(f, ref::max_finite_bits(f));
  EXPECT_DOUBLE_EQ(midpoint_distance(f, max + pow2(119)), 0.0);
  EXPECT_DOUBLE_EQ(midpoint_distance(f, max), 0.5);
  EXPECT_DOUBLE_EQ(midpoint_distance(f, max + pow2(120)), 0.5);
  EXPECT_DOUBLE_EQ(distance_to_midpoint(f, max + pow2(119), 0x7F7F, 0x7F80), 0.0);
  EXPECT_DOUBLE_EQ(midpoint_distance(Format::e4m3, mp(464)), 0.0);
  EXPECT_DOUBLE_EQ(midpoint_distance(Format::e4m3, mp(448)), 0.5);
  EXPECT_DOUBLE_EQ(midpoint_distance(Format::e4m3, mp(440)), 0.25);  // 416 … 448, gap 32
  EXPECT_TRUE(std::isinf(midpoint_distance(f, std::numeric_limits<mp>::infinity())));
  EXPECT_TRUE(std::isnan(midpoint_distance(f, std::numeric_limits<mp>::quiet_NaN())));
  EXPECT_THROW(distance_to_midpoint(f, mp(0), 0x0000, 0x8000), std::invalid_argument);
}

// A random exact value in the open interval between two neighbours is at most half a gap from
// the nearer one and |distance from the midpoint| + |distance to the nearer value| = 1/2.
TEST(MidpointDistance, ComplementsTheDistanceToTheRoundedValue) {
  const Format f = Format::f16;
  for (int i = 1; i < 2000; ++i) {
    const mp x = mp(i) / 7 + pow2(-30) * i;
    const double d = midpoint_distance(f, x);
    const mp r = ref::decode<mp>(f, ref::encode(f, x));
    const double to_r = static_cast<double>(abs(x - r) / ulp_at(f, r < x ? r : x));
    ASSERT_GE(d, 0.0);
    ASSERT_LE(d, 0.5);
    ASSERT_NEAR(d + to_r, 0.5, 1e-9) << i;
  }
}

TEST(TensorMetrics, NmseMaxErrorsAndSkippedSpecials) {
  ref::Tensor got(ref::DType::f32, {6});
  got.set(0, 1.0);
  got.set(1, 2.0);
  got.set(2, 3.5);  // exact 3: off by 0.5 = 2^21 ulps of f32 at 3
  got.set(3, 4.0);
  got.set(4, std::numeric_limits<double>::infinity());   // inf and NaN are judged by parity,
  got.set(5, std::numeric_limits<double>::quiet_NaN());  // not measured
  const std::vector<mp> exact = {mp(1),
                                 mp(2),
                                 mp(3),
                                 mp(4),
                                 std::numeric_limits<mp>::infinity(),
                                 std::numeric_limits<mp>::quiet_NaN()};
  const TensorMetrics t = tensor_metrics(exact, got);
  EXPECT_EQ(t.compared, 4);
  EXPECT_EQ(t.max_ulps, int64_t{1} << 21);
  EXPECT_EQ(t.max_ulps_index, 2);
  EXPECT_EQ(t.max_abs, mp("0.5"));
  EXPECT_EQ(t.max_rel, mp("0.5") / 3);
  EXPECT_DOUBLE_EQ(t.nmse, 0.25 / 30);  // Σ(y − x)² / Σx² = 0.25 / (1 + 4 + 9 + 16)
  EXPECT_NEAR(t.min_significant_bits, std::log2(6.0), 1e-12);
  EXPECT_THROW(tensor_metrics(std::vector<mp>(5), got), std::invalid_argument);
}

TEST(TensorMetrics, AllZeroAndEmpty) {
  ref::Tensor zeros(ref::DType::bf16, {3});
  const std::vector<mp> exact(3, mp(0));
  TensorMetrics t = tensor_metrics(exact, zeros);
  EXPECT_EQ(t.nmse, 0.0);
  EXPECT_EQ(t.max_ulps, 0);
  EXPECT_DOUBLE_EQ(t.min_significant_bits, 8.0);
  zeros.set(1, 1.0);
  t = tensor_metrics(exact, zeros);
  EXPECT_TRUE(std::isinf(t.nmse));
  ref::Tensor empty(ref::DType::f16, {0});
  t = tensor_metrics({}, empty);
  EXPECT_EQ(t.compared, 0);
  EXPECT_EQ(t.max_ulps_index, -1);
  EXPECT_DOUBLE_EQ(t.min_significant_bits, 11.0);
}

// The accumulator makes an element's mp |y − x| only where its double may reach the largest
// one's: an error larger in mp than the maximum but equal to it as a double, in an element whose
// relative error is smaller (so that the relative screen does not make it), still raises max_abs.
TEST(TensorMetrics, LargestAbsoluteErrorEqualAsADoubleStillCounts) {
  const Format f = Format::f32;
  const mp e0 = boost::multiprecision::ldexp(mp(1), -25);
  const mp e1 = e0 + boost::multiprecision::ldexp(mp(1), -80);
  const mp x[] = {mp(1) - e0, mp(4) - e1};
  const uint64_t got[] = {ref::encode(f, mp(1)), ref::encode(f, mp(4))};
  ASSERT_EQ(static_cast<double>(e0), static_cast<double>(e1));
  MetricsAccumulator acc(f);
  for (int64_t i = 0; i < 2; ++i) {
    const ExactRef r{&x[i]};
    acc.add(i, r, element_error(f, r, ref::encode(f, x[i]), got[i]), got[i]);
  }
  EXPECT_TRUE(acc.result().max_abs == e1);
  EXPECT_TRUE(acc.result().max_rel == e0 / x[0]);
}

// The accumulator computes the relative error only where an element may hold the largest one: its
// max_abs, max_rel and min_significant_bits equal the brute force over every element's full
// metrics, on tensors whose relative errors tie, nearly tie (differing beyond the 17th digit), rise
// by relative steps of 2^-64 along the index, include exact zeros and x = 0.
TEST(TensorMetrics, LargestRelativeErrorAndBitsMatchTheBruteForce) {
  uint64_t state = 99;
  const auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 11;
  };
  for (Format f : {Format::bf16, Format::f32, Format::e4m3}) {
    for (int trial = 0; trial < 60; ++trial) {
      std::vector<mp> exact;
      std::vector<uint64_t> got;
      const int n = 1 + static_cast<int>(next() % 600);
      const bool rising = trial % 4 == 0;  // one output, exact values falling by 2^-64 steps
      const mp x0 = mp(static_cast<double>(next()) * 0x1p-53 + 0.5);
      for (int i = 0; i < n; ++i) {
        mp x = mp(static_cast<double>(next()) * 0x1p-53 + 0.5) *
               boost::multiprecision::ldexp(mp(1), static_cast<int>(next() % 12) - 6);
        if (rising) {
          x = x0 * (1 - i * boost::multiprecision::ldexp(mp(1), -64));
        } else if (next() % 7 == 0) {
          x = 0;
        } else if (next() % 6 == 0) {
          x += boost::multiprecision::ldexp(x, -70);  // a near-tie with others
        } else if (next() % 5 == 0 && !exact.empty()) {
          x = exact.back();  // an exact tie
        }
        exact.push_back(x);
        const uint64_t r = ref::encode(f, x0);
        const uint64_t rx = ref::encode(f, x);
        const int64_t o = ordinal(f, rx) + static_cast<int64_t>(next() % 5) - 2;
        got.push_back(rising ? from_ordinal(f, ordinal(f, r) + 1)
                             : (next() % 3 == 0 ? rx : from_ordinal(f, o)));
      }
      MetricsAccumulator acc(f);
      mp max_rel = 0, max_abs = 0;
      double min_bits = ref::spec(f).precision();
      for (size_t i = 0; i < exact.size(); ++i) {
        const ElementMetrics full = element_metrics(f, exact[i], got[i]);
        const ExactRef x{&exact[i]};
        acc.add(static_cast<int64_t>(i), x, element_error(f, x, full.reference, got[i]), got[i]);
        max_rel = std::max(max_rel, full.rel_error);
        max_abs = std::max(max_abs, full.abs_error);
        min_bits = std::min(min_bits, full.significant_bits);
      }
      const TensorMetrics t = acc.result();
      ASSERT_EQ(t.max_abs, max_abs) << ref::format_name(f) << " trial " << trial;
      ASSERT_EQ(t.max_rel, max_rel) << ref::format_name(f) << " trial " << trial;
      ASSERT_EQ(t.min_significant_bits, min_bits) << ref::format_name(f) << " trial " << trial;
    }
  }
}

}  // namespace
}  // namespace lmo::oracle
