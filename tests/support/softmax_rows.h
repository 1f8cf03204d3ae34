// The softmax and cross-entropy tests' shared pieces (fast and GPU kernels alike): logits in a
// storage format with special values placed, each row's target, and the reference on T over
// every row of the stored logits (T = mp for the exact values, the simulated f32 for the naive
// run), as tests/support/norm_rows.h does for the norms.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "oracle/core/inputs.h"
#include "oracle/core/specials.h"
#include "reference/softmax.h"
#include "tests/support/fast_cases.h"

namespace lmo::testdata {

// Logits N(0, σ) [rows, n] in storage s with optional special values at fixed places.
inline ref::Tensor logits(uint64_t seed, fast::Storage s, int64_t rows, int64_t n, double stddev,
                          const std::vector<oracle::SpecialAt>& specials = {}) {
  ref::Tensor z = fast_normal(seed, "z", s, {rows, n}, 0.0, stddev);
  oracle::place_specials(z, specials);
  return z;
}

// Special logits in 3 rows of 50: two masked (−inf) in row 0, a +inf in row 1, a NaN in row 2.
inline std::vector<oracle::SpecialAt> softmax_specials() {
  return {{1, oracle::Special::neg_inf},
          {7, oracle::Special::neg_inf},
          {50 + 3, oracle::Special::pos_inf},
          {100 + 9, oracle::Special::nan}};
}

// Special logits in 4 rows of 40: −inf, +inf, NaN and the largest finite value, one per row.
inline std::vector<oracle::SpecialAt> cross_entropy_specials() {
  return {{2, oracle::Special::neg_inf},
          {40 + 5, oracle::Special::pos_inf},
          {80 + 1, oracle::Special::nan},
          {120 + 0, oracle::Special::max_finite}};
}

// One target class in [0, n) per row (i64).
inline ref::Tensor targets(uint64_t seed, int64_t rows, int64_t n) {
  return oracle::uniform_int(seed, "target", ref::DType::i64, {rows}, 0, n);
}

// Softmax and log Z of every row, in T.
template <class T>
void softmax_rows(const ref::Tensor& z, int64_t rows, int64_t n, std::vector<T>& p,
                  std::vector<T>& lse) {
  const std::vector<T> zv = values_as<T>(z);
  for (int64_t r = 0; r < rows; ++r) {
    const std::span<const T> row(zv.data() + r * n, static_cast<size_t>(n));
    const std::vector<T> pr = ref::softmax<T>(row);
    p.insert(p.end(), pr.begin(), pr.end());
    lse.push_back(ref::logsumexp<T>(row));
  }
}

// The fused loss rows in T (z-loss λ, soft-cap cap; 0: none): loss, log Z and the gradient of
// every row.
template <class T>
void loss_rows(const ref::Tensor& z, std::span<const int64_t> target, int64_t rows, int64_t n,
               float lambda, float cap, std::vector<T>& loss, std::vector<T>& logz,
               std::vector<T>& grad) {
  const std::vector<T> zv = values_as<T>(z);
  const std::optional<T> tcap =
      cap > 0 ? std::optional<T>(ref::from_mp<T>(ref::mp(cap))) : std::nullopt;
  const T tl = ref::from_mp<T>(ref::mp(static_cast<double>(lambda)));
  for (int64_t r = 0; r < rows; ++r) {
    const std::span<const T> row(zv.data() + r * n, static_cast<size_t>(n));
    const ref::LossRow<T> lr =
        ref::softmax_cross_entropy<T>(row, target[static_cast<size_t>(r)], tl, tcap);
    loss.push_back(lr.loss);
    logz.push_back(lr.log_z);
    grad.insert(grad.end(), lr.dlogits.begin(), lr.dlogits.end());
  }
}

}  // namespace lmo::testdata
