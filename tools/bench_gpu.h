// `lmoracle bench --backend gpu`: the GPU kernels' rows (bench/gpu/memory_workloads.h), in the JSON
// shape of the fast rows (bench_command.cc). Without CUDA compiled, or without a usable device, it
// refuses with lmo::oracle::InputError (exit 2) naming the reason: nothing is measured.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <regex>
#include <vector>

#include "fast/storage.h"

namespace lmo::tools {

nlohmann::json gpu_bench_rows(const std::vector<fast::Storage>& formats, int64_t size,
                              int repetitions, const std::regex& filter);

}  // namespace lmo::tools
