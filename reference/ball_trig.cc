// Ball sin and cos (ball.h) on runs (run.h): a double-double value with one running bound that
// each operation widens by its rounding as the ball operations would, and to which each
// truncation bound is added. The steps are trig_core.h's, shared with the four-lane path of
// sin_cos_many (ball_trig_avx2.cc).
//
// Reduction. k = nearest(x·2/π) and r = x − k·π/2, with π/2 = p1 + p2 + rest: p1 and p2 of 32
// significant bits (k·p1 and k·p2 exact for |k| < 2^21), rest an MPFR enclosure. The ball of r
// must lie within 0.8 of 0 (π/4 plus k's rounding), else the result is undecided.
//
// Table. y = j/64 nearest to r's midpoint (|j| ≤ 51) and h = r − y, |h| ≤ 2^-7 plus r's radius:
//   sin r = S_j·cos h + C_j·sin h,   cos r = C_j·cos h − S_j·sin h,
// S_j and C_j MPFR's sin and cos of j/64 as balls. cos h = Σ_(k<6) (−1)^k·h^(2k)/(2k)! and
// sin h = h·Σ_(k<6) (−1)^k·h^(2k)/(2k+1)! by Horner in h²: alternating series of decreasing
// terms (|h| < 1), so each truncation is at most its first omitted term, |h|^12/12! and
// |h|^13/13!, below 2^-112 and 2^-123 for |h| ≤ 2^-7. This takes about 25 operations where the
// two series of 14 terms each over all of [−π/4, π/4] took 60.
#include <algorithm>
#include <array>
#include <boost/math/constants/constants.hpp>
#include <boost/multiprecision/mpfr.hpp>
#include <cmath>
#include <cstdint>
#include <span>

#include "reference/ball.h"
#include "reference/ball_detail.h"
#include "reference/double_double.h"
#include "reference/fma_clones.h"
#include "reference/split_constant.h"
#include "reference/trig_core.h"

namespace lmo::ref {
namespace trig_core {

using namespace ball_detail;  // the helpers ball.cc, ball_erf.cc and ball_trig.cc share

const Constants& constants() {
  static const Constants c = [] {
    Constants t;
    const mp half_pi = boost::math::constants::half_pi<mp>();
    t.two_over_pi = static_cast<double>(mp(1 / half_pi));
    t.p1 = cut_to_32_bits(static_cast<double>(half_pi));
    t.p2 = cut_to_32_bits(static_cast<double>(mp(half_pi - t.p1)));
    t.rest = run_of(around_mpfr(half_pi - t.p1 - t.p2, 0));
    mp even = 1;  // (2k)!
    for (int k = 0; k < kTerms; ++k) {
      if (k > 0) even *= mp(2 * k - 1) * (2 * k);
      const mp odd = even * (2 * k + 1);  // (2k+1)!
      const mp sign = k % 2 ? -1 : 1;
      t.cos_c[static_cast<size_t>(k)] = run_of(around_mpfr(sign / even, 0));
      t.sin_c[static_cast<size_t>(k)] = run_of(around_mpfr(sign / odd, 0));
    }
    for (int j = -kTable; j <= kTable; ++j) {
      const mp y = mp(j) / 64;  // exact
      const auto i = static_cast<size_t>(j + kTable);
      const Ball s = around_mpfr(boost::multiprecision::sin(y), 0);
      const Ball c = around_mpfr(boost::multiprecision::cos(y), 0);
      t.s_hi[i] = s.hi();
      t.s_lo[i] = s.lo();
      t.s_e[i] = s.rad();
      t.c_hi[i] = c.hi();
      t.c_lo[i] = c.lo();
      t.c_e[i] = c.rad();
    }
    return t;
  }();
  return c;
}

namespace {

// Where the table path applies: a finite midpoint with |x| ≤ 2^21 (so |k| < 2^21 and k·p1, k·p2
// are exact) and a narrow ball. Elsewhere MPFR on the midpoint.
bool by_table(const Ball& x) {
  return std::isfinite(x.hi()) && std::fabs(x.hi()) <= 0x1p21 && x.rad() <= 1e-6;
}

// The balls of sin x and cos x from one lane's series: j = 0 takes h's own (S_0 = 0, C_0 = 1),
// and the quadrant k mod 4 maps (sin r, cos r) to (sin x, cos x).
BallSinCos finish(const Series<double>& s, int j, double kd) {
  const Ball sb = checked_run(j == 0 ? s.sh : s.sr);
  const Ball cb = checked_run(j == 0 ? s.ch : s.cr);
  // x = k·π/2 + r: quadrant q = k mod 4.
  switch (static_cast<int>(static_cast<long long>(kd) & 3)) {
    case 0:
      return {sb, cb};
    case 1:
      return {cb, -sb};
    case 2:
      return {-sb, -cb};
    default:
      return {-cb, sb};
  }
}

}  // namespace

}  // namespace trig_core

namespace {

using namespace ball_detail;

// sin and cos of x where trig_core::by_table(x), all on runs (run.h): one running bound from the
// argument's radius to the result, each operation adding its rounding as the ball operations
// would.
LMO_FMA_CLONES BallSinCos sin_and_cos(const Ball& x) {
  using namespace trig_core;
  const Constants& t = constants();
  const double kd = std::nearbyint(x.hi() * t.two_over_pi);
  const Run r = reduce(run_of(x), kd, t);
  if (!(run_max(r) < 0.8)) return {undecided(std::sin(x.hi())), undecided(std::cos(x.hi()))};
  const double jd = std::nearbyint(r.v.hi * 64);
  const auto i = static_cast<size_t>(static_cast<int>(jd) + kTable);
  const Run sj{{t.s_hi[i], t.s_lo[i]}, t.s_e[i]}, cj{{t.c_hi[i], t.c_lo[i]}, t.c_e[i]};
  return finish(series(r, jd, sj, cj, t), static_cast<int>(jd), kd);
}

}  // namespace

Ball sin(const Ball& x) {
  if (!trig_core::by_table(x)) {
    return via_mp(
        x, [](const mp& v) { return mp(boost::multiprecision::sin(v)); }, 1);
  }
  return sin_and_cos(x).sin;
}

Ball cos(const Ball& x) {
  if (!trig_core::by_table(x)) {
    return via_mp(
        x, [](const mp& v) { return mp(boost::multiprecision::cos(v)); }, 1);
  }
  return sin_and_cos(x).cos;
}

BallSinCos sin_cos(const Ball& x) {
  if (!trig_core::by_table(x)) return {sin(x), cos(x)};
  return sin_and_cos(x);
}

void sin_cos_many(std::span<const Ball> x, std::span<BallSinCos> out) {
#ifdef LMO_TRIG_AVX2
  static const bool vector = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  constexpr bool vector = false;
#endif
  const auto n = static_cast<int64_t>(x.size());
  if (!vector) {
    for (int64_t i = 0; i < n; ++i)
      out[static_cast<size_t>(i)] = sin_cos(x[static_cast<size_t>(i)]);
    return;
  }
  // Chunks of up to 64 elements: those on the table path go to the lanes four at a time, the rest
  // (and a chunk's last few) one at a time; every element gets the ball sin_cos gives.
  constexpr int64_t kChunk = 64;
  std::array<double, kChunk> xh{}, xl{}, xr{};
  std::array<int64_t, kChunk> at{};
  std::array<trig_core::Lanes, kChunk / 4> lanes;
  for (int64_t begin = 0; begin < n; begin += kChunk) {
    const int64_t end = std::min(n, begin + kChunk);
    int64_t m = 0;
    for (int64_t i = begin; i < end; ++i) {
      const Ball& xi = x[static_cast<size_t>(i)];
      if (!trig_core::by_table(xi)) {
        out[static_cast<size_t>(i)] = sin_cos(xi);
        continue;
      }
      xh[static_cast<size_t>(m)] = xi.hi();
      xl[static_cast<size_t>(m)] = xi.lo();
      xr[static_cast<size_t>(m)] = xi.rad();
      at[static_cast<size_t>(m++)] = i;
    }
#ifdef LMO_TRIG_AVX2
    trig_core::lanes_avx2(xh.data(), xl.data(), xr.data(), m, lanes.data());
#endif
    for (int64_t k = 0; k < m; ++k) {
      const auto i = static_cast<size_t>(at[static_cast<size_t>(k)]);
      if (k >= m / 4 * 4) {
        out[i] = sin_and_cos(x[i]);
        continue;
      }
      const trig_core::Lanes& g = lanes[static_cast<size_t>(k / 4)];
      const int l = static_cast<int>(k % 4);
      if (!(g.ok >> l & 1)) {
        out[i] = {undecided(std::sin(x[i].hi())), undecided(std::cos(x[i].hi()))};
        continue;
      }
      out[i] = trig_core::finish(g.lane(l), static_cast<int>(g.jd[l]), g.kd[l]);
    }
  }
}

}  // namespace lmo::ref
