// `lmoracle bench --backend gpu`, compute-bound rows: attention, its decode step and MLA decode
// (bench/gpu/attention_workloads.h) in GFLOP/s and as a ratio to a cuBLAS SGEMM of a comparable
// shape, in the JSON shape of the fast backend's attention rows (sgemm_shape, sgemm_flops_per_s,
// ratio). Called after gpu_bench_rows (tools/bench_gpu.h), which refuses when no device is usable.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <regex>
#include <vector>

#include "fast/storage.h"

namespace lmo::tools {

nlohmann::json gpu_compute_bench_rows(const std::vector<fast::Storage>& formats, int64_t tokens,
                                      int repetitions, const std::regex& filter);

// The rows as a table, with a line saying what the ratio compares; nothing for no rows.
void print_gpu_compute_rows(const nlohmann::json& rows, int repetitions);

}  // namespace lmo::tools
