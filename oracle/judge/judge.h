// Judging one backend output tensor against the exact reference values, element by element
// (DESIGN.md, Oracle). Never a mean or a fraction of elements: one failing element fails the
// tensor.
//
// Order of the checks:
//  0. (GuardedBuffer overloads) a changed guard byte fails the case: kOverrun;
//  1. per element i, in index order:
//     a. unwritten: the element still holds the poison (guarded_buffer.h for the exact rule);
//     b. NaN parity: the reference is NaN ⇔ the backend's element is NaN. The reference is the
//        exact value correctly rounded to the output format (ref::encode with the given
//        overflow rule), so an exact ±inf or an overflowing value is NaN in e4m3 (no infinity),
//        and both NaN pass without further checks;
//     c. ±inf parity: the reference is ±inf ⇔ the element is the same infinity (sign
//        included); both the same infinity pass;
//     d. the op's policy (policy.h) on the finite pair. tf32: a word with any of the 13 low bits
//        set is not a tf32 value and fails here.
// The verdict names the first failing element and its reason; it counts failures by reason
// (each element under the first check it fails) and reports metrics over the finite pairs.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "oracle/core/guarded_buffer.h"
#include "oracle/core/topk_groups.h"
#include "oracle/judge/metrics.h"
#include "oracle/rules/policy.h"
#include "oracle/judge/reference_bits.h"
#include "reference/ball.h"
#include "reference/formats.h"
#include "reference/tensor.h"

namespace lmo::oracle {

enum class FailReason : uint8_t { kNone, kUnwritten, kNanParity, kInfParity, kPolicy, kOverrun };
inline constexpr int kFailReasonCount = 6;
std::string_view fail_reason_name(FailReason r);

struct JudgeOptions {
  // kNaiveRelative: the naive kernel's outputs (the reference run on the simulated format),
  // one per element. Simulated formats and f64 are exact as doubles. Elements where the naive
  // value or the exact value is not finite are left out of max|naive − x| (an overflowing
  // naive run would otherwise make the bound infinite); Verdict::naive_excluded counts them.
  std::span<const double> naive;
  // kNaiveRelative: the max runs over groups of this many consecutive elements (one row of a
  // row-wise op), each element judged against its own group's max, so that a row of small
  // values is not judged by the errors of a row of large ones; 0 = the whole tensor is one group.
  int64_t group = 0;
  // kNaiveRelative: the backend's compute format, whose ulp the policy's floor is counted in.
  ref::Format compute = ref::Format::f32;
  // kUlp with Policy::arg_error > 0: the condition number κ of the op's inner function at each
  // element's argument (OutputValues::condition of the exact run), one per element.
  std::span<const double> condition;
  // kNaiveRelative with Policy::error_scale > 0: the error scale S_i of each element
  // (OutputValues::error_scale of the exact run), one per element; empty = none (S_i = 0).
  std::span<const double> error_scale;
  // How the reference rounds exact values beyond the format's range (kSaturate for kernels
  // that declare satfinite fp8 stores).
  ref::Overflow overflow = ref::Overflow::kIeee;
  // A kernel that flushes subnormal results to zero (recipe +ftz): ±0 passes wherever the
  // correctly rounded reference is subnormal in the output format.
  bool ftz = false;
  // A kernel whose store rounds toward zero (recipe +trunc): its output is round-to-nearest's or
  // the value one ulp toward zero from it, so an element passes when it, or its neighbour away
  // from zero, passes the policy.
  bool trunc = false;
  // A block of a larger tensor (check of an op with independent rows at real shapes, a block of
  // rows at a time, so that its exact values never exist all at once): the tensor judged has
  // `whole_elements` elements, and the exact values, naive values, condition numbers and error
  // scales given are those of its elements [offset, offset + exact.size()). Failures and the
  // metrics' worst element are named by their index in the whole tensor. 0: not a block.
  int64_t whole_elements = 0;
  int64_t offset = 0;  // a multiple of `group` when group > 0
  // A block with group 0 (kNaiveRelative): the whole tensor's max|naive − x| and the elements
  // left out of it (naive_max_error over every block), since the block's own maximum would give
  // a smaller bound than judging the whole tensor at once does.
  std::optional<mp> whole_naive_max;
  int64_t whole_naive_excluded = 0;
};

struct Verdict {
  bool pass = true;
  FailReason reason = FailReason::kNone;  // of the first failure
  // The first failing element; for kOverrun the (out-of-range) element whose bytes reached the
  // guard: numel + j after the end, negative before the start. -1 when passing.
  int64_t first_index = -1;
  std::string detail;  // one sentence on the first failure ("" when passing)
  int64_t elements = 0;
  int64_t failed = 0;                                 // failing elements (overrun not included)
  std::array<int64_t, kFailReasonCount> by_reason{};  // indexed by FailReason
  int64_t forgiven = 0;  // kUlp: elements passed by the midpoint rule (3)
  TensorMetrics metrics;
  // kNaiveRelative: naive_factor · max|naive − x| (the group-wide part of the bound; the
  // largest over the groups), and the elements left out of that max.
  double naive_bound = 0;
  int64_t naive_excluded = 0;

  int64_t count(FailReason r) const { return by_reason[static_cast<size_t>(r)]; }
};

// The part of judging a floating output that does not depend on the backend's output: each
// element's correctly rounded reference, the naive-relative interval of values it may store,
// the ulp allowance of an arg_error policy, and (filled as elements are judged) the metrics of
// an element equal to its reference. `verify` judges several backends on the same exact values
// in one format with one policy: built once, it spares each of them that work (up to seven
// times the same MPFR operations). judge() on a JudgeReference gives the very Verdict that
// judge() on the policy, exact values and options gives: the latter builds one and uses it.
// The exact, naive and condition spans must outlive it.
class JudgeReference {
 public:
  // Throws std::invalid_argument as judge() does for a kTopKSet policy, a group that does not
  // divide the elements, or naive values, condition numbers or error scales of the wrong count.
  JudgeReference(const Policy& policy, std::span<const mp> exact, ref::Format format,
                 const JudgeOptions& options = {});
  // The same on the certified balls of an evaluation that decided every rounding (each exact
  // value is to_mp(ball), oracle/core/certified.h): the very Verdict, with mp values made only
  // for the elements doubles cannot answer for (midpoint_doubles.h), a failure's message, or
  // a policy with arg_error.
  JudgeReference(const Policy& policy, std::span<const ref::Ball> exact, ref::Format format,
                 const JudgeOptions& options = {});
  ref::Format format() const { return format_; }

  // Judges an output tensor of format() with exact.size() elements (std::invalid_argument
  // otherwise; without a buffer nothing counts as unwritten). For a block (whole_elements > 0):
  // its elements of the whole tensor `got`, the verdict's `elements` being the block's.
  Verdict judge(const ref::Tensor& got, const GuardedBuffer* buf = nullptr);

 private:
  friend class BlockVerdicts;
  JudgeReference(const Policy& policy, std::span<const mp> exact, std::span<const ref::Ball> balls,
                 ref::Format format, const JudgeOptions& options);
  int64_t size() const { return static_cast<int64_t>(exact_.size() + balls_.size()); }
  ExactRef exact_at(size_t i) const {
    return balls_.empty() ? ExactRef{&exact_[i], nullptr} : ExactRef{nullptr, &balls_[i]};
  }
  // Judges this reference's elements of got into v (failures, counts) and acc, after what they
  // already hold (blocks merged in index order).
  void judge_into(const ref::Tensor& got, const GuardedBuffer* buf, Verdict& v,
                  MetricsAccumulator& acc);

  // Judges elements [begin, end) into v (failures, forgiven) and acc.
  void judge_range(const ref::Tensor& got, const GuardedBuffer* buf, int64_t begin, int64_t end,
                   Verdict& v, MetricsAccumulator& acc);

  Policy policy_;
  std::span<const mp> exact_;         // the exact values, or
  std::span<const ref::Ball> balls_;  // the balls whose midpoints they are
  int64_t whole_ = 0;   // elements of the tensor judged
  int64_t offset_ = 0;  // of exact_[0] in it
  ref::Format format_;
  JudgeOptions options_;
  int64_t group_ = 1;
  std::vector<uint64_t> rounded_;  // encode(format, exact[i], overflow)
  std::vector<mp> naive_bounds_;   // kNaiveRelative: naive_factor · max|naive − x|, per group
  double naive_bound_ = 0;         // the largest of them
  int64_t naive_excluded_ = 0;
  std::vector<double> group_bounds_;  // naive_bounds_ as doubles (NaN where they underflow)
  std::vector<double> nearest_;       // each exact value rounded to double
  // kNaiveRelative, a finite exact value: the lowest and highest patterns element `at` may hold.
  NaiveEnds naive_ends(size_t at, mp& scratch) const;
  // kUlp with arg_error: per element with a finite exact value, the ulps allowed, the midpoint
  // margin and the widening.
  std::vector<int64_t> allowed_ulps_;
  std::vector<double> allowed_margin_, allowed_extra_;
  // The metrics of an element whose output equals rounded_[i], once one was judged (from the
  // second output judged on: empty before).
  std::vector<std::optional<ElementError>> same_;
  int uses_ = 0;
};

// The verdict of a tensor judged a block at a time (JudgeOptions::whole_elements): the blocks'
// references added in index order give the verdict judge() gives on the whole tensor (the NMSE
// to within the rounding of its sums, MetricsAccumulator::merge).
class BlockVerdicts {
 public:
  explicit BlockVerdicts(ref::Format f) : acc_(f) {}
  // Judges `block`'s elements of the whole output `got` (a backend's buffer: its poison marks
  // elements unwritten).
  void add(JudgeReference& block, const ref::Tensor& got, const GuardedBuffer* buf = nullptr);
  // The whole tensor's verdict; with the buffer, its guards checked last, as judge() does.
  Verdict result(const GuardedBuffer* buf = nullptr) const;

 private:
  Verdict v_;
  MetricsAccumulator acc_;
};

// max|naive − x| over the elements where both are finite; `excluded` counts the others
// (kNaiveRelative's bound, before the policy's factor).
mp naive_max_error(std::span<const mp> exact, std::span<const double> naive, int64_t& excluded);
// The same with the exact values given as the midpoints of certified balls (each exact value is
// to_mp(ball), oracle/core/certified.h), without building them as mp: the maximum is found on
// doubles and only its near-ties are evaluated in mp, so the result is the very mp value.
mp naive_max_error(std::span<const ref::Ball> exact, std::span<const double> naive,
                   int64_t& excluded);

// Judges a floating output tensor under a kUlp or kNaiveRelative policy. Throws
// std::invalid_argument for a kTopKSet policy, an integer dtype, exact.size() ≠ numel, or a
// kNaiveRelative policy without exactly numel naive values. Without a buffer nothing counts as
// unwritten (a tensor read from a file).
Verdict judge(const Policy& policy, std::span<const mp> exact, const ref::Tensor& got,
              const JudgeOptions& options = {});
// The same on a backend's guarded output buffer: guard, then poison, then the checks above.
Verdict judge(const Policy& policy, std::span<const mp> exact, const GuardedBuffer& got,
              const JudgeOptions& options = {});

// The same with a JudgeReference shared between outputs (guard, then poison, then the checks).
Verdict judge(JudgeReference& reference, const GuardedBuffer& got);

// Top-k expert choice, kTopKSet. For T tokens and N experts:
//   scores:   T × N exact selection scores (row-major; −inf for an expert no backend may pick);
//   expected: T × K, the reference's selected experts per token (any order);
//   got:      an i64 or i32 tensor of T × K elements, the backend's selection (any order);
//   groups:   the selection's group limit (none by default).
// Per token (an "element" of the verdict): unwritten if any index is still poison; kPolicy if
// an index is out of [0, N) or repeated, or if an expert m the backend could have kept scores
// above its lowest selected expert e by more than the margin, s_m − s_e > tie_margin · max_i
// |s_i| over the token's row (NaN scores never tie). With a group limit, the experts it could
// have kept are those of a set of kept groups that contains every selected expert's group and
// that a kernel whose group scores err by up to half the group margin could choose (every
// dropped group at most the margin above every kept one; the margin is tie_margin · max|s_i|,
// twice that for a top-2 sum), the most favourable such set. Throws std::invalid_argument on
// inconsistent sizes or a policy of another kind.
Verdict judge_topk(const Policy& policy, std::span<const mp> scores, int64_t n_experts,
                   std::span<const int64_t> expected, const ref::Tensor& got,
                   const TopkGroups& groups = {});
Verdict judge_topk(const Policy& policy, std::span<const mp> scores, int64_t n_experts,
                   std::span<const int64_t> expected, const GuardedBuffer& got,
                   const TopkGroups& groups = {});

}  // namespace lmo::oracle
