#include "oracle/judge/judge.h"

#include <mpfr.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <unordered_set>
#include <vector>

#include "oracle/judge/reference_bits.h"
#include "reference/double_double.h"
#include "reference/parallel.h"

namespace lmo::oracle {
namespace {

using ref::Format;

std::string hex(uint64_t b) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIX64, b);
  return buf;
}

std::string num(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

// 17 significant digits through MPFR itself (boost's str() trips a GCC 12 -Wrestrict false
// positive).
std::string num(const mp& x) {
  char buf[64];
  mpfr_snprintf(buf, sizeof buf, "%.17Rg", x.backend().data());
  return buf;
}

std::string value(Format f, uint64_t b) {
  return num(ref::decode<double>(f, b)) + " (" + hex(b) + ")";
}

void fail(Verdict& v, int64_t i, FailReason r, const std::string& detail) {
  ++v.failed;
  ++v.by_reason[static_cast<size_t>(r)];
  if (v.pass) {
    v.pass = false;
    v.reason = r;
    v.first_index = i;
    v.detail = "element " + std::to_string(i) + ": " + detail;
  }
}

// Whether an element still holding the poison counts as unwritten (guarded_buffer.h).
bool poison_means_unwritten(ref::DType d, uint64_t reference) {
  if (poison_is_distinctive(d)) return true;
  if (ref::is_float(d)) return !ref::bits_is_nan(ref::dtype_format(d), reference);
  return reference != poison_bits(d);
}

void check_guard(Verdict& v, const GuardedBuffer& buf) {
  const std::optional<int64_t> breach = buf.guard_breach();
  if (!breach) return;
  const auto sz = static_cast<int64_t>(ref::dtype_size(buf.dtype()));
  const int64_t off = *breach;
  const int64_t index = off >= 0 ? off / sz : -((-off + sz - 1) / sz);
  v.pass = false;
  v.reason = FailReason::kOverrun;
  v.first_index = index;
  ++v.by_reason[static_cast<size_t>(FailReason::kOverrun)];
  v.detail = "guard byte at offset " + std::to_string(off) + " of a " +
             std::to_string(buf.nbytes()) + "-byte output changed: the backend wrote element " +
             std::to_string(index) + " of " + std::to_string(buf.numel()) +
             (off >= 0 ? " (past the end)" : " (before the start)");
}

// Judging's element loops run over fixed blocks of this many elements, spread over the
// reference's threads (reference/parallel.h). What a block finds is merged block by block in
// index order, so the verdict does not depend on the thread count: maxima and counts are exact,
// and the first failure is the first block's that has one.
constexpr int64_t kJudgeBlock = 512;

int64_t block_count(int64_t n) { return (n + kJudgeBlock - 1) / kJudgeBlock; }

void for_blocks(int64_t n, const std::function<void(int64_t, int64_t, int64_t)>& body) {
  ref::parallel_for(block_count(n), [&](int64_t b) {
    body(b, b * kJudgeBlock, std::min(n, (b + 1) * kJudgeBlock));
  });
}

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

// What a kUlp policy allows at x: k ulps, +1 within `margin` ulp of a rounding midpoint (rule
// (3)); `extra` is the widening for the argument's rounding (Policy::arg_error). A
// naive-relative policy at an infinite (saturated, exact) x allows 0 ulp.
struct UlpAllowance {
  int64_t k = 0;
  double margin = 0;
  double extra = 0;
};

UlpAllowance ulp_allowance(const Policy& p, Format f, ExactRef exact, double condition) {
  UlpAllowance a;
  a.k = p.kind == PolicyKind::kUlp ? p.max_ulps(f) : 0;
  a.margin = p.midpoint_margin;
  if (!(p.kind == PolicyKind::kUlp && p.arg_error > 0)) return a;
  mp scratch;
  const mp& x = exact.get(scratch);
  // The argument's rounding amplified by the inner function (Policy::arg_error): the f32
  // result may be `extra` ulps of f off. Narrow formats see it as a wider midpoint margin
  // (the f32 value crosses a midpoint only that close to it), wide ones as more ulps.
  if (x != 0) {
    a.extra = static_cast<double>(mp(p.arg_error * condition) * ldexp(mp(1), -24) * abs(x) /
                                  ulp_at(f, x));
    if (is_narrow(f)) {
      a.k += static_cast<int64_t>(std::floor(a.extra));
      a.margin += a.extra - std::floor(a.extra);
    } else {
      a.k += static_cast<int64_t>(std::ceil(a.extra));
    }
  }
  return a;
}

// The stored value must be the rounding of some value within B of the exact x: a kernel whose
// pre-rounding value v is within B of x stores round(v), and rounding is monotone, so
// round(x − B) ≤ y ≤ round(x + B). With output_ulps = ½ this is "B plus half an ulp of the
// output" made exact: it also fails a wrong rounding direction (truncation) wherever x is not
// within B of a midpoint, which |y − x| ≤ B + ½ ulp would let through.
struct NaiveInterval {
  mp bound;
  uint64_t lo = 0, hi = 0;  // round(x − B), round(x + B)
};

// error_scale · u_c · S, the op's error scale S as a bound (policy.h, rule (2)); u_c is the
// compute format's unit roundoff, half its ulp of 1. An S that is not finite (inputs near the
// double range, or infinite ones whose terms cancel to a finite exact value) says nothing: 0.
mp scale_bound(const Policy& p, ref::Format compute, double s) {
  if (!(p.error_scale > 0 && s > 0 && std::isfinite(s))) return mp(0);
  return mp(p.error_scale) * mp(s) * ldexp(mp(1), -ref::spec(compute).precision());
}

// The same terms in doubles for reference_bits.h (naive_ends_of_nearest_double).
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

// The ulp step of the policy (kUlp, or a naive-relative policy at an infinite x) on a finite
// reference r and finite output y; "" when it passes.
std::string ulp_failure(const Policy& p, Format f, ExactRef exact, uint64_t r, uint64_t y,
                        const ElementError& m, const UlpAllowance& a, double condition,
                        Verdict& v) {
  const int64_t ad = m.ulps < 0 ? -m.ulps : m.ulps;
  if (ad <= a.k) return "";
  mp scratch;
  const mp& x = exact.get(scratch);
  double d = -1;  // distance from the midpoint toward y, when rule (3) applies
  if (p.kind == PolicyKind::kUlp && a.margin > 0 && ad == a.k + 1) {
    const uint64_t next = from_ordinal(f, ordinal(f, r) + (m.ulps > 0 ? 1 : -1));
    d = distance_to_midpoint(f, x, r, next);
    if (d <= a.margin) {
      ++v.forgiven;
      return "";
    }
  }
  std::string why = "the backend wrote " + value(f, y) + ", " + std::to_string(m.ulps) +
                    " ulp from the correctly rounded " + value(f, r) + " of the exact " + num(x) +
                    "; the policy allows " + std::to_string(a.k) + " ulp";
  if (a.extra > 0)
    why += " (with " + num(a.extra) + " for the argument's rounding, κ = " + num(condition) + ")";
  if (d >= 0) {
    why += ", and the exact value is " + num(d) + " ulp from the midpoint toward it (margin " +
           num(a.margin) + ")";
  }
  return why;
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

// A word with bits set below the format's pattern (tf32) is not a value of it; "" otherwise.
std::string pattern_failure(Format f, uint64_t y) {
  const ref::FormatSpec& s = ref::spec(f);
  if ((y & ~(s.pattern_mask() << s.shift)) == 0) return "";
  return "the word " + hex(y) + " has bits set below the " + std::string(s.name) + " pattern";
}

// The checks judge() makes on its arguments before anything else.
void check_judge_arguments(const Policy& policy, std::span<const mp> exact,
                           const ref::Tensor& got) {
  if (policy.kind == PolicyKind::kTopKSet) {
    throw std::invalid_argument("judge: a topk_set policy is judged by judge_topk");
  }
  if (!ref::is_float(got.dtype())) {
    throw std::invalid_argument("judge: the output dtype " +
                                std::string(ref::dtype_name(got.dtype())) + " is not floating");
  }
  if (static_cast<int64_t>(exact.size()) != got.numel()) {
    throw std::invalid_argument("judge: " + std::to_string(exact.size()) + " exact values for " +
                                std::to_string(got.numel()) + " outputs");
  }
}

int64_t index_value(ref::DType d, uint64_t b) {
  return d == ref::DType::i64
             ? static_cast<int64_t>(b)
             : static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(b)));
}

// An expert the backend left out, and its score.
struct Unselected {
  int64_t expert = -1;  // -1: none
  mp score = -std::numeric_limits<mp>::infinity();
};

// The best expert the backend left out among those it could have kept (judge.h, judge_topk):
// without a group limit every expert; with one, over the admissible sets of kept groups that
// hold the selection's groups, the set whose best left-out expert is lowest. nullopt, with
// `why`, when no admissible set holds them. An admissible set K has `kept` groups, and every
// dropped group scores at most the group margin above K's lowest, m: it holds every group above
// m + margin, the group of m, the selection's groups (none below m), and the rest from the band
// [m, m + margin]; trying each group as the one of m covers every such set.
std::optional<Unselected> best_unselected(std::span<const mp> row,
                                          const std::unordered_set<int64_t>& have,
                                          const TopkGroups& g, const mp& expert_margin,
                                          std::string& why) {
  const int64_t n = static_cast<int64_t>(row.size()), size = n / g.groups;
  std::vector<Unselected> left(static_cast<size_t>(g.groups));  // best left out, per group
  std::vector<char> selected_group(static_cast<size_t>(g.groups), 0);
  for (int64_t i = 0; i < n; ++i) {
    Unselected& u = left[static_cast<size_t>(i / size)];
    if (have.count(i)) {
      selected_group[static_cast<size_t>(i / size)] = 1;
    } else if (u.expert < 0 || row[static_cast<size_t>(i)] > u.score) {
      u = {i, row[static_cast<size_t>(i)]};
    }
  }
  if (g.groups == 1) return left[0];
  std::vector<mp> score(static_cast<size_t>(g.groups));
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    std::vector<mp> s(row.begin() + grp * size, row.begin() + (grp + 1) * size);
    std::sort(s.begin(), s.end(), [](const mp& a, const mp& b) { return a > b; });
    score[static_cast<size_t>(grp)] = g.top2_sum ? mp(s[0] + s[1]) : s[0];
  }
  const mp margin = (g.top2_sum ? 2 : 1) * expert_margin;
  std::optional<Unselected> best;
  for (int64_t low = 0; low < g.groups; ++low) {
    const mp& m = score[static_cast<size_t>(low)];
    std::vector<char> in(static_cast<size_t>(g.groups), 0);
    int64_t count = 0;
    bool ok = true;
    std::vector<int64_t> band;
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const mp& sg = score[static_cast<size_t>(grp)];
      if (grp == low || sg > m + margin || selected_group[static_cast<size_t>(grp)]) {
        ok = ok && !(sg < m);
        in[static_cast<size_t>(grp)] = 1;
        ++count;
      } else if (!(sg < m)) {
        band.push_back(grp);
      }
    }
    if (!ok || count > g.kept || count + static_cast<int64_t>(band.size()) < g.kept) continue;
    // The band's groups with the lowest best left-out expert fill the set.
    std::sort(band.begin(), band.end(), [&](int64_t a, int64_t b) {
      return left[static_cast<size_t>(a)].score < left[static_cast<size_t>(b)].score;
    });
    for (int64_t j = 0; j < g.kept - count; ++j) {
      in[static_cast<size_t>(band[static_cast<size_t>(j)])] = 1;
    }
    Unselected worst;  // none left out: −∞
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const Unselected& u = left[static_cast<size_t>(grp)];
      if (in[static_cast<size_t>(grp)] && u.score > worst.score) worst = u;
    }
    if (!best || worst.score < best->score) best = worst;
  }
  if (!best) {
    std::string groups;
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      if (selected_group[static_cast<size_t>(grp)]) {
        groups += (groups.empty() ? "" : ", ") + std::to_string(grp);
      }
    }
    why = "the selected experts lie in groups " + groups + ", which no choice of " +
          std::to_string(g.kept) + " kept groups within the group margin " +
          num(static_cast<double>(margin)) + " holds (group scores " +
          (g.top2_sum ? "top-2 sums" : "maxima") + " of the exact selection scores)";
  }
  return best;
}

Verdict judge_topk_rows(const Policy& policy, std::span<const mp> scores, int64_t n_experts,
                        std::span<const int64_t> expected, const ref::Tensor& got,
                        const GuardedBuffer* buf, const TopkGroups& groups) {
  using std::isfinite;
  using std::isnan;
  if (policy.kind != PolicyKind::kTopKSet) {
    throw std::invalid_argument("judge_topk: the policy is not topk_set");
  }
  if (got.dtype() != ref::DType::i64 && got.dtype() != ref::DType::i32) {
    throw std::invalid_argument("judge_topk: expert indices must be i64 or i32, got " +
                                std::string(ref::dtype_name(got.dtype())));
  }
  if (n_experts <= 0 || scores.size() % static_cast<size_t>(n_experts) != 0) {
    throw std::invalid_argument("judge_topk: " + std::to_string(scores.size()) +
                                " scores are not a whole number of rows of " +
                                std::to_string(n_experts) + " experts");
  }
  if (groups.groups < 1 || n_experts % groups.groups != 0 || groups.kept < 1 ||
      groups.kept > groups.groups ||
      (groups.top2_sum && groups.groups > 1 && n_experts / groups.groups < 2)) {
    throw std::invalid_argument("judge_topk: " + std::to_string(groups.kept) + " kept of " +
                                std::to_string(groups.groups) + " groups is not a group limit of " +
                                std::to_string(n_experts) + " experts");
  }
  const int64_t tokens = static_cast<int64_t>(scores.size()) / n_experts;
  const int64_t k = tokens == 0 ? 0 : static_cast<int64_t>(expected.size()) / tokens;
  if (k * tokens != static_cast<int64_t>(expected.size()) || got.numel() != k * tokens) {
    throw std::invalid_argument("judge_topk: " + std::to_string(tokens) + " tokens, " +
                                std::to_string(expected.size()) + " expected and " +
                                std::to_string(got.numel()) + " selected indices");
  }
  Verdict v;
  v.elements = tokens;
  for (int64_t t = 0; t < tokens; ++t) {
    const std::span<const mp> row =
        scores.subspan(static_cast<size_t>(t * n_experts), static_cast<size_t>(n_experts));
    std::unordered_set<int64_t> want;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t e = expected[static_cast<size_t>(t * k + j)];
      if (e < 0 || e >= n_experts || !want.insert(e).second) {
        throw std::invalid_argument("judge_topk: token " + std::to_string(t) +
                                    ": the expected experts are not " + std::to_string(k) +
                                    " distinct indices in [0, " + std::to_string(n_experts) + ")");
      }
    }
    std::unordered_set<int64_t> have;
    std::string bad;
    bool unwritten = false;
    for (int64_t j = 0; j < k && bad.empty() && !unwritten; ++j) {
      const uint64_t b = got.bits(t * k + j);
      if (buf && b == buf->poison()) {
        unwritten = true;
        break;
      }
      const int64_t e = index_value(got.dtype(), b);
      if (e < 0 || e >= n_experts) {
        bad = "expert index " + std::to_string(e) + " is outside [0, " + std::to_string(n_experts) +
              ")";
      } else if (!have.insert(e).second) {
        bad = "expert " + std::to_string(e) + " is selected twice";
      }
    }
    if (unwritten) {
      fail(v, t, FailReason::kUnwritten, "an index was never written (still poison)");
      continue;
    }
    if (!bad.empty()) {
      fail(v, t, FailReason::kPolicy, bad);
      continue;
    }
    bool same = true;
    for (int64_t m : want) same = same && have.count(m) > 0;
    if (same) continue;
    bool has_nan = false;
    mp scale = 0;
    for (const mp& s : row) {
      has_nan = has_nan || isnan(s);
      if (isfinite(s) && abs(s) > scale) scale = abs(s);
    }
    const mp bound = mp(policy.tie_margin) * scale;
    // The backend's lowest selected expert against the best one it could have kept.
    int64_t lowest = -1;
    for (int64_t e : have) {
      if (lowest < 0 || row[static_cast<size_t>(e)] < row[static_cast<size_t>(lowest)]) lowest = e;
    }
    std::string why;
    const std::optional<Unselected> best =
        has_nan ? std::nullopt : best_unselected(row, have, groups, bound, why);
    if (has_nan) why = "a selection score is NaN, and NaN scores never tie";
    if (!best) {
      fail(v, t, FailReason::kPolicy, why);
      continue;
    }
    if (best->expert < 0) continue;  // every expert it could have kept is selected
    const mp diff = best->score - row[static_cast<size_t>(lowest)];
    if (!(diff <= bound)) {
      fail(v, t, FailReason::kPolicy,
           "the backend chose expert " + std::to_string(lowest) + " (score " +
               num(row[static_cast<size_t>(lowest)]) + ") instead of expert " +
               std::to_string(best->expert) + " (score " + num(best->score) +
               "); the tie margin is " + num(static_cast<double>(bound)) + " (" +
               num(policy.tie_margin) + " of the row's largest |score|)");
    }
  }
  return v;
}

}  // namespace

std::string_view fail_reason_name(FailReason r) {
  switch (r) {
    case FailReason::kNone:
      return "none";
    case FailReason::kUnwritten:
      return "unwritten";
    case FailReason::kNanParity:
      return "nan_parity";
    case FailReason::kInfParity:
      return "inf_parity";
    case FailReason::kPolicy:
      return "policy";
    case FailReason::kOverrun:
      return "overrun";
  }
  return "?";
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

JudgeReference::JudgeReference(const Policy& policy, std::span<const mp> exact, ref::Format format,
                               const JudgeOptions& options)
    : JudgeReference(policy, exact, {}, format, options) {}

JudgeReference::JudgeReference(const Policy& policy, std::span<const ref::Ball> exact,
                               ref::Format format, const JudgeOptions& options)
    : JudgeReference(policy, {}, exact, format, options) {}

JudgeReference::JudgeReference(const Policy& policy, std::span<const mp> exact,
                               std::span<const ref::Ball> balls, ref::Format format,
                               const JudgeOptions& options)
    : policy_(policy), exact_(exact), balls_(balls), format_(format), options_(options) {
  using std::isfinite;
  if (policy.kind == PolicyKind::kTopKSet) {
    throw std::invalid_argument("judge: a topk_set policy is judged by judge_topk");
  }
  const auto n = static_cast<int64_t>(exact.size() + balls.size());
  const JudgeOptions& o = options;
  if (o.group < 0 || (o.group > 0 && n % o.group != 0)) {
    throw std::invalid_argument("judge: a group of " + std::to_string(o.group) +
                                " elements does not divide " + std::to_string(n));
  }
  group_ = o.group > 0 ? o.group : std::max<int64_t>(n, 1);
  whole_ = o.whole_elements > 0 ? o.whole_elements : n;
  offset_ = o.whole_elements > 0 ? o.offset : 0;
  if (offset_ < 0 || offset_ + n > whole_ || (o.group > 0 && offset_ % o.group != 0)) {
    throw std::invalid_argument("judge: a block of " + std::to_string(n) + " elements at " +
                                std::to_string(o.offset) + " of " + std::to_string(whole_) +
                                (o.group > 0 ? " in groups of " + std::to_string(o.group) : ""));
  }
  const bool one_group_block = policy.kind == PolicyKind::kNaiveRelative && o.group == 0 &&
                               o.whole_elements > 0 && n < whole_;
  if (one_group_block && !o.whole_naive_max) {
    throw std::invalid_argument(
        "judge: a block of a tensor judged as one group needs the whole "
        "tensor's max|naive − x|");
  }
  if (policy.kind == PolicyKind::kNaiveRelative && o.group == 0 && o.whole_naive_max) {
    if (static_cast<int64_t>(o.naive.size()) != n) {
      throw std::invalid_argument("judge: the naive_relative policy needs the naive run's " +
                                  std::to_string(n) + " outputs, got " +
                                  std::to_string(o.naive.size()));
    }
    naive_bounds_.assign(1, mp(policy.naive_factor) * *o.whole_naive_max);
    naive_bound_ = static_cast<double>(naive_bounds_[0]);
    naive_excluded_ = o.whole_naive_excluded;
  } else if (policy.kind == PolicyKind::kNaiveRelative) {
    if (static_cast<int64_t>(o.naive.size()) != n) {
      throw std::invalid_argument("judge: the naive_relative policy needs the naive run's " +
                                  std::to_string(n) + " outputs, got " +
                                  std::to_string(o.naive.size()));
    }
    // The groups in parallel, and a group's blocks on the threads the groups leave idle
    // (reference/parallel.h).
    const int64_t groups = n / group_;
    std::vector<int64_t> excluded(static_cast<size_t>(groups), 0);
    naive_bounds_.resize(static_cast<size_t>(groups));
    ref::parallel_for(groups, [&](int64_t g) {
      const size_t b = static_cast<size_t>(g * group_), len = static_cast<size_t>(group_);
      int64_t& ex = excluded[static_cast<size_t>(g)];
      const mp worst =
          !balls.empty()
              ? naive_max_error(balls.subspan(b, len), o.naive.subspan(b, len), ex)
              : naive_max_error_blocked(exact.subspan(b, len), o.naive.subspan(b, len), ex);
      naive_bounds_[static_cast<size_t>(g)] = mp(policy.naive_factor) * worst;
    });
    for (int64_t g = 0; g < groups; ++g) {
      naive_excluded_ += excluded[static_cast<size_t>(g)];
      naive_bound_ =
          std::max(naive_bound_, static_cast<double>(naive_bounds_[static_cast<size_t>(g)]));
    }
  }
  if (!o.error_scale.empty() && static_cast<int64_t>(o.error_scale.size()) != n) {
    throw std::invalid_argument("judge: " + std::to_string(o.error_scale.size()) +
                                " error scales for " + std::to_string(n) + " outputs");
  }
  const bool arg_error = policy.kind == PolicyKind::kUlp && policy.arg_error > 0;
  if (arg_error && static_cast<int64_t>(o.condition.size()) != n) {
    throw std::invalid_argument("judge: a policy with arg_error needs " + std::to_string(n) +
                                " condition numbers, got " + std::to_string(o.condition.size()));
  }
  const auto size = static_cast<size_t>(n);
  rounded_.resize(size);
  nearest_.resize(size);
  if (arg_error) {
    allowed_ulps_.resize(size), allowed_margin_.resize(size), allowed_extra_.resize(size);
  }
  // The roundings from each exact value's nearest double where it decides them
  // (reference_bits.h: the same bits), in MPFR otherwise.
  const bool narrow = ref::spec(format).precision() <= 24;
  for (const mp& b : naive_bounds_) {
    // A bound whose double has lost its relative accuracy (underflow) decides nothing: NaN.
    const double d = static_cast<double>(b);
    group_bounds_.push_back(b == 0 || d >= 0x1p-1000 ? d
                                                     : std::numeric_limits<double>::quiet_NaN());
  }
  for_blocks(n, [&](int64_t, int64_t begin, int64_t end) {
    mp scratch;
    for (auto i = static_cast<size_t>(begin); i < static_cast<size_t>(end); ++i) {
      const ExactRef x = exact_at(i);
      const double xd = nearest_[i] = x.nearest();
      const std::optional<uint64_t> r =
          narrow ? rounding_of_nearest_double(format, xd) : std::nullopt;
      rounded_[i] = r ? *r : ref::encode(format, x.get(scratch), o.overflow);
      const bool finite = x.finite();
      if (arg_error && finite) {  // judge() computes the rare infinite x itself
        const UlpAllowance a = ulp_allowance(policy, format, x, o.condition[i]);
        allowed_ulps_[i] = a.k;
        allowed_margin_[i] = a.margin;
        allowed_extra_[i] = a.extra;
      }
    }
  });
}

NaiveEnds JudgeReference::naive_ends(size_t at, mp& scratch) const {
  const size_t g = at / static_cast<size_t>(group_);
  const double scale = options_.error_scale.empty() ? 0.0 : options_.error_scale[at];
  const std::optional<NaiveEnds> ends =
      ref::spec(format_).precision() <= 24
          ? naive_ends_of_nearest_double(
                format_, nearest_[at],
                naive_terms(policy_, options_.compute, group_bounds_[g], scale))
          : std::nullopt;
  if (ends) return *ends;
  const NaiveInterval iv = naive_interval(policy_, format_, exact_at(at).get(scratch),
                                          naive_bounds_[g], options_.compute, scale);
  return {iv.lo, iv.hi};
}

namespace {

// A flush-to-zero kernel's store (JudgeOptions::ftz): ±0 where the reference is subnormal.
bool flushed_subnormal(ref::Format f, uint64_t reference, uint64_t got) {
  const double y = ref::decode<double>(f, got), r = ref::decode<double>(f, reference);
  return y == 0 && r != 0 && std::fabs(r) < std::ldexp(1.0, ref::spec(f).emin());
}

}  // namespace

Verdict JudgeReference::judge(const ref::Tensor& got, const GuardedBuffer* buf) {
  if (!ref::is_float(got.dtype()) || ref::dtype_format(got.dtype()) != format_) {
    throw std::invalid_argument("judge: the output dtype " +
                                std::string(ref::dtype_name(got.dtype())) + " is not the " +
                                std::string(ref::format_name(format_)) + " it was prepared for");
  }
  Verdict v;
  MetricsAccumulator acc(format_);
  judge_into(got, buf, v, acc);
  v.metrics = acc.result();
  return v;
}

void JudgeReference::judge_into(const ref::Tensor& got, const GuardedBuffer* buf, Verdict& v,
                                MetricsAccumulator& acc) {
  if (got.numel() != whole_) {
    throw std::invalid_argument("judge: " + std::to_string(whole_) + " exact values for " +
                                std::to_string(got.numel()) + " outputs");
  }
  // The metrics of elements equal to their reference are kept from the second output judged on
  // (verify's backends sharing this reference): a single use (check) would only fill and free
  // them, 48 bytes an element.
  if (++uses_ == 2) same_.resize(static_cast<size_t>(size()));
  // Each piece judges into its own verdict and metrics, merged in index order below. Pieces are
  // cut at the whole tensor's multiples of kJudgeBlock, so that blocks cut there merge into the
  // very metrics of the whole.
  const int64_t n = size();
  const int64_t first = offset_ / kJudgeBlock;
  const int64_t last = (offset_ + n + kJudgeBlock - 1) / kJudgeBlock;
  const auto blocks = static_cast<size_t>(std::max<int64_t>(last - first, 0));
  std::vector<Verdict> part(blocks);
  std::vector<MetricsAccumulator> part_metrics(blocks, MetricsAccumulator(format_));
  ref::parallel_for(static_cast<int64_t>(blocks), [&](int64_t b) {
    const int64_t begin = std::max(offset_, (first + b) * kJudgeBlock);
    const int64_t end = std::min(offset_ + n, (first + b + 1) * kJudgeBlock);
    judge_range(got, buf, begin, end, part[static_cast<size_t>(b)],
                part_metrics[static_cast<size_t>(b)]);
  });
  v.elements += n;
  // Blocks: the largest of their groups' bounds; a tensor judged as one group has its bound and
  // left-out count from the whole (JudgeOptions::whole_naive_max), the same in every block.
  v.naive_bound = std::max(v.naive_bound, naive_bound_);
  v.naive_excluded =
      options_.whole_naive_max ? naive_excluded_ : v.naive_excluded + naive_excluded_;
  for (size_t b = 0; b < blocks; ++b) {
    const Verdict& p = part[b];
    if (v.pass && !p.pass) {
      v.pass = false;
      v.reason = p.reason;
      v.first_index = p.first_index;
      v.detail = p.detail;
    }
    v.failed += p.failed;
    for (size_t r = 0; r < v.by_reason.size(); ++r) v.by_reason[r] += p.by_reason[r];
    v.forgiven += p.forgiven;
    acc.merge(part_metrics[b]);
  }
}

void BlockVerdicts::add(JudgeReference& block, const ref::Tensor& got, const GuardedBuffer* buf) {
  block.judge_into(got, buf, v_, acc_);
}

Verdict BlockVerdicts::result(const GuardedBuffer* buf) const {
  Verdict v = v_;
  v.metrics = acc_.result();
  if (buf) check_guard(v, *buf);
  return v;
}

void JudgeReference::judge_range(const ref::Tensor& got, const GuardedBuffer* buf, int64_t begin,
                                 int64_t end, Verdict& v, MetricsAccumulator& acc) {
  using std::isfinite;
  const Format f = format_;
  const JudgeOptions& o = options_;
  mp scratch;  // x as mp, made only where a message or a rare rule needs it
  for (int64_t i = begin; i < end; ++i) {
    const auto at = static_cast<size_t>(i - offset_);  // i: in the whole tensor; at: in exact_
    const ExactRef x = exact_at(at);
    const uint64_t y = got.bits(i);
    const uint64_t r = rounded_[at];
    if (buf && y == buf->poison() && poison_means_unwritten(got.dtype(), r)) {
      fail(v, i, FailReason::kUnwritten, "never written: it still holds the poison " + hex(y));
      continue;
    }
    const bool rn = ref::bits_is_nan(f, r);
    if (rn != ref::bits_is_nan(f, y)) {
      fail(v, i, FailReason::kNanParity,
           rn ? "the reference is NaN (exact " + num(x.get(scratch)) + ") but the backend wrote " +
                    value(f, y)
              : "the backend wrote NaN " + hex(y) + " where the reference is " + value(f, r));
      continue;
    }
    if (rn) continue;
    const bool ri = ref::bits_is_inf(f, r);
    const bool yi = ref::bits_is_inf(f, y);
    if (ri || yi) {
      if (!(ri && yi && ordinal(f, r) == ordinal(f, y))) {
        fail(v, i, FailReason::kInfParity,
             "the reference is " + value(f, r) + " (exact " + num(x.get(scratch)) +
                 "), the backend wrote " + value(f, y));
      }
      continue;
    }
    // An output equal to its reference has the same metrics on every backend.
    std::optional<ElementError> other;
    std::optional<ElementError>& slot = y == r && !same_.empty() ? same_[at] : other;
    if (!slot) slot = element_error(f, x, nearest_[at], r, y);
    const ElementError& m = *slot;
    acc.add(i, x, m, y);
    if (o.ftz && flushed_subnormal(f, r, y)) continue;
    const double kappa = o.condition.empty() ? 0.0 : o.condition[at];
    const bool finite = x.finite();
    // The policy's verdict on an output value c (its error metrics em): "" when it passes.
    const auto policy_failure = [&](uint64_t c, const ElementError& em, Verdict& into) {
      std::string why = pattern_failure(f, c);
      if (why.empty() && (policy_.kind == PolicyKind::kUlp || !finite)) {
        const UlpAllowance a =
            allowed_ulps_.empty() || !finite
                ? ulp_allowance(policy_, f, x, kappa)
                : UlpAllowance{allowed_ulps_[at], allowed_margin_[at], allowed_extra_[at]};
        why = ulp_failure(policy_, f, x, r, c, em, a, kappa, into);
      } else if (why.empty() && c != r) {
        // The reference itself lies in round(x − B) … round(x + B) (rounding is monotone,
        // B ≥ 0): only another value needs the interval's ends.
        const int64_t oc = ordinal(f, c);
        const NaiveEnds ends = naive_ends(at, scratch);
        if (!(ordinal(f, ends.lo) <= oc && oc <= ordinal(f, ends.hi))) {
          // The same interval again, for its bound in the message.
          const double scale = o.error_scale.empty() ? 0.0 : o.error_scale[at];
          const mp& xm = x.get(scratch);
          why = naive_failure(
              policy_, f, xm, c, em,
              naive_interval(policy_, f, xm, naive_bounds_[at / static_cast<size_t>(group_)],
                             o.compute, scale),
              scale);
        }
      }
      return why;
    };
    std::string why = policy_failure(y, m, v);
    if (!why.empty() && o.trunc) {
      // A truncating store wrote round-to-nearest's value or its neighbour toward zero: y passes
      // when the neighbour away from zero (one more in the magnitude bits) would. Judged into a
      // scratch verdict: y's own failure is the one reported.
      const uint64_t away = y + (uint64_t{1} << ref::spec(f).shift);
      if (!ref::bits_is_nan(f, away) && !ref::bits_is_inf(f, away) &&
          std::llabs(ordinal(f, away)) == std::llabs(ordinal(f, y)) + 1) {
        Verdict scratch_verdict;
        if (policy_failure(away, element_error(f, x, nearest_[at], r, away), scratch_verdict)
                .empty()) {
          why.clear();
        }
      }
    }
    if (!why.empty()) fail(v, i, FailReason::kPolicy, why);
  }
}

Verdict judge(const Policy& policy, std::span<const mp> exact, const ref::Tensor& got,
              const JudgeOptions& options) {
  check_judge_arguments(policy, exact, got);
  JudgeReference reference(policy, exact, ref::dtype_format(got.dtype()), options);
  return reference.judge(got);
}

Verdict judge(const Policy& policy, std::span<const mp> exact, const GuardedBuffer& got,
              const JudgeOptions& options) {
  check_judge_arguments(policy, exact, got.tensor());
  JudgeReference reference(policy, exact, ref::dtype_format(got.dtype()), options);
  Verdict v = reference.judge(got.tensor(), &got);
  check_guard(v, got);
  return v;
}

Verdict judge(JudgeReference& reference, const GuardedBuffer& got) {
  Verdict v = reference.judge(got.tensor(), &got);
  check_guard(v, got);
  return v;
}

Verdict judge_topk(const Policy& policy, std::span<const mp> scores, int64_t n_experts,
                   std::span<const int64_t> expected, const ref::Tensor& got,
                   const TopkGroups& groups) {
  return judge_topk_rows(policy, scores, n_experts, expected, got, nullptr, groups);
}

Verdict judge_topk(const Policy& policy, std::span<const mp> scores, int64_t n_experts,
                   std::span<const int64_t> expected, const GuardedBuffer& got,
                   const TopkGroups& groups) {
  Verdict v = judge_topk_rows(policy, scores, n_experts, expected, got.tensor(), &got, groups);
  check_guard(v, got);
  return v;
}

}  // namespace lmo::oracle
