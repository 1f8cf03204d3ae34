// The exact outputs of an op, the way every command gets them ([certified]): the op evaluated on
// balls (reference/ball.h) in double-double with a rigorous radius per element; where every
// element's interval decides its rounding in every format (reference/ball_rounding.h), the
// midpoints are the answer; otherwise, or when a branch was undecided, the op runs in MPFR, the
// arbiter. Both give the same golden bytes (tests/oracle/certified_test.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "oracle/core/op.h"

namespace lmo::oracle {

enum class ExactPath : uint8_t {
  kCertified,  // balls first, MPFR where they do not decide (the default)
  kMpfr,       // MPFR only: the arbiter, for comparison and for doubt
};

// Process-wide, set once from the command line (--exact) before any evaluation.
void set_exact_path(ExactPath p);
ExactPath exact_path();

// Counters over the process, for golden's report and the benchmarks.
struct ExactStats {
  int64_t certified_ops = 0;       // evaluations the balls decided entirely
  int64_t fallback_ops = 0;        // evaluations recomputed in MPFR
  int64_t partial_ops = 0;         // certified but for the rows of undecided elements (MPFR)
  int64_t elements = 0;            // output elements of all certified-path evaluations
  int64_t undecided_elements = 0;  // of those, elements whose interval did not decide
  int64_t undecided_branches = 0;  // evaluations with an undecided comparison
};
ExactStats exact_stats();
// One line for the commands' summaries: how many evaluations the balls decided, how many had
// only their undecided elements' rows recomputed in MPFR, how many fell back to MPFR entirely and
// why (undecided elements, undecided branches).
std::string exact_report();

// For the test that proves the adversarial inputs can see a bound that is too tight
// (tests/oracle/certified_test.cc): every radius is multiplied by `factor` before the rounding
// decision (0: every midpoint claimed exact). 1 (the default) everywhere else.
void scale_radii_for_testing(double factor);

// op.exact(in), through the path chosen by set_exact_path. `rounded_to`: the formats the caller
// rounds the values to (f64 always): the certified path must decide those roundings only.
Outputs<ref::mp> exact_outputs(const Op& op, const InputSet& in,
                               std::span<const ref::Format> rounded_to = ref::kAllFormats);

// The same evaluation for writers (golden): the balls themselves where every element decides its
// rounding in `rounded_to` (and f64), their bits then ref::decided_bits without an mp value, and
// without annotate_exact's data; otherwise exact_outputs' mp values. Counted once either way.
struct ExactValues {
  std::optional<Outputs<ref::Ball>> balls;
  Outputs<ref::mp> mp;  // where balls is empty
};
ExactValues exact_values(const Op& op, const InputSet& in,
                         std::span<const ref::Format> rounded_to = ref::kAllFormats);
// The mp values exact_outputs gives, from an exact_values result (its balls' midpoints, annotated
// as exact_outputs annotates them, or its mp values), for a caller that uses the balls too.
Outputs<ref::mp> exact_outputs_of(const Op& op, const InputSet& in, ExactValues v);

}  // namespace lmo::oracle
