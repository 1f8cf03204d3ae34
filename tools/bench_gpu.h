// `lmoracle bench --backend gpu`: the registry's workloads (bench/memory_workloads.h,
// bench/attention_workloads.h) run through the gpu backend, their kernels timed on device buffers
// (bench/gpu/device_timing.h), as rows in the JSON shape of the fast rows (bench_command.cc).
// Without CUDA compiled, or without a usable device, it refuses with lmo::oracle::InputError
// (exit 2) naming the reason: nothing is measured.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <regex>
#include <vector>

#include "reference/formats.h"

namespace lmo::tools {

struct GpuBenchRows {
  nlohmann::json memory = nlohmann::json::array();   // bytes/s over a device-to-device copy
  nlohmann::json compute = nlohmann::json::array();  // FLOP/s over cuBLAS SGEMM
  // {"op", "format", "reason"} for each workload the gpu backend does not run.
  nlohmann::json not_measured = nlohmann::json::array();
};

// The memory-bound workloads matching `filter` with about `size` elements in their main input,
// and the compute-bound ones over `tokens` tokens, in each format.
GpuBenchRows gpu_bench_rows(const std::vector<ref::Format>& formats, int64_t size, int64_t tokens,
                            int repetitions, const std::regex& filter);

}  // namespace lmo::tools
