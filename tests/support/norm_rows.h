// The norm tests' shared pieces (fast and GPU kernels alike): the three norms, their policy
// table names, a case's shape, its inputs in a storage format, and the reference on T over every
// row of the stored inputs.
#pragma once

#include <cmath>
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

struct NormInputs {
  ref::Tensor x, gamma, beta;
};

// x N(mean, σ) [rows, d]; γ N(1, 0.1) (N(0, 0.1) for Gemma's weight 1 + γ); β N(0, 0.1).
inline NormInputs norm_inputs(NormKind k, const NormCase& c, fast::Storage s, uint64_t seed) {
  return {fast_normal(seed, "x", s, {c.rows, c.d}, c.mean, c.stddev),
          fast_normal(seed, "gamma", s, {c.d}, k == NormKind::gemma ? 0.0 : 1.0, 0.1),
          fast_normal(seed, "beta", s, {c.d}, 0.0, 0.1)};
}

// f32 rows N(0, 1) scaled by 2^shift (squares that overflow or vanish in f32), γ N(1, 0.1) and
// β N(0, 0.1); `unscaled` holds the rows before the scaling.
struct ScaledNormInputs {
  ref::Tensor unscaled;
  NormInputs in;
};
inline ScaledNormInputs scaled_norm_inputs(const NormCase& c, int shift, uint64_t seed) {
  const fast::Storage s = fast::Storage::f32;
  ScaledNormInputs r{fast_normal(seed, "x", s, {c.rows, c.d}), {}};
  r.in.x = r.unscaled;
  for (int64_t i = 0; i < r.in.x.numel(); ++i) r.in.x.set(i, std::ldexp(r.in.x.get(i), shift));
  r.in.gamma = fast_normal(seed, "gamma", s, {c.d}, 1.0, 0.1);
  r.in.beta = fast_normal(seed, "beta", s, {c.d}, 0.0, 0.1);
  return r;
}

// The reference on T over every row of x (γ and β from `in`).
template <class T>
std::vector<T> norm_reference_rows(NormKind k, const ref::Tensor& x, const NormInputs& in,
                                   const NormCase& c) {
  return norm_reference_rows<T>(k, x, in.gamma, in.beta, c.rows, c.d, c.eps);
}

}  // namespace lmo::testdata
