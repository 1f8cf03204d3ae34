// F01 LayerNorm and F02 RMSNorm over one row (the model dimension), the Gemma (1 + γ) weight
// variant of F02, and E01: the notes' literal RMSNorm, under its own name so the claims registry
// can show that it differs from F02 by √d.
//
// Means accumulate in Acc, left to right, and are divided by d in Acc before rounding to T (a
// kernel's f32 accumulator). The division x / sqrt(· + ε) is done as written: no reciprocal
// square root, ε added before the square root.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/linalg.h"
#include "reference/numeric.h"
#include "reference/parallel.h"

namespace lmo::ref {

namespace detail {

template <class T>
void check_norm_row(const char* fn, std::span<const T> x, const T& eps) {
  if (x.empty()) throw std::invalid_argument(std::string(fn) + ": x is empty, expected d >= 1");
  if (eps < T(0)) throw std::invalid_argument(std::string(fn) + ": eps is negative, expected >= 0");
}

template <class T>
void check_norm_weight(const char* fn, const char* name, std::span<const T> x,
                       std::span<const T> w) {
  if (w.size() != x.size()) {
    throw std::invalid_argument(std::string(fn) + ": " + name + " has " + std::to_string(w.size()) +
                                " values, expected " + std::to_string(x.size()) +
                                " (the length of x)");
  }
}

// (1/d)·Σ_i f(x_i), the sum in Acc and the division by d in Acc, rounded once to T.
template <class T, class Acc, class F>
T mean_of(std::span<const T> x, F f) {
  Acc s(0);
  for (const T& v : x) s = s + convert<Acc>(T(f(v)));
  return convert<T>(Acc(s / Acc(static_cast<int64_t>(x.size()))));
}

// (1/d)·Σ_i f(x_i)², each square added as a kernel's multiply-add (mul_add: fused under FMA
// contraction), the sum and the division by d in Acc, rounded once to T.
template <class T, class Acc, class F>
T mean_of_squares(std::span<const T> x, F f) {
  const bool contract = fma_contraction();
  Acc s(0);
  for (const T& v : x) {
    const T t = f(v);
    s = mul_add(t, t, s, contract);
  }
  return convert<T>(Acc(s / Acc(static_cast<int64_t>(x.size()))));
}

// Applies a row function to every row of x (rows in parallel; each writes its own row).
template <class T, class RowFn>
Mat<T> map_rows(const Mat<T>& x, RowFn fn) {
  Mat<T> y(x.rows, x.cols);
  parallel_for(x.rows, [&](int64_t r) {
    const std::vector<T> out = fn(x.row(r));
    for (int64_t c = 0; c < x.cols; ++c) y(r, c) = out[static_cast<size_t>(c)];
  });
  return y;
}

}  // namespace detail

// How a LayerNorm kernel forms σ² (the recipe point `variance`): two passes as defined; one
// pass, E[x²] − μ² clamped at 0 (flax's LayerNorm default, use_fast_variance=True), which
// cancels when |μ| ≫ σ; or Welford's running update (Apex's and TransformerEngine's kernels,
// here as one serial pass).
enum class Variance { kTwoPass, kOnePass, kWelford };

// Rounding points of a simulated RMSNorm or LayerNorm kernel ([recipes], oracle/rules/recipe.h);
// the reference and the strict naive kernel set none.
template <class T>
struct NormRounding {
  Variance variance = Variance::kTwoPass;  // LayerNorm only
  // x · (1/sqrt(mean(x²) + ε)) (LayerNorm: (x − μ) · (1/sqrt(σ² + ε))) with the reciprocal
  // held (PyTorch's rsqrt, transformers' LlamaRMSNorm) instead of the division as written;
  // inv_rms rounds the reciprocal.
  bool multiply_by_inverse = false;
  std::function<T(const T&)> inv_rms;
  std::function<T(const T&)> normed;  // the normalized row before the weight
};

// F01 LayerNorm: y = (x − μ) / sqrt(σ² + ε) · γ + β, μ = mean(x), σ² = mean((x − μ)²) (the
// population variance, computed in two passes as defined: a one-pass E[x²] − μ² cancels
// catastrophically when |μ| ≫ σ).
template <class T, class Acc = T>
std::vector<T> layernorm(std::span<const T> x, std::span<const T> gamma, std::span<const T> beta,
                         const T& eps, const NormRounding<T>& rounding = {}) {
  using std::sqrt;
  detail::check_norm_row("layernorm", x, eps);
  detail::check_norm_weight("layernorm", "gamma", x, gamma);
  detail::check_norm_weight("layernorm", "beta", x, beta);
  T mu = detail::mean_of<T, Acc>(x, [](const T& v) { return v; });
  T var;
  switch (rounding.variance) {
    case Variance::kTwoPass:
      var = detail::mean_of_squares<T, Acc>(x, [&](const T& v) { return T(v - mu); });
      break;
    case Variance::kOnePass: {
      const T ex2 = detail::mean_of_squares<T, Acc>(x, [](const T& v) { return v; });
      var = T(ex2 - T(mu * mu));
      if (var < T(0)) var = T(0);
      break;
    }
    case Variance::kWelford: {
      // mean_k = mean_{k−1} + δ/k, M2_k = M2_{k−1} + δ·(x_k − mean_k), δ = x_k − mean_{k−1}.
      T mean(0), m2(0);
      int64_t k = 0;
      for (const T& v : x) {
        ++k;
        const T delta = T(v - mean);
        mean = T(mean + T(delta / T(k)));
        m2 = T(m2 + T(delta * T(v - mean)));
      }
      mu = mean;
      var = T(m2 / T(k));
      break;
    }
  }
  const T denom = sqrt(T(var + eps));
  std::vector<T> y(x.size());
  if (!rounding.multiply_by_inverse && !rounding.normed) {
    for (size_t i = 0; i < x.size(); ++i) {
      y[i] = T(T(T(x[i] - mu) / denom) * gamma[i]) + beta[i];
    }
    return y;
  }
  // A simulated kernel's points (NormRounding): 1/sqrt(σ² + ε) held (inv_rms rounds it), the
  // normalized row rounded before the weight.
  T inv = T(T(1) / denom);
  if (rounding.inv_rms) inv = rounding.inv_rms(inv);
  for (size_t i = 0; i < x.size(); ++i) {
    T n = rounding.multiply_by_inverse ? T(T(x[i] - mu) * inv) : T(T(x[i] - mu) / denom);
    if (rounding.normed) n = rounding.normed(n);
    y[i] = T(n * gamma[i]) + beta[i];
  }
  return y;
}

// F02 RMSNorm: y = x / sqrt(mean(x²) + ε) · γ.
template <class T, class Acc = T>
std::vector<T> rmsnorm(std::span<const T> x, std::span<const T> gamma, const T& eps,
                       const NormRounding<T>& rounding = {}) {
  using std::sqrt;
  detail::check_norm_row("rmsnorm", x, eps);
  detail::check_norm_weight("rmsnorm", "gamma", x, gamma);
  const T ms = detail::mean_of_squares<T, Acc>(x, [](const T& v) { return v; });
  const T denom = sqrt(T(ms + eps));
  std::vector<T> y(x.size());
  if (!rounding.multiply_by_inverse && !rounding.normed) {
    for (size_t i = 0; i < x.size(); ++i) y[i] = T(x[i] / denom) * gamma[i];
    return y;
  }
  T inv = T(T(1) / denom);
  if (rounding.inv_rms) inv = rounding.inv_rms(inv);
  for (size_t i = 0; i < x.size(); ++i) {
    T n = rounding.multiply_by_inverse ? T(x[i] * inv) : T(x[i] / denom);
    if (rounding.normed) n = rounding.normed(n);
    y[i] = n * gamma[i];
  }
  return y;
}

// F02, Gemma's variant: y = x / sqrt(mean(x²) + ε) · (1 + γ), with 1 + γ_i formed in T (the
// stored weight is γ, zero-initialized). Identical to rmsnorm with the weight 1 + γ.
template <class T, class Acc = T>
std::vector<T> rmsnorm_gemma(std::span<const T> x, std::span<const T> gamma, const T& eps) {
  detail::check_norm_weight("rmsnorm_gemma", "gamma", x, gamma);
  std::vector<T> w(gamma.size());
  for (size_t i = 0; i < gamma.size(); ++i) w[i] = T(1) + gamma[i];
  return rmsnorm<T, Acc>(x, std::span<const T>(w), eps);
}

// E01, NOT F02: the notes' literal y = x / sqrt(‖x‖² + ε) · γ (sum of squares, no mean). With
// ε = 0 it is F02 divided by √d; kept only so the claims registry can show that.
template <class T, class Acc = T>
std::vector<T> rmsnorm_literal_e01(std::span<const T> x, std::span<const T> gamma, const T& eps) {
  using std::sqrt;
  detail::check_norm_row("rmsnorm_literal_e01", x, eps);
  detail::check_norm_weight("rmsnorm_literal_e01", "gamma", x, gamma);
  const Acc s = dot<T, Acc>(x, x);
  const T denom = sqrt(T(convert<T>(s) + eps));
  std::vector<T> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = T(x[i] / denom) * gamma[i];
  return y;
}

// The same over every row of a (tokens × d) matrix.
template <class T, class Acc = T>
Mat<T> layernorm(const Mat<T>& x, std::span<const T> gamma, std::span<const T> beta, const T& eps,
                 const NormRounding<T>& rounding = {}) {
  return detail::map_rows(
      x, [&](std::span<const T> r) { return layernorm<T, Acc>(r, gamma, beta, eps, rounding); });
}

template <class T, class Acc = T>
Mat<T> rmsnorm(const Mat<T>& x, std::span<const T> gamma, const T& eps,
               const NormRounding<T>& rounding = {}) {
  return detail::map_rows(
      x, [&](std::span<const T> r) { return rmsnorm<T, Acc>(r, gamma, eps, rounding); });
}

// Residual add fused with RMSNorm (vLLM's and FlashInfer's fused_add_rmsnorm; a decoder
// layer's "h = h + sublayer(x); y = RMSNorm(h)"): the updated residual h = x + r, and y =
// RMSNorm(h)·γ. h is formed in T; `round_sum`, where set, is applied to h before the norm (a
// kernel that normalizes the residual as it stored it, rounded: vLLM), never to the returned h.
template <class T>
struct FusedAddNorm {
  Mat<T> residual;  // x + r
  Mat<T> y;
};

template <class T, class Acc = T>
FusedAddNorm<T> fused_add_rmsnorm(const Mat<T>& x, const Mat<T>& r, std::span<const T> gamma,
                                  const T& eps, const NormRounding<T>& rounding = {},
                                  const std::function<T(const T&)>& round_sum = {}) {
  if (x.rows != r.rows || x.cols != r.cols) {
    throw std::invalid_argument("fused_add_rmsnorm: x is " + std::to_string(x.rows) + "x" +
                                std::to_string(x.cols) + " but the residual " +
                                std::to_string(r.rows) + "x" + std::to_string(r.cols));
  }
  FusedAddNorm<T> out{Mat<T>(x.rows, x.cols), Mat<T>()};
  for (size_t i = 0; i < x.data.size(); ++i) out.residual.data[i] = x.data[i] + r.data[i];
  if (!round_sum) {
    out.y = rmsnorm<T, Acc>(out.residual, gamma, eps, rounding);
    return out;
  }
  Mat<T> held = out.residual;
  for (T& v : held.data) v = round_sum(v);
  out.y = rmsnorm<T, Acc>(held, gamma, eps, rounding);
  return out;
}

template <class T, class Acc = T>
Mat<T> rmsnorm_gemma(const Mat<T>& x, std::span<const T> gamma, const T& eps) {
  return detail::map_rows(
      x, [&](std::span<const T> r) { return rmsnorm_gemma<T, Acc>(r, gamma, eps); });
}

}  // namespace lmo::ref
