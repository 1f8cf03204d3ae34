// Backward passes of F01 LayerNorm and F02 RMSNorm over one row: given x, the weights and
// dy = ∂L/∂y, the gradients with respect to x and the weights. Weight gradients are per row;
// a batch sums them over rows.
//
// With σ = sqrt(mean(·) + ε), x̂ the normalized row and g_i = dy_i·γ_i:
//   RMSNorm   (x̂ = x/σ):       dx = (g − x̂·mean(g ⊙ x̂)) / σ,            dγ = dy ⊙ x̂
//   LayerNorm (x̂ = (x − μ)/σ): dx = (g − mean(g) − x̂·mean(g ⊙ x̂)) / σ,  dγ = dy ⊙ x̂, dβ = dy
// (differentiate y through σ: ∂σ/∂x_k = x_k/(dσ) for RMSNorm, (x_k − μ)/(dσ) for LayerNorm,
// whose ∂μ/∂x_k = 1/d term also removes mean(g)). Means accumulate in Acc as in the forward.
#pragma once

#include <cmath>
#include <span>
#include <vector>

#include "reference/norms.h"

namespace lmo::ref {

template <class T>
struct RmsNormGrad {
  std::vector<T> dx;
  std::vector<T> dgamma;
};

template <class T>
struct LayerNormGrad {
  std::vector<T> dx;
  std::vector<T> dgamma;
  std::vector<T> dbeta;
};

// Backward of rmsnorm (F02). For rmsnorm_gemma see rmsnorm_gemma_backward.
template <class T, class Acc = T>
RmsNormGrad<T> rmsnorm_backward(std::span<const T> x, std::span<const T> gamma, const T& eps,
                                std::span<const T> dy) {
  using std::sqrt;
  detail::check_norm_row("rmsnorm_backward", x, eps);
  detail::check_norm_weight("rmsnorm_backward", "gamma", x, gamma);
  detail::check_norm_weight("rmsnorm_backward", "dy", x, dy);
  const size_t d = x.size();
  const T ms = detail::mean_of_squares<T, Acc>(x, [](const T& v) { return v; });
  const T sigma = sqrt(T(ms + eps));
  std::vector<T> xhat(d), g(d), gx(d);
  for (size_t i = 0; i < d; ++i) {
    xhat[i] = x[i] / sigma;
    g[i] = dy[i] * gamma[i];
    gx[i] = g[i] * xhat[i];
  }
  const T c = detail::mean_of<T, Acc>(std::span<const T>(gx), [](const T& v) { return v; });
  RmsNormGrad<T> out{std::vector<T>(d), std::vector<T>(d)};
  for (size_t i = 0; i < d; ++i) {
    out.dx[i] = T(g[i] - T(xhat[i] * c)) / sigma;
    out.dgamma[i] = dy[i] * xhat[i];
  }
  return out;
}

// Backward of rmsnorm_gemma (weight 1 + γ): as rmsnorm_backward with the weight 1 + γ;
// ∂L/∂γ = ∂L/∂(1 + γ).
template <class T, class Acc = T>
RmsNormGrad<T> rmsnorm_gemma_backward(std::span<const T> x, std::span<const T> gamma, const T& eps,
                                      std::span<const T> dy) {
  detail::check_norm_weight("rmsnorm_gemma_backward", "gamma", x, gamma);
  std::vector<T> w(gamma.size());
  for (size_t i = 0; i < gamma.size(); ++i) w[i] = T(1) + gamma[i];
  return rmsnorm_backward<T, Acc>(x, std::span<const T>(w), eps, dy);
}

// Backward of layernorm (F01).
template <class T, class Acc = T>
LayerNormGrad<T> layernorm_backward(std::span<const T> x, std::span<const T> gamma, const T& eps,
                                    std::span<const T> dy) {
  using std::sqrt;
  detail::check_norm_row("layernorm_backward", x, eps);
  detail::check_norm_weight("layernorm_backward", "gamma", x, gamma);
  detail::check_norm_weight("layernorm_backward", "dy", x, dy);
  const size_t d = x.size();
  const T mu = detail::mean_of<T, Acc>(x, [](const T& v) { return v; });
  const T var = detail::mean_of_squares<T, Acc>(x, [&](const T& v) { return T(v - mu); });
  const T sigma = sqrt(T(var + eps));
  std::vector<T> xhat(d), g(d), gx(d);
  for (size_t i = 0; i < d; ++i) {
    xhat[i] = T(x[i] - mu) / sigma;
    g[i] = dy[i] * gamma[i];
    gx[i] = g[i] * xhat[i];
  }
  const auto id = [](const T& v) { return v; };
  const T mean_g = detail::mean_of<T, Acc>(std::span<const T>(g), id);
  const T mean_gx = detail::mean_of<T, Acc>(std::span<const T>(gx), id);
  LayerNormGrad<T> out{std::vector<T>(d), std::vector<T>(d), std::vector<T>(dy.begin(), dy.end())};
  for (size_t i = 0; i < d; ++i) {
    out.dx[i] = T(T(g[i] - mean_g) - T(xhat[i] * mean_gx)) / sigma;
    out.dgamma[i] = dy[i] * xhat[i];
  }
  return out;
}

}  // namespace lmo::ref
