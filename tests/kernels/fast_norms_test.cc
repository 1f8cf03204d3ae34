// fast/norms.h against reference/norms.h: the exact mp result on the same stored inputs, judged
// with the policy table's rmsnorm / rmsnorm_gemma / layernorm rows (naive_relative: the naive
// run is the reference on the storage's simulated format), for every storage format and every
// supported Highway target; plus thread invariance and argument validation.
#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <stdexcept>
#include <vector>

#include "fast/norms.h"
#include "reference/norms.h"
#include "tests/support/fast_cases.h"
#include "tests/support/norm_rows.h"

namespace lmo::fast {
namespace {

using namespace lmo::testdata;
using ref::mp;

using Kind = NormKind;
using Case = NormCase;

using F32 = ref::Sim<ref::Format::f32>;  // the naive run's number type

void run(Kind k, Storage s, const NormInputs& in, const Case& c, oracle::GuardedBuffer& y) {
  y.arm();
  if (k == Kind::layer) {
    layernorm(s, in.x.bytes().data(), in.gamma.bytes().data(), in.beta.bytes().data(), y.data(),
              c.rows, c.d, c.eps);
  } else {
    rmsnorm(s, in.x.bytes().data(), in.gamma.bytes().data(), y.data(), c.rows, c.d, c.eps,
            k == Kind::gemma);
  }
}

void check(Kind k, const Case& c, uint64_t seed) {
  for (Storage s : kAllStorages) {
    const NormInputs in = norm_inputs(k, c, s, seed);
    const std::vector<mp> exact = norm_reference_rows<mp>(k, in.x, in, c);
    const std::vector<double> naive = as_doubles(norm_reference_rows<F32>(k, in.x, in, c));
    oracle::GuardedBuffer y(dtype_of(s), {c.rows, c.d});
    for_each_target([&](const std::string& target) {
      run(k, s, in, c, y);
      expect_judged(op_name(k), "", exact, y, naive,
                    target + " " + std::string(storage_name(s)) + " d=" + std::to_string(c.d));
    });
    expect_thread_invariant(
        [&] {
          run(k, s, in, c, y);
          return bytes_of(y);
        },
        std::string(op_name(k)) + " " + std::string(storage_name(s)));
  }
}

TEST(FastNorms, RmsNormRealisticRows) { check(Kind::rms, {4, 4096, 0.0, 1.0, 1e-5f}, 11); }
TEST(FastNorms, RmsNormGemmaRealisticRows) { check(Kind::gemma, {4, 4096, 0.0, 1.0, 1e-6f}, 12); }
TEST(FastNorms, LayerNormRealisticRows) { check(Kind::layer, {4, 4096, 0.0, 1.0, 1e-5f}, 13); }
// |μ| ≫ σ: the two-pass variance must not cancel.
TEST(FastNorms, LayerNormLargeMean) { check(Kind::layer, {3, 1000, 30.0, 0.5, 1e-5f}, 14); }
// Odd widths: every row ends in a partial vector.
TEST(FastNorms, OddWidths) {
  check(Kind::rms, {5, 13, 0.0, 1.0, 1e-5f}, 15);
  check(Kind::layer, {5, 1, 0.0, 1.0, 1e-5f}, 16);
  check(Kind::gemma, {2, 77, 0.0, 1.0, 0.0f}, 17);
}

// Magnitudes whose squares overflow (or vanish in) f32: the kernel's power-of-two row scaling.
// With ε = 0 both norms are scale-invariant (C09), so the naive f32 run on the unscaled row is
// the naive error level of the scaled one; the exact result comes from the scaled row itself.
TEST(FastNorms, ExtremeMagnitudesAreScaled) {
  for (int shift : {100, -100}) {
    const Case c{2, 64, 0.0, 1.0, 0.0f};
    const Storage s = Storage::f32;
    const ScaledNormInputs sc = scaled_norm_inputs(c, shift, 21);
    for (Kind k : {Kind::rms, Kind::layer}) {
      const std::vector<mp> exact = norm_reference_rows<mp>(k, sc.in.x, sc.in, c);
      const std::vector<double> naive =
          as_doubles(norm_reference_rows<F32>(k, sc.unscaled, sc.in, c));
      oracle::GuardedBuffer y(dtype_of(s), {c.rows, c.d});
      for_each_target([&](const std::string& target) {
        run(k, s, sc.in, c, y);
        expect_judged(op_name(k), "", exact, y, naive, target + " 2^" + std::to_string(shift));
      });
    }
  }
}

// bf16 weights of 2^126 against 1 (β = 0): multiplying by a power of two is exact in f32 and
// bf16 rounding commutes with it, so every output is the unit-weight output with its exponent
// raised by 126, bit for bit (the outputs here stay below 2 in magnitude, so below 2^127 after).
// The unit weights take the bf16 kernels' rounding without the NaN branch (their results are
// bounded far below overflow); 2^126 puts that bound (max |x| over the rms or σ, at least 1,
// times the weight) at or above 2^126, so the same rows take the rounding with the NaN branch:
// both must give the same bits.
TEST(FastNorms, Bf16PowerOfTwoWeightsScaleExactly) {
  constexpr int kShift = 126;
  for (size_t d : {size_t{77}, size_t{4096}}) {
    const int64_t rows = 3;
    std::vector<uint16_t> x(rows * d), one(d, bf16_from_f32(1.0f)), big(d), zero(d, 0);
    for (size_t i = 0; i < x.size(); ++i) {
      const uint32_t h = (static_cast<uint32_t>(i) + 7u) * 2654435761u;
      x[i] = bf16_from_f32(static_cast<float>(h >> 25) / 64.0f - 1.0f);  // k/64 − 1, exact
    }
    big.assign(d, bf16_from_f32(std::ldexp(1.0f, kShift)));
    std::vector<uint16_t> y1(x.size()), y2(x.size());
    for (Kind k : {Kind::rms, Kind::gemma, Kind::layer}) {
      // Gemma's weight is 1 + γ: γ = 0 and γ = 2^126 (1 + 2^126 rounds to 2^126 in f32).
      const std::vector<uint16_t>& g1 = k == Kind::gemma ? zero : one;
      for_each_target([&](const std::string& target) {
        const auto call = [&](const std::vector<uint16_t>& g, std::vector<uint16_t>& y) {
          if (k == Kind::layer) {
            layernorm(Storage::bf16, x.data(), g.data(), zero.data(), y.data(), rows, d, 1e-5f);
          } else {
            rmsnorm(Storage::bf16, x.data(), g.data(), y.data(), rows, d, 1e-6f, k == Kind::gemma);
          }
        };
        call(g1, y1);
        call(big, y2);
        for (size_t i = 0; i < x.size(); ++i) {
          ASSERT_LT(std::fabs(f32_from_bf16(y1[i])), 2.0f) << target << " " << op_name(k);
          const uint16_t want = (y1[i] & 0x7FFF) == 0 ? y1[i] : y1[i] + (kShift << 7);
          ASSERT_EQ(y2[i], want) << target << " " << op_name(k) << " d=" << d << " i=" << i
                                 << " unit-weight output " << f32_from_bf16(y1[i]);
        }
      });
    }
  }
}

TEST(FastNorms, Validation) {
  float x[4] = {1, 2, 3, 4}, y[4];
  EXPECT_THROW(rmsnorm(Storage::f32, x, x, y, -1, 4, 0.0f), std::invalid_argument);
  EXPECT_THROW(rmsnorm(Storage::f32, x, x, y, 1, 0, 0.0f), std::invalid_argument);
  EXPECT_THROW(rmsnorm(Storage::f32, x, x, y, 1, 4, -1.0f), std::invalid_argument);
  EXPECT_THROW(rmsnorm(Storage::f32, x, nullptr, y, 1, 4, 0.0f), std::invalid_argument);
  EXPECT_THROW(layernorm(Storage::f32, x, x, nullptr, y, 1, 4, 0.0f), std::invalid_argument);
  EXPECT_THROW(layernorm(Storage::f32, x, x, x, y, 1, 4, INFINITY), std::invalid_argument);
  EXPECT_NO_THROW(layernorm(Storage::f32, nullptr, nullptr, nullptr, nullptr, 0, 4, 0.0f));
}

}  // namespace
}  // namespace lmo::fast
