// Ball sin and cos (ball.h), all in ball arithmetic: the radius the operations carry is the
// rounding bound, and each truncation bound is added to it.
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
// |h|^13/13!, below 2^-112 and 2^-123 for |h| ≤ 2^-7. This takes about 25 ball operations where
// the two series of 14 terms each over all of [−π/4, π/4] took 60.
#include <array>
#include <boost/math/constants/constants.hpp>
#include <boost/multiprecision/mpfr.hpp>
#include <cmath>

#include "reference/ball.h"
#include "reference/ball_detail.h"
#include "reference/double_double.h"
#include "reference/fma_clones.h"
#include "reference/split_constant.h"

namespace lmo::ref {
namespace {

using namespace ball_detail;  // the helpers ball.cc, ball_erf.cc and ball_trig.cc share

constexpr int kTerms = 6;   // terms of each short series
constexpr int kTable = 51;  // j = −kTable … kTable

struct TrigConstants {
  double two_over_pi = 0, p1 = 0, p2 = 0;
  Run rest;
  // (−1)^k/(2k+1)! and (−1)^k/(2k)!, k < kTerms, as enclosures of the exact rationals.
  std::array<Run, kTerms> sin_c, cos_c;
  // sin(j/64) and cos(j/64) at index j + kTable.
  std::array<Run, 2 * kTable + 1> s, c;
};

const TrigConstants& trig() {
  static const TrigConstants c = [] {
    TrigConstants t;
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
      t.s[static_cast<size_t>(j + kTable)] = run_of(around_mpfr(boost::multiprecision::sin(y), 0));
      t.c[static_cast<size_t>(j + kTable)] = run_of(around_mpfr(boost::multiprecision::cos(y), 0));
    }
    return t;
  }();
  return c;
}

// Σ_k c_k·h2^k by Horner on runs, widened by the first omitted term's bound.
[[gnu::always_inline]] inline Run short_series(const std::array<Run, kTerms>& c, Run h2,
                                               double tail) {
  Run v = c.back();
  for (size_t k = c.size() - 1; k-- > 0;) v = c[k] + h2 * v;
  v.e = up(v.e + tail);
  return v;
}

// sin and cos of x, |x.hi| ≤ 2^21 (so |k| < 2^21 and k·p1, k·p2 are exact), all on runs
// (ball_detail.h): one running bound from the argument's radius to the result, each operation
// adding its rounding as the ball operations would.
LMO_FMA_CLONES BallSinCos sin_and_cos(const Ball& x) {
  const TrigConstants& t = trig();
  const double kd = std::nearbyint(x.hi() * t.two_over_pi);
  const Run k{{kd, 0}, 0};
  const Run r = ((run_of(x) - Run{{kd * t.p1, 0}, 0}) - Run{{kd * t.p2, 0}, 0}) - k * t.rest;
  if (!(run_max(r) < 0.8)) return {undecided(std::sin(x.hi())), undecided(std::cos(x.hi()))};
  const int j = static_cast<int>(std::nearbyint(r.v.hi * 64));
  const Run h = r - Run{{j / 64.0, 0}, 0};  // j/64 exact
  const double h_max = run_max(h);
  // |h|^12/12! and |h|^13/13! rounded up (12! = 479001600; up() covers the roundings).
  const double h4 = up(up(h_max * h_max) * up(h_max * h_max));
  const double h12 = up(up(h4 * h4) * h4);
  const double tail_c = up(h12 / 479001600.0), tail_s = up(up(h12 * h_max) / 6227020800.0);
  const Run h2 = h * h;
  const Run ch = short_series(t.cos_c, h2, tail_c);
  Run sh = h * short_series(t.sin_c, h2, 0);
  sh.e = up(sh.e + tail_s);
  const Run& sj = t.s[static_cast<size_t>(j + kTable)];
  const Run& cj = t.c[static_cast<size_t>(j + kTable)];
  const Ball sb = checked_run(j == 0 ? sh : sj * ch + cj * sh);
  const Ball cb = checked_run(j == 0 ? ch : cj * ch - sj * sh);
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

// Where the reduction does not apply: MPFR on the midpoint with the Lipschitz bound 1.
bool trig_by_table(const Ball& x) {
  return finite(x) && std::fabs(x.hi()) <= 0x1p21 && x.rad() <= 1e-6;
}

}  // namespace

Ball sin(const Ball& x) {
  if (!trig_by_table(x)) {
    return via_mp(
        x, [](const mp& v) { return mp(boost::multiprecision::sin(v)); }, 1);
  }
  return sin_and_cos(x).sin;
}

Ball cos(const Ball& x) {
  if (!trig_by_table(x)) {
    return via_mp(
        x, [](const mp& v) { return mp(boost::multiprecision::cos(v)); }, 1);
  }
  return sin_and_cos(x).cos;
}

BallSinCos sin_cos(const Ball& x) {
  if (!trig_by_table(x)) return {sin(x), cos(x)};
  return sin_and_cos(x);
}

}  // namespace lmo::ref
