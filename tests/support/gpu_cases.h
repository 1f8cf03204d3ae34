// Helpers for the GPU tests: the device requirement (a test without a usable CUDA device is
// skipped with query_device()'s reason), the gpu backend of the registry, the storage mapping
// from the fast tests' inputs, the built-in cases the GPU backend runs, and the run-twice bitwise
// determinism check.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fast/storage.h"
#include "gpu/api.h"
#include "oracle/backends/backend.h"
#include "oracle/cases/case.h"
#include "oracle/core/kernel_entry.h"
#include "oracle/core/op.h"
#include "oracle/ops/registry.h"

// Skips the current test (returning from it) when no CUDA device can run the kernels.
#define LMO_REQUIRE_GPU()                                                              \
  do {                                                                                 \
    const lmo::gpu::DeviceInfo lmo_dev = lmo::gpu::query_device();                     \
    if (!lmo_dev.present) GTEST_SKIP() << "no usable CUDA device: " << lmo_dev.reason; \
  } while (0)

namespace lmo::testdata {

// The registry's gpu backend; nullptr when it is not registered (no device).
inline std::unique_ptr<oracle::Backend> gpu_backend() {
  for (std::unique_ptr<oracle::Backend>& b : oracle::available_backends()) {
    if (b->name() == "gpu") return std::move(b);
  }
  return nullptr;
}

inline gpu::Storage gpu_storage(fast::Storage s) {
  return s == fast::Storage::f32    ? gpu::Storage::f32
         : s == fast::Storage::bf16 ? gpu::Storage::bf16
                                    : gpu::Storage::f16;
}

// The built-in cases of the ops whose records name one of `entries` (oracle/core/kernel_entry.h),
// with each of their formats the GPU kernels store (f32, bf16, f16).
inline std::vector<std::pair<oracle::Case, ref::Format>> gpu_builtin_cases(
    const std::set<oracle::KernelEntry>& entries) {
  std::vector<std::pair<oracle::Case, ref::Format>> out;
  for (const oracle::Case& c : oracle::load_case_dir(oracle::builtin_cases_dir())) {
    if (!entries.count(oracle::kernel_entry(c.op))) continue;
    for (ref::Format f : c.formats) {
      if (f == ref::Format::f32 || f == ref::Format::bf16 || f == ref::Format::f16) {
        out.emplace_back(c, f);
      }
    }
  }
  return out;
}

// Two runs of the same call must write identical bytes (no atomics, fixed reduction trees).
inline void expect_deterministic(const std::function<std::vector<uint8_t>()>& run,
                                 const std::string& where) {
  const std::vector<uint8_t> first = run();
  EXPECT_TRUE(run() == first) << where << ": a second run wrote different bytes";
}

}  // namespace lmo::testdata
