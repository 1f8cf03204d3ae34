// Dense row-major matrices and the products formula code builds on. Row vectors, `x W`
// products, as in FORMULAS.md.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/contraction.h"
#include "reference/numeric.h"

namespace lmo::ref {

template <class T>
struct Mat {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<T> data;  // rows * cols, row-major

  Mat() = default;
  Mat(int64_t r, int64_t c) : rows(r), cols(c), data(static_cast<size_t>(r * c), T(0)) {}
  Mat(int64_t r, int64_t c, std::vector<T> d) : rows(r), cols(c), data(std::move(d)) {
    if (static_cast<int64_t>(data.size()) != r * c) {
      throw std::invalid_argument("Mat: " + std::to_string(data.size()) + " values for " +
                                  std::to_string(r) + "x" + std::to_string(c));
    }
  }
  T& operator()(int64_t r, int64_t c) { return data[static_cast<size_t>(r * cols + c)]; }
  const T& operator()(int64_t r, int64_t c) const { return data[static_cast<size_t>(r * cols + c)]; }
  std::span<T> row(int64_t r) { return {data.data() + r * cols, static_cast<size_t>(cols)}; }
  std::span<const T> row(int64_t r) const {
    return {data.data() + r * cols, static_cast<size_t>(cols)};
  }
};

// s + a·b as a kernel's multiply-add: the product rounded to T, then the sum to Acc; with
// `contract` (fma_contraction(), contraction.h) a·b + s formed exactly and rounded once to Acc.
template <class T, class Acc>
[[gnu::always_inline]] inline Acc mul_add(const T& a, const T& b, const Acc& s, bool contract) {
  using std::fma;
  if constexpr (requires(const Acc& x) { fma(x, x, x); }) {
    if (contract) return fma(convert<Acc>(a), convert<Acc>(b), s);
  }
  return s + convert<Acc>(T(a * b));
}

// Σ_i a_i b_i, accumulated left to right in Acc, each product formed in T (a kernel's multiply)
// and added in Acc (fused under FMA contraction: mul_add).
template <class T, class Acc = T>
Acc dot(std::span<const T> a, std::span<const T> b) {
  if (a.size() != b.size()) throw std::invalid_argument("dot: length mismatch");
  const bool contract = fma_contraction();
  Acc s(0);
  for (size_t i = 0; i < a.size(); ++i) s = mul_add(a[i], b[i], s, contract);
  return s;
}

// Σ_i a_i in Acc, left to right.
template <class T, class Acc = T>
Acc sum(std::span<const T> a) {
  Acc s(0);
  for (const T& v : a) s = s + convert<Acc>(v);
  return s;
}

// a · b: (m × k)(k × n). Each output is a dot product accumulated in Acc, rounded once to T.
template <class T, class Acc = T>
Mat<T> matmul(const Mat<T>& a, const Mat<T>& b) {
  if (a.cols != b.rows) {
    throw std::invalid_argument("matmul: " + std::to_string(a.rows) + "x" + std::to_string(a.cols) +
                                " times " + std::to_string(b.rows) + "x" + std::to_string(b.cols));
  }
  Mat<T> c(a.rows, b.cols);
  std::vector<T> col(static_cast<size_t>(b.rows));
  for (int64_t j = 0; j < b.cols; ++j) {
    for (int64_t k = 0; k < b.rows; ++k) col[static_cast<size_t>(k)] = b(k, j);
    for (int64_t i = 0; i < a.rows; ++i) {
      c(i, j) = convert<T>(dot<T, Acc>(a.row(i), std::span<const T>(col)));
    }
  }
  return c;
}

template <class T>
Mat<T> transpose(const Mat<T>& a) {
  Mat<T> t(a.cols, a.rows);
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t j = 0; j < a.cols; ++j) t(j, i) = a(i, j);
  }
  return t;
}

// Row vector times matrix: x (1 × k) · W (k × n).
template <class T, class Acc = T>
std::vector<T> vecmat(std::span<const T> x, const Mat<T>& w) {
  Mat<T> xm(1, static_cast<int64_t>(x.size()), std::vector<T>(x.begin(), x.end()));
  return matmul<T, Acc>(xm, w).data;
}

}  // namespace lmo::ref
