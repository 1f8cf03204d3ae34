// gpu/api.h norms against reference/norms.h: the exact mp result on the same stored inputs,
// judged with the policy table's rmsnorm / rmsnorm_gemma / layernorm rows (naive_relative: the
// naive run is the reference in f32), for every storage format; a run-twice determinism check;
// argument validation and the error reported without a device (both run on any machine).
#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <stdexcept>

#include "gpu/api.h"
#include "reference/norms.h"
#include "tests/support/fast_cases.h"
#include "tests/support/gpu_cases.h"
#include "tests/support/norm_rows.h"

namespace lmo::gpu {
namespace {

using namespace lmo::testdata;
using fast::Storage;
using ref::mp;

using F32 = ref::Sim<ref::Format::f32>;  // the naive run's number type

void run(NormKind k, Storage s, const NormInputs& in, const NormCase& c, oracle::GuardedBuffer& y) {
  y.arm();
  if (k == NormKind::layer) {
    layernorm(gpu_storage(s), in.x.bytes().data(), in.gamma.bytes().data(), in.beta.bytes().data(),
              y.data(), c.rows, c.d, c.eps);
  } else {
    rmsnorm(gpu_storage(s), in.x.bytes().data(), in.gamma.bytes().data(), y.data(), c.rows, c.d,
            c.eps, k == NormKind::gemma);
  }
}

void check(NormKind k, const NormCase& c, uint64_t seed) {
  for (Storage s : fast::kAllStorages) {
    const NormInputs in = norm_inputs(k, c, s, seed);
    const std::vector<mp> exact = norm_reference_rows<mp>(k, in.x, in, c);
    const std::vector<double> naive = as_doubles(norm_reference_rows<F32>(k, in.x, in, c));
    oracle::GuardedBuffer y(dtype_of(s), {c.rows, c.d});
    const std::string where = std::string(fast::storage_name(s)) +
                              " rows=" + std::to_string(c.rows) + " d=" + std::to_string(c.d);
    run(k, s, in, c, y);
    expect_judged(op_name(k), "", exact, y, naive, "gpu " + where);
    expect_deterministic(
        [&] {
          run(k, s, in, c, y);
          return bytes_of(y);
        },
        std::string(op_name(k)) + " " + where);
  }
}

TEST(GpuNorms, RmsNormRealisticRows) {
  LMO_REQUIRE_GPU();
  check(NormKind::rms, {4, 4096, 0.0, 1.0, 1e-5f}, 11);
}
TEST(GpuNorms, RmsNormGemmaRealisticRows) {
  LMO_REQUIRE_GPU();
  check(NormKind::gemma, {4, 4096, 0.0, 1.0, 1e-6f}, 12);
}
TEST(GpuNorms, LayerNormRealisticRows) {
  LMO_REQUIRE_GPU();
  check(NormKind::layer, {4, 4096, 0.0, 1.0, 1e-5f}, 13);
}
// |μ| ≫ σ: the two-pass variance must not cancel.
TEST(GpuNorms, LayerNormLargeMean) {
  LMO_REQUIRE_GPU();
  check(NormKind::layer, {3, 1000, 30.0, 0.5, 1e-5f}, 14);
}
// Widths below, at and not a multiple of the block's 256 threads (idle threads in the tree),
// and a wide row (8 elements per thread).
TEST(GpuNorms, WidthsAroundTheBlockSize) {
  LMO_REQUIRE_GPU();
  check(NormKind::rms, {5, 13, 0.0, 1.0, 1e-5f}, 15);
  check(NormKind::layer, {5, 1, 0.0, 1.0, 1e-5f}, 16);
  check(NormKind::gemma, {2, 257, 0.0, 1.0, 0.0f}, 17);
  check(NormKind::rms, {3, 256, 0.0, 1.0, 1e-5f}, 18);
  check(NormKind::layer, {2, 2048 + 7, 0.0, 2.0, 1e-5f}, 19);
}

// Magnitudes whose squares overflow (or vanish in) f32: with ε = 0 both norms are
// scale-invariant (C09), so the naive f32 run on the unscaled row is the naive error level.
TEST(GpuNorms, ExtremeMagnitudes) {
  LMO_REQUIRE_GPU();
  for (int shift : {100, -100}) {
    const NormCase c{2, 64, 0.0, 1.0, 0.0f};
    const Storage s = Storage::f32;
    const ScaledNormInputs sc = scaled_norm_inputs(c, shift, 21);
    for (NormKind k : {NormKind::rms, NormKind::layer}) {
      const std::vector<mp> exact = norm_reference_rows<mp>(k, sc.in.x, sc.in, c);
      const std::vector<double> naive =
          as_doubles(norm_reference_rows<F32>(k, sc.unscaled, sc.in, c));
      oracle::GuardedBuffer y(dtype_of(s), {c.rows, c.d});
      run(k, s, sc.in, c, y);
      expect_judged(op_name(k), "", exact, y, naive, "gpu 2^" + std::to_string(shift));
    }
  }
}

// Validation happens before any CUDA call, so it holds on machines without a device.
TEST(GpuNorms, Validation) {
  float x[4] = {1, 2, 3, 4}, y[4];
  const gpu::Storage f = gpu::Storage::f32;
  EXPECT_THROW(rmsnorm(f, x, x, y, -1, 4, 0.0f), std::invalid_argument);
  EXPECT_THROW(rmsnorm(f, x, x, y, 1, 0, 0.0f), std::invalid_argument);
  EXPECT_THROW(rmsnorm(f, x, x, y, 1, 4, -1.0f), std::invalid_argument);
  EXPECT_THROW(rmsnorm(f, x, nullptr, y, 1, 4, 0.0f), std::invalid_argument);
  EXPECT_THROW(rmsnorm(static_cast<gpu::Storage>(7), x, x, y, 1, 4, 0.0f), std::invalid_argument);
  EXPECT_THROW(layernorm(f, x, x, nullptr, y, 1, 4, 0.0f), std::invalid_argument);
  EXPECT_THROW(layernorm(f, x, x, x, y, 1, 4, INFINITY), std::invalid_argument);
  EXPECT_NO_THROW(layernorm(f, nullptr, nullptr, nullptr, nullptr, 0, 4, 0.0f));
}

// Without a device a valid call reports the failing CUDA call instead of returning garbage.
TEST(GpuNorms, NoDeviceIsAnError) {
  if (query_device().present) GTEST_SKIP() << "a device is present";
  float x[4] = {1, 2, 3, 4}, y[4];
  try {
    rmsnorm(gpu::Storage::f32, x, x, y, 1, 4, 0.0f);
    ADD_FAILURE() << "rmsnorm without a device returned normally";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("gpu::rmsnorm: cudaMalloc failed"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace lmo::gpu
