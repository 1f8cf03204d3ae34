// Speed of compute-bound kernels against an OpenBLAS sgemm, in the same run.
//
// A compute-bound kernel (attention) is as fast as the matrix units allow; the yardstick is
// single-threaded OpenBLAS sgemm of a comparable shape measured in the same process, alternating
// with the kernel's own repetitions, so the ratio does not depend on the machine's absolute
// speed, its frequency state or other load (both sides see the same conditions).
#pragma once

#include <cstdint>
#include <functional>

namespace lmo::bench {

// The operations of an sgemm C[m×n] = A[m×k]·B[k×n]: 2mnk, the yardstick's count on every
// backend (this file's OpenBLAS one, bench/gpu's cuBLAS one).
inline double sgemm_flops(int64_t m, int64_t n, int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

struct FlopSample {
  double seconds = 0;  // median wall time of one kernel call
  double flops_per_s = 0;
  double sgemm_seconds = 0;  // median wall time of one sgemm call
  double sgemm_flops_per_s = 0;
  double ratio = 0;  // flops_per_s / sgemm_flops_per_s
  int repetitions = 0;
};

// Runs kernel() (doing `flops` useful operations) and an sgemm C[m×n] = A[m×k]·B[k×n] (2mnk
// operations, OpenBLAS on one thread) alternately `repetitions` times after one warm-up call of
// each, and reports the medians. flops and the dimensions must be positive.
FlopSample measure_flops(double flops, int repetitions, const std::function<void()>& kernel,
                         int64_t m, int64_t n, int64_t k);

}  // namespace lmo::bench
