// The fp8 linear layer on balls (fp8_linear_enclosure.h).
//
// Block sums. For output (i, j) and k-block c, B = Σ_t q_A,it·q_W,jt: each product of two fp8
// values is exact in double (at most 4 × 4 significant bits), and the sum runs in four lanes
// (terms t ≡ l mod 4) by 2Sum, then the lanes by 2Sum. Every 2Sum's error is gathered; all zero
// means every partial sum was exact, so B is exact. Otherwise the path declines.
//
// Scaled blocks. P = s_A·s_W is exact in double (two f32 scales: at most 48 significant bits;
// checked by 2Prod), and P·B is exact as a double-double (2Prod, checked to stay above 2^-960 so
// its low word does not underflow). So each y_ij is a sum of exact double-doubles, which the ball
// additions enclose (ball.h: each addition adds kAddErr·|sum| to the radius).
//
// The MPFR reference. fp8_linear<mp> sums the k products in index order at 167 bits: each
// rounding is at most 2^-167 of its partial sum, and every partial sum is at most
// M = Σ_t |a_it·w_jt|, so the reference is within k·2^-167·M of the exact value. That term is
// added to the radius, as a ball must enclose both (ball.h); the generic ball dot product gets it
// from its own per-addition radii.
#include "reference/fp8_linear_enclosure.h"

#include <atomic>
#include <cmath>

#include "reference/double_double.h"
#include "reference/fma_clones.h"
#include "reference/parallel.h"

namespace lmo::ref {
namespace {

constexpr int kLanes = 4;

struct BlockSum {
  double sum = 0;  // exact when err == 0
  double err = 0;  // Σ |2Sum errors|
  double mag = 0;  // Σ |products|, rounded (the MPFR term's margin covers it)
};

LMO_FMA_CLONES BlockSum block_sum(const double* qa, const double* qw, int64_t len) {
  double s[kLanes] = {}, e[kLanes] = {}, m[kLanes] = {};
  int64_t t = 0;
  for (; t + kLanes <= len; t += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      const double p = qa[t + l] * qw[t + l];
      const dd::DD x = dd::two_sum(s[l], p);
      s[l] = x.hi;
      e[l] += std::fabs(x.lo);
      m[l] += std::fabs(p);
    }
  }
  for (; t < len; ++t) {
    const double p = qa[t] * qw[t];
    const dd::DD x = dd::two_sum(s[0], p);
    s[0] = x.hi;
    e[0] += std::fabs(x.lo);
    m[0] += std::fabs(p);
  }
  BlockSum b{s[0], e[0], m[0]};
  for (int l = 1; l < kLanes; ++l) {
    const dd::DD x = dd::two_sum(b.sum, s[l]);
    b.sum = x.hi;
    b.err += e[l] + std::fabs(x.lo);
    b.mag += m[l];
  }
  return b;
}

}  // namespace

std::optional<std::vector<Ball>> fp8_linear_enclosure(
    std::span<const double> a, std::span<const double> a_scales, const ScaleTiling& at,
    std::span<const double> w, std::span<const double> w_scales, const ScaleTiling& wt) {
  at.check("fp8_linear_enclosure", a.size());
  wt.check("fp8_linear_enclosure", w.size());
  if (at.cols != wt.cols || at.tile_cols != wt.tile_cols ||
      static_cast<int64_t>(a_scales.size()) != at.scales() ||
      static_cast<int64_t>(w_scales.size()) != wt.scales()) {
    return std::nullopt;
  }
  for (const std::span<const double> v : {a, a_scales, w, w_scales}) {
    for (const double x : v) {
      if (!std::isfinite(x)) return std::nullopt;
    }
  }
  const int64_t m = at.rows, n = wt.rows, k = at.cols, b = at.tile_cols;
  // k·2^-167 with room, times M: the computed sums of magnitudes are within k·2^-53 < 2^-30 of
  // the exact ones (and the factor 2 of 2^-166 covers that many times over).
  const double mpfr_rel = static_cast<double>(k) * 0x1p-166;
  std::vector<Ball> y(static_cast<size_t>(m * n));
  std::atomic<bool> declined{false};
  parallel_for(m, [&](int64_t i) {
    const double* qa = a.data() + i * k;
    for (int64_t j = 0; j < n && !declined.load(std::memory_order_relaxed); ++j) {
      const double* qw = w.data() + j * k;
      Ball acc(0.0);
      double mag = 0;
      for (int64_t k0 = 0; k0 < k; k0 += b) {
        const int64_t len = std::min(b, k - k0);
        const BlockSum s = block_sum(qa + k0, qw + k0, len);
        const dd::DD p = dd::two_prod(a_scales[static_cast<size_t>(at.scale_of(i, k0))],
                                      w_scales[static_cast<size_t>(wt.scale_of(j, k0))]);
        const dd::DD x = dd::two_prod(p.hi, s.sum);
        if (s.err != 0 || p.lo != 0 || !std::isfinite(x.hi) ||
            (x.hi != 0 && std::fabs(x.hi) < 0x1p-960)) {
          declined.store(true, std::memory_order_relaxed);
          return;
        }
        acc = acc + Ball::from_parts(x.hi, x.lo, 0);
        mag += std::fabs(p.hi) * s.mag;
      }
      y[static_cast<size_t>(i * n + j)] =
          Ball::from_parts(acc.hi(), acc.lo(), up(acc.rad() + up(mpfr_rel * up(mag))));
    }
  });
  if (declined.load()) return std::nullopt;
  return y;
}

}  // namespace lmo::ref
