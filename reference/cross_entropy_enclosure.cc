// Certified fused cross-entropy (cross_entropy_enclosure.h).
//
// Per row: m = max_j z_j (a double), x_j = z_j − m formed exactly as a double-double (2Sum), so
// e_j = e^(x_j) and Z = Σ_j e^(z_j) = e^m·S with S = Σ_j e_j; log Z = m + log S; the gradient
// is g_j = e_j·K − [j = t] with K = (1 + 2λ·log Z)/S, the exact value of softmax_cross_entropy's
// p_j + 2λ·log Z·p_j − [j = t]. u = 2^-53; F = 1 + 2^-30 covers the (1 + u)^k and (1 + γ_n)
// factors of the roundings of the bounds and magnitude sums (n ≤ 2^21) and the ratios between a
// value and its approximation below (all within 2^-40 of 1).
//
// Exponentials. dd::exp: |ê_j − e_j| ≤ kExpErr·e_j + kExpAbsErr; with x_j ≥ −400, e_j > 2^-578
// and kExpAbsErr = 2^-1070 < 2^-490·e_j, so |ê_j − e_j| ≤ ρ·e_j, ρ = kExpErr·(1 + 2^-40).
//
// S. The ê_j (two words each) are summed in chains of 32 (S ← 2Sum(S, ê.hi), the errors and low
// words into one double L; the a priori block bound of attention_enclosure.cc, chain_coefficient
// with k = 2, times the block's Σ ê.hi summed alongside), each chain merged into a double-double
// total T by dd::add (kAddErr·|T| each; T grows, so the final |T| bounds them all). Then
// |T − S| ≤ F·(c·Mag + blocks·kAddErr·T + ρ·T): the ball of S. log Z, the loss and the factor
// c = 1 + 2λ·log Z are ball operations (ball.h), K = c/S a ball division, κ = rad(K)/|K|.
//
// Gradient. ĝ_j = dd::mul(ê_j, K̂) (K̂ the midpoint of K): |ĝ_j − e_j·K| ≤ kMulErr·|ê_j K̂| +
// ρ·e_j·|K̂| + e_j·κ·|K| ≤ F·(kMulErr + ρ + κ)·|ĝ_j.hi|. The products stay above 2^-900 (e_j >
// 2^-578, |K| ≥ 2^-300 checked), so no word underflows and the relative bounds hold. The target
// element is that ball minus 1 (a ball subtraction).
//
// Soft cap (Gemma 2's final 30). The capped logits z'_j = cap·tanh(z_j/cap) and their derivatives
// c_j are balls (softcap_balls.h: one batched exponential for both). The row then runs on z'_j =
// h_j + l_j ± r_j: x_j = (h_j − m) + l_j by 2Sum, the low parts added once (an error at most
// 2^-106·(|h_j − m| + |h_j|), as |l_j| ≤ 2^-53·|h_j|) and renormalized by 2Sum. With δ_j that error
// plus r_j and δ = max δ_j ≤ 2^-40, the exponential of the computed x_j is within e^(x_j)·(ρ
// + 1.0001·δ)· (1 + 2^-39) of the exact e^(x'_j): ρ becomes that bound for the row. The loss
// subtracts the target's ball, and each gradient ball is multiplied by c_j (ball operations).
#include "reference/cross_entropy_enclosure.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/chain_bound.h"
#include "reference/dd_exp.h"
#include "reference/double_double.h"
#include "reference/fma_clones.h"
#include "reference/parallel.h"
#include "reference/softcap_balls.h"

namespace lmo::ref {
namespace {

constexpr double kF = 1 + 0x1p-30;
constexpr double kRho = dd::kExpErr * (1 + 0x1p-40);
constexpr double kLowest = -400;  // x_j below this: the path declines (header comment)
constexpr int64_t kChain = 32;    // terms per 2Sum chain of S
constexpr int64_t kMaxRow = int64_t{1} << 21;

// The block error of a chain of kChain two-word terms per unit of Σ|t| (chain_bound.h).
constexpr double kChainCoefficient = chain_coefficient(kChain, 2);

// A row's logits: doubles z (capped and cap_grad null), or the soft-capped balls of z with the
// cap's derivative per logit.
struct RowLogits {
  const double* z;
  const Ball* capped = nullptr;
  const Ball* cap_grad = nullptr;
  Ball at(int64_t j) const { return capped ? capped[j] : Ball(z[j]); }
};

// One row's outputs, or false where the path declines. eh, el: scratch of n doubles each.
LMO_FMA_CLONES bool row(const RowLogits& in, int64_t n, int64_t t, double lambda, double* eh,
                        double* el, Ball& loss, Ball& logz, Ball* grad) {
  // The logits' midpoints' high words (the doubles themselves without a cap).
  thread_local std::vector<double> hi;
  const double* z = in.z;
  if (in.capped) {
    hi.resize(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) {
      if (!std::isfinite(in.capped[j].rad())) return false;
      hi[static_cast<size_t>(j)] = in.capped[j].hi();
    }
    z = hi.data();
  }
  double m = z[0];
  for (int64_t j = 0; j < n; ++j) {
    if (!std::isfinite(z[j])) return false;
    m = std::max(m, z[j]);
  }
  // x_j = z_j − m exactly (2Sum), then every e^(x_j) at once (dd::exp_many: the bits of exp,
  // four at a time), in place. Soft-capped logits add their low words (header comment).
  double delta = 0;
  for (int64_t j = 0; j < n; ++j) {
    dd::DD x = dd::two_sum(z[j], -m);
    if (in.capped) {
      const Ball& zc = in.capped[j];
      x = dd::two_sum(x.hi, x.lo + zc.lo());
      delta = std::max(delta, zc.rad() + 0x1p-105 * (std::fabs(x.hi) + std::fabs(z[j])));
    }
    if (x.hi < kLowest) return false;
    eh[j] = x.hi;
    el[j] = x.lo;
  }
  if (!(delta <= 0x1p-40)) return false;
  const double rho = delta == 0 ? kRho : up(up(kRho + 1.0001 * up(delta)) * (1 + 0x1p-39));
  dd::exp_many(eh, el, n, eh, el);
  double th = 0, tl = 0, mag = 0;
  int64_t blocks = 0;
  for (int64_t j0 = 0; j0 < n; j0 += kChain) {
    const int64_t j1 = std::min(n, j0 + kChain);
    double s = 0, l = 0;
    for (int64_t j = j0; j < j1; ++j) {
      const dd::DD e{eh[j], el[j]};
      const double sum = s + e.hi;
      const double bb = sum - s;
      l += (s - (sum - bb)) + (e.hi - bb) + e.lo;
      s = sum;
      mag += e.hi;
    }
    const dd::DD merged = dd::add({th, tl}, dd::two_sum(s, l));
    th = merged.hi;
    tl = merged.lo;
    ++blocks;
  }
  const double rad_s = up(
      kF * (kChainCoefficient * mag + static_cast<double>(blocks) * dd::kAddErr * th + rho * th));
  const Ball s_ball = Ball::from_parts(th, tl, rad_s);
  const Ball lse = Ball(m) + log(s_ball);
  const Ball lam(lambda);
  // λ = 0 written out: an exact 0 times a ball whose sign is open counts as undecided (ball.h).
  const Ball zt = in.at(t);
  loss = lambda == 0 ? -zt + lse : (-zt + lse) + lam * (lse * lse);
  logz = lse;
  const Ball c = lambda == 0 ? Ball(1) : Ball(1) + (Ball(2) * lam) * lse;
  if (!(c.lower() > 0 || c.upper() < 0)) return false;
  const Ball k = c / s_ball;
  if (!std::isfinite(k.rad()) || std::fabs(k.hi()) < 0x1p-300) return false;
  const double kappa = k.rad() * (1 + 0x1p-50) / std::fabs(k.hi());
  if (!(kappa < 0x1p-60)) return false;
  const dd::DD kmid = k.mid();
  const double rel = kF * (dd::kMulErr + rho + kappa);
  for (int64_t j = 0; j < n; ++j) {
    const dd::DD g = dd::mul({eh[j], el[j]}, kmid);
    grad[j] = Ball::from_parts(g.hi, g.lo, up(rel * std::fabs(g.hi)));
  }
  grad[t] = grad[t] - Ball(1);
  if (in.cap_grad) {
    for (int64_t j = 0; j < n; ++j) grad[j] = grad[j] * in.cap_grad[j];
  }
  return true;
}

}  // namespace

std::optional<LossEnclosure> cross_entropy_enclosure(std::span<const double> z,
                                                     std::span<const int64_t> target, int64_t rows,
                                                     int64_t n, double lambda, double cap) {
  if (rows < 0 || n < 1 || static_cast<int64_t>(z.size()) != rows * n ||
      static_cast<int64_t>(target.size()) != rows) {
    throw std::invalid_argument("cross_entropy_enclosure: z must be rows × n and target rows long");
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t t = target[static_cast<size_t>(r)];
    if (t < 0 || t >= n) {
      throw std::invalid_argument("cross_entropy_enclosure: target " + std::to_string(t) +
                                  " of row " + std::to_string(r) + " outside [0, " +
                                  std::to_string(n) + ")");
    }
  }
  if (n > kMaxRow || !std::isfinite(lambda) || !(cap >= 0 && std::isfinite(cap))) {
    return std::nullopt;
  }
  LossEnclosure out;
  out.loss.resize(static_cast<size_t>(rows));
  out.logz.resize(static_cast<size_t>(rows));
  out.grad.resize(z.size());
  std::atomic<bool> declined{false};
  parallel_for(rows, [&](int64_t r) {
    if (declined.load(std::memory_order_relaxed)) return;
    thread_local std::vector<double> eh, el;
    thread_local std::vector<Ball> capped, cap_grad;
    eh.resize(static_cast<size_t>(n));
    el.resize(static_cast<size_t>(n));
    const size_t i = static_cast<size_t>(r);
    RowLogits in{z.data() + r * n};
    if (cap > 0) {
      capped.resize(static_cast<size_t>(n));
      cap_grad.resize(static_cast<size_t>(n));
      softcap_balls(std::span<const double>(in.z, static_cast<size_t>(n)), cap, capped, cap_grad);
      in = {in.z, capped.data(), cap_grad.data()};
    }
    if (!row(in, n, target[i], lambda, eh.data(), el.data(), out.loss[i], out.logz[i],
             out.grad.data() + r * n)) {
      declined.store(true, std::memory_order_relaxed);
    }
  });
  if (declined.load()) return std::nullopt;
  return out;
}

}  // namespace lmo::ref
