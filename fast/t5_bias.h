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

#include "fast/storage.h"
#include "fast/t5_bias_shape.h"  // IWYU pragma: export

namespace lmo::fast {

// The T5 bucket of a relative position (key minus query position), with the reference's rule:
// bidirectional: B = num_buckets / 2 per direction, keys after the query in the upper half,
// n = |rel|; causal: B = num_buckets, n = max(−rel, 0). With me = B / 2 (max_exact), n < me is
// bucket n; n ≥ max_distance the last, B − 1; between, me + ⌊ln(n/me)/ln(md/me)·(B − me)⌋
// decided exactly.
class T5Buckets {
 public:
  // Throws std::invalid_argument unless me ≥ 1 (num_buckets ≥ 2 causal, ≥ 4 bidirectional),
  // num_buckets ≤ 4096, and me < max_distance ≤ 2^53. Cost: under 1 ms up to 4096 buckets
  // with max_distance ≤ 2^40; about 0.4 s at 4096 buckets and max_distance 2^53, where every
  // threshold needs the exact test (see t5_bias.cc).
  T5Buckets(int64_t num_buckets, int64_t max_distance, bool bidirectional);
  int64_t operator()(int64_t relative_position) const;
  // t_1 … t_{E−1}, E = B − me: the least n with bucket(n) ≥ me + m (nondecreasing).
  const std::vector<int64_t>& thresholds() const { return thresholds_; }

 private:
  int64_t buckets_ = 0, max_exact_ = 0, max_distance_ = 0;
  bool bidirectional_ = false;
  std::vector<int64_t> thresholds_;
};

// Throws std::invalid_argument for heads < 1, query_len or key_len < 0, query_offset < 0, any of
// the three above 2^53, the bucket parameters T5Buckets rejects, a null pointer with an output
// element to write, or an unknown storage.
void t5_bias(Storage s, const void* table, void* bias, const T5BiasShape& shape);

}  // namespace lmo::fast
