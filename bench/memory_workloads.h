// The memory-bound benchmark workloads, from the ops' records (OpInfo::bench, oracle/core/op.h):
// each is the op's case at a size, with its inputs drawn once, its output buffers allocated
// once, and one call of a backend (a fast-<target>) as the timed kernel. The traffic of one call
// is every input read once and every output written once, from the case's own declarations, so
// no workload states its bytes by hand and every kernel library runs the same workloads through
// the same Backend interface as verify does.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "oracle/backends/backend.h"
#include "reference/formats.h"

namespace lmo::bench {

struct Workload {
  std::string name;      // the record's bench name: the op's, or a variant's ("softcap_wide")
  std::string op;        // the op it runs
  std::string shape;     // the main array's shape (BenchShape::row), e.g. "8192x4096"
  int64_t elements = 0;  // of the main array
  int64_t bytes = 0;     // compulsory traffic of one call (even, as measure_bandwidth needs)
  std::function<void()> run;
  std::shared_ptr<void> state;  // the case, op, inputs and buffers the call uses
  // After runs: std::runtime_error when a call wrote outside its output buffers or left an
  // element unwritten (oracle/backends/kernel_call.h, check_written).
  std::function<void()> check_written;
};

// Every bench shape of the registry, in registry order.
std::vector<std::string> memory_workload_names();

// The workload `name` in storage format f with about `elements` elements in its main array
// (rounded down to whole rows, at least one), run by `backend`. Throws std::invalid_argument for
// an unknown name or a backend that does not run it (with its reason), InputError (case_error.h)
// where the size is beyond the op's limits.
Workload memory_workload(const std::string& name, oracle::Backend& backend, ref::Format f,
                         int64_t elements);

// The same on a cache-resident size (bench/cache_rate.h): the largest whole number of rows, at
// most as many as memory_workload(name, backend, f, elements) has, whose traffic is at most
// max_bytes; but at least one row, even where one row moves more (cross_entropy's 128256-wide
// row moves 1 MiB in f32): a kernel is never timed on a shape it is not benchmarked on.
Workload memory_workload_in_cache(const std::string& name, oracle::Backend& backend, ref::Format f,
                                  int64_t elements, int64_t max_bytes);

}  // namespace lmo::bench
