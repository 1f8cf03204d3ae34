// `lmoracle bench --backend gpu`'s parts: the launch observer (gpu/launch_observer.h) that hands a
// benchmark each gpu/api.h call's replay, and the device timing (bench/gpu/device_timing.h) of the
// registry's workloads run through the gpu backend. Without a device only the observer's
// installation and the argument checks run; the rest skips with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/attention_workloads.h"
#include "bench/gpu/device_timing.h"
#include "bench/memory_workloads.h"
#include "gpu/api.h"
#include "gpu/launch_observer.h"
#include "oracle/backends/backend.h"
#include "tests/support/gpu_cases.h"

namespace lmo {
namespace {

using testdata::gpu_backend;

// Records each call's name; replays each `replays` times.
struct Recorder : gpu::LaunchObserver {
  int replays = 0;
  std::vector<std::string> calls;
  void on_call(const char* fn, const std::function<void()>& replay) override {
    calls.emplace_back(fn);
    for (int i = 0; i < replays; ++i) replay();
  }
};

TEST(LaunchObserver, InstalledForItsScopeAndRestoresThePreviousOne) {
  Recorder outer, inner;
  EXPECT_EQ(gpu::ObservedLaunches::current(), nullptr);
  {
    const gpu::ObservedLaunches a(outer);
    EXPECT_EQ(gpu::ObservedLaunches::current(), &outer);
    {
      const gpu::ObservedLaunches b(inner);
      EXPECT_EQ(gpu::ObservedLaunches::current(), &inner);
    }
    EXPECT_EQ(gpu::ObservedLaunches::current(), &outer);
  }
  EXPECT_EQ(gpu::ObservedLaunches::current(), nullptr);
}

TEST(DeviceTiming, BadCountsAreRefusedBeforeAnyCudaCall) {
  const auto nothing = [] {};
  EXPECT_THROW(bench::gpu::time_against_copy(nothing, 1024, 0), std::invalid_argument);
  EXPECT_THROW(bench::gpu::time_against_copy(nothing, 1, 3), std::invalid_argument);
  EXPECT_THROW(bench::gpu::time_against_sgemm(nothing, 8, 0, 8, 3), std::invalid_argument);
  EXPECT_THROW(bench::gpu::time_against_sgemm(nothing, 8, 8, 8, 0), std::invalid_argument);
}

// One observed call per api call, under its name; the replays (each kernel enqueued again on the
// same buffers) leave the host's outputs as a call without an observer leaves them, bit for bit.
TEST(LaunchObserver, SeesEachCallOnceAndItsReplaysChangeNothingTheHostSees) {
  LMO_REQUIRE_GPU();
  const int64_t rows = 8, d = 256;
  std::vector<float> x(rows * d), gamma(d), plain(rows * d), observed(rows * d, -1.0f);
  for (int64_t i = 0; i < rows * d; ++i) x[i] = std::sin(0.37 * static_cast<double>(i));
  for (int64_t i = 0; i < d; ++i) gamma[i] = 1.0f + 0.01f * static_cast<float>(i % 7);
  gpu::rmsnorm(gpu::Storage::f32, x.data(), gamma.data(), plain.data(), rows, d, 1e-6f, false);
  Recorder r;
  r.replays = 3;
  {
    const gpu::ObservedLaunches on(r);
    gpu::rmsnorm(gpu::Storage::f32, x.data(), gamma.data(), observed.data(), rows, d, 1e-6f, false);
    gpu::softcap(gpu::Storage::f32, x.data(), observed.data(), 0, 30.0f);  // n 0: no call made
  }
  ASSERT_EQ(r.calls, std::vector<std::string>{"gpu::rmsnorm"});
  EXPECT_EQ(observed, plain);
  // Without an observer nothing is handed on.
  gpu::rmsnorm(gpu::Storage::f32, x.data(), gamma.data(), observed.data(), rows, d, 1e-6f, false);
  EXPECT_EQ(r.calls.size(), 1u);
}

// A workload that makes no gpu/api.h call (run by another backend) cannot be timed on the device.
TEST(DeviceTiming, AWorkloadWithoutAGpuCallIsRefused) {
  LMO_REQUIRE_GPU();
  try {
    bench::gpu::time_against_copy([] {}, 4096, 2);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no gpu/api.h call"), std::string::npos) << e.what();
  }
}

// Every workload of the registry, run by the gpu backend at a small size, is either timed (one api
// call or more, positive finite medians, its outputs written whole) or refused with the reason.
TEST(DeviceTiming, EveryRegistryWorkloadIsTimedOrRefusedWithAReason) {
  LMO_REQUIRE_GPU();
  const std::unique_ptr<oracle::Backend> b = gpu_backend();
  ASSERT_NE(b, nullptr);
  const auto timed = [](const bench::gpu::DeviceTiming& t, const std::string& what) {
    EXPECT_GE(t.calls, 1) << what;
    EXPECT_EQ(t.repetitions, 3) << what;
    EXPECT_TRUE(std::isfinite(t.seconds) && t.seconds > 0) << what;
    EXPECT_TRUE(std::isfinite(t.yardstick_seconds) && t.yardstick_seconds > 0) << what;
  };
  int measured = 0;
  for (ref::Format f : {ref::Format::f32, ref::Format::bf16}) {
    for (const std::string& name : bench::memory_workload_names()) {
      const std::string what = name + " " + std::string(ref::format_name(f));
      std::unique_ptr<bench::Workload> w;
      try {
        w = std::make_unique<bench::Workload>(bench::memory_workload(name, *b, f, 1 << 16));
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("gpu does not run"), std::string::npos) << e.what();
        continue;
      }
      timed(bench::gpu::time_against_copy(w->run, w->bytes, 3), what);
      EXPECT_NO_THROW(w->check_written()) << what;
      ++measured;
    }
    for (const std::string& name : bench::compute_workload_names()) {
      const std::string what = name + " " + std::string(ref::format_name(f));
      std::unique_ptr<bench::ComputeWorkload> w;
      try {
        w = std::make_unique<bench::ComputeWorkload>(bench::compute_workload(name, *b, f, 32));
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("gpu does not run"), std::string::npos) << e.what();
        continue;
      }
      timed(bench::gpu::time_against_sgemm(w->run, w->gemm_m, w->gemm_n, w->gemm_k, 3), what);
      EXPECT_NO_THROW(w->check_written()) << what;
      ++measured;
    }
  }
  // The kernels the GPU bench measured before it took its workloads from the registry: norms,
  // softmax, cross-entropy, the GLU gates, soft-cap, the sinusoidal encoding, attention, decode
  // and MLA decode, in two formats.
  EXPECT_GE(measured, 2 * 11);
}

}  // namespace
}  // namespace lmo
