// Tolerance policies (DESIGN.md, Oracle). Each op's policies and their constants live in its
// record (OpInfo::policies, oracle/ops/<family>.cc), and the table of all of them is derived
// from the registry (policy_table.h); this header defines what a policy is and the constants
// several records share.
//
//  (1) kUlp, elementwise ops: |ULP distance to the correctly rounded reference| ≤ k.
//      k depends on the kind of output format (see Policy::max_ulps): in f32/f64 the kernel's
//      own arithmetic shows in full; in a format of ≤ 11 bits a kernel computing in f32 rounds
//      once at the store, so the result is the correctly rounded one unless the exact value lies
//      near a rounding midpoint.
//  (3) is part of kUlp, not a kind of its own: a result exactly k + 1 ulps off is forgiven iff
//      the exact value lies within midpoint_margin ulps of the rounding midpoint between the
//      reference and its neighbour on the side of the result (the side it was rounded to). For
//      k = 0 this is exactly "an off-by-one-ulp result is forgiven only where the exact value
//      lies within a small margin of a rounding midpoint": the kernel rounded the other way
//      because its own tiny error moved the value across the midpoint. midpoint_margin = 0
//      disables it.
//  (2) kNaiveRelative, reductions and compositions: with x the exact values and naive the
//      outputs of the reference run in the backend's compute format (f32 for fast/ and gpu/:
//      the same formula, every operation rounded once, NOT rounded to the storage format), let
//        B_i = naive_factor · max_j |naive_j − x_j| + (output_ulps − ½) · ulp(x_i)
//              + compute_ulps · ulp_compute(x_i)
//      (the max over element i's group, judge.h). Element i passes iff it is the rounding to the
//      output format of some value within B_i of x_i: round(x_i − B_i) ≤ y_i ≤ round(x_i + B_i).
//      plus a floor of compute_ulps ulps of the compute format at x_i (FlashAttention 3's tests
//      add the same kind of floor, twice the working precision's rounding of the output: the
//      naive run's realized error is one sample, near 0 on a tiny tensor or a lucky summation
//      order, and 2 × 0 would flag a kernel for its last rounding; in bf16 or f16 outputs the
//      floor is 2^-16 or 2^-13 of an ulp and changes nothing).
//      Compositions whose exact run supplies an error scale S_i (OutputValues::error_scale: the
//      root-sum-square of the magnitudes that each of a correct compute-format kernel's
//      roundings carries to element i, propagated through the composition, in units of the
//      compute format's unit roundoff u_c) take max(naive_factor · max_j |naive_j − x_j|,
//      error_scale · u_c · S_i) as B_i's first term: the naive run's error is one sample, and
//      where the outputs share one or two rounding errors (an FFN with d_ff or d down to 1), each
//      amplified by a cancelling dot product, the sample can be small by chance while a correct
//      kernel's independent roundings are not. The larger of the two, not their sum, so that the
//      bound grows only where the scale exceeds the sample.
//      With naive_factor 2 and output_ulps ½ this is the FlashAttention rule (a kernel's
//      pre-rounding error at most twice the naive kernel's) plus half an ulp of the output, made
//      exact: the correctly rounded result always passes, and a wrong rounding direction at the
//      store (bf16 truncation) fails wherever x_i is not within B_i of a midpoint.
//  (4) kTopKSet, discrete outputs (top-k expert choice): the selected sets are compared; a
//      backend may select e instead of m only if the exact scores satisfy
//      s_m − s_e ≤ tie_margin · max_i |s_i| (the row's largest score magnitude).
#pragma once

#include <cstdint>
#include <string_view>

#include "reference/formats.h"

namespace lmo::oracle {

enum class PolicyKind : uint8_t {
  kUlp,            // (1), with (3) through midpoint_margin
  kNaiveRelative,  // (2)
  kTopKSet,        // (4)
};
std::string_view policy_kind_name(PolicyKind k);

// Outputs of at most this precision (tf32, bf16, f16, e4m3, e5m2) are "narrow": a kernel
// computing in f32 rounds to them once.
inline constexpr int kNarrowPrecision = 11;
bool is_narrow(ref::Format f);

struct Policy {
  PolicyKind kind = PolicyKind::kUlp;
  // kUlp: k for wide outputs (f32, f64) and for narrow outputs (precision ≤ 11 bits).
  int64_t ulps_wide = 0;
  int64_t ulps_narrow = 0;
  // kUlp, rule (3): in ulps of the gap at the reference; 0 disables forgiveness.
  double midpoint_margin = 0;
  // kNaiveRelative.
  double naive_factor = 0;
  double output_ulps = 0;
  double compute_ulps = 0;  // the floor, in ulps of the compute format (f32)
  double error_scale = 0;   // the multiple of u_c · S_i B_i's first term is at least (0: no S)
  // kTopKSet: relative to the row's largest |score|.
  double tie_margin = 0;
  // kUlp, for ops whose inner function is evaluated at a rounded argument (GELU's erfc(−x/√2),
  // GELU-tanh's sigmoid(2u)): the relative error of that argument in a kernel computing in f32,
  // in units of u = 2^-24. A relative argument error δ becomes κ·δ in the output, κ the inner
  // function's condition number at the argument (supplied per element by the op's exact run),
  // which no constant k can cover in the tails (κ ≈ x² for GELU at x → −∞). The judge adds
  // arg_error·κ_i·u·|x_i|/ulp(x_i) ulps (policy_failure in judge.cc). 0 = the op has none.
  double arg_error = 0;

  // The k that applies to outputs in format f (kUlp).
  int64_t max_ulps(ref::Format f) const { return is_narrow(f) ? ulps_narrow : ulps_wide; }
};

// Whether judging under p reads the per-element data an op's exact run annotates (condition
// numbers for arg_error, error scales for error_scale, Op::annotate_exact): the certified balls
// lack it, so `check` and `verify` judge on balls only under the other policies.
constexpr bool reads_exact_annotations(const Policy& p) {
  return p.arg_error > 0 || p.error_scale > 0;
}

// Constructors for the table and for tests.
constexpr Policy ulp_policy(int64_t wide, int64_t narrow, double midpoint_margin = 0,
                            double arg_error = 0) {
  Policy p;
  p.arg_error = arg_error;
  p.kind = PolicyKind::kUlp;
  p.ulps_wide = wide;
  p.ulps_narrow = narrow;
  p.midpoint_margin = midpoint_margin;
  return p;
}
constexpr Policy naive_policy(double naive_factor = 2, double output_ulps = 0.5,
                              double compute_ulps = 2, double error_scale = 0) {
  Policy p;
  p.kind = PolicyKind::kNaiveRelative;
  p.naive_factor = naive_factor;
  p.output_ulps = output_ulps;
  p.compute_ulps = compute_ulps;
  p.error_scale = error_scale;
  return p;
}
constexpr Policy topk_policy(double tie_margin) {
  Policy p;
  p.kind = PolicyKind::kTopKSet;
  p.tie_margin = tie_margin;
  return p;
}

// Rule (3)'s margin, in ulps of the output: 2^-8. A narrow result computed in f32 carries its f32
// error (a few f32 ulps = 2^-13 ulp of f16/tf32, 2^-16 ulp of bf16, each times a few) into the
// final rounding, so it can only flip the last bit within far less than 2^-8 ulp of a midpoint;
// a random exact value lies that close with probability 2^-7, so a rounding bug (truncation
// flips about half of all values) is still seen almost everywhere.
inline constexpr double kRoundingMargin = 1.0 / 256;

// The multiple of u·S that a composition with an error scale S takes as its naive bound where
// that is larger than twice the naive run's error (rule (2); oracle/ops/ffn_error_scale.h):
// with independent roundings uniform in ±u·m, a correct kernel's error has standard deviation
// u·S/√3, so 4·u·S is 6.9 standard deviations. A kernel that keeps its hidden layer in bf16 errs
// by about 2^-9·√d_ff times the hidden terms' size where u·S is about 2^-24·d_ff times it, so it
// stays caught far beyond today's widths (tests/oracle/oracle_mutation_ffn_test.cc: on 256 of 256
// outputs at d_ff 256, 63 of 64 at 8192).
inline constexpr double kErrorScaleMultiple = 4;

}  // namespace lmo::oracle
