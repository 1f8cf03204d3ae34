// The judge's roundings read off a double (oracle/judge/reference_bits.h) against MPFR: wherever
// they decide, the bits are those of encode on the exact mp value (both overflow rules) and of
// the naive interval computed in mp as judge.cc does; they decide almost everywhere on ordinary
// values and never on values built to sit within 2^-60 of a rounding boundary.
#include "oracle/judge/reference_bits.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "oracle/judge/metrics.h"
#include "reference/formats.h"
#include "tests/support/splitmix.h"

namespace lmo::oracle {
namespace {

using ref::Format;

constexpr Format kNarrow[] = {Format::f32, Format::tf32, Format::bf16,
                              Format::f16, Format::e4m3, Format::e5m2};

// A value of f (its ordinal random), or the midpoint above it, moved by a relative 2^-k with
// k in 40 … 120 either way (bits beyond a double's), signs both ways.
mp near_boundary(Format f, testing::SplitMix64& g) {
  const ref::FormatSpec& s = ref::spec(f);
  for (;;) {
    const uint64_t bits = (g.next() & (s.pattern_mask() >> 1)) << s.shift;
    const uint64_t next = bits + (uint64_t{1} << s.shift);
    const double v = ref::decode<double>(f, bits), w = ref::decode<double>(f, next);
    if (!std::isfinite(v) || !std::isfinite(w) || v == 0) continue;
    const mp base = g.next() % 2 ? mp(v) : (mp(v) + mp(w)) / 2;
    const int k = 40 + static_cast<int>(g.next() % 81);
    const mp x = base + (g.next() % 2 ? 1 : -1) * ldexp(base, -k);
    return g.next() % 2 ? mp(-x) : x;
  }
}

// An ordinary value: a random significand of 100 bits in the format's normal range.
mp ordinary(Format f, testing::SplitMix64& g) {
  const ref::FormatSpec& s = ref::spec(f);
  const int e = s.emin() + static_cast<int>(g.next() % static_cast<uint64_t>(s.emax() - s.emin()));
  const mp m = mp(1) + mp(g.unit()) + ldexp(mp(g.unit()), -53);
  const mp x = ldexp(m, e);
  return g.next() % 2 ? mp(-x) : x;
}

TEST(ReferenceBits, TheNearestDoubleDecidesOnlyWhatEveryNearbyValueRoundsTo) {
  testing::SplitMix64 g{7};
  for (Format f : kNarrow) {
    int decided = 0, ordinary_decided = 0;
    for (int i = 0; i < 40000; ++i) {
      const bool near = i % 2 == 0;
      const mp x = near ? near_boundary(f, g) : ordinary(f, g);
      const std::optional<uint64_t> b = rounding_of_nearest_double(f, static_cast<double>(x));
      if (!b) continue;
      ++decided;
      if (!near) ++ordinary_decided;
      ASSERT_EQ(*b, ref::encode(f, x, ref::Overflow::kIeee)) << ref::format_name(f) << " " << x;
      ASSERT_EQ(*b, ref::encode(f, x, ref::Overflow::kSaturate)) << ref::format_name(f);
    }
    EXPECT_GT(ordinary_decided, 19000) << ref::format_name(f);
    EXPECT_LT(decided, 40000) << ref::format_name(f)
                              << ": values near a boundary must not all decide";
  }
}

// judge.cc's naive_interval, in mp: the truth the double path must reproduce.
NaiveEnds ends_in_mp(Format f, const mp& x, const mp& group_bound, const NaiveTerms& t,
                     double error_scale, double s) {
  mp scale = 0;
  if (error_scale > 0 && s > 0) {
    scale = mp(error_scale) * mp(s) * ldexp(mp(1), -ref::spec(t.compute).precision());
  }
  mp b = std::max(group_bound, scale) + mp(t.output_ulps) * ulp_at(f, x) +
         mp(t.compute_ulps) * ulp_at(t.compute, x);
  if (b < 0) b = 0;
  return {ref::encode(f, mp(x - b), ref::Overflow::kSaturate),
          ref::encode(f, mp(x + b), ref::Overflow::kSaturate)};
}

TEST(ReferenceBits, NaiveEndsAreTheIntervalComputedInMp) {
  testing::SplitMix64 g{11};
  for (Format f : kNarrow) {
    int decided = 0, tried = 0;
    for (int i = 0; i < 20000; ++i) {
      const mp x = ordinary(f, g);
      // Bounds from nothing to many ulps of x, with bits beyond a double's.
      const double ax = std::fabs(static_cast<double>(x));
      const mp group = i % 5 == 0 ? mp(0)
                                  : mp(ax) * ldexp(mp(g.unit()) + ldexp(mp(g.unit()), -60),
                                                   -static_cast<int>(g.next() % 30));
      const double error_scale = i % 3 == 0 ? 0.0 : 4.0, s = ax * (1 + g.unit());
      NaiveTerms t;
      t.group_bound = static_cast<double>(group);
      t.scale_bound = error_scale > 0 ? std::ldexp(error_scale * s, -24) : 0.0;
      t.output_ulps = i % 2 ? 0.0 : 0.5;
      t.compute_ulps = static_cast<double>(g.next() % 3);
      t.compute = Format::f32;
      const NaiveEnds want = ends_in_mp(f, x, group, t, error_scale, s);
      ++tried;
      const std::optional<NaiveEnds> got =
          naive_ends_of_nearest_double(f, static_cast<double>(x), t);
      if (!got) continue;
      ++decided;
      ASSERT_EQ(got->lo, want.lo) << ref::format_name(f) << " x " << x << " N " << group;
      ASSERT_EQ(got->hi, want.hi) << ref::format_name(f) << " x " << x << " N " << group;
    }
    EXPECT_GT(decided, tried * 9 / 10) << ref::format_name(f);
  }
}

// Ends built to fall within 2^-60 of a rounding midpoint of f: x = m ± B ± 2^-60·m for a
// midpoint m. The double path must give way or agree with mp.
TEST(ReferenceBits, NaiveEndsNearAMidpointAreLeftToMpfr) {
  testing::SplitMix64 g{13};
  for (Format f : kNarrow) {
    int decided = 0;
    for (int i = 0; i < 5000; ++i) {
      mp m = near_boundary(f, g);
      const double ax = std::fabs(static_cast<double>(m));
      NaiveTerms t;
      const mp group = mp(ax) * ldexp(mp(g.unit()), -8);
      t.group_bound = static_cast<double>(group);
      t.output_ulps = 0;
      t.compute_ulps = 0;
      t.compute = Format::f32;
      const mp x = i % 2 ? mp(m + group) : mp(m - group);
      const NaiveEnds want = ends_in_mp(f, x, group, t, 0, 0);
      const std::optional<NaiveEnds> got =
          naive_ends_of_nearest_double(f, static_cast<double>(x), t);
      if (!got) continue;
      ++decided;
      ASSERT_EQ(got->lo, want.lo) << ref::format_name(f) << " x " << x;
      ASSERT_EQ(got->hi, want.hi) << ref::format_name(f) << " x " << x;
    }
    EXPECT_LT(decided, 5000) << ref::format_name(f);
  }
}

}  // namespace
}  // namespace lmo::oracle
