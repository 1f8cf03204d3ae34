// GPU benchmarks of the memory-bound kernels (CUDA-free interface for `lmoracle bench --backend
// gpu`): bytes moved per second, and the ratio to a cudaMemcpy device-to-device of the same
// traffic timed in the same run. The workloads mirror the records' bench shapes (OpInfo::bench,
// run by bench/memory_workloads.h for the fast kernels: same ops and shapes), so GPU and fast
// rows compare.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/api.h"

namespace lmo::gpu {

struct BenchRow {
  std::string op;
  std::string shape;
  int64_t elements = 0;
  int64_t bytes = 0;  // compulsory traffic: each input read once, each output written
  int repetitions = 0;
  double seconds = 0;  // median kernel time (cudaEvent)
  double bytes_per_s = 0;
  double memcpy_seconds = 0;  // median time of a device-to-device copy moving the same bytes
  double memcpy_bytes_per_s = 0;
  double ratio = 0;  // bytes_per_s / memcpy_bytes_per_s
};

// The ops measured, in a fixed order: rmsnorm, layernorm, softmax, cross_entropy, swiglu_gate,
// geglu_gate, softcap, sinusoidal_pe (write-only: its bytes are the encoding written; the copy
// moving the same bytes reads half of them).
const std::vector<std::string>& bench_ops();

// Measures one op in storage s with about `elements` elements in its main input (whole rows):
// one warm-up call of the kernel and of the copy, then `repetitions` timed calls of each,
// alternating; medians. Throws std::invalid_argument for an unknown op or a count < 1, and
// std::runtime_error for a CUDA failure (no device included).
BenchRow bench(const std::string& op, Storage s, int64_t elements, int repetitions);

}  // namespace lmo::gpu
