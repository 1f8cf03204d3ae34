// erfcx(a) = e^(a²)·erfc(a) by Taylor polynomials around table points x_j (erfcx_taylor.h):
// every 1/32 on [0, 4], every 1/16 on [4, 8], 1/8 on [8, 16] and 1/4 on [16, 26.5]. erfcx
// varies like 1/x, so a step growing with x keeps the truncation bound below 2^-103 relative
// (derivation below) with 302 points, a third of a uniform grid's: the points far out cost most
// to compute.
//
// Coefficients. f = erfcx satisfies f' = 2x·f − k, k = 2/√π, so f^(n+1) = 2x·f^(n) + 2n·f^(n−1)
// for n ≥ 1, and the Taylor coefficients c_n = f^(n)(x_j)/n! satisfy
//   c_0 = e^(x²)·erfc(x),   c_1 = 2x·c_0 − k,   c_(n+1) = (2x·c_n + 2·c_(n−1))/(n + 1).
// For large x the two terms nearly cancel (c_n ≈ (−1)^n/(√π·x^(n+1))), losing about
// log2(2x²/(n+1)) bits per step: 110 bits over the 14 steps at x = 26.5. So the recurrence runs
// in MPFR at p = 168 + those lost bits, from MPFR's correctly rounded erfc and exp, with a
// running error bound E_n (u = 2^-p, each MPFR operation within u of its exact result):
//   E_0 = 4u·|ĉ_0|                       (exp, erfc and their product: three roundings)
//   E_1 = 2x·E_0 + 4u·(2x·|ĉ_0| + k + |ĉ_1|)           (k̂ from π, √ and ÷: three roundings)
//   E_(n+1) = (2x·E_n + 2·E_(n−1) + 3u·(2x·|ĉ_n| + 2·|ĉ_(n−1)|))/(n + 1) + 2u·|ĉ_(n+1)|.
// Each ĉ_n becomes a ball: hi = ĉ_n rounded to double, lo = the rest rounded to double (both
// subtractions exact: they clear leading bits of a p-bit number), radius E_n plus what lo left.
//
// Truncation. With N = kTerms, f(x_j + h) = Σ_(n<N) c_n·h^n + f^(N)(ξ)·h^N/N!, ξ between x_j and
// x_j + h. From erfcx(x) = (2/√π)·∫_0^∞ e^(−t² − 2xt) dt,
//   |f^(N)(x)| ≤ (2/√π)·∫_0^∞ (2t)^N·e^(−t²−2xt) dt,
// decreasing in x ≥ 0, and at most 2^N·Γ((N+1)/2)/√π (drop e^(−2xt)) and N!/(√π·x^(N+1))
// (drop e^(−t²)). So |remainder| ≤ |h|^N·min(2^N·Γ((N+1)/2)/N!, 1/x_lo^(N+1))/√π, x_lo the
// interval's left end (ξ lies between x_j and a ≥ 0, so x_lo ≥ 0). With N = 15, relative to
// erfcx(x) ≥ 1/(√π·(x + 1)): at most 2^-103 with |h| ≤ 1/64 on [0, 4] (the first bound up to 2,
// the second beyond), and (|h|/x_lo)^15·(x + 1)/x_lo
// ≤ 2^-104 with |h| ≤ x_lo/127 on each later interval.
#include "reference/erfcx_taylor.h"

#include <mpfr.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "reference/ball_detail.h"

namespace lmo::ref {
namespace {

constexpr int kTerms = 15;  // c_0 … c_14; the remainder takes f^(15)

// The grid: points start + i·step, i = 0 … count − 1, numbered from first.
struct Segment {
  double start, step;
  int first, count;
};
constexpr Segment kSegments[] = {{kErfcxMin, 1.0 / 32, 0, 129},
                                 {4, 1.0 / 16, 129, 65},
                                 {8, 1.0 / 8, 194, 65},
                                 {16, 0.25, 259, 43}};
constexpr int kPoints = 302;
static_assert(kSegments[3].start + (kSegments[3].count - 1) * kSegments[3].step == kErfcxMax);

struct Point {
  std::array<Ball, kTerms> c;
  double rem = 0;  // the truncation bound is rem·|h|^kTerms
};

// An MPFR number of a given precision, freed on scope exit.
class Num {
 public:
  explicit Num(mpfr_prec_t prec) { mpfr_init2(v_, prec); }
  ~Num() { mpfr_clear(v_); }
  Num(const Num&) = delete;
  Num& operator=(const Num&) = delete;
  mpfr_ptr get() { return v_; }
  mpfr_srcptr get() const { return v_; }
  // |value| as a double rounded up.
  double abs_up() const { return std::fabs(mpfr_get_d(v_, MPFR_RNDA)); }

 private:
  mpfr_t v_;
};

// The bits the recurrence loses at x (header comment), rounded up.
mpfr_prec_t working_precision(double x) {
  double loss = 0;
  for (int n = 0; n + 1 < kTerms; ++n) loss += std::max(0.0, std::log2(2 * x * x / (n + 1)));
  return 160 + static_cast<mpfr_prec_t>(std::ceil(loss)) + 8;
}

// ĉ as a ball whose radius adds err, the bound on |ĉ − c|.
Ball to_ball(const Num& c, double err, mpfr_prec_t prec) {
  const double hi = mpfr_get_d(c.get(), MPFR_RNDN);
  Num rest(prec);
  mpfr_sub_d(rest.get(), c.get(), hi, MPFR_RNDN);  // exact (header comment)
  const double lo = mpfr_get_d(rest.get(), MPFR_RNDN);
  mpfr_sub_d(rest.get(), rest.get(), lo, MPFR_RNDN);  // exact
  return Ball::from_parts(hi, lo, up(rest.abs_up() + err));
}

void fill(Point& pt, double x, double step) {
  const mpfr_prec_t prec = working_precision(x);
  const double u = std::ldexp(1.0, -static_cast<int>(prec));
  Num xs(prec), t(prec), k(prec);
  mpfr_set_d(xs.get(), x, MPFR_RNDN);  // exact: a multiple of 1/32 below 32
  std::array<std::unique_ptr<Num>, kTerms> c;
  for (auto& ci : c) ci = std::make_unique<Num>(prec);
  std::array<double, kTerms> err{};
  // c_0 = e^(x²)·erfc(x); x² is exact (at most 20 significant bits).
  mpfr_sqr(t.get(), xs.get(), MPFR_RNDN);
  mpfr_exp(t.get(), t.get(), MPFR_RNDN);
  mpfr_erfc(c[0]->get(), xs.get(), MPFR_RNDN);
  mpfr_mul(c[0]->get(), c[0]->get(), t.get(), MPFR_RNDN);
  err[0] = up(4 * u * c[0]->abs_up());
  // k = 2/√π.
  mpfr_const_pi(k.get(), MPFR_RNDN);
  mpfr_sqrt(k.get(), k.get(), MPFR_RNDN);
  mpfr_ui_div(k.get(), 2, k.get(), MPFR_RNDN);
  // c_1 = 2x·c_0 − k.
  mpfr_mul_d(t.get(), c[0]->get(), 2 * x, MPFR_RNDN);
  mpfr_sub(c[1]->get(), t.get(), k.get(), MPFR_RNDN);
  err[1] = up(2 * x * err[0] + 4 * u * (2 * x * c[0]->abs_up() + 1.2 + c[1]->abs_up()));
  for (int n = 1; n + 1 < kTerms; ++n) {
    Num s(prec);
    mpfr_mul_d(t.get(), c[n]->get(), 2 * x, MPFR_RNDN);
    mpfr_mul_2ui(s.get(), c[n - 1]->get(), 1, MPFR_RNDN);  // exact
    mpfr_add(t.get(), t.get(), s.get(), MPFR_RNDN);
    mpfr_div_ui(c[n + 1]->get(), t.get(), static_cast<unsigned long>(n + 1), MPFR_RNDN);
    const double terms = 2 * x * c[n]->abs_up() + 2 * c[n - 1]->abs_up();
    err[n + 1] = up(up(2 * x * err[n] + 2 * err[n - 1] + 3 * u * terms) / (n + 1) +
                    2 * u * c[n + 1]->abs_up());
  }
  for (int n = 0; n < kTerms; ++n) pt.c[static_cast<size_t>(n)] = to_ball(*c[n], err[n], prec);
  // The remainder's constant at the interval's left end x_lo < x − step/2 − 2^-48, or 0 (header
  // comment): 2^15·Γ(8)/15! = 2^15·7!/15!, 1/√π < 0.5641896, each rounding covered by up().
  const double x_lo = std::max(0.0, x - step * (0.5 + 1.0 / 64));
  const double gamma_bound = 32768.0 * 5040.0 / 1307674368000.0;
  double inv = 1;
  if (x_lo > 0) {
    for (int i = 0; i <= kTerms; ++i) inv = up(inv / x_lo);  // 1/x_lo^16
  } else {
    inv = gamma_bound;
  }
  pt.rem = up(up(std::min(gamma_bound, inv) * (1 + 0x1p-40)) * 0.5641896);
}

struct Table {
  std::unique_ptr<Point[]> points{new Point[kPoints]};
  std::unique_ptr<std::once_flag[]> once{new std::once_flag[kPoints]};
};

const Point& point(const Segment& seg, int i) {
  static Table table;
  const int j = seg.first + i;
  std::call_once(table.once[static_cast<size_t>(j)],
                 [&] { fill(table.points[j], seg.start + i * seg.step, seg.step); });
  return table.points[static_cast<size_t>(j)];
}

}  // namespace

Ball erfcx_ball(const dd::DD& a) {
  if (!(a.hi >= kErfcxMin && a.hi <= kErfcxMax)) {
    throw std::invalid_argument("erfcx_ball: argument " + std::to_string(a.hi) +
                                " outside [0, 26.5]");
  }
  const Segment& seg = kSegments[a.hi < 4 ? 0 : a.hi < 8 ? 1 : a.hi < 16 ? 2 : 3];
  const int i = static_cast<int>(std::nearbyint((a.hi - seg.start) / seg.step));
  const Point& pt = point(seg, i);
  // h = a − x_j: a.hi − x_j is exact (x_j = 0, or a.hi ≥ 1/64 and both are multiples of a.hi's
  // ulp, |difference| ≤ step/2), and the two-sum with a.lo keeps h exact as a double-double.
  const dd::DD hd = dd::two_sum(a.hi - (seg.start + i * seg.step), a.lo);
  // |h| rounded up; |h| ≤ step/2 + 2^-48, inside the remainder's interval.
  const double ah = up(std::fabs(hd.hi) + std::fabs(hd.lo));
  // The polynomial by Horner in double-double with one running bound (ball_detail.h).
  const Ball v = ball_detail::horner(pt.c, Ball::from_parts(hd.hi, hd.lo, 0));
  const double h2 = up(ah * ah), h4 = up(h2 * h2), h8 = up(h4 * h4);
  const double h15 = up(up(h8 * h4) * up(h2 * ah));
  if (!std::isfinite(v.rad())) return v;
  return Ball::from_parts(v.hi(), v.lo(), up(v.rad() + up(pt.rem * h15)));
}

}  // namespace lmo::ref
