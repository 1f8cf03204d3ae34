// Feed-forward sublayers on a (tokens × d) input x: F03 the original ReLU FFN with biases, F04
// the bias-free FFN with a choice of activation, F05 the gated (GLU) family.
//
// Every matrix product is matmul<T, Acc> (accumulated in Acc, rounded once to T); biases are
// added and activations applied in T to the rounded product. Activations use their default
// (stable) evaluation unless `literal_activation` asks for the printed form (activations.h).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/activations.h"
#include "reference/linalg.h"

namespace lmo::ref {

namespace detail {

inline std::string shape_str(int64_t r, int64_t c) {
  return std::to_string(r) + "x" + std::to_string(c);
}

template <class T>
void check_rows(const char* fn, const char* name, const Mat<T>& w, int64_t rows,
                const char* rows_of) {
  if (w.rows != rows) {
    throw std::invalid_argument(std::string(fn) + ": " + name + " is " + shape_str(w.rows, w.cols) +
                                ", expected " + std::to_string(rows) + " rows (" + rows_of + ")");
  }
}

template <class T>
void check_bias(const char* fn, const char* name, std::span<const T> b, int64_t n, const char* of) {
  if (static_cast<int64_t>(b.size()) != n) {
    throw std::invalid_argument(std::string(fn) + ": " + name + " has " + std::to_string(b.size()) +
                                " values, expected " + std::to_string(n) + " (" + of + ")");
  }
}

}  // namespace detail

namespace detail {

// act(x W1 + b1) W2 + b2, with `fn` naming the caller in argument errors.
template <class T, class Acc>
Mat<T> biased_ffn(const char* fn, const Mat<T>& x, const Mat<T>& w1, std::span<const T> b1,
                  const Mat<T>& w2, std::span<const T> b2, Activation act) {
  check_rows(fn, "w1", w1, x.cols, "the columns of x");
  check_bias(fn, "b1", b1, w1.cols, "the columns of w1");
  check_rows(fn, "w2", w2, w1.cols, "the columns of w1");
  check_bias(fn, "b2", b2, w2.cols, "the columns of w2");
  Mat<T> h = matmul<T, Acc>(x, w1);
  for (int64_t i = 0; i < h.rows; ++i) {
    for (int64_t j = 0; j < h.cols; ++j) {
      h(i, j) = activate(act, T(h(i, j) + b1[static_cast<size_t>(j)]));
    }
  }
  Mat<T> y = matmul<T, Acc>(h, w2);
  for (int64_t i = 0; i < y.rows; ++i) {
    for (int64_t j = 0; j < y.cols; ++j) y(i, j) = y(i, j) + b2[static_cast<size_t>(j)];
  }
  return y;
}

}  // namespace detail

// F03: FFN(x) = max(0, x W1 + b1) W2 + b2. x: n × d, W1: d × f, b1: f, W2: f × e, b2: e.
template <class T, class Acc = T>
Mat<T> ffn_relu_bias(const Mat<T>& x, const Mat<T>& w1, std::span<const T> b1, const Mat<T>& w2,
                     std::span<const T> b2) {
  return detail::biased_ffn<T, Acc>("ffn_relu_bias", x, w1, b1, w2, b2, Activation::kReLU);
}

// F03 with the activation choice of F04: act(x W1 + b1) W2 + b2 (GPT-2 and GPT-3: GELU-tanh
// with biases). With act = ReLU it is ffn_relu_bias.
template <class T, class Acc = T>
Mat<T> ffn_with_bias(const Mat<T>& x, const Mat<T>& w1, std::span<const T> b1, const Mat<T>& w2,
                     std::span<const T> b2, Activation act) {
  return detail::biased_ffn<T, Acc>("ffn_with_bias", x, w1, b1, w2, b2, act);
}

// F04: FFN(x) = σ(x W1) W2, no biases, σ ∈ {ReLU, GELU, GELU-tanh, SiLU}.
template <class T, class Acc = T>
Mat<T> ffn(const Mat<T>& x, const Mat<T>& w1, const Mat<T>& w2, Activation act,
           bool literal_activation = false) {
  detail::check_rows("ffn", "w1", w1, x.cols, "the columns of x");
  detail::check_rows("ffn", "w2", w2, w1.cols, "the columns of w1");
  Mat<T> h = matmul<T, Acc>(x, w1);
  for (T& v : h.data) v = activate(act, v, literal_activation);
  return matmul<T, Acc>(h, w2);
}

// The GLU gate h = act(a) ⊙ b of one row, a = x W and b = x V the two pre-activations.
template <class T>
std::vector<T> glu_gate(std::span<const T> a, std::span<const T> b, Activation act,
                        bool literal_activation = false) {
  detail::check_bias("glu_gate", "b", b, static_cast<int64_t>(a.size()), "the length of a");
  std::vector<T> h(a.size());
  for (size_t i = 0; i < a.size(); ++i) h[i] = activate(act, a[i], literal_activation) * b[i];
  return h;
}

// F05, the GLU family: FFN(x) = (act(x W) ⊙ x V) W2, x: n × d, W and V: d × f, W2: f × e.
// ReGLU: act = ReLU; GeGLU: GELU (Gemma: GELU-tanh); SwiGLU: SiLU (Swish₁).
template <class T, class Acc = T>
Mat<T> glu_ffn(const Mat<T>& x, const Mat<T>& w, const Mat<T>& v, const Mat<T>& w2, Activation act,
               bool literal_activation = false) {
  detail::check_rows("glu_ffn", "w", w, x.cols, "the columns of x");
  detail::check_rows("glu_ffn", "v", v, x.cols, "the columns of x");
  if (v.cols != w.cols) {
    throw std::invalid_argument("glu_ffn: v is " + detail::shape_str(v.rows, v.cols) +
                                ", expected " + std::to_string(w.cols) +
                                " columns (the columns of w)");
  }
  detail::check_rows("glu_ffn", "w2", w2, w.cols, "the columns of w");
  const Mat<T> a = matmul<T, Acc>(x, w);
  const Mat<T> b = matmul<T, Acc>(x, v);
  Mat<T> h(a.rows, a.cols);
  for (int64_t i = 0; i < a.rows; ++i) {
    const std::vector<T> hi = glu_gate(a.row(i), b.row(i), act, literal_activation);
    for (int64_t j = 0; j < a.cols; ++j) h(i, j) = hi[static_cast<size_t>(j)];
  }
  return matmul<T, Acc>(h, w2);
}

// F05 named members: ReGLU (max(0, xW) ⊙ xV) W2, GeGLU (GELU(xW) ⊙ xV) W2, GeGLU with GELU-tanh
// (Gemma), SwiGLU (Swish₁(xW) ⊙ xV) W2.
template <class T, class Acc = T>
Mat<T> reglu(const Mat<T>& x, const Mat<T>& w, const Mat<T>& v, const Mat<T>& w2) {
  return glu_ffn<T, Acc>(x, w, v, w2, Activation::kReLU);
}
template <class T, class Acc = T>
Mat<T> geglu(const Mat<T>& x, const Mat<T>& w, const Mat<T>& v, const Mat<T>& w2) {
  return glu_ffn<T, Acc>(x, w, v, w2, Activation::kGELU);
}
template <class T, class Acc = T>
Mat<T> geglu_tanh(const Mat<T>& x, const Mat<T>& w, const Mat<T>& v, const Mat<T>& w2) {
  return glu_ffn<T, Acc>(x, w, v, w2, Activation::kGELUTanh);
}
template <class T, class Acc = T>
Mat<T> swiglu(const Mat<T>& x, const Mat<T>& w, const Mat<T>& v, const Mat<T>& w2) {
  return glu_ffn<T, Acc>(x, w, v, w2, Activation::kSiLU);
}

}  // namespace lmo::ref
