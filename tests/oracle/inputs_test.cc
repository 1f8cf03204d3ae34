// Deterministic inputs: stream derivation, range and validity of every generator in every
// storage format, determinism and index independence, sample statistics, special values, and
// pinned SHA-256 digests of generated tensors that catch any future change of bits.
//
// Statistical bounds are 5 standard errors: for a correct generator each check fails with
// probability below 6e-7; the inputs are fixed, so a pass is reproducible, not luck per run.
#include "oracle/core/inputs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "oracle/cases/case_inputs.h"
#include "oracle/core/philox.h"
#include "oracle/core/sha256.h"
#include "oracle/core/specials.h"
#include "reference/ball_rounding.h"
#include "reference/formats.h"

namespace lmo::oracle {
namespace {

using ref::DType;
using ref::Format;
using ref::Tensor;

constexpr DType kFloatDTypes[] = {DType::f64, DType::f32,  DType::tf32, DType::bf16,
                                  DType::f16, DType::e4m3, DType::e5m2};

std::string name_of(DType d) { return std::string(ref::dtype_name(d)); }

// Value of element i as an exact double (every floating format fits).
double value(const Tensor& t, int64_t i) { return t.get(i); }

// Tolerance for comparing element v against an independent long double evaluation `ref` of a
// sum of terms of magnitude up to `scale`: one unit in the last place of v in format f (the
// format's own rounding) plus the long double evaluation's error, a few 2^-64 of `scale`.
double tolerance(Format f, double v, long double scale);

// Spacing of format f at |x| (the unit in the last place), for tolerance checks.
double ulp(Format f, double x) {
  const ref::FormatSpec& s = ref::spec(f);
  int e = 0;
  (void)std::frexp(std::fabs(x), &e);
  return std::ldexp(1.0, std::max(e - 1, s.emin()) - s.frac_bits);
}

double tolerance(Format f, double v, long double scale) {
  return ulp(f, v) + std::ldexp(static_cast<double>(scale), -58);
}

// ---- Stream derivation --------------------------------------------------------------------

TEST(InputsStream, Fnv1a64MatchesPublishedVectors) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
}

// The documented layout: index in counter words 0-1, name hash in words 2-3, seed as the key.
TEST(InputsStream, DrawIsPhiloxOfDocumentedCounterAndKey) {
  const uint64_t seed = 0x0123456789abcdefull;
  const uint64_t index = 0xfedcba9876543210ull;
  const uint64_t h = fnv1a64("layer0.wq");
  const InputStream s(seed, "layer0.wq");
  EXPECT_EQ(s.draw(index), philox4x32_10({0x76543210u, 0xfedcba98u, static_cast<uint32_t>(h),
                                          static_cast<uint32_t>(h >> 32)},
                                         {0x89abcdefu, 0x01234567u}));
}

// ---- Uniform reals --------------------------------------------------------------------------

struct Range {
  double a, b;
};

// Ranges per format: symmetric, [0, 1) (top values round onto 1 in the narrow formats),
// negative, and bounds the format cannot represent (so rounding can fall below a).
std::vector<Range> ranges_for(DType d) {
  std::vector<Range> r = {{-1, 1}, {0, 1}, {-3, -0.5}, {0.105, 0.2}, {-2.5, 7.3}};
  if (d == DType::e4m3) r.push_back({-448, 448});
  if (d == DType::e5m2) r.push_back({-57344, 57344});
  return r;
}

TEST(InputsUniform, ValuesLieInHalfOpenRangeForEveryFormat) {
  for (DType d : kFloatDTypes) {
    for (Range r : ranges_for(d)) {
      const Tensor t = uniform(7, "u", d, {20000}, r.a, r.b);
      double lo = INFINITY, hi = -INFINITY;
      for (int64_t i = 0; i < t.numel(); ++i) {
        const double v = value(t, i);
        ASSERT_TRUE(v >= r.a && v < r.b)
            << name_of(d) << " [" << r.a << ", " << r.b << ") element " << i << " = " << v;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      // The draws cover the range: extremes within a few format steps or 1% of the width.
      const double slack = std::max(0.01 * (r.b - r.a), 4 * ulp(ref::dtype_format(d), r.b));
      EXPECT_LT(lo - r.a, slack) << name_of(d) << " " << r.a;
      EXPECT_LT(r.b - hi, slack) << name_of(d) << " " << r.b;
    }
  }
}

// In e4m3 (3 fraction bits), draws in [0.96875, 1) round to 1; they must become 0.9375, the
// largest e4m3 value below 1. And with a = 0.105 (between e4m3's 0.1015625 and 0.109375), draws
// rounding down to 0.1015625 must become 0.109375.
TEST(InputsUniform, RoundingOntoOrBelowTheBoundsIsClampedInside) {
  const Tensor top = uniform(1, "clamp", DType::e4m3, {4096}, 0, 1);
  int at_top = 0;
  for (int64_t i = 0; i < top.numel(); ++i) at_top += value(top, i) == 0.9375;
  // P(0.9375) = P(u >= 0.90625) = 0.09375 (expect 384, SE 19); without the clamp it would be
  // P(0.90625 <= u < 0.96875) = 0.0625 (256).
  EXPECT_GT(at_top, 384 - 5 * 19);
  const Tensor bottom = uniform(1, "clamp", DType::e4m3, {4096}, 0.105, 0.2);
  int at_bottom = 0;
  for (int64_t i = 0; i < bottom.numel(); ++i) at_bottom += value(bottom, i) == 0.109375;
  EXPECT_GT(at_bottom, 0);
}

TEST(InputsUniform, MatchesTheDocumentedFormulaWithinOneUlp) {
  // Independent evaluation in long double (64-bit significand) from the raw draw.
  const double a = -2.5, b = 7.25;
  for (DType d : kFloatDTypes) {
    const Tensor t = uniform(3, "formula", d, {256}, a, b);
    const InputStream s(3, "formula");
    for (int64_t i = 0; i < t.numel(); ++i) {
      const auto r = s.draw(static_cast<uint64_t>(i));
      const long double u =
          std::ldexp(static_cast<long double>(uint64_t{r[0]} | (uint64_t{r[1]} << 32)), -64);
      const long double ref = a + (static_cast<long double>(b) - a) * u;
      const double v = value(t, i);
      ASSERT_LE(std::fabs(static_cast<long double>(v) - ref),
                tolerance(ref::dtype_format(d), v, std::fabs(a) + (b - a) * u))
          << name_of(d) << " element " << i;
    }
  }
}

TEST(InputsUniform, MeanAndVarianceOfUnitRange) {
  const int64_t n = 100000;
  const Tensor t = uniform(11, "stats", DType::f64, {n}, 0, 1);
  double sum = 0, sum2 = 0;
  for (double v : t.as<double>()) {
    sum += v;
    sum2 += v * v;
  }
  const double mean = sum / n, var = sum2 / n - mean * mean;
  // Standard error of the mean: sqrt(1/12 / n); of the variance: sqrt((1/80 - 1/144) / n).
  EXPECT_LT(std::fabs(mean - 0.5), 5 * std::sqrt(1.0 / 12 / n));
  EXPECT_LT(std::fabs(var - 1.0 / 12), 5 * std::sqrt((1.0 / 80 - 1.0 / 144) / n));
}

TEST(InputsUniform, RejectsBadParameters) {
  EXPECT_THROW(uniform(1, "x", DType::f32, {4}, 1, 1), std::invalid_argument);
  EXPECT_THROW(uniform(1, "x", DType::f32, {4}, 2, 1), std::invalid_argument);
  EXPECT_THROW(uniform(1, "x", DType::f32, {4}, NAN, 1), std::invalid_argument);
  EXPECT_THROW(uniform(1, "x", DType::f32, {4}, 0, INFINITY), std::invalid_argument);
  EXPECT_THROW(uniform(1, "x", DType::f32, {4}, -INFINITY, 0), std::invalid_argument);
  EXPECT_THROW(uniform(1, "x", DType::e4m3, {4}, 0, 1000), std::invalid_argument);  // > 448
  EXPECT_THROW(uniform(1, "x", DType::f16, {4}, -1e5, 0), std::invalid_argument);
  EXPECT_THROW(uniform(1, "x", DType::e4m3, {4}, 0.105, 0.108), std::invalid_argument);  // empty
  EXPECT_THROW(uniform(1, "x", DType::i32, {4}, 0, 1), std::invalid_argument);
  try {
    uniform(1, "x", DType::e4m3, {4}, 0, 1000);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("e4m3"), std::string::npos) << e.what();
  }
}

// ---- Normal reals ---------------------------------------------------------------------------

TEST(InputsNormal, SampleMomentsAndCorrelationWithinFiveStandardErrors) {
  const int64_t n = 100000;
  struct Case {
    DType d;
    double mu, sigma;
  };
  for (Case c : {Case{DType::f64, 0, 1}, Case{DType::f32, 3, 2}, Case{DType::bf16, -1, 0.5}}) {
    const Tensor t = normal(2024, "stats", c.d, {n}, c.mu, c.sigma);
    double sum = 0, sum2 = 0, within = 0, cross = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double z = (value(t, i) - c.mu) / c.sigma;
      sum += z;
      sum2 += z * z;
      within += std::fabs(z) < 1;
      if (i % 2 == 1) cross += z * (value(t, i - 1) - c.mu) / c.sigma;  // cos and sin branch
    }
    const double mean = sum / n, var = sum2 / n - mean * mean;
    // z ~ N(0, 1): SE(mean) = 1/sqrt(n), SE(variance) = sqrt(2/n), SE(P(|z| < 1)) =
    // sqrt(p(1-p)/n) with p = 0.682689, SE(mean of n/2 products of the pair) = sqrt(2/n).
    // bf16 rounding (relative 2^-9) perturbs these far less than one standard error.
    EXPECT_LT(std::fabs(mean), 5 / std::sqrt(n)) << name_of(c.d);
    EXPECT_LT(std::fabs(var - 1), 5 * std::sqrt(2.0 / n)) << name_of(c.d);
    const double p = 0.682689492137086;
    EXPECT_LT(std::fabs(within / n - p), 5 * std::sqrt(p * (1 - p) / n)) << name_of(c.d);
    EXPECT_LT(std::fabs(cross / (n / 2)), 5 * std::sqrt(2.0 / n)) << name_of(c.d);
  }
}

TEST(InputsNormal, MatchesTheDocumentedBoxMullerWithinOneUlp) {
  // Independent evaluation with long double libm from the raw draw: element 2j is the cosine
  // branch of draw(j), element 2j + 1 the sine branch.
  const double mu = 0.25, sigma = 1.5;
  for (DType d : kFloatDTypes) {
    const Tensor t = normal(5, "formula", d, {256}, mu, sigma);
    const InputStream s(5, "formula");
    for (int64_t i = 0; i < t.numel(); ++i) {
      const auto r = s.draw(static_cast<uint64_t>(i / 2));
      const uint64_t k1 = uint64_t{r[0]} | (uint64_t{r[1]} << 32);
      const uint64_t k2 = uint64_t{r[2]} | (uint64_t{r[3]} << 32);
      const long double u1 = std::ldexp(static_cast<long double>(k1) + 1, -64);
      const long double u2 = std::ldexp(static_cast<long double>(k2), -64);
      const long double radius = std::sqrt(-2 * std::log(u1));
      const long double theta = 2 * 3.14159265358979323846264338327950288L * u2;
      const long double z = radius * (i % 2 == 0 ? std::cos(theta) : std::sin(theta));
      const long double ref = mu + sigma * z;
      const double v = value(t, i);
      ASSERT_LE(std::fabs(static_cast<long double>(v) - ref),
                tolerance(ref::dtype_format(d), v, std::fabs(mu) + sigma * std::fabs(z) + 1))
          << name_of(d) << " element " << i << ": " << v << " vs " << static_cast<double>(ref);
    }
  }
}

TEST(InputsNormal, RejectsBadParameters) {
  EXPECT_THROW(normal(1, "x", DType::f32, {4}, 0, 0), std::invalid_argument);
  EXPECT_THROW(normal(1, "x", DType::f32, {4}, 0, -1), std::invalid_argument);
  EXPECT_THROW(normal(1, "x", DType::f32, {4}, NAN, 1), std::invalid_argument);
  EXPECT_THROW(normal(1, "x", DType::f32, {4}, 0, INFINITY), std::invalid_argument);
  EXPECT_THROW(normal(1, "x", DType::e4m3, {4}, 0, 100), std::invalid_argument);  // 942 > 448
  EXPECT_NO_THROW(normal(1, "x", DType::e4m3, {4}, 0, 40));                       // 376.8 <= 448
  EXPECT_THROW(normal(1, "x", DType::i64, {4}, 0, 1), std::invalid_argument);
}

// ---- Determinism and index independence (all generators) ----------------------------------

Tensor make(int which, uint64_t seed, std::string_view name, DType d, std::vector<int64_t> shape) {
  switch (which) {
    case 0:
      return uniform(seed, name, d, std::move(shape), -1, 1);
    case 1:
      return normal(seed, name, d, std::move(shape), 0, 1);
    default:
      return uniform_int(seed, name, d, std::move(shape), -1000, 1000);
  }
}

TEST(InputsDeterminism, SameKeySameBitsOtherKeyOtherBits) {
  for (int which = 0; which < 3; ++which) {
    const DType d = which == 2 ? DType::i32 : DType::bf16;
    const Tensor t = make(which, 42, "w", d, {512});
    EXPECT_EQ(t, make(which, 42, "w", d, {512})) << which;
    EXPECT_NE(t, make(which, 43, "w", d, {512})) << which;
    EXPECT_NE(t, make(which, 42, "w2", d, {512})) << which;
    EXPECT_NE(t, make(which, 42ull | (1ull << 40), "w", d, {512})) << which;  // seed high word
  }
}

TEST(InputsDeterminism, PrefixesShapesAndRangesAgreeWithTheWholeTensor) {
  for (int which = 0; which < 3; ++which) {
    const DType d = which == 2 ? DType::i64 : DType::f16;
    const Tensor whole = make(which, 9, "idx", d, {1001});
    for (int64_t n : {0, 1, 2, 7, 500, 1001}) {
      const Tensor prefix = make(which, 9, "idx", d, {n});
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(prefix.bits(i), whole.bits(i)) << which;
    }
    const Tensor shaped = make(which, 9, "idx", d, {7, 11, 13});
    for (int64_t i = 0; i < shaped.numel(); ++i) ASSERT_EQ(shaped.bits(i), whole.bits(i));
  }
  // Filling arbitrary pieces, odd starts included (normal elements come in pairs), in any order.
  const NormalReal gen(InputStream(9, "idx"), DType::f16, 0, 1);
  const Tensor whole = make(1, 9, "idx", DType::f16, {1001});
  Tensor pieces(DType::f16, {1001});
  const int64_t cuts[] = {1001, 998, 513, 512, 77, 3, 0};
  for (int k = 0; k + 1 < 7; ++k) fill(pieces, gen, cuts[k + 1], cuts[k]);
  EXPECT_EQ(pieces, whole);
  for (int64_t i : {0, 1, 2, 999, 1000}) EXPECT_EQ(gen.bits(i), whole.bits(i));
}

// Generators are immutable and elements independent, so threads filling disjoint ranges of one
// tensor reproduce the single-threaded bits (MPFR keeps its caches thread-local; each worker
// releases them, which LeakSanitizer checks in the debug-asan build).
TEST(InputsDeterminism, ConcurrentFillsOfDisjointRangesMatch) {
  const int64_t n = 4001;
  const NormalReal normal_gen(InputStream(12, "threads"), DType::f32, 0, 1);
  const UniformReal uniform_gen(InputStream(12, "threads"), DType::bf16, -1, 1);
  Tensor a(DType::f32, {n}), b(DType::bf16, {n});
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    const int64_t begin = n * k / 4 + (k % 2), end = k == 3 ? n : n * (k + 1) / 4 + ((k + 1) % 2);
    threads.emplace_back([&, begin, end] {
      fill(a, normal_gen, begin, end);
      fill(b, uniform_gen, begin, end);
      release_thread_mp_caches();
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(a, normal(12, "threads", DType::f32, {n}, 0, 1));
  EXPECT_EQ(b, uniform(12, "threads", DType::bf16, {n}, -1, 1));
}

TEST(InputsDeterminism, FillRejectsMismatchedDtypeAndBadRange) {
  const UniformReal gen(InputStream(1, "f"), DType::f32, 0, 1);
  Tensor wrong(DType::f16, {4});
  EXPECT_THROW(fill(wrong, gen, 0, 4), std::invalid_argument);
  Tensor t(DType::f32, {4});
  EXPECT_THROW(fill(t, gen, 0, 5), std::invalid_argument);
  EXPECT_THROW(fill(t, gen, 3, 2), std::invalid_argument);
  EXPECT_THROW(fill(t, gen, -1, 2), std::invalid_argument);
}

// ---- Uniform integers -----------------------------------------------------------------------

TEST(InputsInt, ValuesInRangeAndEvenlySpread) {
  const int64_t n = 100000;
  const Tensor t = uniform_int(3, "tokens", DType::i32, {n}, -5, 5);
  std::map<int32_t, int> counts;
  for (int32_t v : t.as<int32_t>()) {
    ASSERT_TRUE(v >= -5 && v < 5) << v;
    ++counts[v];
  }
  ASSERT_EQ(counts.size(), 10u);
  // Count per value ~ Binomial(n, 1/10): SE = sqrt(n * 0.1 * 0.9) ~ 95.
  for (auto [v, c] : counts) EXPECT_LT(std::abs(c - n / 10), 5 * std::sqrt(n * 0.09)) << v;
}

TEST(InputsInt, IsLoPlusHighWordOfDrawTimesWidth) {
  struct Case {
    DType d;
    int64_t lo, hi;
  };
  const Case cases[] = {{DType::i64, INT64_MIN, INT64_MAX},
                        {DType::i64, -(int64_t{1} << 40), int64_t{1} << 50},
                        {DType::i32, INT32_MIN, int64_t{INT32_MAX} + 1},
                        {DType::i32, 0, 32000},
                        {DType::u8, 0, 256}};
  for (const Case& c : cases) {
    const Tensor t = uniform_int(8, "ids", c.d, {300}, c.lo, c.hi);
    const InputStream s(8, "ids");
    const uint64_t width = static_cast<uint64_t>(c.hi) - static_cast<uint64_t>(c.lo);
    for (int64_t i = 0; i < t.numel(); ++i) {
      const auto r = s.draw(static_cast<uint64_t>(i));
      const uint64_t k = uint64_t{r[0]} | (uint64_t{r[1]} << 32);
      // In 128-bit arithmetic, where lo + offset cannot overflow.
      const __int128 offset =
          static_cast<__int128>((static_cast<unsigned __int128>(k) * width) >> 64);
      const int64_t expect = static_cast<int64_t>(c.lo + offset);
      const uint64_t b = t.bits(i);
      const int64_t got = c.d == DType::i64   ? static_cast<int64_t>(b)
                          : c.d == DType::i32 ? static_cast<int32_t>(static_cast<uint32_t>(b))
                                              : static_cast<int64_t>(b);
      ASSERT_EQ(got, expect) << name_of(c.d) << " " << i;
      ASSERT_TRUE(expect >= c.lo && expect < c.hi);
    }
  }
}

TEST(InputsInt, RejectsBadParameters) {
  EXPECT_THROW(uniform_int(1, "x", DType::i32, {4}, 5, 5), std::invalid_argument);
  EXPECT_THROW(uniform_int(1, "x", DType::i32, {4}, 0, int64_t{INT32_MAX} + 2),
               std::invalid_argument);
  EXPECT_THROW(uniform_int(1, "x", DType::i32, {4}, int64_t{INT32_MIN} - 1, 0),
               std::invalid_argument);
  EXPECT_THROW(uniform_int(1, "x", DType::u8, {4}, -1, 3), std::invalid_argument);
  EXPECT_THROW(uniform_int(1, "x", DType::f32, {4}, 0, 3), std::invalid_argument);
}

// ---- Special values -------------------------------------------------------------------------

TEST(InputsSpecials, BitsHaveTheNamedValues) {
  for (Format f : ref::kAllFormats) {
    const ref::FormatSpec& s = ref::spec(f);
    auto val = [&](Special k) { return ref::decode<double>(f, special_bits(f, k)); };
    EXPECT_TRUE(val(Special::pos_zero) == 0 && !std::signbit(val(Special::pos_zero)));
    EXPECT_TRUE(val(Special::neg_zero) == 0 && std::signbit(val(Special::neg_zero)));
    EXPECT_TRUE(std::isnan(val(Special::nan)));
    EXPECT_EQ(val(Special::min_subnormal), std::ldexp(1.0, s.emin() - s.frac_bits));
    EXPECT_EQ(val(Special::neg_min_subnormal), -std::ldexp(1.0, s.emin() - s.frac_bits));
    EXPECT_EQ(val(Special::min_normal), std::ldexp(1.0, s.emin()));
    EXPECT_EQ(val(Special::max_finite), -val(Special::neg_max_finite));
    if (s.has_inf) {
      EXPECT_EQ(val(Special::pos_inf), INFINITY);
      EXPECT_EQ(val(Special::neg_inf), -INFINITY);
    }
  }
  EXPECT_EQ(ref::decode<double>(Format::e4m3, special_bits(Format::e4m3, Special::max_finite)),
            448);
  EXPECT_EQ(ref::decode<double>(Format::bf16, special_bits(Format::bf16, Special::max_finite)),
            0x1.fep127);
}

TEST(InputsSpecials, E4m3RejectsInfinityNamingTheFormat) {
  for (Special k : {Special::pos_inf, Special::neg_inf}) {
    EXPECT_FALSE(has_special(Format::e4m3, k));
    try {
      special_bits(Format::e4m3, k);
      ADD_FAILURE() << "no throw";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("e4m3"), std::string::npos) << e.what();
    }
    Tensor t(DType::e4m3, {4});
    const SpecialAt at[] = {{0, Special::nan}, {1, k}};
    EXPECT_THROW(place_specials(t, at), std::invalid_argument);
    EXPECT_EQ(t, Tensor(DType::e4m3, {4}));  // nothing written
    EXPECT_THROW(special_mix(t, 1, "x", {{Special::nan, k}, 0.1}), std::invalid_argument);
    EXPECT_THROW(special_mix(t, 1, "x", {{k}, 0.0}), std::invalid_argument);  // even if unused
  }
  Tensor e5(DType::e5m2, {2});
  const SpecialAt at[] = {{0, Special::pos_inf}, {1, Special::neg_inf}};
  place_specials(e5, at);
  EXPECT_EQ(e5.get(0), INFINITY);
  EXPECT_EQ(e5.get(1), -INFINITY);
}

TEST(InputsSpecials, PlacedExactlyWhereRequested) {
  const Tensor base = normal(4, "sp", DType::bf16, {64}, 0, 1);
  Tensor t = base;
  const SpecialAt at[] = {{0, Special::neg_zero},
                          {5, Special::pos_inf},
                          {6, Special::nan},
                          {63, Special::min_subnormal},
                          {17, Special::neg_max_finite}};
  place_specials(t, at);
  std::map<int64_t, Special> want;
  for (const SpecialAt& s : at) want[s.index] = s.kind;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const uint64_t expect = want.count(i) ? special_bits(Format::bf16, want[i]) : base.bits(i);
    EXPECT_EQ(t.bits(i), expect) << i;
  }
  const SpecialAt outside[] = {{64, Special::nan}};
  EXPECT_THROW(place_specials(t, outside), std::invalid_argument);
  Tensor ints(DType::i32, {4});
  EXPECT_THROW(place_specials(ints, at), std::invalid_argument);
}

TEST(InputsSpecials, MixReplacesExactlyTheChosenElements) {
  const int64_t n = 20000;
  const SpecialMix mix{{Special::pos_inf, Special::neg_inf, Special::nan, Special::neg_zero}, 0.05};
  for (DType d : {DType::f32, DType::e5m2}) {
    const Tensor base = uniform(6, "mix", d, {n}, -1, 1);
    const Tensor t = special_mix(base, 6, "mix", mix);
    EXPECT_EQ(t, special_mix(base, 6, "mix", mix));
    const SpecialChooser chooser(6, "mix", ref::dtype_format(d), mix);
    std::map<Special, int> counts;
    int special = 0;
    for (int64_t i = 0; i < n; ++i) {
      const std::optional<Special> k = chooser.at(static_cast<uint64_t>(i));
      if (k) {
        ASSERT_EQ(t.bits(i), special_bits(ref::dtype_format(d), *k)) << i;
        ++counts[*k];
        ++special;
      } else {
        ASSERT_EQ(t.bits(i), base.bits(i)) << i;
      }
    }
    // Count ~ Binomial(n, 0.05): SE = sqrt(n * 0.05 * 0.95) ~ 31; each kind appears.
    EXPECT_LT(std::abs(special - n / 20), 5 * std::sqrt(n * 0.05 * 0.95));
    EXPECT_EQ(counts.size(), mix.kinds.size());
  }
  const Tensor base = uniform(6, "mix", DType::f32, {n}, -1, 1);
  EXPECT_EQ(special_mix(base, 6, "mix", {{Special::nan}, 0.0}), base);
  const Tensor all = special_mix(base, 6, "mix", {{Special::nan}, 1.0});
  for (int64_t i = 0; i < n; ++i) ASSERT_TRUE(std::isnan(all.get(i)));
  EXPECT_THROW(special_mix(base, 6, "mix", {{Special::nan}, 1.5}), std::invalid_argument);
  EXPECT_THROW(special_mix(base, 6, "mix", {{}, 0.5}), std::invalid_argument);
}

// ---- Pinned digests -------------------------------------------------------------------------
// SHA-256 of the little-endian storage bytes of fixed tensors. A mismatch means the generated
// bits changed (derivation, Philox, the mp evaluation, rounding or storage); every golden file
// built from inputs would change with them. Update the pins only for a deliberate change.
// tests/interop/inputs_check.py recomputes every pin independently (Python integers, exact
// fractions, mpmath at 320 bits): `inputs_check.py --check tests/oracle/inputs_test.cc`.

constexpr uint64_t kPinSeed = 0x5eed0f1a7e57ull;

struct Pin {
  DType d;
  const char* uniform;
  const char* normal;
};

const Pin kPins[] = {
    {DType::f64, "2508d5271a621759c2db7479781df0de0ab39446d5045989dfc35aafe82ac3bc",
     "bc3378bb40a3f3d5c13a73ff06c3c05c3e174722831157f96adf685cbb660ede"},
    {DType::f32, "a8e1b0bbcc55097ba1400884f42f8567d44e824e644541073cded63b81a2381f",
     "6ded20d97cb61bfe6aa2fc2ca92bcfee4a8e4292a44e3a660c2c0b00fc87da72"},
    {DType::tf32, "766ca7497f9d220d52fe568d7434c08048842482dd23ffdd291762dc2dd03811",
     "07340928b07f99e00098091f8b077dadd7690a8a5ed6827fa48753fb8cdf3276"},
    {DType::bf16, "df53dd860904ee600ffb09397f3163927062069885b25499f1d264fd280516e8",
     "037648d11d2dca43ae04ca81c6296a0751f92774ef34d66ac4364ea0ecb18a10"},
    {DType::f16, "fd371eef038e49d22794665fb49ea1bebbcc1d5359c098fb2bb2c3f9fecbab33",
     "3e106e19028ca65732638aa13c739247e168520ef0994dc6c498045364615dd6"},
    {DType::e4m3, "63f662c5c753790a684fb7361e425ccbbc8974f5121dac2c5d0315f5b9cbc43e",
     "1b854a26ff1cc56576330a40e544487ff799d311c05675f02f71e23d7bb625c8"},
    {DType::e5m2, "62ef5896e473ca17897bc048a94e54a71ba4e58c478a879df5f216c289d82452",
     "ac19a7d391be63d69cb82df8e5c1bfbf3f497e5986eecfe1f2f60a97206a0a42"},
};

TEST(InputsPinned, UniformDigestsPerFormat) {
  for (const Pin& p : kPins) {
    const Tensor t = uniform(kPinSeed, "pinned.uniform", p.d, {3, 341}, -2, 2);
    EXPECT_EQ(sha256_hex(t.bytes()), p.uniform) << name_of(p.d);
  }
}

TEST(InputsPinned, NormalDigestsPerFormat) {
  for (const Pin& p : kPins) {
    const Tensor t = normal(kPinSeed, "pinned.normal", p.d, {3, 341}, 0, 1);
    EXPECT_EQ(sha256_hex(t.bytes()), p.normal) << name_of(p.d);
  }
}

// verify draws a case's normal values once (NormalDraws) and rounds them to each format: the
// kept values give every format its pinned bits, whichever format drew them.
TEST(InputsPinned, NormalDigestsFromValuesKeptAcrossFormats) {
  const InputDecl d("pinned.normal", {3, 341}, Dist::kNormal, 0, 1);
  for (const bool reversed : {false, true}) {
    NormalDraws draws;
    const std::vector<std::array<ref::Ball, 2>>* first = nullptr;
    for (size_t k = 0; k < std::size(kPins); ++k) {
      const Pin& p = kPins[reversed ? std::size(kPins) - 1 - k : k];
      const NormalReal gen(InputStream(kPinSeed, d.name), p.d, 0, 1);
      const std::vector<std::array<ref::Ball, 2>>& pairs = draws.pairs(kPinSeed, d, gen, 1023);
      if (!first) first = &pairs;
      EXPECT_EQ(&pairs, first) << "drawn again for " << name_of(p.d);
      Tensor t(p.d, {3, 341});
      for (int64_t i = 0; i < t.numel(); ++i) {
        t.set_bits(i, gen.bits_of(pairs[i / 2][i % 2], static_cast<uint64_t>(i / 2),
                                  static_cast<int>(i % 2)));
      }
      EXPECT_EQ(sha256_hex(t.bytes()), p.normal) << name_of(p.d);
    }
  }
}

// The balls' fast path ([certified]) against the MPFR pair itself, draw by draw: every ball
// encloses MPFR's value, and the bits it decides are MPFR's, in every format, with a mean that
// makes mean + stddev·z cancel (the largest relative radius) and one that does not.
TEST(InputsNormal, BallPairsGiveTheMpfrPairsBits) {
  for (const auto& [mean, stddev] : {std::pair{0.0, 1.0}, std::pair{1.0, 0.25}}) {
    int64_t undecided = 0, checked = 0;
    for (const DType dt : {DType::f64, DType::f32, DType::bf16, DType::f16, DType::e4m3}) {
      if (dt == DType::e4m3 && mean != 0) continue;  // |mean| + 9.42·stddev must fit
      const NormalReal gen(InputStream(kPinSeed, "balls"), dt, mean, stddev);
      for (uint64_t j = 0; j < 20000; ++j) {
        const std::array<ref::Ball, 2> b = gen.pair_balls(j);
        const std::array<ref::mp, 2> v = gen.pair_values(j);
        for (int k = 0; k < 2; ++k) {
          ASSERT_LE(abs(v[k] - ref::to_mp(b[k])), ref::mp(b[k].rad()) * (1 + 0x1p-40))
              << j << " " << k;
          ASSERT_EQ(gen.bits_of(b[k], j, k), gen.bits_of(v[k])) << name_of(dt) << " " << j;
          const ref::Format one[] = {ref::dtype_format(dt)};
          undecided += ref::decides_rounding(b[k], one) ? 0 : 1;
          ++checked;
        }
        const std::array<uint64_t, 2> pb = gen.pair_bits(j);
        ASSERT_EQ(pb[0], gen.bits_of(v[0]));
        ASSERT_EQ(pb[1], gen.bits_of(v[1]));
      }
    }
    // Fallbacks are the rare exception (a value within 2^-100 or so of a rounding boundary).
    EXPECT_LT(undecided, checked / 1000) << mean;
  }
}

// UniformReal's balls against the formula in mp, draw by draw (values that land outside [a, b)
// are moved inside by the generator: left out here), for bounds of every kind the ops use.
TEST(InputsUniform, BallValuesGiveTheMpfrBits) {
  struct Bounds {
    DType dt;
    double a, b;
  };
  for (const Bounds& k : {Bounds{DType::f64, -1, 1}, Bounds{DType::f32, 0.1, 0.7},
                          Bounds{DType::f32, 0.25 / 448, 8.0 / 448}, Bounds{DType::e4m3, -448, 448},
                          Bounds{DType::bf16, -3.3, 1e-3}, Bounds{DType::f16, 1e-3, 1e-2}}) {
    const InputStream stream(kPinSeed, "uniform.balls");
    const UniformReal gen(stream, k.dt, k.a, k.b);
    const ref::Format f = ref::dtype_format(k.dt);
    int64_t compared = 0;
    for (uint64_t i = 0; i < 50000; ++i) {
      const std::array<uint32_t, 4> r = stream.draw(i);
      const ref::mp u = ldexp(ref::mp(uint64_t{r[0]} | (uint64_t{r[1]} << 32)), -64);
      const uint64_t want = ref::encode(f, ref::mp(k.a) + (ref::mp(k.b) - ref::mp(k.a)) * u);
      const double v = ref::decode<double>(f, want);
      if (v < k.a || v >= k.b) continue;
      ASSERT_EQ(gen.bits(i), want) << name_of(k.dt) << " [" << k.a << ", " << k.b << ") " << i;
      ++compared;
    }
    EXPECT_GT(compared, 49000);
  }
}

TEST(InputsPinned, IntegerAndSpecialMixDigests) {
  EXPECT_EQ(sha256_hex(uniform_int(kPinSeed, "pinned.ids", DType::i32, {1023}, 0, 50257).bytes()),
            "77ab27c6690bcc403997c7be5fca48136b55cbb8e3e1a2bb4b805c9395730960");
  EXPECT_EQ(
      sha256_hex(uniform_int(kPinSeed, "pinned.pos", DType::i64, {1023}, -4096, 4096).bytes()),
      "ad1c7cf65eaed7acf321a8320e2e7e6487dfea7fd2f357171a8ca756e0a780eb");
  const SpecialMix mix{{Special::pos_zero, Special::neg_zero, Special::pos_inf, Special::neg_inf,
                        Special::nan, Special::min_subnormal, Special::max_finite},
                       0.125};
  const Tensor base = normal(kPinSeed, "pinned.mix", DType::f16, {1023}, 0, 1);
  EXPECT_EQ(sha256_hex(special_mix(base, kPinSeed, "pinned.mix", mix).bytes()),
            "75720fb21ee88c98fae47336e3fa480e4f208111c5b4cb637bfb64d274f38c27");
}

}  // namespace
}  // namespace lmo::oracle
