// gpu/api.h softmax, log-sum-exp and the fused cross-entropy (z-loss, soft-cap, gradient)
// against reference/softmax.h: the exact mp result on the same stored logits, judged with the
// policy table's naive_relative rows (the naive run is the reference in f32) on every storage
// format; vocabularies of 32000 and widths around the block size; rows with −inf (masked), +inf
// and NaN logits; run-twice determinism; validation (runs without a device).
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <span>
#include <stdexcept>

#include "gpu/api.h"
#include "tests/support/gpu_cases.h"
#include "tests/support/softmax_rows.h"

namespace lmo::gpu {
namespace {

using namespace lmo::testdata;
using fast::Storage;
using ref::mp;
using F32 = ref::Sim<ref::Format::f32>;

void check_softmax(Storage s, const ref::Tensor& z, int64_t rows, int64_t n) {
  std::vector<mp> ex_p, ex_l;
  softmax_rows(z, rows, n, ex_p, ex_l);
  std::vector<F32> nv_p, nv_l;
  softmax_rows(z, rows, n, nv_p, nv_l);
  oracle::GuardedBuffer p(dtype_of(s), {rows, n}), l(ref::DType::f32, {rows});
  const auto run = [&] {
    p.arm();
    l.arm();
    softmax(gpu_storage(s), z.bytes().data(), p.data(), rows, n);
    logsumexp(gpu_storage(s), z.bytes().data(), static_cast<float*>(l.data()), rows, n);
    std::vector<uint8_t> b = bytes_of(p), c = bytes_of(l);
    b.insert(b.end(), c.begin(), c.end());
    return b;
  };
  run();
  const std::string where = "gpu " + std::string(fast::storage_name(s)) + " n=" + std::to_string(n);
  expect_judged("softmax", "", ex_p, p, as_doubles(nv_p), where);
  expect_judged("logsumexp", "", ex_l, l, as_doubles(nv_l), where);
  expect_deterministic(run, "softmax " + where);
}

void check_ce(Storage s, const ref::Tensor& z, int64_t rows, int64_t n, float lambda, float cap,
              uint64_t seed) {
  const ref::Tensor tt = targets(seed, rows, n);
  const std::span<const int64_t> target = tt.as<int64_t>();
  std::vector<mp> ex_loss, ex_logz, ex_grad;
  loss_rows(z, target, rows, n, lambda, cap, ex_loss, ex_logz, ex_grad);
  std::vector<F32> nv_loss, nv_logz, nv_grad;
  loss_rows(z, target, rows, n, lambda, cap, nv_loss, nv_logz, nv_grad);
  oracle::GuardedBuffer loss(ref::DType::f32, {rows}), logz(ref::DType::f32, {rows}),
      grad(dtype_of(s), {rows, n});
  const auto run = [&] {
    loss.arm();
    logz.arm();
    grad.arm();
    cross_entropy(gpu_storage(s), z.bytes().data(), target.data(), rows, n, lambda, cap,
                  static_cast<float*>(loss.data()), static_cast<float*>(logz.data()), grad.data());
    std::vector<uint8_t> b = bytes_of(grad), c = bytes_of(loss), d = bytes_of(logz);
    b.insert(b.end(), c.begin(), c.end());
    b.insert(b.end(), d.begin(), d.end());
    return b;
  };
  run();
  const std::string where = "gpu " + std::string(fast::storage_name(s)) +
                            " n=" + std::to_string(n) + " λ=" + std::to_string(lambda) +
                            " cap=" + std::to_string(cap);
  expect_judged("cross_entropy", "loss", ex_loss, loss, as_doubles(nv_loss), where);
  expect_judged("cross_entropy", "logz", ex_logz, logz, as_doubles(nv_logz), where);
  expect_judged("cross_entropy", "grad", ex_grad, grad, as_doubles(nv_grad), where);
  expect_deterministic(run, "cross_entropy " + where);
}

TEST(GpuSoftmax, Vocab32000) {
  LMO_REQUIRE_GPU();
  for (Storage s : fast::kAllStorages) check_softmax(s, logits(41, s, 2, 32000, 4.0), 2, 32000);
}

TEST(GpuSoftmax, WidthsAndMaskedLogits) {
  LMO_REQUIRE_GPU();
  for (Storage s : fast::kAllStorages) {
    check_softmax(s, logits(42, s, 3, 37, 2.0), 3, 37);
    check_softmax(s, logits(43, s, 1, 1, 2.0), 1, 1);
    check_softmax(s, logits(44, s, 2, 257, 2.0), 2, 257);
    // Masked logits (−inf) in a row, a row with +inf, a row with NaN.
    const std::vector<oracle::SpecialAt> sp = softmax_specials();
    check_softmax(s, logits(45, s, 3, 50, 2.0, sp), 3, 50);
  }
}

TEST(GpuCrossEntropy, Vocab32000WithZLossAndSoftcap) {
  LMO_REQUIRE_GPU();
  for (Storage s : fast::kAllStorages) {
    const ref::Tensor z = logits(46, s, 2, 32000, 4.0);
    check_ce(s, z, 2, 32000, 1e-4f, 30.0f, 46);
    check_ce(s, z, 2, 32000, 0.0f, 0.0f, 47);
  }
}

TEST(GpuCrossEntropy, SmallRowsAndSpecialLogits) {
  LMO_REQUIRE_GPU();
  for (Storage s : fast::kAllStorages) {
    const std::vector<oracle::SpecialAt> sp = cross_entropy_specials();
    const ref::Tensor z = logits(48, s, 4, 40, 3.0, sp);
    check_ce(s, z, 4, 40, 1e-3f, 0.0f, 48);
    check_ce(s, z, 4, 40, 1e-3f, 50.0f, 49);
    check_ce(s, logits(50, s, 3, 5, 1.0), 3, 5, 1e-4f, 30.0f, 50);
  }
}

TEST(GpuCrossEntropy, Validation) {
  float z[4] = {0, 1, 2, 3}, loss[1], logz[1], g[4];
  const int64_t bad[1] = {4}, ok[1] = {3};
  const gpu::Storage f = gpu::Storage::f32;
  EXPECT_THROW(cross_entropy(f, z, bad, 1, 4, 0, 0, loss, logz, g), std::invalid_argument);
  EXPECT_THROW(cross_entropy(f, z, ok, 1, 4, 0, -1, loss, logz, g), std::invalid_argument);
  EXPECT_THROW(cross_entropy(f, z, ok, 1, 4, NAN, 0, loss, logz, g), std::invalid_argument);
  EXPECT_THROW(cross_entropy(f, z, ok, 1, 0, 0, 0, loss, logz, g), std::invalid_argument);
  EXPECT_THROW(cross_entropy(f, z, ok, 1, 4, 0, 0, nullptr, logz, g), std::invalid_argument);
  EXPECT_THROW(softmax(f, z, nullptr, 1, 4), std::invalid_argument);
  EXPECT_THROW(logsumexp(f, z, logz, 1, 0), std::invalid_argument);
  EXPECT_NO_THROW(softmax(f, nullptr, nullptr, 0, 4));
}

}  // namespace
}  // namespace lmo::gpu
