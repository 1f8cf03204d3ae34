// fast/softmax.h and fast/cross_entropy.h against reference/softmax.h (softmax, logsumexp,
// softmax_cross_entropy with z-loss and soft-cap): the exact mp result on the same stored
// logits, judged with the policy table's naive_relative rows (softmax, logsumexp,
// cross_entropy loss/logz/grad) on every storage format and supported target, with a vocabulary
// of 32000; rows with −inf (masked), +inf and NaN logits; thread invariance; validation.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>

#include "fast/cross_entropy.h"
#include "fast/softmax.h"
#include "reference/softmax.h"
#include "tests/support/fast_cases.h"

namespace lmo::fast {
namespace {

using namespace lmo::testdata;
using ref::mp;

// Logits N(0, σ) with optional special values at fixed places.
ref::Tensor logits(uint64_t seed, Storage s, int64_t rows, int64_t n, double stddev,
                   const std::vector<oracle::SpecialAt>& specials = {}) {
  ref::Tensor z = fast_normal(seed, "z", s, {rows, n}, 0.0, stddev);
  oracle::place_specials(z, specials);
  return z;
}

void check_softmax(Storage s, const ref::Tensor& z, int64_t rows, int64_t n) {
  std::vector<mp> ex_p, ex_l;
  const std::vector<mp> zv = values_as<mp>(z);
  std::vector<double> nv_p, nv_l;
  for (int64_t r = 0; r < rows; ++r) {
    const std::span<const mp> row(zv.data() + r * n, static_cast<size_t>(n));
    const std::vector<mp> p = ref::softmax<mp>(row);
    ex_p.insert(ex_p.end(), p.begin(), p.end());
    ex_l.push_back(ref::logsumexp<mp>(row));
  }
  with_sim(s, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> zt = values_as<T>(z);
    for (int64_t r = 0; r < rows; ++r) {
      const std::span<const T> row(zt.data() + r * n, static_cast<size_t>(n));
      for (const T& v : ref::softmax<T>(row)) nv_p.push_back(ref::to_double(v));
      nv_l.push_back(ref::to_double(ref::logsumexp<T>(row)));
    }
  });
  oracle::GuardedBuffer p(dtype_of(s), {rows, n}), l(ref::DType::f32, {rows});
  const auto run = [&] {
    p.arm();
    l.arm();
    softmax(s, z.bytes().data(), p.data(), rows, n);
    logsumexp(s, z.bytes().data(), static_cast<float*>(l.data()), rows, n);
  };
  for_each_target([&](const std::string& target) {
    run();
    const std::string where = target + " " + std::string(storage_name(s));
    expect_judged("softmax", "", ex_p, p, nv_p, where);
    expect_judged("logsumexp", "", ex_l, l, nv_l, where);
  });
  expect_thread_invariant(
      [&] {
        run();
        std::vector<uint8_t> b = bytes_of(p), c = bytes_of(l);
        b.insert(b.end(), c.begin(), c.end());
        return b;
      },
      "softmax " + std::string(storage_name(s)));
}

void check_ce(Storage s, const ref::Tensor& z, int64_t rows, int64_t n, float lambda, float cap,
              uint64_t seed) {
  const ref::Tensor tt = oracle::uniform_int(seed, "target", ref::DType::i64, {rows}, 0, n);
  const std::span<const int64_t> target = tt.as<int64_t>();
  std::vector<mp> ex_loss, ex_logz, ex_grad;
  const std::vector<mp> zv = values_as<mp>(z);
  const std::optional<mp> mcap = cap > 0 ? std::optional<mp>(mp(cap)) : std::nullopt;
  for (int64_t r = 0; r < rows; ++r) {
    const std::span<const mp> row(zv.data() + r * n, static_cast<size_t>(n));
    const ref::LossRow<mp> lr = ref::softmax_cross_entropy<mp>(
        row, target[static_cast<size_t>(r)], mp(static_cast<double>(lambda)), mcap);
    ex_loss.push_back(lr.loss);
    ex_logz.push_back(lr.log_z);
    ex_grad.insert(ex_grad.end(), lr.dlogits.begin(), lr.dlogits.end());
  }
  std::vector<double> nv_loss, nv_logz, nv_grad;
  with_sim(s, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> zt = values_as<T>(z);
    const std::optional<T> tcap =
        cap > 0 ? std::optional<T>(ref::from_mp<T>(mp(cap))) : std::nullopt;
    for (int64_t r = 0; r < rows; ++r) {
      const std::span<const T> row(zt.data() + r * n, static_cast<size_t>(n));
      const ref::LossRow<T> lr = ref::softmax_cross_entropy<T>(
          row, target[static_cast<size_t>(r)], ref::from_mp<T>(mp(static_cast<double>(lambda))),
          tcap);
      nv_loss.push_back(ref::to_double(lr.loss));
      nv_logz.push_back(ref::to_double(lr.log_z));
      for (const T& g : lr.dlogits) nv_grad.push_back(ref::to_double(g));
    }
  });
  oracle::GuardedBuffer loss(ref::DType::f32, {rows}), logz(ref::DType::f32, {rows}),
      grad(dtype_of(s), {rows, n});
  const auto run = [&] {
    loss.arm();
    logz.arm();
    grad.arm();
    cross_entropy(s, z.bytes().data(), target.data(), rows, n, lambda, cap,
                  static_cast<float*>(loss.data()), static_cast<float*>(logz.data()),
                  grad.data());
  };
  for_each_target([&](const std::string& target_name) {
    run();
    const std::string where = target_name + " " + std::string(storage_name(s)) + " λ=" +
                              std::to_string(lambda) + " cap=" + std::to_string(cap);
    expect_judged("cross_entropy", "loss", ex_loss, loss, nv_loss, where);
    expect_judged("cross_entropy", "logz", ex_logz, logz, nv_logz, where);
    expect_judged("cross_entropy", "grad", ex_grad, grad, nv_grad, where);
  });
  expect_thread_invariant(
      [&] {
        run();
        std::vector<uint8_t> b = bytes_of(grad), c = bytes_of(loss), d = bytes_of(logz);
        b.insert(b.end(), c.begin(), c.end());
        b.insert(b.end(), d.begin(), d.end());
        return b;
      },
      "cross_entropy " + std::string(storage_name(s)));
}

TEST(FastSoftmax, Vocab32000) {
  for (Storage s : kAllStorages) check_softmax(s, logits(41, s, 2, 32000, 4.0), 2, 32000);
}

TEST(FastSoftmax, OddWidthsAndMaskedLogits) {
  for (Storage s : kAllStorages) {
    check_softmax(s, logits(42, s, 3, 37, 2.0), 3, 37);
    check_softmax(s, logits(43, s, 1, 1, 2.0), 1, 1);
    // Masked logits (−inf) in a row, a row with +inf, a row with NaN.
    const std::vector<oracle::SpecialAt> sp = {{1, oracle::Special::neg_inf},
                                               {7, oracle::Special::neg_inf},
                                               {50 + 3, oracle::Special::pos_inf},
                                               {100 + 9, oracle::Special::nan}};
    check_softmax(s, logits(44, s, 3, 50, 2.0, sp), 3, 50);
  }
}

TEST(FastCrossEntropy, Vocab32000WithZLossAndSoftcap) {
  for (Storage s : kAllStorages) {
    const ref::Tensor z = logits(45, s, 2, 32000, 4.0);
    check_ce(s, z, 2, 32000, 1e-4f, 30.0f, 45);
    check_ce(s, z, 2, 32000, 0.0f, 0.0f, 46);
  }
}

// A cap of 5 under logits of σ 4: about 40 % of the logits have |z| ≥ 0.625·cap, so most vectors
// mix lanes of the soft-cap's two branches (tanh polynomial with cap' = 1 − tanh², and the
// exponential form), besides whole vectors of either; 4099 leaves a tail.
TEST(FastCrossEntropy, SoftcapBranchesMixedWithinVectors) {
  for (Storage s : kAllStorages) check_ce(s, logits(50, s, 2, 4099, 4.0), 2, 4099, 1e-4f, 5.0f, 50);
}

TEST(FastCrossEntropy, SmallRowsAndSpecialLogits) {
  for (Storage s : kAllStorages) {
    const std::vector<oracle::SpecialAt> sp = {{2, oracle::Special::neg_inf},
                                               {40 + 5, oracle::Special::pos_inf},
                                               {80 + 1, oracle::Special::nan},
                                               {120 + 0, oracle::Special::max_finite}};
    const ref::Tensor z = logits(47, s, 4, 40, 3.0, sp);
    check_ce(s, z, 4, 40, 1e-3f, 0.0f, 47);
    check_ce(s, z, 4, 40, 1e-3f, 50.0f, 48);
    check_ce(s, logits(49, s, 3, 5, 1.0), 3, 5, 1e-4f, 30.0f, 49);
  }
}

TEST(FastCrossEntropy, Validation) {
  float z[4] = {0, 1, 2, 3}, loss[1], logz[1], g[4];
  const int64_t bad[1] = {4}, ok[1] = {3};
  EXPECT_THROW(cross_entropy(Storage::f32, z, bad, 1, 4, 0, 0, loss, logz, g),
               std::invalid_argument);
  EXPECT_THROW(cross_entropy(Storage::f32, z, ok, 1, 4, 0, -1, loss, logz, g),
               std::invalid_argument);
  EXPECT_THROW(cross_entropy(Storage::f32, z, ok, 1, 4, NAN, 0, loss, logz, g),
               std::invalid_argument);
  EXPECT_THROW(cross_entropy(Storage::f32, z, ok, 1, 0, 0, 0, loss, logz, g),
               std::invalid_argument);
  EXPECT_THROW(cross_entropy(Storage::f32, z, ok, 1, 4, 0, 0, nullptr, logz, g),
               std::invalid_argument);
  EXPECT_NO_THROW(cross_entropy(Storage::f32, z, ok, 1, 4, 0, 0, loss, logz, nullptr));
  EXPECT_THROW(softmax(Storage::f32, z, nullptr, 1, 4), std::invalid_argument);
  EXPECT_THROW(logsumexp(Storage::f32, z, logz, 1, 0), std::invalid_argument);
}

}  // namespace
}  // namespace lmo::fast
