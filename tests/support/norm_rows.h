// The norm tests' shared pieces (fast and GPU kernels alike): the three norms, their policy
// table names, a case's shape, and the reference on T over every row of the stored inputs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "reference/norms.h"
#include "tests/support/fast_cases.h"

namespace lmo::testdata {

enum class NormKind { rms, gemma, layer };
inline const char* op_name(NormKind k) {
  return k == NormKind::rms ? "rmsnorm" : k == NormKind::gemma ? "rmsnorm_gemma" : "layernorm";
}

struct NormCase {
  int64_t rows, d;
  double mean, stddev;  // of x
  float eps;
};

// The reference on T over every row.
template <class T>
std::vector<T> norm_reference_rows(NormKind k, const ref::Tensor& x, const ref::Tensor& g,
                                   const ref::Tensor& b, int64_t rows, int64_t d, float eps) {
  const std::vector<T> xs = values_as<T>(x), gs = values_as<T>(g), bs = values_as<T>(b);
  const T e = ref::from_mp<T>(ref::mp(static_cast<double>(eps)));
  std::vector<T> out;
  for (int64_t r = 0; r < rows; ++r) {
    const std::span<const T> row(xs.data() + r * d, static_cast<size_t>(d));
    std::vector<T> y = k == NormKind::rms     ? ref::rmsnorm<T>(row, gs, e)
                       : k == NormKind::gemma ? ref::rmsnorm_gemma<T>(row, gs, e)
                                              : ref::layernorm<T>(row, gs, bs, e);
    out.insert(out.end(), y.begin(), y.end());
  }
  return out;
}

}  // namespace lmo::testdata
