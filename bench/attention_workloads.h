// The compute-bound fast/ kernels as benchmark workloads: attention prefill (causal, GQA) with
// its useful operation count and the sgemm shape it is compared with (bench/flop_rate.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fast/storage.h"

namespace lmo::bench {

struct ComputeWorkload {
  std::string op;     // the oracle's op name
  std::string shape;  // e.g. "h8 g2 d128 T1024 causal"
  int64_t size = 0;   // visible (query, key) pairs per head
  // Useful operations of one call: 2d for q·k and 2d for p·v per visible pair and query head.
  double flops = 0;
  int64_t gemm_m = 0, gemm_n = 0, gemm_k = 0;  // the comparable sgemm: one head's Q Kᵀ
  std::function<void()> run;
  std::shared_ptr<void> buffers;  // keeps the workload's arrays alive
};

// The compute-bound kernels, in a fixed order: attention.
const std::vector<std::string>& compute_workload_ops();
// One of them in storage s over `tokens` tokens. Throws std::invalid_argument for an op not in
// the list or tokens < 1.
ComputeWorkload compute_workload(const std::string& op, fast::Storage s, int64_t tokens);

}  // namespace lmo::bench
