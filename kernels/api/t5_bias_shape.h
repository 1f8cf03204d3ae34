// The shape argument of T5's relative position bias (fast/t5_bias.h, gpu/api_positional.h),
// apart from its entry points. Plain C++17: the CUDA sources are compiled as C++17.
#pragma once

#include <cstdint>

namespace lmo::kernels {

// Bucket parameters (num_buckets, bidirectional, max_distance) and the bias's shape
// [heads, query_len, key_len] for queries at query_offset + i.
struct T5BiasShape {
  int64_t num_buckets = 32;
  int64_t heads = 0;
  int64_t query_len = 0;
  int64_t key_len = 0;
  bool bidirectional = false;
  int64_t max_distance = 128;
  int64_t query_offset = 0;
};

}  // namespace lmo::kernels
