// The shape argument of T5's relative position bias (fast/t5_bias.h), apart from its entry point
// so that gpu/api_positional.h shares it without fast/storage.h (whose C++20 the CUDA sources,
// compiled as C++17, cannot include), as fast/attention_args.h does for attention.
#pragma once

#include <cstdint>

namespace lmo::fast {

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

}  // namespace lmo::fast
