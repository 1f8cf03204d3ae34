// Number formats against their specifications. Independent truths: the CPU's own float (bf16 is
// the top half of a binary32, tf32 a binary32 with 13 low bits clear), GCC's _Float16 (libgcc's
// IEEE binary16 conversions), and the fp8 field formulas of the OCP 8-bit floating point spec
// evaluated with pow(), never with the project's encode/decode.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "reference/formats.h"
#include "reference/number_types.h"

// _Float16, the f16 truth: GCC has it on x86-64, clang from version 15 (both define
// __FLT16_MANT_DIG__ where it exists). The sanitizer tree is clang 14's (tools/test-asan), so
// there the two tests that use it skip; the release (GCC) build runs them.
#ifdef __FLT16_MANT_DIG__
#define LMO_HAVE_FLOAT16 1
#endif

namespace lmo::ref {
namespace {

[[maybe_unused]] constexpr const char* kNoFloat16 =
    "this compiler has no _Float16 (clang before 15): checked in the GCC build";

float f32_from_bits(uint32_t b) { return std::bit_cast<float>(b); }

// Value of an OCP fp8 pattern from the spec's formula (independent of formats.cc).
double ocp_fp8_value(uint8_t b, int exp_bits, int man_bits, int bias, bool e4m3) {
  const int s = b >> 7;
  const int e = (b >> man_bits) & ((1 << exp_bits) - 1);
  const int m = b & ((1 << man_bits) - 1);
  const double sign = s ? -1.0 : 1.0;
  if (e4m3 && e == 15 && m == 7) return std::numeric_limits<double>::quiet_NaN();
  if (!e4m3 && e == 31) {
    return m == 0 ? sign * std::numeric_limits<double>::infinity()
                  : std::numeric_limits<double>::quiet_NaN();
  }
  if (e == 0) return sign * std::pow(2.0, 1 - bias) * (m / std::pow(2.0, man_bits));
  return sign * std::pow(2.0, e - bias) * (1.0 + m / std::pow(2.0, man_bits));
}

bool same_value(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

TEST(Bf16, EveryPatternDecodesLikeTheTopHalfOfABinary32) {
  for (uint32_t p = 0; p < 65536; ++p) {
    const double expect = f32_from_bits(p << 16);
    ASSERT_TRUE(same_value(decode<double>(Format::bf16, p), expect)) << std::hex << p;
    if (std::isnan(expect)) {
      ASSERT_TRUE(bits_is_nan(Format::bf16, p));
    } else {
      ASSERT_EQ(encode(Format::bf16, expect), p) << std::hex << p;
    }
  }
}

TEST(F16, EveryPatternDecodesLikeFloat16) {
#ifndef LMO_HAVE_FLOAT16
  GTEST_SKIP() << kNoFloat16;
#else
  for (uint32_t p = 0; p < 65536; ++p) {
    const uint16_t h = static_cast<uint16_t>(p);
    _Float16 v;
    std::memcpy(&v, &h, 2);
    const double expect = static_cast<double>(v);
    ASSERT_TRUE(same_value(decode<double>(Format::f16, p), expect)) << std::hex << p;
    if (!std::isnan(expect)) {
      ASSERT_EQ(encode(Format::f16, expect), p) << std::hex << p;
    }
  }
#endif
}

TEST(Tf32, EveryPatternIsABinary32WithThirteenLowBitsClear) {
  for (uint32_t p19 = 0; p19 < (1u << 19); ++p19) {
    const uint32_t b = p19 << 13;
    const double expect = f32_from_bits(b);
    ASSERT_TRUE(same_value(decode<double>(Format::tf32, b), expect)) << std::hex << b;
    if (!std::isnan(expect)) {
      ASSERT_EQ(encode(Format::tf32, expect), b) << std::hex << b;
    }
  }
}

TEST(Fp8, EveryPatternMatchesTheOcpFieldFormula) {
  for (uint32_t p = 0; p < 256; ++p) {
    const uint8_t b = static_cast<uint8_t>(p);
    const double e4 = ocp_fp8_value(b, 4, 3, 7, true);
    const double e5 = ocp_fp8_value(b, 5, 2, 15, false);
    ASSERT_TRUE(same_value(decode<double>(Format::e4m3, p), e4)) << p;
    ASSERT_TRUE(same_value(decode<double>(Format::e5m2, p), e5)) << p;
    if (!std::isnan(e4)) {
      ASSERT_EQ(encode(Format::e4m3, e4), p) << p;
    }
    if (!std::isnan(e5)) {
      ASSERT_EQ(encode(Format::e5m2, e5), p) << p;
    }
  }
}

// For every pair of neighbouring finite non-negative values (a, b) of a format, the midpoint
// rounds to the one whose pattern is even, and anything off the midpoint to the nearer one.
// Exhaustive for the 8- and 16-bit formats and tf32; both signs.
void check_all_midpoints(Format f, uint32_t pattern_count, uint32_t shift = 0) {
  int checked = 0;
  for (uint32_t p = 0; p + 1 < pattern_count / 2; ++p) {
    const uint64_t lo = uint64_t{p} << shift, hi = uint64_t{p + 1} << shift;
    const double a = decode<double>(f, lo), b = decode<double>(f, hi);
    if (!std::isfinite(a) || !std::isfinite(b)) continue;
    const double mid = (a + b) / 2;  // exact: both have few bits
    const uint64_t even = (p & 1) ? hi : lo;
    const uint64_t sign = uint64_t{1} << (spec(f).exp_bits + spec(f).frac_bits + shift);
    ASSERT_EQ(encode(f, mid), even) << format_name(f) << " p=" << p;
    ASSERT_EQ(encode(f, -mid), even | sign) << format_name(f) << " p=" << p;
    const double above = mid + (b - a) / 1024, below = mid - (b - a) / 1024;
    ASSERT_EQ(encode(f, above), hi) << format_name(f) << " p=" << p;
    ASSERT_EQ(encode(f, below), lo) << format_name(f) << " p=" << p;
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST(Rounding, EveryMidpointRoundsToEven) {
  check_all_midpoints(Format::bf16, 65536);
  check_all_midpoints(Format::f16, 65536);
  check_all_midpoints(Format::tf32, 1u << 19, 13);
  check_all_midpoints(Format::e4m3, 256);
  check_all_midpoints(Format::e5m2, 256);
}

TEST(Rounding, DoubleToFloat16MatchesLibgccOnEveryMidpointNeighbourhood) {
#ifndef LMO_HAVE_FLOAT16
  GTEST_SKIP() << kNoFloat16;
#else
  // libgcc's double -> _Float16 conversion is a direct IEEE rounding: compare on values
  // spread across the whole range, including subnormals and overflow.
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 2000000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double x = std::ldexp(static_cast<double>(state >> 11) / 0x1p53 + 0.5,
                                static_cast<int>((state >> 3) % 50) - 30) * ((state & 1) ? -1 : 1);
    const _Float16 h = static_cast<_Float16>(x);
    uint16_t bits;
    std::memcpy(&bits, &h, 2);
    ASSERT_EQ(encode(Format::f16, x), bits) << x;
  }
#endif
}

TEST(Rounding, Binary32ToBf16MatchesTheBitTrickOnSampledFloats) {
  // Round-to-nearest-even of a binary32 to its top 16 bits, written as integer arithmetic.
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 9973) {
    const uint32_t u = static_cast<uint32_t>(b);
    const float x = f32_from_bits(u);
    if (std::isnan(x)) continue;
    const uint32_t expect = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
    ASSERT_EQ(encode(Format::bf16, static_cast<double>(x)), expect) << std::hex << u;
  }
}

TEST(Rounding, MpAndFloat128AndDoubleAgreeAndF32MatchesTheCpu) {
  uint64_t state = 12345;
  for (int i = 0; i < 200000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double x = std::ldexp(static_cast<double>(state >> 11), static_cast<int>((state >> 2) % 300) - 200);
    for (Format f : kAllFormats) {
      const uint64_t d = encode(f, x);
      ASSERT_EQ(encode(f, mp(x)), d) << format_name(f) << " " << x;
      ASSERT_EQ(encode(f, float128(x)), d) << format_name(f) << " " << x;
    }
    ASSERT_EQ(encode(Format::f32, x), std::bit_cast<uint32_t>(static_cast<float>(x)));
    ASSERT_EQ(encode(Format::f64, x), std::bit_cast<uint64_t>(x));
  }
}

TEST(Rounding, MpToDoubleIsCorrectlyRoundedAtMidpoints) {
  // Midpoints between neighbouring doubles need 54 bits: exact in mp, not in double.
  uint64_t state = 777;
  for (int i = 0; i < 20000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t p = (state >> 2) & 0x7FEFFFFFFFFFFFFEull;
    const mp a = decode<mp>(Format::f64, p), b = decode<mp>(Format::f64, p + 1);
    const mp mid = (a + b) / 2;
    ASSERT_EQ(encode(Format::f64, mid), (p & 1) ? p + 1 : p);
    ASSERT_EQ(encode(Format::f64, mid + (b - a) / 1000), p + 1);
    ASSERT_EQ(encode(Format::f64, mid - (b - a) / 1000), p);
  }
}

// encode() of an mp goes through its nearest double (formats.cc, encode_mpfr). Near each
// rounding boundary of every format (the midpoints of neighbouring values, zero's, the overflow
// threshold), at offsets down to 2^-100 of the gap, far below a double's step, where the nearest
// double is the midpoint itself: the value rounds to the neighbour on its side (the even one at
// the midpoint), and to the generic algorithm's bits under both overflow rules. Every pattern of
// the 8- and 16-bit formats, sampled patterns of tf32, f32 and f64, and the double-range edges
// the fast path leaves to the generic one.
void check_mp_boundaries(Format f, uint64_t p, int shift) {
  const uint64_t lo = p << shift, hi = (p + 1) << shift;
  const mp a = decode<mp>(f, lo);
  const bool top = bits_is_nan(f, hi) || bits_is_inf(f, hi);  // a is the largest finite value
  const mp gap =
      top ? mp(ldexp(mp(1), spec(f).emax() - spec(f).frac_bits)) : mp(decode<mp>(f, hi) - a);
  const mp mid = a + gap / 2;
  for (const int k : {2, 20, 40, 46, 53, 60, 100}) {  // mid + 2^-100·gap: exact in mp
    for (const int side : {-1, 0, 1}) {
      const mp x = mid + side * ldexp(gap, -k);
      for (const Overflow o : {Overflow::kIeee, Overflow::kSaturate}) {
        for (const mp& v : {x, mp(-x)}) {
          ASSERT_EQ(encode(f, v, o), detail::encode_generic(f, v, o))
              << format_name(f) << " p=" << p << " k=" << k << " side=" << side;
        }
      }
      if (top) continue;
      const uint64_t want = side > 0 ? hi : side < 0 ? lo : ((p & 1) ? hi : lo);
      ASSERT_EQ(encode(f, x), want) << format_name(f) << " p=" << p << " k=" << k;
      if (side == 0) break;  // the midpoint itself: once
    }
  }
}

TEST(Rounding, MpEncodeThroughDoubleIsTheGenericRounding) {
  for (const Format f : {Format::bf16, Format::f16, Format::e4m3, Format::e5m2}) {
    const int bits = spec(f).exp_bits + spec(f).frac_bits;  // the positive patterns
    for (uint64_t p = 0; p < (uint64_t{1} << bits);
         p += f == Format::e4m3 || f == Format::e5m2 ? 1 : 7) {
      if (bits_is_nan(f, p) || bits_is_inf(f, p)) continue;
      check_mp_boundaries(f, p, 0);
    }
  }
  uint64_t state = 4242;
  for (int i = 0; i < 3000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    check_mp_boundaries(Format::tf32, (state >> 40) % 0x3FBFF, 13);
    check_mp_boundaries(Format::f32, (state >> 33) % 0x7F7FFFFF, 0);
    check_mp_boundaries(Format::f64, (state >> 2) % 0x7FEFFFFFFFFFFFFFull, 0);
  }
  for (const Format f : {Format::tf32, Format::f32, Format::f64}) {
    const int shift = spec(f).shift;
    check_mp_boundaries(f, max_finite_bits(f) >> shift, shift);
    check_mp_boundaries(f, 0, shift);  // zero and the smallest subnormal
    check_mp_boundaries(f, 1, shift);
  }
  // Around the ends of the fast path's range, where f64 takes the generic path.
  for (const int e :
       {-1100, -1075, -1074, -1050, -1022, -1001, -1000, -999, 999, 1000, 1001, 1023, 1024}) {
    for (const mp& x : {ldexp(mp(1), e), mp(ldexp(mp(3), e - 2)),
                        mp(ldexp(mp(1), e) * (1 + ldexp(mp(1), -60)))}) {
      for (const Format f : kAllFormats) {
        for (const Overflow o : {Overflow::kIeee, Overflow::kSaturate}) {
          ASSERT_EQ(encode(f, x, o), detail::encode_generic(f, x, o))
              << format_name(f) << " 2^" << e;
          ASSERT_EQ(encode(f, mp(-x), o), detail::encode_generic(f, mp(-x), o)) << format_name(f);
        }
      }
    }
  }
}

TEST(Constants, Bf16) {
  EXPECT_EQ(max_finite_bits(Format::bf16), 0x7F7Fu);
  EXPECT_DOUBLE_EQ(decode<double>(Format::bf16, 0x7F7F), 3.3895313892515355e38);
  EXPECT_EQ(inf_bits(Format::bf16), 0x7F80u);
  EXPECT_EQ(inf_bits(Format::bf16, true), 0xFF80u);
  EXPECT_EQ(encode(Format::bf16, 3.4e38), 0x7F80u);  // past max + half ulp: overflow to inf
  EXPECT_EQ(encode(Format::bf16, 3.4e38, Overflow::kSaturate), 0x7F7Fu);
  EXPECT_EQ(min_subnormal_bits(Format::bf16), 1u);
  EXPECT_EQ(decode<double>(Format::bf16, 1), std::ldexp(1.0, -133));
}

TEST(Constants, F16) {
  EXPECT_EQ(decode<double>(Format::f16, max_finite_bits(Format::f16)), 65504.0);
  EXPECT_EQ(inf_bits(Format::f16), 0x7C00u);
  EXPECT_EQ(encode(Format::f16, 65519.0), 0x7BFFu);  // below the midpoint 65520
  EXPECT_EQ(encode(Format::f16, 65520.0), 0x7C00u);  // tie: max is odd, so to inf
  EXPECT_EQ(decode<double>(Format::f16, 1), std::ldexp(1.0, -24));
}

TEST(Constants, E4m3FiniteOnly) {
  EXPECT_EQ(max_finite_bits(Format::e4m3), 0x7Eu);
  EXPECT_EQ(decode<double>(Format::e4m3, 0x7E), 448.0);
  EXPECT_TRUE(bits_is_nan(Format::e4m3, 0x7F));
  EXPECT_TRUE(bits_is_nan(Format::e4m3, 0xFF));
  for (uint32_t p = 0; p < 256; ++p) EXPECT_FALSE(bits_is_inf(Format::e4m3, p));
  // 464 is the midpoint between 448 (mantissa 110, even) and 480 (111, the NaN pattern):
  // round-to-nearest-even keeps 448; anything above overflows.
  EXPECT_EQ(encode(Format::e4m3, 464.0), 0x7Eu);
  EXPECT_EQ(encode(Format::e4m3, 464.0001), 0x7Fu);
  EXPECT_EQ(encode(Format::e4m3, 1e6), 0x7Fu);
  EXPECT_EQ(encode(Format::e4m3, -1e6), 0x7Fu);
  EXPECT_EQ(encode(Format::e4m3, 464.0001, Overflow::kSaturate), 0x7Eu);
  EXPECT_EQ(encode(Format::e4m3, -1e6, Overflow::kSaturate), 0xFEu);
  EXPECT_EQ(encode(Format::e4m3, std::numeric_limits<double>::infinity()), 0x7Fu);
  EXPECT_EQ(encode(Format::e4m3, -std::numeric_limits<double>::infinity(), Overflow::kSaturate),
            0xFEu);
  // Smallest subnormal 2^-9; half of it is a tie with zero (even), a hair above rounds up.
  EXPECT_EQ(decode<double>(Format::e4m3, 0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(encode(Format::e4m3, std::ldexp(1.0, -10)), 0x00u);
  EXPECT_EQ(encode(Format::e4m3, -std::ldexp(1.0, -10)), 0x80u);
  EXPECT_EQ(encode(Format::e4m3, std::ldexp(1.0, -10) * 1.0001), 0x01u);
  EXPECT_EQ(encode(Format::e4m3, std::ldexp(1.5, -9)), 0x02u);  // tie between 1 and 2 ulps
}

TEST(Constants, E5m2) {
  EXPECT_EQ(max_finite_bits(Format::e5m2), 0x7Bu);
  EXPECT_EQ(decode<double>(Format::e5m2, 0x7B), 57344.0);
  EXPECT_EQ(inf_bits(Format::e5m2), 0x7Cu);
  EXPECT_TRUE(bits_is_nan(Format::e5m2, 0x7D));
  EXPECT_EQ(encode(Format::e5m2, 61439.0), 0x7Bu);
  EXPECT_EQ(encode(Format::e5m2, 61440.0), 0x7Cu);  // tie; max (mantissa 11) is odd: to inf
  EXPECT_EQ(encode(Format::e5m2, 1e9), 0x7Cu);
  EXPECT_EQ(encode(Format::e5m2, -1e9), 0xFCu);
  EXPECT_EQ(encode(Format::e5m2, 1e9, Overflow::kSaturate), 0x7Bu);
  EXPECT_EQ(encode(Format::e5m2, std::numeric_limits<double>::infinity(), Overflow::kSaturate),
            0x7Bu);
  EXPECT_EQ(decode<double>(Format::e5m2, 0x01), std::ldexp(1.0, -16));
  EXPECT_EQ(encode(Format::e5m2, std::ldexp(1.0, -17)), 0x00u);
  EXPECT_EQ(encode(Format::e5m2, std::ldexp(1.0, -17) * 1.0001), 0x01u);
}

TEST(Constants, NanAndSignedZero) {
  for (Format f : kAllFormats) {
    EXPECT_TRUE(bits_is_nan(f, encode(f, std::numeric_limits<double>::quiet_NaN())))
        << format_name(f);
    EXPECT_TRUE(std::signbit(decode<double>(f, encode(f, -0.0)))) << format_name(f);
    EXPECT_EQ(decode<double>(f, encode(f, -0.0)), 0.0) << format_name(f);
    EXPECT_TRUE(std::signbit(decode<double>(f, encode(f, -1e-300)))) << format_name(f);
  }
}

// encode() and decode() of a double take their own path on the bits (formats.h): it must be the
// generic algorithm's, bit for bit, at every value, both neighbours, every midpoint and its
// neighbours, double subnormals, the overflow thresholds, NaN payloads and arbitrary patterns.
void expect_double_path_is_generic(Format f, double x) {
  for (const Overflow o : {Overflow::kIeee, Overflow::kSaturate}) {
    for (const double v : {x, -x}) {
      ASSERT_EQ(encode(f, v, o), detail::encode_generic(f, v, o))
          << format_name(f) << " " << v << " (" << std::bit_cast<uint64_t>(v) << ")";
    }
  }
}

TEST(Rounding, DoubleEncodeAndDecodeAreTheGenericAlgorithm) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  uint64_t state = 20261129;
  const auto draw = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state;
  };
  for (const Format f : kAllFormats) {
    const FormatSpec& s = spec(f);
    const int bits = 1 + s.exp_bits + s.frac_bits;
    const bool every = bits <= 16;
    const uint64_t count = every ? uint64_t{1} << bits : 200000;
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t pattern = every ? i : draw() & s.pattern_mask();
      const uint64_t b = pattern << s.shift;
      const double d = decode<double>(f, b);
      // The generic template on long double (exact, and NaN keeps its sign there).
      const auto g = static_cast<double>(decode<long double>(f, b));
      ASSERT_TRUE(same_value(d, g)) << format_name(f) << " " << b;
      if (std::isnan(d)) {
        ASSERT_EQ(std::signbit(d), std::signbit(g)) << format_name(f);
        continue;
      }
      const double up = std::nextafter(d, kInf);
      const uint64_t next = encode(f, up) == b ? b : encode(f, up);
      const double mid = std::isfinite(d) && !bits_is_inf(f, next) && !bits_is_nan(f, next)
                             ? d + (decode<double>(f, next) - d) / 2
                             : d;
      for (const double x : {d, up, std::nextafter(d, -kInf), mid, std::nextafter(mid, kInf),
                             std::nextafter(mid, -kInf)}) {
        expect_double_path_is_generic(f, x);
      }
    }
    for (int i = 0; i < 200000; ++i)
      expect_double_path_is_generic(f, std::bit_cast<double>(draw()));
    for (const double x :
         {0.0, std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::min(),
          std::numeric_limits<double>::max(), kInf, std::numeric_limits<double>::quiet_NaN(),
          0x1p-150, 0x1p-149, 0x1.8p-150, 65520.0, 65519.99, 448.0, 464.0, 480.0, 57344.0, 61440.0,
          0x1.fffffffp127, 0x1.ffffffp127, 0x1p128}) {
      expect_double_path_is_generic(f, x);
    }
  }
}

TEST(Formats, ParseNames) {
  for (Format f : kAllFormats) EXPECT_EQ(parse_format(format_name(f)), f);
  EXPECT_FALSE(parse_format("fp7").has_value());
}

}  // namespace
}  // namespace lmo::ref
