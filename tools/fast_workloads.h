// The memory-bound fast/ kernels as benchmark workloads: each owns its buffers (sized well beyond
// the caches), knows the bytes it must move, and runs one kernel call.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fast/storage.h"

namespace lmo::tools {

struct Workload {
  std::string op;      // as in the oracle's op names (cross_entropy is with z-loss and soft-cap)
  std::string shape;   // e.g. "8192x4096"
  int64_t elements = 0;
  // Compulsory traffic of one call: every input read once, every output written once.
  int64_t bytes = 0;
  std::function<void()> run;
  std::shared_ptr<void> buffers;  // keeps the workload's arrays alive
};

// The memory-bound kernels of fast/, in a fixed order: rmsnorm, layernorm, softmax,
// cross_entropy, rope, rope_table, the GLU gates, softcap, fp8_quantize and fp8_dequantize.
const std::vector<std::string>& fast_workload_ops();
// One of them in storage s, with about `elements` elements in its main input (rounded down to
// whole rows). Made one at a time, so that only one workload's arrays are alive. Throws
// std::invalid_argument for an op not in the list.
Workload fast_workload(const std::string& op, fast::Storage s, int64_t elements);

// The same kernel on a cache-resident size (tools/cache_rate.h): the largest whole number of its
// rows (a row: a norm's or softmax's row, cross_entropy's vocabulary row, rope's token, one
// element of a gate or soft-cap), at most as many as fast_workload(op, s, elements) has, whose
// traffic is at most max_bytes; but at least one row, even where one row moves more
// (cross_entropy's 128256-wide row moves 1 MiB in f32): a kernel is never timed on a shape it is
// not benchmarked on. Throws std::invalid_argument for an op not in the list.
Workload fast_workload_in_cache(const std::string& op, fast::Storage s, int64_t elements,
                                int64_t max_bytes);

// Memory-bound ops of the catalog that have no fast/ kernel yet, with the reason: reported, not
// silently left out.
std::vector<std::pair<std::string, std::string>> fast_workloads_missing();

}  // namespace lmo::tools
