// The elementwise kernels' test inputs: 4 × 4096 normal values (σ = 3), a sweep of [−40, 40] in
// steps of 1/64 rounded to the storage (down to the underflow of GELU's tail), then every special
// value (±0, ±inf, NaN, subnormals, ±max); the length is not a multiple of any vector or block.
#pragma once

#include <iterator>

#include "oracle/specials.h"
#include "tests/support/fast_cases.h"

namespace lmo::testdata {

inline ref::Tensor elementwise_inputs(uint64_t seed, const char* name, fast::Storage s) {
  const ref::Tensor base = fast_normal(seed, name, s, {4 * 4096}, 0.0, 3.0);
  const int64_t sweep = 80 * 64 + 1;
  const int64_t specials = static_cast<int64_t>(std::size(oracle::kAllSpecials));
  ref::Tensor t(dtype_of(s), {base.numel() + sweep + specials});
  for (int64_t i = 0; i < base.numel(); ++i) t.set_bits(i, base.bits(i));
  for (int64_t j = 0; j < sweep; ++j) t.set(base.numel() + j, -40.0 + static_cast<double>(j) / 64);
  for (int64_t k = 0; k < specials; ++k) {
    t.set_bits(base.numel() + sweep + k,
               oracle::special_bits(format_of(s), oracle::kAllSpecials[k]));
  }
  return t;
}

}  // namespace lmo::testdata
