// gpu/api_positional.h's sinusoidal encoding against the exact reference of the oracle's
// sinusoidal_pe op (reference/positional.h in mp on the same positions), judged with the policy
// table's row on every storage format; at positions up to 2^20 every f32 value within 2^-24 of
// the exact one (the naive f32 encoding misses that 1000-fold); widths of 1, 65 and 256 pairs
// (partial blocks, narrow rows); a pe array not aligned for paired stores (the launcher's other
// kernel); run-twice bitwise identity. Needs a CUDA device (skipped with the reason otherwise);
// argument validation runs everywhere. The kernel's math on the host: gpu_angles_test.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "fast/kernel_api.h"
#include "gpu/angles.h"
#include "gpu/api.h"
#include "gpu/launch_positional.h"
#include "oracle/ops/positional.h"
#include "tests/support/fast_cases.h"
#include "tests/support/gpu_cases.h"
#include "tests/support/oracle_harness.h"

namespace lmo::gpu {
namespace {

using namespace lmo::testdata;
using fast::Storage;
using nlohmann::json;
using ref::mp;

struct Prepared {
  Prepared(const json& params, Storage s)
      : h(json{{"id", "gpu/sinusoidal_pe"},
               {"op", "sinusoidal_pe"},
               {"seed", 7201},
               {"formats", {std::string(fast::storage_name(s))}},
               {"params", params}},
          format_of(s)),
        positions(h.inputs().ints("positions")),
        exact(h.op().exact(h.inputs())[0].values),
        naive(h.op().simulated(ref::Format::f32, h.inputs())[0].values) {}
  const oracle::PositionalParams& p() const {
    return dynamic_cast<const oracle::PositionalOp&>(h.op()).params();
  }
  lmo::testing::Harness h;
  std::vector<int64_t> positions;
  std::vector<mp> exact;
  std::vector<double> naive;
};

// Runs the encoding into y (armed first) and returns its bytes.
std::vector<uint8_t> run(const Prepared& c, Storage s, oracle::GuardedBuffer& y) {
  y.arm();
  sinusoidal_pe(gpu_storage(s), c.positions.data(), y.data(), c.p().tokens, c.p().d, c.p().base);
  return bytes_of(y);
}

void expect_passes(const json& params, Storage s, const std::string& what) {
  const Prepared c(params, s);
  oracle::GuardedBuffer y(dtype_of(s), c.h.op().outputs()[0].shape);
  run(c, s, y);
  const std::string where = "gpu " + std::string(fast::storage_name(s)) + " " + what;
  expect_judged("sinusoidal_pe", "", c.exact, y, c.naive, where);
  expect_deterministic([&] { return run(c, s, y); }, where);
}

TEST(GpuSinusoidalPe, EveryStorageAndWidth) {
  LMO_REQUIRE_GPU();
  for (int64_t d : {130, 512, 2}) {
    for (Storage s : fast::kAllStorages) {
      expect_passes({{"tokens", 40}, {"d", d}, {"max_position", 1 << 20}}, s,
                    "d=" + std::to_string(d));
    }
  }
  expect_passes({{"tokens", 4}, {"d", 64}, {"base", 500000}, {"max_position", int64_t{1} << 40}},
                Storage::bf16, "base 500000, positions to 2^40");
}

// |pe − exact| ≤ 2^-24 at positions up to 2^20; the naive f32 encoding misses it 1000-fold.
TEST(GpuSinusoidalPe, AccurateToF32AtLongContext) {
  LMO_REQUIRE_GPU();
  const Prepared c(
      {{"tokens", 64}, {"d", 512}, {"min_position", 1 << 19}, {"max_position", 1 << 20}},
      Storage::f32);
  const double bound = 0x1p-24;
  EXPECT_GT(max_error(c.exact, c.naive), 1000 * bound);
  oracle::GuardedBuffer y(ref::DType::f32, c.h.op().outputs()[0].shape);
  run(c, Storage::f32, y);
  EXPECT_LE(max_error(c.exact, values_of(y, static_cast<int64_t>(c.exact.size()))), bound);
}

// The device evaluates gpu/angles.h with IEEE operations only (fma, rint, __dmul_rn, products
// and sums that nvcc has nothing to contract in), so its f32 values are bit for bit the host's
// evaluation of the same function, which gpu_angles_test shows correctly rounded.
TEST(GpuSinusoidalPe, SameBitsAsTheHostEvaluation) {
  LMO_REQUIRE_GPU();
  const int64_t tokens = 50, d = 256, half = d / 2;
  std::vector<int64_t> pos;
  for (int64_t t = 0; t < tokens; ++t) pos.push_back(-(int64_t{1} << 20) + t * 41947);
  const fast::Turns turns = fast::turns_of(fast::inverse_powers(10000.0L, half, d));
  std::vector<float> want, got(static_cast<size_t>(tokens * d));
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t i = 0; i < half; ++i) {
      double c = 0, s = 0;
      cos_sin_of_turns(static_cast<double>(pos[static_cast<size_t>(t)]),
                       turns.hi[static_cast<size_t>(i)], turns.lo[static_cast<size_t>(i)], c, s);
      want.push_back(static_cast<float>(s));
      want.push_back(static_cast<float>(c));
    }
  }
  sinusoidal_pe(gpu::Storage::f32, pos.data(), got.data(), tokens, d);
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(std::memcmp(&got[k], &want[k], sizeof(float)), 0)
        << "element " << k << ": device " << got[k] << ", host " << want[k];
  }
}

// A pe array one element past an aligned one (two stores per pair instead of one) gives the
// bits of the aligned run.
TEST(GpuSinusoidalPe, UnalignedOutputSameBits) {
  LMO_REQUIRE_GPU();
  const int64_t tokens = 37, d = 70, half = d / 2;
  std::vector<int64_t> pos;
  for (int64_t t = 0; t < tokens; ++t) pos.push_back(t * 7919 + 3);
  const fast::Turns turns = fast::turns_of(fast::inverse_powers(10000.0L, half, d));
  for (Storage fs : fast::kAllStorages) {
    const gpu::Storage s = gpu_storage(fs);
    const size_t w = fs == Storage::f32 ? 4 : 2, bytes = static_cast<size_t>(tokens * d) * w;
    std::vector<uint8_t> aligned(bytes), shifted(bytes);
    sinusoidal_pe(s, pos.data(), aligned.data(), tokens, d);
    int64_t* dpos = nullptr;
    double *dhi = nullptr, *dlo = nullptr;
    uint8_t* dpe = nullptr;
    ASSERT_EQ(cudaMalloc(&dpos, pos.size() * sizeof(int64_t)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dhi, static_cast<size_t>(half) * sizeof(double)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dlo, static_cast<size_t>(half) * sizeof(double)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dpe, bytes + w), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dpos, pos.data(), pos.size() * sizeof(int64_t), cudaMemcpyHostToDevice),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dhi, turns.hi.data(), static_cast<size_t>(half) * sizeof(double),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dlo, turns.lo.data(), static_cast<size_t>(half) * sizeof(double),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
    ASSERT_EQ(launch_sinusoidal_pe(s, dpos, dhi, dlo, dpe + w, tokens, d, nullptr), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(shifted.data(), dpe + w, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    for (void* p : {static_cast<void*>(dpos), static_cast<void*>(dhi), static_cast<void*>(dlo),
                    static_cast<void*>(dpe)}) {
      EXPECT_EQ(cudaFree(p), cudaSuccess);
    }
    EXPECT_TRUE(shifted == aligned) << fast::storage_name(fs);
  }
}

TEST(GpuSinusoidalPe, Validation) {
  const int64_t pos[2] = {0, 1}, far[1] = {(int64_t{1} << 53) + 1};
  float y[8];
  const gpu::Storage f32 = gpu::Storage::f32;
  EXPECT_THROW(sinusoidal_pe(f32, pos, y, 2, 3), std::invalid_argument);
  EXPECT_THROW(sinusoidal_pe(f32, pos, y, 2, 0), std::invalid_argument);
  EXPECT_THROW(sinusoidal_pe(f32, pos, y, -1, 4), std::invalid_argument);
  EXPECT_THROW(sinusoidal_pe(f32, nullptr, y, 2, 4), std::invalid_argument);
  EXPECT_THROW(sinusoidal_pe(f32, pos, nullptr, 2, 4), std::invalid_argument);
  EXPECT_THROW(sinusoidal_pe(f32, pos, y, 2, 4, 0.5), std::invalid_argument);
  EXPECT_THROW(sinusoidal_pe(f32, pos, y, 2, 4, INFINITY), std::invalid_argument);
  EXPECT_THROW(sinusoidal_pe(f32, far, y, 1, 4), std::invalid_argument);
  EXPECT_THROW(sinusoidal_pe(static_cast<gpu::Storage>(7), pos, y, 2, 4), std::invalid_argument);
  // Nothing to write: no CUDA call, so no device is needed.
  EXPECT_NO_THROW(sinusoidal_pe(f32, nullptr, nullptr, 0, 4));
}

}  // namespace
}  // namespace lmo::gpu
