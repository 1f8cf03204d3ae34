// The fields a bench row starts with, whichever backend ran it (the CPU rows of bench_command.cc
// and the GPU rows of bench_gpu.cc; docs/bench.md lists every field).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "bench/attention_workloads.h"
#include "bench/memory_workloads.h"
#include "reference/formats.h"

namespace lmo::tools {

// op (the workload's bench name), backend, format, size, shape and bytes.
inline nlohmann::json memory_row(const bench::Workload& w, const std::string& backend,
                                 ref::Format f) {
  return {{"op", w.name},       {"backend", backend}, {"format", std::string(ref::format_name(f))},
          {"size", w.elements}, {"shape", w.shape},   {"bytes", w.bytes}};
}

// op, backend, format, size, shape, flops and sgemm_shape (m x n x k of the yardstick).
inline nlohmann::json compute_row(const bench::ComputeWorkload& w, const std::string& backend,
                                  ref::Format f) {
  return {{"op", w.op},
          {"backend", backend},
          {"format", std::string(ref::format_name(f))},
          {"size", w.size},
          {"shape", w.shape},
          {"flops", w.flops},
          {"sgemm_shape", std::to_string(w.gemm_m) + "x" + std::to_string(w.gemm_n) + "x" +
                              std::to_string(w.gemm_k)}};
}

}  // namespace lmo::tools
