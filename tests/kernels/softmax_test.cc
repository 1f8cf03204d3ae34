// The softmax, log-sum-exp and fused cross-entropy (z-loss, soft-cap, gradient) kernels of one
// kernel library (tests/support/kernel_libraries.h: fast/ on every Highway target, or gpu/)
// against reference/softmax.h: the exact mp result on the same stored logits, judged with the
// policy table's naive_relative rows (softmax, logsumexp, cross_entropy loss/logz/grad; the naive
// run is the reference in f32) on every storage format; vocabularies of 32000, widths around
// vectors and blocks, rows with −inf (masked), +inf and NaN logits, the soft-cap's branches and
// extreme caps; the library's repeatability check; validation, which holds on any machine.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include "tests/support/kernel_libraries.h"
#include "tests/support/softmax_rows.h"
#include "tools/error_sweep.h"

namespace lmo::testdata {
namespace {

using fast::Storage;
using ref::mp;

using F32 = ref::Sim<ref::Format::f32>;  // the naive run's number type

template <class Lib>
void check_softmax(Storage s, const ref::Tensor& z, int64_t rows, int64_t n) {
  std::vector<mp> ex_p, ex_l;
  softmax_rows(z, rows, n, ex_p, ex_l);
  std::vector<F32> f_p, f_l;
  softmax_rows(z, rows, n, f_p, f_l);
  const std::vector<double> nv_p = as_doubles(f_p), nv_l = as_doubles(f_l);
  oracle::GuardedBuffer p(dtype_of(s), {rows, n}), l(ref::DType::f32, {rows});
  const auto run = [&] {
    p.arm();
    l.arm();
    Lib::softmax(s, z.bytes().data(), p.data(), rows, n);
    Lib::logsumexp(s, z.bytes().data(), static_cast<float*>(l.data()), rows, n);
    std::vector<uint8_t> b = bytes_of(p), c = bytes_of(l);
    b.insert(b.end(), c.begin(), c.end());
    return b;
  };
  const std::string where = std::string(fast::storage_name(s)) + " n=" + std::to_string(n);
  Lib::for_each_variant([&](const std::string& variant) {
    run();
    expect_judged("softmax", "", ex_p, p, nv_p, variant + " " + where);
    expect_judged("logsumexp", "", ex_l, l, nv_l, variant + " " + where);
  });
  Lib::expect_repeatable(run, "softmax " + where);
}

template <class Lib>
void check_ce(Storage s, const ref::Tensor& z, int64_t rows, int64_t n, float lambda, float cap,
              uint64_t seed) {
  const ref::Tensor tt = targets(seed, rows, n);
  const std::span<const int64_t> target = tt.as<int64_t>();
  std::vector<mp> ex_loss, ex_logz, ex_grad;
  loss_rows(z, target, rows, n, lambda, cap, ex_loss, ex_logz, ex_grad);
  std::vector<F32> f_loss, f_logz, f_grad;
  loss_rows(z, target, rows, n, lambda, cap, f_loss, f_logz, f_grad);
  const std::vector<double> nv_loss = as_doubles(f_loss), nv_logz = as_doubles(f_logz),
                            nv_grad = as_doubles(f_grad);
  oracle::GuardedBuffer loss(ref::DType::f32, {rows}), logz(ref::DType::f32, {rows}),
      grad(dtype_of(s), {rows, n});
  const auto run = [&] {
    loss.arm();
    logz.arm();
    grad.arm();
    Lib::cross_entropy(s, z.bytes().data(), target.data(), rows, n, lambda, cap,
                       static_cast<float*>(loss.data()), static_cast<float*>(logz.data()),
                       grad.data());
    std::vector<uint8_t> b = bytes_of(grad), c = bytes_of(loss), d = bytes_of(logz);
    b.insert(b.end(), c.begin(), c.end());
    b.insert(b.end(), d.begin(), d.end());
    return b;
  };
  const std::string where = std::string(fast::storage_name(s)) + " n=" + std::to_string(n) +
                            " λ=" + std::to_string(lambda) + " cap=" + std::to_string(cap);
  Lib::for_each_variant([&](const std::string& variant) {
    run();
    expect_judged("cross_entropy", "loss", ex_loss, loss, nv_loss, variant + " " + where);
    expect_judged("cross_entropy", "logz", ex_logz, logz, nv_logz, variant + " " + where);
    expect_judged("cross_entropy", "grad", ex_grad, grad, nv_grad, variant + " " + where);
  });
  Lib::expect_repeatable(run, "cross_entropy " + where);
}

template <class Lib>
class KernelSoftmax : public ::testing::Test {};
TYPED_TEST_SUITE(KernelSoftmax, TestedKernels);
template <class Lib>
class KernelCrossEntropy : public ::testing::Test {};
TYPED_TEST_SUITE(KernelCrossEntropy, TestedKernels);

TYPED_TEST(KernelSoftmax, Vocab32000) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (Storage s : fast::kAllStorages) {
    check_softmax<TypeParam>(s, logits(41, s, 2, 32000, 4.0), 2, 32000);
  }
}

// Widths with a tail, of one element, and just past a CUDA block's 256 threads; masked logits
// (−inf) in a row, a row with +inf, a row with NaN.
TYPED_TEST(KernelSoftmax, OddWidthsAndMaskedLogits) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (Storage s : fast::kAllStorages) {
    check_softmax<TypeParam>(s, logits(42, s, 3, 37, 2.0), 3, 37);
    check_softmax<TypeParam>(s, logits(43, s, 1, 1, 2.0), 1, 1);
    check_softmax<TypeParam>(s, logits(44, s, 2, 257, 2.0), 2, 257);
    const std::vector<oracle::SpecialAt> sp = softmax_specials();
    check_softmax<TypeParam>(s, logits(44, s, 3, 50, 2.0, sp), 3, 50);
  }
}

TYPED_TEST(KernelCrossEntropy, Vocab32000WithZLossAndSoftcap) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (Storage s : fast::kAllStorages) {
    const ref::Tensor z = logits(45, s, 2, 32000, 4.0);
    check_ce<TypeParam>(s, z, 2, 32000, 1e-4f, 30.0f, 45);
    check_ce<TypeParam>(s, z, 2, 32000, 0.0f, 0.0f, 46);
  }
}

// A cap of 5 under logits of σ 4: about 40 % of the logits have |z| ≥ 0.625·cap, so most vectors
// mix lanes of the Highway soft-cap's two branches (tanh polynomial with cap' = 1 − tanh², and
// the exponential form), besides whole vectors of either; 4099 leaves a tail.
TYPED_TEST(KernelCrossEntropy, SoftcapBranchesMixedWithinVectors) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (Storage s : fast::kAllStorages) {
    check_ce<TypeParam>(s, logits(50, s, 2, 4099, 4.0), 2, 4099, 1e-4f, 5.0f, 50);
  }
}

TYPED_TEST(KernelCrossEntropy, SmallRowsAndSpecialLogits) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (Storage s : fast::kAllStorages) {
    const std::vector<oracle::SpecialAt> sp = cross_entropy_specials();
    const ref::Tensor z = logits(47, s, 4, 40, 3.0, sp);
    check_ce<TypeParam>(s, z, 4, 40, 1e-3f, 0.0f, 47);
    check_ce<TypeParam>(s, z, 4, 40, 1e-3f, 50.0f, 48);
    check_ce<TypeParam>(s, logits(49, s, 3, 5, 1.0), 3, 5, 1e-4f, 30.0f, 49);
  }
}

// Caps outside [2^-64, 2^64] take the Highway soft-cap's scaled reciprocal (fast/math-inl.h
// SoftcapConsts): logits of σ 1.5·cap put lanes in both branches.
TYPED_TEST(KernelCrossEntropy, ExtremeCaps) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (float cap : {3e-30f, 5e25f}) {
    check_ce<TypeParam>(Storage::f32, logits(53, Storage::f32, 2, 1000, 1.5 * cap), 2, 1000, 1e-4f,
                        cap, 53);
  }
}

// Capped rows whose logits all lie in the soft-cap's small branch take a path without the
// per-vector branch tests (fast/softmax.cc, CappedRowRange): zeros of either sign keep a row on
// it, a tiny nonzero |z| < 2^-40·cap (where z' = z) sends it back to the tested path. Row 0 holds
// ±0, row 1 the format's smallest subnormal and normal (tiny in f32 and bf16; f16's lie above
// 2^-40·cap and keep the row on the path without the tests), row 2 neither; 70 leaves a tail.
TYPED_TEST(KernelCrossEntropy, CappedRowsWithZerosAndTinyLogits) {
  LMO_REQUIRE_KERNELS(TypeParam);
  const std::vector<oracle::SpecialAt> sp = {{3, oracle::Special::pos_zero},
                                             {33, oracle::Special::neg_zero},
                                             {69, oracle::Special::neg_zero},
                                             {70 + 5, oracle::Special::min_subnormal},
                                             {70 + 40, oracle::Special::min_normal}};
  for (Storage s : fast::kAllStorages) {
    check_ce<TypeParam>(s, logits(51, s, 3, 70, 3.0, sp), 3, 70, 1e-4f, 30.0f, 51);
    check_ce<TypeParam>(s, logits(52, s, 3, 70, 3.0, sp), 3, 70, 0.0f, 30.0f, 52);
  }
}

// Validation happens before any kernel runs (before any CUDA call), so it holds on every machine.
TYPED_TEST(KernelCrossEntropy, Validation) {
  float z[4] = {0, 1, 2, 3}, loss[1], logz[1], g[4];
  const int64_t bad[1] = {4}, ok[1] = {3};
  const Storage f = Storage::f32;
  EXPECT_THROW(TypeParam::cross_entropy(f, z, bad, 1, 4, 0, 0, loss, logz, g),
               std::invalid_argument);
  EXPECT_THROW(TypeParam::cross_entropy(f, z, ok, 1, 4, 0, -1, loss, logz, g),
               std::invalid_argument);
  EXPECT_THROW(TypeParam::cross_entropy(f, z, ok, 1, 4, NAN, 0, loss, logz, g),
               std::invalid_argument);
  EXPECT_THROW(TypeParam::cross_entropy(f, z, ok, 1, 0, 0, 0, loss, logz, g),
               std::invalid_argument);
  EXPECT_THROW(TypeParam::cross_entropy(f, z, ok, 1, 4, 0, 0, nullptr, logz, g),
               std::invalid_argument);
  EXPECT_THROW(TypeParam::softmax(f, z, nullptr, 1, 4), std::invalid_argument);
  EXPECT_THROW(TypeParam::logsumexp(f, z, logz, 1, 0), std::invalid_argument);
  EXPECT_NO_THROW(TypeParam::softmax(f, nullptr, nullptr, 0, 4));
  // The gradient is optional: a valid call without one runs (where the library can run).
  if (TypeParam::unavailable().empty()) {
    EXPECT_NO_THROW(TypeParam::cross_entropy(f, z, ok, 1, 4, 0, 0, loss, logz, nullptr));
  }
}

#ifndef LMO_TESTED_KERNELS_GPU
// The Highway kernels' own properties: how their soft-cap carries z/cap, and their bf16 store
// path.
using fast::bf16_from_f32;
using fast::cross_entropy;
using fast::f32_from_bf16;
using fast::softmax;

// Cross-entropy's gradient through the cap in the exponential branch (|z| ≥ 0.625·cap): cap' =
// 1/cosh²(z/cap) = 4e/(1 + e)², e = e^{−2|z/cap|}, whose condition in z/cap is 2|z/cap|. The
// kernel carries z/cap as hi + lo (SoftcapConsts::AbsArgSplit), so that cap' keeps a few ulps (a
// rounded z/cap alone made it 32 ulp at |z/cap| ≈ 17). Rows [z, z] with target 1 and λ = 0 make
// p_0 = 1/2 exactly, so 2·grad_0 is cap'(z) as the kernel computed it, judged against 1/cosh² in
// long double (64-bit significand) on every 4099th f32 from 0.625·cap to 40·cap.
TEST(FastCrossEntropy, CapGradientInTheExponentialBranchKeepsAFewUlps) {
  for (const float cap : {30.0f, 7.3f}) {
    std::vector<float> z;
    const uint32_t hi = tools::to_bits(40.0f * cap);
    for (uint32_t b = tools::to_bits(0.625f * cap); b < hi; b += 4099) {
      z.push_back(tools::from_bits(b));
      z.push_back(tools::from_bits(b));
    }
    const int64_t rows = static_cast<int64_t>(z.size() / 2);
    const std::vector<int64_t> target(static_cast<size_t>(rows), 1);
    std::vector<float> loss(static_cast<size_t>(rows)), logz(loss.size()), grad(z.size());
    for_each_target([&](const std::string& t) {
      cross_entropy(Storage::f32, z.data(), target.data(), rows, 2, 0.0f, cap, loss.data(),
                    logz.data(), grad.data());
      tools::Worst worst;
      for (size_t r = 0; r < static_cast<size_t>(rows); ++r) {
        const long double c = std::cosh(static_cast<long double>(z[2 * r]) / cap);
        worst.add(tools::ulps(2.0f * grad[2 * r], 1.0L / (c * c)), z[2 * r]);
      }
      // Measured 4.58 ulp (cap 7.3) on AVX2, SSE4, SSSE3 and the scalar target.
      EXPECT_LE(worst.err, 6.0) << t << " cap " << cap << ": worst at z = " << worst.at;
    });
  }
}

// bf16 outputs leave the kernels through their own store path (two rounded vectors packed per
// store, streamed for large outputs); the values are those of the f32 path on the same exact
// inputs, rounded once to nearest-even by the scalar bf16_from_f32 of fast/storage.h, bit for
// bit. Widths with tails, one vector's worth, and an output of 16 MiB (streamed).
TEST(FastSoftmax, Bf16OutputIsTheRoundedF32Output) {
  struct Shape {
    int64_t rows, n;
  };
  for (const Shape sh : {Shape{3, 37}, Shape{2, 4099}, Shape{1, 32}, Shape{256, 32768}}) {
    const size_t count = static_cast<size_t>(sh.rows * sh.n);
    // Logits uniform in [−8, 8) from a fixed integer hash (fast to fill 8M of them), exact in bf16.
    std::vector<uint16_t> zv(count), pb(count), gb(count);
    std::vector<float> zf(count), pf(count), gf(count), loss(sh.rows), logz(sh.rows);
    for (size_t i = 0; i < count; ++i) {
      uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull;
      h = (h ^ (h >> 31)) * 0xBF58476D1CE4E5B9ull;
      zv[i] = bf16_from_f32(static_cast<float>(h >> 40) * 0x1p-20f - 8.0f);
      zf[i] = f32_from_bf16(zv[i]);
    }
    const uint16_t* zb = zv.data();
    const ref::Tensor tt = targets(51, sh.rows, sh.n);
    const int64_t* target = tt.as<int64_t>().data();
    for_each_target([&](const std::string& t) {
      softmax(Storage::f32, zf.data(), pf.data(), sh.rows, sh.n);
      softmax(Storage::bf16, zb, pb.data(), sh.rows, sh.n);
      cross_entropy(Storage::f32, zf.data(), target, sh.rows, sh.n, 1e-4f, 30.0f, loss.data(),
                    logz.data(), gf.data());
      cross_entropy(Storage::bf16, zb, target, sh.rows, sh.n, 1e-4f, 30.0f, loss.data(),
                    logz.data(), gb.data());
      size_t bad_p = 0, bad_g = 0;
      for (size_t i = 0; i < count; ++i) {
        bad_p += pb[i] != bf16_from_f32(pf[i]);
        bad_g += gb[i] != bf16_from_f32(gf[i]);
      }
      EXPECT_EQ(bad_p, 0u) << t << " softmax " << sh.rows << "x" << sh.n;
      EXPECT_EQ(bad_g, 0u) << t << " cross_entropy grad " << sh.rows << "x" << sh.n;
    });
  }
}

#endif

}  // namespace
}  // namespace lmo::testdata
