#include "oracle/judge/metrics.h"

#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include "oracle/judge/midpoint_doubles.h"

namespace lmo::oracle {
namespace {

using ref::Format;
using ref::FormatSpec;

constexpr int64_t kSatMax = std::numeric_limits<int64_t>::max();

int sign_position(const FormatSpec& s) { return s.exp_bits + s.frac_bits; }

// Largest |ordinal|: +inf, or the largest finite value in e4m3.
uint64_t max_magnitude(Format f) {
  const FormatSpec& s = ref::spec(f);
  const uint64_t top = s.has_inf ? ref::inf_bits(f) : ref::max_finite_bits(f);
  return top >> s.shift;
}

bool finite_bits(Format f, uint64_t b) {
  return !ref::bits_is_nan(f, b) && !ref::bits_is_inf(f, b);
}

mp max_finite_value(Format f) { return ref::decode<mp>(f, ref::max_finite_bits(f)); }

// The value of a non-NaN pattern on the line; an infinity stands for max + ulp(max).
mp line_value(Format f, uint64_t b) {
  if (ref::bits_is_inf(f, b)) {
    const mp m = max_finite_value(f);
    const mp v = m + ulp_at(f, m);
    return ordinal(f, b) < 0 ? mp(-v) : v;
  }
  return ref::decode<mp>(f, b);
}

mp nan_mp() { return std::numeric_limits<mp>::quiet_NaN(); }
mp inf_mp() { return std::numeric_limits<mp>::infinity(); }

}  // namespace

int64_t ordinal(Format f, uint64_t bits) {
  if (ref::bits_is_nan(f, bits)) {
    throw std::invalid_argument("ordinal: a NaN pattern of " + std::string(ref::format_name(f)) +
                                " has no place on the line of values");
  }
  const FormatSpec& s = ref::spec(f);
  const uint64_t p = (bits >> s.shift) & s.pattern_mask();
  const int sp = sign_position(s);
  const uint64_t mag = p & ((uint64_t{1} << sp) - 1);
  const bool neg = (p >> sp) & 1;
  return neg ? -static_cast<int64_t>(mag) : static_cast<int64_t>(mag);
}

uint64_t from_ordinal(Format f, int64_t n) {
  const FormatSpec& s = ref::spec(f);
  const uint64_t mag = n < 0 ? uint64_t{0} - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  if (mag > max_magnitude(f)) {
    throw std::out_of_range("from_ordinal: " + std::to_string(n) + " is beyond the largest " +
                            std::string(ref::format_name(f)) + " value");
  }
  const uint64_t sign = n < 0 ? uint64_t{1} << sign_position(s) : 0;
  return (sign | mag) << s.shift;
}

int64_t ulp_distance(Format f, uint64_t from, uint64_t to) {
  const __int128 d = static_cast<__int128>(ordinal(f, to)) - ordinal(f, from);
  if (d > kSatMax) return kSatMax;
  if (d < -kSatMax) return -kSatMax;
  return static_cast<int64_t>(d);
}

// With |x| in [2^(e−1), 2^e): e − 1 clamped to [emin, emax]. An |x| at or above the largest
// finite value has e − 1 ≥ emax (that value is at least 2^emax), and an |x| below it with
// e − 1 = emax lies in the top binade, so the clamp is the rule above. MPFR's exponent and a
// power of two set directly: judging calls this for every element, twice.
mp ulp_at(Format f, const mp& x) {
  const mpfr_srcptr v = x.backend().data();
  if (mpfr_nan_p(v)) return nan_mp();
  const FormatSpec& s = spec(f);
  long exp = s.emin();
  if (mpfr_inf_p(v)) {
    exp = s.emax();
  } else if (!mpfr_zero_p(v)) {
    exp = std::clamp<long>(mpfr_get_exp(v) - 1, s.emin(), s.emax());
  }
  mp u;
  mpfr_set_ui_2exp(u.backend().data(), 1, exp - s.frac_bits, MPFR_RNDN);
  return u;
}

mp unit_roundoff(Format f) {
  using std::ldexp;
  return ldexp(mp(1), -ref::spec(f).precision());
}

mp abs_error(Format f, const mp& exact, uint64_t got) {
  using std::isinf;
  using std::isnan;
  if (isnan(exact) || ref::bits_is_nan(f, got)) return nan_mp();
  const mp y(ref::decode<double>(f, got));  // exact: every format's values are doubles
  if (isinf(y) || isinf(exact)) return y == exact ? mp(0) : inf_mp();
  return abs(y - exact);
}

namespace {
// rel_error from the abs_error e of the same element.
mp rel_error_of(const mp& exact, const mp& e) {
  using std::isinf;
  using std::isnan;
  if (isnan(e)) return e;
  if (exact == 0 || isinf(exact)) return e == 0 ? mp(0) : inf_mp();
  return e / abs(exact);
}
}  // namespace

mp rel_error(Format f, const mp& exact, uint64_t got) {
  return rel_error_of(exact, abs_error(f, exact, got));
}

// Dividing by u = 2^-p is a scaling by 2^p: exact, as ldexp is, and no MPFR division. Rounding
// to double commutes with the scaling wherever both values are normal doubles, so the scaling is
// done on the double there (one MPFR call, not three); a tiny nonzero relative error (below
// 2^-1000, which a 167-bit exact value never gives) is scaled first.
double error_in_u(Format f, const mp& rel) {
  const double r = static_cast<double>(rel);  // NaN and +inf pass through
  const int p = ref::spec(f).precision();
  if (!(std::fabs(r) < 0x1p-1000) || mpfr_zero_p(rel.backend().data())) return std::ldexp(r, p);
  return static_cast<double>(boost::multiprecision::ldexp(rel, p));
}

// On the relative error rounded to double, r: u and 1 are doubles and rounding is monotone, so
// rel ≤ u gives r ≤ u, and a rel just above u that rounds to u gives −log2(u) = p, the same
// answer; likewise at 1. The result is the mp comparisons', with one MPFR call.
double significant_bits(Format f, const mp& rel) {
  const int p = ref::spec(f).precision();
  const double r = static_cast<double>(rel);
  if (std::isnan(r)) return std::numeric_limits<double>::quiet_NaN();
  if (r <= std::ldexp(1.0, -p)) return p;                         // u; includes exact (0)
  if (r >= 1) return 0;                                           // includes +inf
  return std::clamp(-std::log2(r), 0.0, static_cast<double>(p));
}

ElementMetrics element_metrics(Format f, const mp& exact, uint64_t got, ref::Overflow overflow) {
  return element_metrics_rounded(f, exact, ref::encode(f, exact, overflow), got);
}

bool ExactRef::finite() const {
  using std::isfinite;
  return value ? isfinite(*value) : std::isfinite(ball->hi()) && std::isfinite(ball->lo());
}

double ExactRef::nearest() const {
  if (value) return static_cast<double>(*value);
  const std::optional<double> d = midpoint_double(*ball);
  return d ? *d : static_cast<double>(ref::to_mp(*ball));
}

const mp& ExactRef::get(mp& scratch) const {
  if (value) return *value;
  scratch = ref::to_mp(*ball);
  return scratch;
}

ElementError element_error(Format f, ExactRef x, uint64_t reference, uint64_t got) {
  return element_error(f, x, x.nearest(), reference, got);
}

ElementError element_error(Format f, ExactRef x, double nearest, uint64_t reference, uint64_t got) {
  ElementError e;
  e.reference = reference;
  e.has_ulps = !ref::bits_is_nan(f, reference) && !ref::bits_is_nan(f, got);
  if (e.has_ulps) e.ulps = ulp_distance(f, reference, got);
  e.exact = nearest;
  std::optional<double> a;
  if (x.ball && x.finite() && finite_bits(f, got)) {
    a = midpoint_abs_error(*x.ball, ref::decode<double>(f, got));
  }
  if (!a) {
    mp scratch;
    a = static_cast<double>(abs_error(f, x.get(scratch), got));
  }
  e.abs_error = *a;
  return e;
}

ElementMetrics element_metrics_rounded(Format f, const mp& exact, uint64_t reference,
                                       uint64_t got) {
  ElementMetrics m;
  m.reference = reference;
  m.has_ulps = !ref::bits_is_nan(f, m.reference) && !ref::bits_is_nan(f, got);
  if (m.has_ulps) m.ulps = ulp_distance(f, m.reference, got);
  m.abs_error = abs_error(f, exact, got);
  m.rel_error = rel_error_of(exact, m.abs_error);
  m.error_in_u = error_in_u(f, m.rel_error);
  m.significant_bits = significant_bits(f, m.rel_error);
  return m;
}

double distance_to_midpoint(Format f, const mp& x, uint64_t a, uint64_t b) {
  using std::isinf;
  using std::isnan;
  const mp va = line_value(f, a);
  const mp vb = line_value(f, b);
  const mp gap = abs(vb - va);
  if (gap == 0) {
    throw std::invalid_argument("distance_to_midpoint: the two patterns have the same value");
  }
  if (isnan(x)) return std::numeric_limits<double>::quiet_NaN();
  if (isinf(x)) return std::numeric_limits<double>::infinity();
  const mp mid = (va + vb) / 2;
  return static_cast<double>(abs(x - mid) / gap);
}

double midpoint_distance(Format f, const mp& x) {
  using std::isinf;
  using std::isnan;
  if (isnan(x)) return std::numeric_limits<double>::quiet_NaN();
  if (isinf(x)) return std::numeric_limits<double>::infinity();
  const mp a = abs(x);
  const mp max = max_finite_value(f);
  if (a >= max) {
    const mp u = ulp_at(f, max);
    return static_cast<double>(abs(a - (max + u / 2)) / u);
  }
  const uint64_t r = ref::encode(f, a);  // finite: a < max
  const mp v = ref::decode<mp>(f, r);
  if (v == a) return 0.5;
  const uint64_t other = from_ordinal(f, ordinal(f, r) + (v < a ? 1 : -1));
  return distance_to_midpoint(f, a, r, other);
}

bool MetricsAccumulator::may_raise_max_rel(double abs_error, double exact) const {
  if (!any_) return true;
  const double ax = std::fabs(exact);
  if (!(ax >= 0x1p-1000 && ax <= 0x1p1000) || !(abs_error == 0 || abs_error >= 0x1p-1000) ||
      !std::isfinite(abs_error)) {
    return true;
  }
  // Both doubles within 2^-53 of theirs, the quotient one more rounding: within 2^-51 of the
  // relative error. The margin 2^-40 also keeps every skipped element's significant bits (a
  // faithful log2 of a value that much smaller) above those of the largest relative error.
  return !(abs_error / ax * (1 + 0x1p-40) < max_rel_double_ * (1 - 0x1p-40));
}

void MetricsAccumulator::add(int64_t index, ExactRef x, const ElementError& e, uint64_t got) {
  if (!x.finite() || !finite_bits(format_, e.reference) || !finite_bits(format_, got)) return;
  ++t_.compared;
  const int64_t u = e.ulps < 0 ? -e.ulps : e.ulps;  // ulp_distance saturates symmetrically
  if (!any_ || u > t_.max_ulps) {
    t_.max_ulps = u;
    t_.max_ulps_index = index;
  }
  const double ed = e.abs_error, xd = e.exact;
  // The mp values only where this element may hold the largest absolute error (rounding to
  // double is monotone: an error above t_.max_abs rounds to at least its double) or the largest
  // relative error (the significant bits fall as it grows, so their minimum is the largest
  // one's).
  const bool abs_candidate = !any_ || !(ed < max_abs_double_);
  const bool rel_candidate = may_raise_max_rel(ed, xd);
  if (abs_candidate || rel_candidate) {
    mp scratch;
    const mp& exact = x.get(scratch);
    const mp a = abs_error(format_, exact, got);
    if (!any_ || a > t_.max_abs) {
      t_.max_abs = a;
      max_abs_double_ = static_cast<double>(a);
    }
    if (rel_candidate) {
      const mp rel = rel_error_of(exact, a);
      if (!any_ || rel > t_.max_rel) {
        t_.max_rel = rel;
        max_rel_double_ = static_cast<double>(rel);
      }
      const double bits = significant_bits(format_, rel);
      if (!any_ || bits < t_.min_significant_bits) t_.min_significant_bits = bits;
    }
  }
  // Each value rounded to double, squared and summed in long double, whose range holds any
  // double's square.
  const auto el = static_cast<long double>(ed);
  const auto xl = static_cast<long double>(xd);
  sum_sq_err_ += el * el;
  sum_sq_exact_ += xl * xl;
  any_ = true;
}

void MetricsAccumulator::merge(const MetricsAccumulator& later) {
  if (!later.any_) return;
  const TensorMetrics& l = later.t_;
  t_.compared += l.compared;
  if (!any_ || l.max_ulps > t_.max_ulps) {  // ties keep the earlier index, as add() does
    t_.max_ulps = l.max_ulps;
    t_.max_ulps_index = l.max_ulps_index;
  }
  if (!any_ || l.max_abs > t_.max_abs) {
    t_.max_abs = l.max_abs;
    max_abs_double_ = later.max_abs_double_;
  }
  if (!any_ || l.max_rel > t_.max_rel) {
    t_.max_rel = l.max_rel;
    max_rel_double_ = later.max_rel_double_;
  }
  if (!any_ || l.min_significant_bits < t_.min_significant_bits) {
    t_.min_significant_bits = l.min_significant_bits;
  }
  sum_sq_err_ += later.sum_sq_err_;
  sum_sq_exact_ += later.sum_sq_exact_;
  any_ = true;
}

TensorMetrics MetricsAccumulator::result() const {
  TensorMetrics t = t_;
  if (!any_) t.min_significant_bits = ref::spec(format_).precision();
  if (sum_sq_exact_ == 0) {
    t.nmse = sum_sq_err_ == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  } else {
    t.nmse = static_cast<double>(sum_sq_err_ / sum_sq_exact_);
  }
  return t;
}

TensorMetrics tensor_metrics(std::span<const mp> exact, const ref::Tensor& got,
                             ref::Overflow overflow) {
  if (!ref::is_float(got.dtype())) {
    throw std::invalid_argument("tensor_metrics: the output dtype " +
                                std::string(ref::dtype_name(got.dtype())) + " is not floating");
  }
  if (static_cast<int64_t>(exact.size()) != got.numel()) {
    throw std::invalid_argument("tensor_metrics: " + std::to_string(exact.size()) +
                                " exact values for " + std::to_string(got.numel()) + " outputs");
  }
  const Format f = ref::dtype_format(got.dtype());
  MetricsAccumulator acc(f);
  for (int64_t i = 0; i < got.numel(); ++i) {
    const uint64_t y = got.bits(i);
    const ExactRef x{&exact[static_cast<size_t>(i)]};
    acc.add(i, x, element_error(f, x, ref::encode(f, *x.value, overflow), y), y);
  }
  return acc.result();
}

}  // namespace lmo::oracle
