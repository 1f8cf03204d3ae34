// T5's relative-position buckets (F09) decided exactly, for the kernels of both libraries: the
// fast kernel (fast/t5_bias.h) and the GPU's (gpu/api_positional.h) find the thresholds here on
// the host, so both bucket every relative position as the reference does.
#pragma once

#include <cstdint>
#include <vector>

namespace lmo::kernels {

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

}  // namespace lmo::kernels
