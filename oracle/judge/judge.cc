#include "oracle/judge/judge.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

#include "oracle/judge/element_blocks.h"
#include "oracle/judge/naive_bounds.h"
#include "oracle/judge/reference_bits.h"
#include "oracle/judge/verdict_text.h"

namespace lmo::oracle {
namespace {

using ref::Format;
using namespace verdict_text;

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

}  // namespace

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
              : naive_max_error(exact.subspan(b, len), o.naive.subspan(b, len), ex);
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

}  // namespace lmo::oracle
