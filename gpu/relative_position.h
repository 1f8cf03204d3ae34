// The index math of the relative position kernels (gpu/relative_position.cuh), as
// __host__ __device__ functions so that a host test (tests/kernels/gpu_relative_position_math_test.cc) checks
// them against the reference and fast/t5_bias.h on a machine without a device: Shaw's table row
// of a (query, key) pair and its logit, and T5's bucket of a relative position (integer
// arithmetic only). Plain C++ when not compiled by nvcc; no CUDA header.
#pragma once

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define LMO_HD __host__ __device__
#else
#define LMO_HD
#endif

namespace lmo::gpu::relpos {

// Shaw et al.'s table row for query i and key j: clip(j − i, −K, K) + K (row r holds distance
// r − K). |j − i| < 2^30 (the API's limits), so nothing overflows.
LMO_HD inline int64_t shaw_row(int64_t i, int64_t j, int64_t max_relative) {
  int64_t rel = j - i;
  if (rel < -max_relative) rel = -max_relative;
  if (rel > max_relative) rel = max_relative;
  return rel + max_relative;
}

// Shaw et al.'s logit q·(k + a)/√d_k for one query row q, key row k and table row a (d_k values
// each, widened exactly by widen()), in the reference's order: each k_c + a_c and each product in
// double, summed in c order, the finished dot product divided by √d_k (double). The naive f32
// policy bounds it with room: every step is 2^29 times finer than f32's.
template <class T, class Widen>
LMO_HD double shaw_logit(const T* q, const T* k, const T* a, int64_t d_k, const Widen& widen) {
  double dot = 0.0;
  for (int64_t c = 0; c < d_k; ++c) dot += widen(q[c]) * (widen(k[c]) + widen(a[c]));
  return dot / std::sqrt(static_cast<double>(d_k));
}

// T5's bucket rule as kernels::T5Buckets holds it: B buckets per direction (num_buckets / 2
// bidirectional, num_buckets causal), max_exact = B / 2, max_distance, and the integer thresholds
// t_1 … t_{count} (count = B − max_exact − 1; t_m the least n whose log bucket is ≥ max_exact + m,
// found exactly on the host by kernels::T5Buckets).
struct T5Rule {
  int64_t buckets = 0;
  int64_t max_exact = 0;
  int64_t max_distance = 0;
  bool bidirectional = false;
  const int64_t* thresholds = nullptr;
  int64_t count = 0;
};

// The bucket of a relative position (key minus query position), kernels::T5Buckets::operator()'s
// rule: n = |rel| (bidirectional, keys after the query offset by B) or max(−rel, 0) (causal);
// n < max_exact is bucket n, n ≥ max_distance the last, between them max_exact plus the number
// of thresholds ≤ n (a binary search: upper_bound).
LMO_HD inline int64_t t5_bucket(const T5Rule& r, int64_t relative_position) {
  int64_t offset = 0;
  // unsigned: |INT64_MIN| fits
  const uint64_t magnitude = relative_position < 0
                                 ? uint64_t{0} - static_cast<uint64_t>(relative_position)
                                 : static_cast<uint64_t>(relative_position);
  uint64_t n = 0;
  if (r.bidirectional) {
    if (relative_position > 0) offset = r.buckets;
    n = magnitude;
  } else {
    n = relative_position < 0 ? magnitude : 0;
  }
  if (n < static_cast<uint64_t>(r.max_exact)) return offset + static_cast<int64_t>(n);
  if (n >= static_cast<uint64_t>(r.max_distance)) return offset + r.buckets - 1;
  // n < max_distance ≤ 2^53: fits int64. First threshold > n.
  const auto v = static_cast<int64_t>(n);
  int64_t lo = 0, hi = r.count;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (r.thresholds[mid] <= v) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return offset + r.max_exact + lo;
}

}  // namespace lmo::gpu::relpos
