#include "oracle/judge/naive_bounds.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "oracle/judge/element_blocks.h"
#include "oracle/judge/verdict_text.h"
#include "reference/double_double.h"

namespace lmo::oracle {
namespace {

// max|naive − x| over the elements where both are finite.
mp naive_max_error_serial(std::span<const mp> exact, std::span<const double> naive,
                          int64_t& excluded) {
  using std::isfinite;
  mp worst = 0;
  excluded = 0;
  for (size_t i = 0; i < exact.size(); ++i) {
    if (!isfinite(exact[i]) || !std::isfinite(naive[i])) {
      ++excluded;
      continue;
    }
    const mp e = abs(mp(naive[i]) - exact[i]);
    if (e > worst) worst = e;
  }
  return worst;
}

// The same over a whole group, its blocks in parallel (a max and a count: exact in any order).
mp naive_max_error_blocked(std::span<const mp> exact, std::span<const double> naive,
                           int64_t& excluded) {
  const auto n = static_cast<int64_t>(exact.size());
  std::vector<mp> worst(static_cast<size_t>(block_count(n)), mp(0));
  std::vector<int64_t> left_out(worst.size(), 0);
  for_blocks(n, [&](int64_t b, int64_t begin, int64_t end) {
    const auto at = static_cast<size_t>(begin), len = static_cast<size_t>(end - begin);
    worst[static_cast<size_t>(b)] = naive_max_error_serial(
        exact.subspan(at, len), naive.subspan(at, len), left_out[static_cast<size_t>(b)]);
  });
  mp w = 0;
  excluded = 0;
  for (size_t b = 0; b < worst.size(); ++b) {
    if (worst[b] > w) w = worst[b];
    excluded += left_out[b];
  }
  return w;
}

}  // namespace

using ref::Format;
using verdict_text::num;
using verdict_text::value;

mp scale_bound(const Policy& p, ref::Format compute, double s) {
  if (!(p.error_scale > 0 && s > 0 && std::isfinite(s))) return mp(0);
  return mp(p.error_scale) * mp(s) * ldexp(mp(1), -ref::spec(compute).precision());
}

NaiveTerms naive_terms(const Policy& p, ref::Format compute, double group_bound, double s) {
  NaiveTerms t;
  t.group_bound = group_bound;
  if (p.error_scale > 0 && s > 0 && std::isfinite(s)) {
    t.scale_bound = std::ldexp(p.error_scale * s, -ref::spec(compute).precision());
  }
  t.output_ulps = p.output_ulps - 0.5;
  t.compute_ulps = p.compute_ulps;
  t.compute = compute;
  return t;
}

NaiveInterval naive_interval(const Policy& p, Format f, const mp& x, const mp& naive_bound,
                             ref::Format compute, double scale) {
  NaiveInterval iv;
  iv.bound = std::max(naive_bound, scale_bound(p, compute, scale)) +
             mp(p.output_ulps - 0.5) * ulp_at(f, x) + mp(p.compute_ulps) * ulp_at(compute, x);
  if (iv.bound < 0) iv.bound = 0;
  // y is finite where this is used, so the interval's ends saturate: an end past the largest
  // finite value would otherwise be inf, or NaN in e4m3, which has no place on the line.
  iv.lo = ref::encode(f, mp(x - iv.bound), ref::Overflow::kSaturate);
  iv.hi = ref::encode(f, mp(x + iv.bound), ref::Overflow::kSaturate);
  return iv;
}

std::string naive_failure(const Policy& p, Format f, const mp& x, uint64_t y, const ElementError& m,
                          const NaiveInterval& iv, double scale) {
  std::string sampled = num(p.naive_factor) + "·max|naive − x|";
  if (p.error_scale > 0) {
    sampled = "max(" + sampled + ", " + num(p.error_scale) + "·u·S) (S = " + num(scale) + ")";
  }
  return "the backend wrote " + value(f, y) + ", which is not the rounding of any value within " +
         num(static_cast<double>(iv.bound)) + " = " + sampled + " + " + num(p.output_ulps - 0.5) +
         " ulp + " + num(p.compute_ulps) + " compute ulp of the exact " + num(x) + " (allowed " +
         value(f, iv.lo) + " … " + value(f, iv.hi) + "; |y − x| = " + num(m.abs_error) + ")";
}

mp naive_max_error(std::span<const mp> exact, std::span<const double> naive, int64_t& excluded) {
  if (exact.size() != naive.size()) {
    throw std::invalid_argument("naive_max_error: " + std::to_string(exact.size()) +
                                " exact values for " + std::to_string(naive.size()) +
                                " naive ones");
  }
  return naive_max_error_blocked(exact, naive, excluded);
}

mp naive_max_error(std::span<const ref::Ball> exact, std::span<const double> naive,
                   int64_t& excluded) {
  if (exact.size() != naive.size()) {
    throw std::invalid_argument("naive_max_error: " + std::to_string(exact.size()) +
                                " exact values for " + std::to_string(naive.size()) +
                                " naive ones");
  }
  const auto n = static_cast<int64_t>(exact.size());
  // a_i ≈ |naive_i − (hi_i + lo_i)|: naive − hi exactly (2Sum, d), then d.lo − lo and the sum
  // rounded once each, so |a_i − e_i| ≤ u·|d.lo − lo| + u·a_i (u = 2^-53), at most r_i =
  // 2^-52·(a_i + |d.lo| + |lo|) + 2^-1070. The element of the largest exact value has a_i + r_i ≥
  // L = max_j (a_j − r_j): only those are evaluated in mp.
  const auto approx = [&](size_t i, double& radius) {
    const ref::dd::DD d = ref::dd::two_sum(naive[i], -exact[i].hi());
    const double a = std::fabs(d.hi + (d.lo - exact[i].lo()));
    radius = 0x1p-52 * (a + std::fabs(d.lo) + std::fabs(exact[i].lo())) + 0x1p-1070;
    return a;
  };
  const auto left_out = [&](size_t i) {
    return !std::isfinite(exact[i].hi()) || !std::isfinite(naive[i]);
  };
  std::vector<double> block_low(static_cast<size_t>(block_count(n)), 0);
  std::vector<int64_t> block_out(block_low.size(), 0);
  for_blocks(n, [&](int64_t b, int64_t begin, int64_t end) {
    for (auto i = static_cast<size_t>(begin); i < static_cast<size_t>(end); ++i) {
      if (left_out(i)) {
        ++block_out[static_cast<size_t>(b)];
        continue;
      }
      double r = 0;
      const double a = approx(i, r);
      block_low[static_cast<size_t>(b)] = std::max(block_low[static_cast<size_t>(b)], a - r);
    }
  });
  double low = 0;
  excluded = 0;
  for (size_t b = 0; b < block_low.size(); ++b) {
    low = std::max(low, block_low[b]);
    excluded += block_out[b];
  }
  std::vector<mp> worst(block_low.size(), mp(0));
  for_blocks(n, [&](int64_t b, int64_t begin, int64_t end) {
    mp& w = worst[static_cast<size_t>(b)];
    for (auto i = static_cast<size_t>(begin); i < static_cast<size_t>(end); ++i) {
      if (left_out(i)) continue;
      double r = 0;
      if (approx(i, r) + r < low) continue;
      const mp e = abs(mp(naive[i]) - ref::to_mp(exact[i]));
      if (e > w) w = e;
    }
  });
  mp w = 0;
  for (const mp& x : worst) {
    if (x > w) w = x;
  }
  return w;
}

}  // namespace lmo::oracle
