// The error scale of the feed-forward compositions (oracle/ops/ffn.h) for their naive-relative
// policy (policy.h, rule (2)): per output element, how large the rounding errors of a correct
// kernel computing in a format with unit roundoff u are, in units of u.
//
// Every operation of a correct kernel rounds once: a product t by at most u·|t|, an addition
// whose result is s by at most u·|s|, the activation a = act(h) by its own elementwise policy
// (the activations' records, oracle/ops/activations.cc: k ulp ≤ 2k·u·|a|, plus arg_error·κ·u·|a|
// for GELU and GELU-tanh). Each rounding's magnitude m reaches an output through the composition's
// derivatives (the activation's slope |act'(h)|, the weights, a GLU's other factor), and
// independent roundings add as a root-sum-square: S = √(Σ m²), with the dot products' additions
// taken in index order (their prefix sums). Where the roundings are independent and uniform in
// ±u·m, the error's standard deviation is u·S/√3; the policy's multiple of u·S is therefore a bound
// a correct kernel exceeds with negligible probability, whatever its summation order or use of FMA.
//
// Why it is needed: the naive run's largest error is one sample of the same quantity, and on a
// tiny composition whose outputs share one or two hidden values (d_ff or d down to 1), each a
// cancelling dot product, it can be near 0 by chance (the no-false-alarm sweep of
// oracle_false_alarm_positional_test found 2 of 1000 such cases on every fast target).
// Computed in double from the inputs (only a magnitude is needed, not its last bits), with the
// activations' condition numbers from oracle/ops/activations.h's activation_condition.
#pragma once

#include <vector>

#include "oracle/ops/ffn.h"

namespace lmo::oracle {

// S for every element of y [tokens, d], row-major.
std::vector<double> ffn_error_scale(const FfnParams& p, const InputSet& in);

}  // namespace lmo::oracle
