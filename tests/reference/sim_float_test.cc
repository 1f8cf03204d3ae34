// Simulated formats: every operation is the exact result rounded once. The exact result is
// computed in MPFR at a precision where it is exact (sums and products of these formats), or
// where a misrounding would need the true value within 2^-160 of a midpoint (quotients and
// transcendental functions), then rounded by `encode`, which formats_test checks against the
// specifications.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reference/sim_float.h"

namespace lmo::ref {
namespace {

// 333 bits: sums of two bf16 values span at most 2^127 .. 2^-133, i.e. 261 bits: exact.
using wide = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<100>,
                                           boost::multiprecision::et_off>;

template <Format F>
void check_binary_ops(Sim<F> a, Sim<F> b) {
  const wide x = decode<wide>(F, a.bits()), y = decode<wide>(F, b.bits());
  ASSERT_EQ((a + b).bits(), encode(F, wide(x + y))) << a.value() << " + " << b.value();
  ASSERT_EQ((a - b).bits(), encode(F, wide(x - y))) << a.value() << " - " << b.value();
  ASSERT_EQ((a * b).bits(), encode(F, wide(x * y))) << a.value() << " * " << b.value();
  if (y != 0) {
    ASSERT_EQ((a / b).bits(), encode(F, wide(x / y))) << a.value() << " / " << b.value();
  }
}

template <Format F>
void exhaustive_fp8() {
  for (uint32_t i = 0; i < 256; ++i) {
    for (uint32_t j = 0; j < 256; ++j) {
      auto a = Sim<F>::from_bits(static_cast<uint8_t>(i));
      auto b = Sim<F>::from_bits(static_cast<uint8_t>(j));
      if (isnan(a) || isnan(b) || isinf(a) || isinf(b)) continue;
      check_binary_ops(a, b);
    }
  }
}

TEST(SimFloat, Fp8ArithmeticIsCorrectlyRoundedForEveryPair) {
  exhaustive_fp8<Format::e4m3>();
  exhaustive_fp8<Format::e5m2>();
}

template <Format F>
void random_pairs(int n) {
  uint64_t s = 0xC0FFEEull + static_cast<uint64_t>(F);
  const uint64_t patterns = uint64_t{1} << (1 + spec(F).exp_bits + spec(F).frac_bits);
  for (int k = 0; k < n; ++k) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    auto a = Sim<F>::from_bits(static_cast<typename Sim<F>::bits_type>(((s >> 20) % patterns) << spec(F).shift));
    auto b = Sim<F>::from_bits(static_cast<typename Sim<F>::bits_type>(((s >> 40) % patterns) << spec(F).shift));
    if (!isfinite(a) || !isfinite(b)) continue;
    check_binary_ops(a, b);
  }
}

TEST(SimFloat, SixteenBitArithmeticIsCorrectlyRoundedOnRandomPairs) {
  random_pairs<Format::bf16>(300000);
  random_pairs<Format::f16>(300000);
  random_pairs<Format::tf32>(300000);
}

// f32 takes the hardware's float operation where operands and result are normal (sim_float.h):
// random patterns of every exponent, pairs of nearby values (cancellation to small and zero
// results), subnormal operands and results, overflow: every result the exact one rounded once.
TEST(SimFloat, F32ArithmeticIsCorrectlyRoundedOnBothPaths) {
  random_pairs<Format::f32>(300000);
  uint64_t s = 20261203;
  const auto next = [&s] {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(s >> 32);
  };
  using F32 = Sim<Format::f32>;
  for (int k = 0; k < 200000; ++k) {
    const uint32_t a = next();
    // A neighbour a few ulps away, the same value, a subnormal, a value 2^±k apart.
    for (const uint32_t b : {a + (next() & 7u), a, next() & 0x807FFFFFu,
                             (a & 0x807FFFFFu) | ((next() % 254u + 1u) << 23)}) {
      const F32 x = F32::from_bits(a), y = F32::from_bits(b);
      if (!isfinite(x) || !isfinite(y)) continue;
      check_binary_ops(x, y);
    }
  }
}

TEST(SimFloat, FmaRoundsOnceEvenWhenTheProductIsAMidpoint) {
  // (1 + 2^-4)^2 = 1 + 2^-3 + 2^-8 lies exactly between two bf16 neighbours; a tiny addend
  // decides the direction. Rounding the product first (or a sum in double) would lose it.
  const bfloat16 a(1.0 + std::ldexp(1.0, -4)), tiny(std::ldexp(1.0, -100));
  EXPECT_EQ((a * a).value(), 1.0 + std::ldexp(1.0, -3));  // the tie goes to even
  EXPECT_EQ(fma(a, a, tiny).value(), 1.0 + std::ldexp(1.0, -3) + std::ldexp(1.0, -7));
  EXPECT_EQ(fma(a, a, -tiny).value(), 1.0 + std::ldexp(1.0, -3));
  for (uint32_t i = 0; i < 256; i += 3) {
    for (uint32_t j = 0; j < 256; j += 5) {
      for (uint32_t k = 0; k < 256; k += 7) {
        auto x = fp8_e5m2::from_bits(i), y = fp8_e5m2::from_bits(j), z = fp8_e5m2::from_bits(k);
        if (!isfinite(x) || !isfinite(y) || !isfinite(z)) continue;
        const wide exact = wide(x.value()) * wide(y.value()) + wide(z.value());
        ASSERT_EQ(fma(x, y, z).bits(), encode(Format::e5m2, exact));
      }
    }
  }
}

// Every finite input of a 16-bit format through each transcendental function.
template <Format F>
void check_functions() {
  for (uint32_t p = 0; p < 65536; ++p) {
    auto x = Sim<F>::from_bits(static_cast<uint16_t>(p));
    if (!isfinite(x)) continue;
    const mp v(x.value());
    ASSERT_EQ(exp(x).bits(), encode(F, mp(boost::multiprecision::exp(v)))) << x.value();
    ASSERT_EQ(expm1(x).bits(), encode(F, mp(boost::multiprecision::expm1(v)))) << x.value();
    ASSERT_EQ(tanh(x).bits(), encode(F, mp(boost::multiprecision::tanh(v)))) << x.value();
    ASSERT_EQ(erf(x).bits(), encode(F, mp(boost::multiprecision::erf(v)))) << x.value();
    ASSERT_EQ(erfc(x).bits(), encode(F, mp(boost::multiprecision::erfc(v)))) << x.value();
    ASSERT_EQ(sin(x).bits(), encode(F, mp(boost::multiprecision::sin(v)))) << x.value();
    ASSERT_EQ(cos(x).bits(), encode(F, mp(boost::multiprecision::cos(v)))) << x.value();
    ASSERT_EQ(atan(x).bits(), encode(F, mp(boost::multiprecision::atan(v)))) << x.value();
    if (x.value() > 0) {
      ASSERT_EQ(log(x).bits(), encode(F, mp(boost::multiprecision::log(v)))) << x.value();
      ASSERT_EQ(sqrt(x).bits(), encode(F, mp(boost::multiprecision::sqrt(v)))) << x.value();
    }
    if (x.value() > -1) {
      ASSERT_EQ(log1p(x).bits(), encode(F, mp(boost::multiprecision::log1p(v)))) << x.value();
    }
  }
}

TEST(SimFloat, FunctionsAreCorrectlyRoundedForEveryBf16AndF16Input) {
  check_functions<Format::bf16>();
  check_functions<Format::f16>();
}

// exp, tanh and log of f32 take the certified balls' enclosure first (sim_float.h): on sampled
// inputs across their ranges, including overflow, underflow and the switch to MPFR near 0, the
// result is still the mp reference's value correctly rounded.
TEST(SimFloat, F32FunctionsAreCorrectlyRoundedOnSampledInputs) {
  using S = Sim<Format::f32>;
  uint64_t state = 777;
  int checked = 0;
  for (int i = 0; i < 60000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    // Magnitudes 2^-40 … 2^8 (log also gets 2^-150 … 2^128), both signs.
    const double u = static_cast<double>(state >> 11) * 0x1p-53;
    const double mag = std::ldexp(1.0 + u, static_cast<int>((state >> 3) % 48) - 40);
    const S x((state & 1) ? -mag : mag);
    const mp v(x.value());
    ASSERT_EQ(exp(x).bits(), encode(Format::f32, mp(boost::multiprecision::exp(v)))) << x.value();
    ASSERT_EQ(tanh(x).bits(), encode(Format::f32, mp(boost::multiprecision::tanh(v)))) << x.value();
    const S y(std::ldexp(1.0 + u, static_cast<int>((state >> 9) % 277) - 149));
    ASSERT_EQ(log(y).bits(), encode(Format::f32, mp(boost::multiprecision::log(mp(y.value())))))
        << y.value();
    ++checked;
  }
  // exp's ends: overflow to inf, the last finite values and the subnormal results.
  for (const double a : {88.72, 88.7228, 88.73, 89.0, -87.3, -103.0, -103.97, -104.0, -150.0,
                         -745.2, 709.0, 710.0}) {
    const S x(a);
    ASSERT_EQ(exp(x).bits(), encode(Format::f32, mp(boost::multiprecision::exp(mp(x.value())))))
        << a;
  }
  EXPECT_EQ(checked, 60000);
}

// exp of the narrow formats takes a double evaluation with a written bound first (dd::exp_split,
// ball_rounding.h's narrow_rounding): densely over f32's whole finite range of e^x (its normal and
// subnormal results, overflow), on every fp8 input and on sampled tf32 inputs, the result is the
// mp reference's value correctly rounded.
TEST(SimFloat, ExpOfNarrowFormatsIsCorrectlyRoundedDensely) {
  using S = Sim<Format::f32>;
  uint64_t state = 4242;
  for (int i = 0; i < 300000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const S x(-104.0 + 194.0 * static_cast<double>(state >> 11) * 0x1p-53);
    ASSERT_EQ(exp(x).bits(), encode(Format::f32, mp(boost::multiprecision::exp(mp(x.value())))))
        << x.value();
  }
  for (uint32_t p = 0; p < 256; ++p) {
    const auto a = fp8_e4m3::from_bits(static_cast<uint8_t>(p));
    const auto b = fp8_e5m2::from_bits(static_cast<uint8_t>(p));
    if (isfinite(a)) {
      ASSERT_EQ(exp(a).bits(), encode(Format::e4m3, mp(boost::multiprecision::exp(mp(a.value())))))
          << a.value();
    }
    if (isfinite(b)) {
      ASSERT_EQ(exp(b).bits(), encode(Format::e5m2, mp(boost::multiprecision::exp(mp(b.value())))))
          << b.value();
    }
  }
  for (int i = 0; i < 20000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const Sim<Format::tf32> x(-104.0 + 194.0 * static_cast<double>(state >> 11) * 0x1p-53);
    ASSERT_EQ(exp(x).bits(), encode(Format::tf32, mp(boost::multiprecision::exp(mp(x.value())))))
        << x.value();
  }
}

TEST(SimFloat, OverflowAndSpecialValues) {
  const bfloat16 big = std::numeric_limits<bfloat16>::max();
  EXPECT_TRUE(isinf(big + big));
  EXPECT_TRUE(isnan(big * bfloat16(0.0) + std::numeric_limits<bfloat16>::infinity() * bfloat16(0.0)));
  const fp8_e4m3 m = std::numeric_limits<fp8_e4m3>::max();
  EXPECT_EQ(m.value(), 448.0);
  EXPECT_TRUE(isnan(m + m));  // no infinity in e4m3: overflow is NaN
  EXPECT_EQ(std::numeric_limits<float16>::denorm_min().value(), std::ldexp(1.0, -24));
  EXPECT_EQ(std::numeric_limits<bfloat16>::epsilon().value(), std::ldexp(1.0, -7));
  EXPECT_EQ(std::numeric_limits<tf32>::digits, 11);
  EXPECT_EQ(std::numeric_limits<fp8_e5m2>::max().value(), 57344.0);
  EXPECT_EQ((float16(1.0) / float16(0.0)).value(), std::numeric_limits<double>::infinity());
}

TEST(SimFloat, ConversionFromMpAndFloat128IsExactThenRoundedOnce) {
  // 1 + 2^-8 + 2^-150: above the bf16 midpoint by a hair that double cannot hold (mp can).
  const mp x = mp(1) + boost::multiprecision::ldexp(mp(1), -8) + boost::multiprecision::ldexp(mp(1), -150);
  EXPECT_EQ(bfloat16(x).value(), 1.0 + std::ldexp(1.0, -7));
  EXPECT_EQ(bfloat16(1.0 + std::ldexp(1.0, -8)).value(), 1.0);  // the exact tie: to even
  EXPECT_EQ(static_cast<mp>(bfloat16(3.0)), mp(3));
  const float128 q = float128(1) + ldexp(float128(1), -8) + ldexp(float128(1), -100);
  EXPECT_EQ(bfloat16(q).value(), 1.0 + std::ldexp(1.0, -7));
}

}  // namespace
}  // namespace lmo::ref
