// F09, T5's bucketed relative position bias (Raffel et al. 2020 §2.1) on plain pointers,
// mirroring reference/positional.h t5_relative_position_bucket / t5_relative_position_bias and
// the oracle's op t5_bias (oracle/ops/positional.h):
//   bias[h, i, j] = table[bucket(j − (query_offset + i)), h],
// table [num_buckets, heads] (HF's relative_attention_bias), bias [heads, query_len, key_len],
// both in storage s; queries at positions query_offset + i, keys at 0 … key_len − 1.
//
// The values are copied, never computed, so they are exact; what can go wrong is the bucket. The
// published code (Mesh TensorFlow, HF transformers) takes ⌊ln(n/me)/ln(md/me)·E⌋ in float32 and
// can land one bucket low where the real value is an integer (causal, 36 buckets, max_distance
// 50, n = 30: exactly 9, float32 gives 8.99…). Here the bucket is the reference's for every
// relative position: T5Buckets finds, once per call, the integer thresholds t_m, the least n
// whose log bucket is ≥ me + m, exactly (see t5_bias.cc), and a bucket is then a count of
// thresholds ≤ n: integer comparisons only.
//
// No SIMD dispatch: the kernel does no arithmetic. Row i of a head is row i − 1 shifted right by
// one key (both depend on j − i only) plus its new first element, so each row is one memcpy
// (vectorized by the C library) and one gathered element; rows run in parallel (fast/threads.h)
// in chunks of a fixed number of rows, each chunk's first row gathered whole. The copied bytes
// do not depend on the chunking: results are bitwise identical for any thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "fast/storage.h"  // Storage, T5BiasShape, T5Buckets

namespace lmo::fast {

// Throws std::invalid_argument for heads < 1, query_len or key_len < 0, query_offset < 0, any of
// the three above 2^53, the bucket parameters T5Buckets rejects, a null pointer with an output
// element to write, or an unknown storage.
void t5_bias(Storage s, const void* table, void* bias, const T5BiasShape& shape);

}  // namespace lmo::fast
