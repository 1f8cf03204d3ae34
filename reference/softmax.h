// F12 softmax, log-sum-exp and cross-entropy over one row of logits, F13 z-loss with its
// gradient, F14 logit soft-capping, and the fused loss-and-gradient row that training kernels
// compute (soft-cap, cross-entropy, z-loss, gradient with respect to the raw logits).
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/numeric.h"

namespace lmo::ref {

// max_i z_i (−inf for an empty row). NaN propagates. The running maximum starts at z_0, not at
// −inf: fp8 E4M3 has no infinity (its −inf is NaN, which no comparison would ever replace).
template <class T>
T row_max(std::span<const T> z) {
  using std::isnan;
  if (z.empty()) return -std::numeric_limits<T>::infinity();
  T m = z[0];
  for (const T& v : z) {
    if (isnan(v)) return v;
    if (v > m) m = v;
  }
  return m;
}

// Rounding points of a simulated softmax kernel ([recipes], oracle/rules/recipe.h); the reference and
// the strict naive kernel set none. With hooks, Acc is T.
template <class T>
struct SoftmaxRounding {
  std::function<T(const T&)> exps;  // each e^{z−m} (cross-entropy: also the gradient's p)
  std::function<T(const T&)> sum;   // the running Σ e^{z−m}, after each addition
};

// log Z = log Σ_i e^{z_i}. With subtract_max (the default, and what every real kernel does)
// it is evaluated as m + log Σ e^{z_i − m}, m = max z: equal in exact arithmetic, and the only
// form that does not overflow in a narrow format. The sum accumulates in Acc.
template <class T, class Acc = T>
T logsumexp(std::span<const T> z, bool subtract_max = true,
            const SoftmaxRounding<T>& rounding = {}) {
  using std::exp;
  using std::isinf;
  using std::log;
  if (z.empty()) throw std::invalid_argument("logsumexp: empty row");
  const T m = subtract_max ? row_max(z) : T(0);
  if (subtract_max && isinf(m)) return m;  // all −inf: log 0 = −inf; any +inf: +inf
  Acc s(0);
  for (const T& v : z) {
    T e = exp(T(v - m));
    if (rounding.exps) e = rounding.exps(e);
    s = s + convert<Acc>(e);
    if (rounding.sum) s = convert<Acc>(rounding.sum(convert<T>(s)));
  }
  return T(m + T(log(convert<T>(s))));
}

// P(y = i) = e^{z_i} / Z, evaluated as e^{z_i − m} / Σ_j e^{z_j − m} (see logsumexp).
template <class T, class Acc = T>
std::vector<T> softmax(std::span<const T> z, bool subtract_max = true,
                       const SoftmaxRounding<T>& rounding = {}) {
  using std::exp;
  if (z.empty()) throw std::invalid_argument("softmax: empty row");
  const T m = subtract_max ? row_max(z) : T(0);
  std::vector<T> e(z.size());
  Acc s(0);
  for (size_t i = 0; i < z.size(); ++i) {
    e[i] = exp(T(z[i] - m));
    if (rounding.exps) e[i] = rounding.exps(e[i]);
    s = s + convert<Acc>(e[i]);
    if (rounding.sum) s = convert<Acc>(rounding.sum(convert<T>(s)));
  }
  const T total = convert<T>(s);
  for (T& v : e) v = v / total;
  return e;
}

namespace detail {

inline void check_target(const char* fn, size_t n, int64_t target) {
  if (target < 0 || target >= static_cast<int64_t>(n)) {
    throw std::invalid_argument(std::string(fn) + ": target is " + std::to_string(target) +
                                ", expected 0 <= target < " + std::to_string(n) +
                                " (the length of the row)");
  }
}

template <class T>
void check_cap(const char* fn, const T& cap) {
  using std::isinf;
  if (!(cap > T(0)) || isinf(cap)) {
    throw std::invalid_argument(std::string(fn) + ": cap is " +
                                std::to_string(to_double(cap)) +
                                ", expected a finite cap > 0");
  }
}

}  // namespace detail

// F12 cross-entropy: CE = −log P(y = target) = −z_target + log Z.
template <class T, class Acc = T>
T cross_entropy(std::span<const T> z, int64_t target, bool subtract_max = true) {
  detail::check_target("cross_entropy", z.size(), target);
  const T lse = logsumexp<T, Acc>(z, subtract_max);
  return T(-z[static_cast<size_t>(target)]) + lse;
}

// F13 z-loss: L = CE + λ·(log Z)² (PaLM: λ = 1e-4). E02: the notes' middle expression
// ((log Z)² − 0)² would be (log Z)⁴; the penalty is (log Z − 0)².
template <class T, class Acc = T>
T z_loss(std::span<const T> z, int64_t target, const T& lambda, bool subtract_max = true) {
  detail::check_target("z_loss", z.size(), target);
  const T lse = logsumexp<T, Acc>(z, subtract_max);
  const T ce = T(-z[static_cast<size_t>(target)]) + lse;
  return ce + T(lambda * T(lse * lse));
}

// F13 gradient: ∂L/∂z_j = p_j − [j = target] + 2λ·log Z·p_j, p = softmax(z).
template <class T, class Acc = T>
std::vector<T> z_loss_grad(std::span<const T> z, int64_t target, const T& lambda,
                           bool subtract_max = true) {
  detail::check_target("z_loss_grad", z.size(), target);
  const std::vector<T> p = softmax<T, Acc>(z, subtract_max);
  const T lse = logsumexp<T, Acc>(z, subtract_max);
  const T coef = T(T(2) * lambda) * lse;
  std::vector<T> g(z.size());
  for (size_t j = 0; j < z.size(); ++j) {
    const T pm = static_cast<int64_t>(j) == target ? T(p[j] - T(1)) : p[j];
    g[j] = pm + T(coef * p[j]);
  }
  return g;
}

// F14 soft-capping: cap·tanh(z/cap) (Gemma 2: 50 on attention logits, 30 on final logits).
template <class T>
T softcap(const T& z, const T& cap) {
  using std::tanh;
  detail::check_cap("softcap", cap);
  return cap * T(tanh(T(z / cap)));
}

template <class T>
std::vector<T> softcap(std::span<const T> z, const T& cap) {
  std::vector<T> y;
  y.reserve(z.size());
  for (const T& v : z) y.push_back(softcap(v, cap));
  return y;
}

// d/dz cap·tanh(z/cap) = 1 − tanh²(z/cap). Literal: that expression, which cancels (to exactly 0
// once tanh rounds to ±1: |z/cap| ≳ 3.5 in bfloat16, ≈ 58.6 in mp). Default: the equal
// 4e/(1 + e)² with e = e^{−2|z/cap|}, accurate for every z.
template <class T>
T softcap_grad(const T& z, const T& cap, bool literal = false) {
  using std::abs;
  using std::exp;
  using std::tanh;
  detail::check_cap("softcap_grad", cap);
  const T t = z / cap;
  if (literal) {
    const T th = tanh(t);
    return T(1) - T(th * th);
  }
  const T e = exp(T(T(-2) * T(abs(t))));
  const T one_e = T(1) + e;
  return T(T(4) * e) / T(one_e * one_e);
}

// The result of one row of a fused training-loss kernel.
template <class T>
struct LossRow {
  T loss;                  // CE + λ·(log Z)² of the capped logits
  T log_z;                 // log Z of the capped logits
  std::vector<T> dlogits;  // ∂loss/∂z with respect to the raw (pre-cap) logits
};

// Fused F14 + F12 + F13: z' = cap·tanh(z/cap) when a cap is given (else z' = z),
//   loss = −z'_target + log Z + λ·(log Z)²,   log Z = logsumexp(z'),
//   ∂loss/∂z_j = (p_j − [j = target] + 2λ·log Z·p_j) · ∂z'_j/∂z_j,
// with p_j = e^{z'_j − log Z} and ∂z'_j/∂z_j = 1 − tanh²(z_j/cap) (softcap_grad) or 1.
template <class T, class Acc = T>
LossRow<T> softmax_cross_entropy(std::span<const T> z, int64_t target, const T& lambda,
                                 std::optional<T> cap = std::nullopt, bool subtract_max = true,
                                 const SoftmaxRounding<T>& rounding = {}) {
  using std::exp;
  detail::check_target("softmax_cross_entropy", z.size(), target);
  if (cap) detail::check_cap("softmax_cross_entropy", *cap);
  const std::vector<T> zc = cap ? softcap(z, *cap) : std::vector<T>(z.begin(), z.end());
  const T lse = logsumexp<T, Acc>(std::span<const T>(zc), subtract_max, rounding);
  const T ce = T(-zc[static_cast<size_t>(target)]) + lse;
  LossRow<T> out{ce + T(lambda * T(lse * lse)), lse, std::vector<T>(z.size())};
  const T coef = T(T(2) * lambda) * lse;
  for (size_t j = 0; j < z.size(); ++j) {
    T p = exp(T(zc[j] - lse));
    if (rounding.exps) p = rounding.exps(p);
    const T pm = static_cast<int64_t>(j) == target ? T(p - T(1)) : p;
    T g = pm + T(coef * p);
    if (cap) g = g * softcap_grad(z[j], *cap);
    out.dlogits[j] = g;
  }
  return out;
}

}  // namespace lmo::ref
