// GPU benchmarks of the compute-bound kernels (CUDA-free interface for `lmoracle bench --backend
// gpu`): attention prefill, the decode step and absorbed MLA decode, in useful operations per
// second and as a ratio to a cuBLAS SGEMM of a comparable shape (one head's Q Kᵀ) timed in the
// same run, alternating with the kernel (cudaEvent timing, medians). The prefill workload is
// bench/attention_workloads.h's (h 8, g 2, d 128, causal), so GPU and fast rows compare. Note
// that the kernels compute in double (gpu/api_attention.h) while SGEMM runs in f32 (no TF32).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/api.h"

namespace lmo::gpu {

struct ComputeBenchRow {
  std::string op;
  std::string shape;
  int64_t size = 0;  // visible (query, key) pairs per query head
  double flops = 0;  // useful operations of one call: 4·d per visible pair and query head
  int repetitions = 0;
  double seconds = 0;  // median kernel time
  double flops_per_s = 0;
  int64_t gemm_m = 0, gemm_n = 0, gemm_k = 0;  // the SGEMM C[m×n] = A[m×k]·B[k×n]
  double gemm_seconds = 0;
  double gemm_flops_per_s = 0;  // 2mnk per call
  double ratio = 0;             // flops_per_s / gemm_flops_per_s
};

// The ops measured, in a fixed order: attention, attention_decode, mla_decode.
const std::vector<std::string>& compute_bench_ops();

// Measures one op in storage s: attention over `tokens` tokens (prefill), the decode step and
// MLA decode over a cache of 16·tokens. One warm-up call of each side, then `repetitions` timed
// calls of each, alternating. Throws std::invalid_argument for an unknown op or a count < 1,
// std::runtime_error for a CUDA or cuBLAS failure (no device included).
ComputeBenchRow bench_compute(const std::string& op, Storage s, int64_t tokens, int repetitions);

}  // namespace lmo::gpu
