// The norm kernels of one kernel library (tests/support/kernel_libraries.h: fast/ on every Highway
// target, or gpu/) against reference/norms.h: the exact mp result on the same stored inputs,
// judged with the policy table's rmsnorm / rmsnorm_gemma / layernorm rows (naive_relative: the
// naive run is the reference in f32), for every storage format; the library's repeatability
// check (thread counts, or a second run on the device); exact power-of-two scaling in bf16;
// argument validation, which holds on any machine.
#include "reference/norms.h"

#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <stdexcept>
#include <vector>

#include "tests/support/fast_cases.h"
#include "tests/support/kernel_libraries.h"
#include "tests/support/norm_rows.h"

namespace lmo::testdata {
namespace {

using fast::Storage;
using ref::mp;

using F32 = ref::Sim<ref::Format::f32>;  // the naive run's number type

template <class Lib>
void run(NormKind k, Storage s, const NormInputs& in, const NormCase& c, oracle::GuardedBuffer& y) {
  y.arm();
  if (k == NormKind::layer) {
    Lib::layernorm(s, in.x.bytes().data(), in.gamma.bytes().data(), in.beta.bytes().data(),
                   y.data(), c.rows, c.d, c.eps);
  } else {
    Lib::rmsnorm(s, in.x.bytes().data(), in.gamma.bytes().data(), y.data(), c.rows, c.d, c.eps,
                 k == NormKind::gemma);
  }
}

template <class Lib>
void check(NormKind k, const NormCase& c, uint64_t seed) {
  for (Storage s : fast::kAllStorages) {
    const NormInputs in = norm_inputs(k, c, s, seed);
    const std::vector<mp> exact = norm_reference_rows<mp>(k, in.x, in, c);
    const std::vector<double> naive = as_doubles(norm_reference_rows<F32>(k, in.x, in, c));
    oracle::GuardedBuffer y(dtype_of(s), {c.rows, c.d});
    const std::string where = std::string(fast::storage_name(s)) +
                              " rows=" + std::to_string(c.rows) + " d=" + std::to_string(c.d);
    Lib::for_each_variant([&](const std::string& variant) {
      run<Lib>(k, s, in, c, y);
      expect_judged(op_name(k), "", exact, y, naive, variant + " " + where);
    });
    Lib::expect_repeatable(
        [&] {
          run<Lib>(k, s, in, c, y);
          return bytes_of(y);
        },
        std::string(op_name(k)) + " " + where);
  }
}

template <class Lib>
class KernelNorms : public ::testing::Test {};
TYPED_TEST_SUITE(KernelNorms, TestedKernels);

TYPED_TEST(KernelNorms, RmsNormRealisticRows) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check<TypeParam>(NormKind::rms, {4, 4096, 0.0, 1.0, 1e-5f}, 11);
}
TYPED_TEST(KernelNorms, RmsNormGemmaRealisticRows) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check<TypeParam>(NormKind::gemma, {4, 4096, 0.0, 1.0, 1e-6f}, 12);
}
TYPED_TEST(KernelNorms, LayerNormRealisticRows) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check<TypeParam>(NormKind::layer, {4, 4096, 0.0, 1.0, 1e-5f}, 13);
}
// |μ| ≫ σ: the two-pass variance must not cancel.
TYPED_TEST(KernelNorms, LayerNormLargeMean) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check<TypeParam>(NormKind::layer, {3, 1000, 30.0, 0.5, 1e-5f}, 14);
}
// Odd widths: every row ends in a partial vector (Highway), and idle threads in the block's tree
// (CUDA).
TYPED_TEST(KernelNorms, OddWidths) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check<TypeParam>(NormKind::rms, {5, 13, 0.0, 1.0, 1e-5f}, 15);
  check<TypeParam>(NormKind::layer, {5, 1, 0.0, 1.0, 1e-5f}, 16);
  check<TypeParam>(NormKind::gemma, {2, 77, 0.0, 1.0, 0.0f}, 17);
}
// Widths below, at and not a multiple of a CUDA block's 256 threads, and a wide row (8 elements
// per thread); on the CPU, rows of several whole vectors plus a tail.
TYPED_TEST(KernelNorms, WidthsAroundTheBlockSize) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check<TypeParam>(NormKind::gemma, {2, 257, 0.0, 1.0, 0.0f}, 17);
  check<TypeParam>(NormKind::rms, {3, 256, 0.0, 1.0, 1e-5f}, 18);
  check<TypeParam>(NormKind::layer, {2, 2048 + 7, 0.0, 2.0, 1e-5f}, 19);
}

// Magnitudes whose squares overflow (or vanish in) f32: the kernel's power-of-two row scaling.
// With ε = 0 both norms are scale-invariant (C09), so the naive f32 run on the unscaled row is
// the naive error level of the scaled one; the exact result comes from the scaled row itself.
TYPED_TEST(KernelNorms, ExtremeMagnitudesAreScaled) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (int shift : {100, -100}) {
    const NormCase c{2, 64, 0.0, 1.0, 0.0f};
    const Storage s = Storage::f32;
    const ScaledNormInputs sc = scaled_norm_inputs(c, shift, 21);
    for (NormKind k : {NormKind::rms, NormKind::layer}) {
      const std::vector<mp> exact = norm_reference_rows<mp>(k, sc.in.x, sc.in, c);
      const std::vector<double> naive =
          as_doubles(norm_reference_rows<F32>(k, sc.unscaled, sc.in, c));
      oracle::GuardedBuffer y(dtype_of(s), {c.rows, c.d});
      TypeParam::for_each_variant([&](const std::string& variant) {
        run<TypeParam>(k, s, sc.in, c, y);
        expect_judged(op_name(k), "", exact, y, naive, variant + " 2^" + std::to_string(shift));
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
TYPED_TEST(KernelNorms, Bf16PowerOfTwoWeightsScaleExactly) {
  LMO_REQUIRE_KERNELS(TypeParam);
  constexpr int kShift = 126;
  for (size_t d : {size_t{77}, size_t{4096}}) {
    const int64_t rows = 3;
    std::vector<uint16_t> x(rows * d), one(d, fast::bf16_from_f32(1.0f)), big(d), zero(d, 0);
    for (size_t i = 0; i < x.size(); ++i) {
      const uint32_t h = (static_cast<uint32_t>(i) + 7u) * 2654435761u;
      x[i] = fast::bf16_from_f32(static_cast<float>(h >> 25) / 64.0f - 1.0f);  // k/64 − 1, exact
    }
    big.assign(d, fast::bf16_from_f32(std::ldexp(1.0f, kShift)));
    std::vector<uint16_t> y1(x.size()), y2(x.size());
    for (NormKind k : {NormKind::rms, NormKind::gemma, NormKind::layer}) {
      // Gemma's weight is 1 + γ: γ = 0 and γ = 2^126 (1 + 2^126 rounds to 2^126 in f32).
      const std::vector<uint16_t>& g1 = k == NormKind::gemma ? zero : one;
      TypeParam::for_each_variant([&](const std::string& variant) {
        const auto call = [&](const std::vector<uint16_t>& g, std::vector<uint16_t>& y) {
          if (k == NormKind::layer) {
            TypeParam::layernorm(Storage::bf16, x.data(), g.data(), zero.data(), y.data(), rows, d,
                                 1e-5f);
          } else {
            TypeParam::rmsnorm(Storage::bf16, x.data(), g.data(), y.data(), rows, d, 1e-6f,
                               k == NormKind::gemma);
          }
        };
        call(g1, y1);
        call(big, y2);
        for (size_t i = 0; i < x.size(); ++i) {
          ASSERT_LT(std::fabs(fast::f32_from_bf16(y1[i])), 2.0f) << variant << " " << op_name(k);
          const uint16_t want = (y1[i] & 0x7FFF) == 0 ? y1[i] : y1[i] + (kShift << 7);
          ASSERT_EQ(y2[i], want) << variant << " " << op_name(k) << " d=" << d << " i=" << i
                                 << " unit-weight output " << fast::f32_from_bf16(y1[i]);
        }
      });
    }
  }
}

// Validation happens before any kernel runs (before any CUDA call), so it holds on every machine.
TYPED_TEST(KernelNorms, Validation) {
  float x[4] = {1, 2, 3, 4}, y[4];
  const Storage f = Storage::f32;
  EXPECT_THROW(TypeParam::rmsnorm(f, x, x, y, -1, 4, 0.0f, false), std::invalid_argument);
  EXPECT_THROW(TypeParam::rmsnorm(f, x, x, y, 1, 0, 0.0f, false), std::invalid_argument);
  EXPECT_THROW(TypeParam::rmsnorm(f, x, x, y, 1, 4, -1.0f, false), std::invalid_argument);
  EXPECT_THROW(TypeParam::rmsnorm(f, x, nullptr, y, 1, 4, 0.0f, false), std::invalid_argument);
  EXPECT_THROW(TypeParam::rmsnorm(static_cast<Storage>(7), x, x, y, 1, 4, 0.0f, false),
               std::invalid_argument);
  EXPECT_THROW(TypeParam::layernorm(f, x, x, nullptr, y, 1, 4, 0.0f), std::invalid_argument);
  EXPECT_THROW(TypeParam::layernorm(f, x, x, x, y, 1, 4, INFINITY), std::invalid_argument);
  EXPECT_NO_THROW(TypeParam::layernorm(f, nullptr, nullptr, nullptr, nullptr, 0, 4, 0.0f));
}

#ifdef LMO_TESTED_KERNELS_GPU
// Without a device a valid call reports the failing CUDA call instead of returning garbage.
TEST(GpuNorms, NoDeviceIsAnError) {
  if (gpu::query_device().present) GTEST_SKIP() << "a device is present";
  float x[4] = {1, 2, 3, 4}, y[4];
  try {
    gpu::rmsnorm(Storage::f32, x, x, y, 1, 4, 0.0f);
    ADD_FAILURE() << "rmsnorm without a device returned normally";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("gpu::rmsnorm: cudaMalloc failed"), std::string::npos)
        << e.what();
  }
}
#endif

}  // namespace
}  // namespace lmo::testdata
