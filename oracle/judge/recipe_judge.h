// Judging under a recipe ([recipes], recipe.h) and naming the recipe a kernel's outputs follow.
//
// Under a recipe R that differs from strict, an output is judged by policy.h's rule (2) against
// R's simulated run (Op::simulated with R bound): its error may be at most twice R's, plus half
// an ulp of the output and the floor of the op's policy. Ops whose strict policy is an ulp
// bound (elementwise) are judged element by element (group 1), with the error scale of R's form
// (the literal activations supply one: a single sample of R's error at one element says little
// about another kernel's). With +ftz alone the op's own policy stays, and ±0 passes where the
// reference is subnormal.
#pragma once

#include <string>
#include <vector>

#include "oracle/core/op.h"
#include "oracle/judge/judge.h"
#include "oracle/rules/policy.h"
#include "oracle/rules/recipe.h"
#include "reference/tensor.h"

namespace lmo::oracle {

struct RecipeJudging {
  Policy policy;
  int64_t group = 0;
  bool uses_naive = false;  // the judge needs R's simulated run
};
RecipeJudging judging_under(const Policy& strict_policy, const OutputDecl& d, const BoundRecipe& r);

// The judge's options for one output judged as `how` says: its group, the exact run's condition
// numbers and error scales, the recipe's flush-to-zero, and, where the policy needs the naive
// run, its values in `compute` (its error scales where the exact run has none). The spans point
// into `exact` and `naive`, which must outlive the options. check and verify, whole and in
// blocks, judge every output through it.
JudgeOptions judge_options(const RecipeJudging& how, const OutputValues<ref::mp>& exact,
                           const OutputValues<double>* naive, ref::Format compute,
                           const BoundRecipe& r);
// The same for the certified balls of an evaluation (certified.h, ExactValues::balls).
JudgeOptions judge_options(const RecipeJudging& how, const OutputValues<ref::Ball>& exact,
                           const OutputValues<double>* naive, ref::Format compute,
                           const BoundRecipe& r);

// How much of a kernel's outputs one recipe explains.
struct RecipeMatch {
  std::string recipe;      // recipe text (a named recipe's name where it is one)
  // Fraction of the real outputs' elements within R's own bound: the outputs judged under R as
  // check judges a declared recipe (judging_under, judge_options, judge.h), per element.
  double explained = 0;
  // How alike the shapes of the two error vectors (kernel − x, R's rounded run − x) are: per row
  // of the op (the whole output for an op without independent rows), the magnitude of their
  // Pearson correlation, averaged over the elements. The magnitude, since the sign of a row's
  // error can follow the kernel's summation order: a one-pass variance cancels to a σ² too
  // large in one kernel and too small in another, and every element of the row follows it.
  double correlation = 0;
  double equal = 0;        // fraction of the real outputs' elements bit-equal to R's rounded run
};

// Whether m explains the outputs: every element within its bound, so that the kernel, declaring
// m's recipe, would pass (the judge never passes a tensor on a fraction of its elements: a
// recipe that leaves one element outside its bound does not explain that element's error).
bool explains(const RecipeMatch& m);

// Ranks candidate recipes for the real outputs `got` (one per OutputDecl; null for top-k
// outputs or ones not given) of op on `in` (in the outputs' storage format), best first: the
// named recipes of the op, `declared` (with the points the op's parameters imply, as judged)
// and, with variants, `declared` with each of its points set to each other value and its ftz,
// fma and trunc toggled (check explores them, verify's failure rows rank the named ones only).
// Each candidate R is simulated once in f32 (and once in `compute`, the kernel's compute format,
// when that differs: R's naive run as the judge reads it). Ranked by `explained`; then by
// `correlation` (a narrow format's wide bound holds many kernels: among the recipes whose bounds
// hold the outputs, the one whose errors have the kernel's shape explains them); then by
// `equal`; then candidate order.
std::vector<RecipeMatch> diagnose(const Op& op, const std::string& op_name, const InputSet& in,
                                  const Outputs<ref::mp>& exact,
                                  const std::vector<const ref::Tensor*>& got,
                                  const Recipe& declared, ref::Format storage,
                                  bool variants = true, ref::Format compute = ref::Format::f32);

// "flash-attention: 100.0% of elements within its bound, error correlation 0.970, 98.2% equal"
// (the percentage within the bound rounded down: 100.0% only when every element is).
std::string to_text(const RecipeMatch& m);

}  // namespace lmo::oracle
