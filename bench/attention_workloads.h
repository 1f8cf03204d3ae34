// The compute-bound benchmark workloads, from the ops' records (OpInfo::compute,
// oracle/core/op.h): each is the op's case over a number of tokens, its inputs drawn once, its
// output buffers allocated once, and one call of a backend (a fast-<target>) as the timed kernel,
// with the record's count of useful operations and the sgemm shape it is compared with
// (bench/flop_rate.h). No workload names an op or a kernel: every kernel library runs the same
// workloads through the same Backend interface as verify does.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "oracle/backends/backend.h"

namespace lmo::bench {

struct ComputeWorkload {
  std::string name;   // the record's compute bench name
  std::string op;     // the op it runs
  std::string shape;  // e.g. "h8 g2 d128 T1024 causal"
  int64_t size = 0;   // what the operations are counted over (visible pairs per head)
  double flops = 0;   // useful operations of one call
  int64_t gemm_m = 0, gemm_n = 0, gemm_k = 0;  // the comparable sgemm
  std::function<void()> run;
  std::shared_ptr<void> state;  // the case, op, inputs and buffers the call uses
  // After runs: std::runtime_error when a call wrote outside its output buffers or left an
  // element unwritten (oracle/backends/kernel_call.h, check_written).
  std::function<void()> check_written;
};

// Every compute bench shape of the registry, in registry order.
std::vector<std::string> compute_workload_names();

// The workload `name` in storage format f over `tokens` tokens, run by `backend`. Throws
// std::invalid_argument for an unknown name, tokens < 1 or a backend that does not run it (with
// its reason).
ComputeWorkload compute_workload(const std::string& name, oracle::Backend& backend, ref::Format f,
                                 int64_t tokens);

}  // namespace lmo::bench
