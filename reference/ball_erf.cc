// Ball erf and erfc (ball.h): erfcx's Taylor table, erf's series near 0, MPFR past 26.5.
#include <algorithm>
#include <boost/math/constants/constants.hpp>
#include <boost/multiprecision/mpfr.hpp>
#include <cmath>
#include <optional>
#include <span>
#include <vector>

#include "reference/ball.h"
#include "reference/ball_detail.h"
#include "reference/erfcx_taylor.h"

namespace lmo::ref {
namespace {

using namespace ball_detail;  // the helpers ball.cc, ball_erf.cc and ball_trig.cc share

constexpr double kTwoOverRootPi = 1.1284;  // > 2/√π = 1.12837…, the largest |erf'|

// |erf'(t)| = |erfc'(t)| = 2/√π·e^(−t²), largest over the ball at its point m nearest 0. Away
// from 0 this is far below the global 2/√π: erfc(t) ≈ e^(−t²)/(t√π) is tiny for large t, and with
// the global constant the radius of GELU's erfc(−x/√2) at x ≪ 0 dwarfed the value, so every such
// element fell back to MPFR. e^(−m²) is bounded above by the ball exp (its written bound) of a
// value at or below −m².
double erf_lipschitz(const Ball& x) {
  if (!finite(x) || x.exact()) return kTwoOverRootPi;
  const double lo = x.lower(), hi = x.upper();
  if (lo <= 0 && hi >= 0) return kTwoOverRootPi;
  const double m = std::min(std::fabs(lo), std::fabs(hi));
  const double m2 = m * m * (1 - 0x1p-50);  // below m²: one rounding of at most 2^-53
  const Ball e = exp(Ball(-m2));
  if (!finite(e)) return kTwoOverRootPi;
  return std::min(kTwoOverRootPi, up(kTwoOverRootPi * std::max(e.upper(), 0x1p-1074)));
}

// erf and erfc of a double-double a ≥ 0 without MPFR, in ball arithmetic (its radius carries
// every rounding; the truncation bounds are added), for a ≤ kErfcxMax:
//  - erfc a = e^(−a²)·erfcx(a), erfcx by its Taylor table (erfcx_taylor.cc: fifteen
//    coefficients and a written truncation bound, 2^-103 relative or better). No cancellation.
//  - a < kErfSeries: erf a = (2/√π)·e^(−a²)·Σ_{n≥0} t_n, t_0 = a, t_{n+1} = t_n·2a²/(2n+3)
//    (Abramowitz & Stegun 7.1.6): positive terms, no cancellation. Here q = 2a²/(2n+3) ≤ 1/6
//    and the ratios only shrink, so the tail after t_n is at most t_n·q/(1 − q) ≤ t_n; about 16
//    terms reach 2^-115. Beyond, erf = 1 − erfc ≥ 0.52.
// Beyond kErfcxMax, e^(−a²) nears double's subnormals and MPFR takes over.
constexpr double kErfSeries = 0.5;

struct ErfConstants {
  Ball two_over_root_pi;
};

const ErfConstants& erf_constants() {
  static const ErfConstants c = [] {
    const mp root_pi = boost::math::constants::root_pi<mp>();
    return ErfConstants{around_mpfr(2 / root_pi, 0)};
  }();
  return c;
}

// erf a or erfc a at the midpoint a ≥ 0, and e^(−a²), which the Lipschitz bound reuses.
struct AtMidpoint {
  Ball value, gauss;
};

// |x|'s midpoint as an exact ball: a, the argument erf_of_nonnegative takes.
Ball magnitude_of_midpoint(const Ball& x) {
  return Ball::from_parts(std::fabs(x.hi()), std::signbit(x.hi()) ? -x.lo() : x.lo(), 0);
}

// The exponent −a² of e^(−a²) (erfc_many takes the exponentials of many at once).
Ball minus_square(const Ball& a) { return -(a * a); }

// gauss: e^(−a²) when the caller has it (erfc_many), else computed here.
template <bool kErf>
std::optional<AtMidpoint> erf_of_nonnegative(const Ball& a, const Ball* known_gauss) {
  if (a.hi() == 0) return AtMidpoint{Ball(kErf ? 0.0 : 1.0), Ball(1.0)};
  const Ball gauss = known_gauss ? *known_gauss : exp(minus_square(a));
  if (kErf && a.hi() < kErfSeries) {
    const Ball two_a2 = ldexp(a * a, 1);
    const double q_top = two_a2.upper();
    Ball term = a, sum = a;
    for (int n = 0;; ++n) {
      if (n > 400) return std::nullopt;
      const double q = q_top / (2 * n + 3) * (1 + 0x1p-50);  // ≥ the next ratio
      if (q <= 0.5 && term.upper() <= sum.lower() * 0x1p-115) {
        sum = Ball::from_parts(sum.hi(), sum.lo(), up(sum.rad() + term.upper()));
        break;
      }
      term = term * two_a2 / Ball(2 * n + 3);
      sum = sum + term;
    }
    return AtMidpoint{erf_constants().two_over_root_pi * gauss * sum, gauss};
  }
  const Ball ec = gauss * erfcx_ball(a.mid());
  return AtMidpoint{kErf ? Ball(1.0) - ec : ec, gauss};
}

// The Lipschitz bound over x's ball from the midpoint's e^(−a²): the point of the ball nearest 0
// is m = a − r, and e^(−m²) = e^(−a²)·e^(2ar − r²) ≤ e^(−a²)·(1 + 2.01·a·r) for 2ar ≤ 2^-10
// (e^y ≤ 1 + 1.001·y there). Otherwise erf_lipschitz's own exponential.
double lipschitz_from(const Ball& x, const Ball& gauss) {
  const double a = std::fabs(x.hi()), r = x.rad();
  if (!(a > 2 * r && 2 * a * r <= 0x1p-10 && finite(gauss))) return erf_lipschitz(x);
  const double e = std::max(gauss.upper(), 0x1p-1074);
  return std::min(kTwoOverRootPi, up(up(kTwoOverRootPi * e) * up(1 + 2.01 * a * r)));
}

// erf and erfc of x's midpoint by erf_of_nonnegative (erf is odd, erfc(−a) = 2 − erfc(a)),
// widened by the Lipschitz bound over x's ball; MPFR where that does not apply.
template <bool kErf>
Ball erf_or_erfc(const Ball& x, const Ball* known_gauss = nullptr) {
  const auto mpfr = [](const mp& v) {
    return kErf ? mp(boost::multiprecision::erf(v)) : mp(boost::multiprecision::erfc(v));
  };
  if (!finite(x) || !(std::fabs(x.hi()) <= kErfcxMax)) return via_mp(x, mpfr, erf_lipschitz(x));
  const bool neg = std::signbit(x.hi());
  const Ball a = magnitude_of_midpoint(x);
  const std::optional<AtMidpoint> p = erf_of_nonnegative<kErf>(a, known_gauss);
  if (!p) return via_mp(x, mpfr, erf_lipschitz(x));
  Ball r;
  if (kErf) {
    r = neg ? -p->value : p->value;
  } else {
    r = neg ? Ball(2.0) - p->value : p->value;
  }
  if (x.exact()) return r;
  return Ball::from_parts(r.hi(), r.lo(), up(r.rad() + lipschitz_from(x, p->gauss) * x.rad()));
}

}  // namespace

Ball erf(const Ball& x) { return erf_or_erfc<true>(x); }
Ball erfc(const Ball& x) { return erf_or_erfc<false>(x); }

void erfc_many(std::span<Ball> x) {
  // The arguments erf_or_erfc takes through its table (finite, 0 < |x| ≤ kErfcxMax): their
  // e^(−a²) together, then each finished as erfc does; the others one at a time.
  thread_local std::vector<Ball> gauss;
  thread_local std::vector<size_t> at;
  gauss.clear();
  at.clear();
  for (size_t j = 0; j < x.size(); ++j) {
    if (finite(x[j]) && x[j].hi() != 0 && std::fabs(x[j].hi()) <= kErfcxMax) {
      gauss.push_back(minus_square(magnitude_of_midpoint(x[j])));
      at.push_back(j);
    } else {
      x[j] = erfc(x[j]);
    }
  }
  exp_many(gauss);
  for (size_t k = 0; k < at.size(); ++k) x[at[k]] = erf_or_erfc<false>(x[at[k]], &gauss[k]);
}

}  // namespace lmo::ref
