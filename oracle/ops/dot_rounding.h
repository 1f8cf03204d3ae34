// The rounding magnitudes of one dot product, for the error scales of the naive-relative policy
// (policy.h, rule (2)): oracle/ops/ffn_error_scale.h and the Shaw logits' (positional.cc).
#pragma once

#include <cstddef>

namespace lmo::oracle {

// One dot product Σ_k a[k·sa]·b[k·sb] (+ bias): its value and the magnitudes of its own
// roundings, Σ t_k² over the products and Σ s_k² over the prefix sums from the first addition on.
struct DotRounding {
  double value = 0;
  double squares = 0;
};

inline DotRounding dot_rounding(const double* a, std::ptrdiff_t sa, const double* b,
                                std::ptrdiff_t sb, std::ptrdiff_t n, const double* bias) {
  DotRounding r;
  for (std::ptrdiff_t k = 0; k < n; ++k) {
    const double t = a[k * sa] * b[k * sb];
    r.value += t;
    r.squares += t * t + (k > 0 ? r.value * r.value : 0.0);
  }
  if (bias) {
    r.value += *bias;
    r.squares += r.value * r.value;
  }
  return r;
}

}  // namespace lmo::oracle
