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
#include "oracle/judge/policy.h"
#include "oracle/judge/recipe.h"
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

// How closely one recipe's simulated kernel reproduces a kernel's outputs.
struct RecipeMatch {
  std::string recipe;      // recipe text (a named recipe's name where it is one)
  double equal = 0;        // fraction of the real outputs' elements bit-equal to R's rounded run
  double correlation = 0;  // Pearson correlation of the two error vectors (kernel − x, R − x)
};

// Ranks candidate recipes for the real outputs `got` (one per OutputDecl; null for top-k
// outputs or ones not given) of op on `in` (in the outputs' storage format), best first: the
// named recipes of the op and, with variants, `declared` with each of its points set to each
// other value and its ftz and its fma toggled (one simulated run each: `check` explores them,
// `verify`'s failure rows rank the named ones only). Ties in `equal` go to the higher
// correlation, then to the earlier candidate.
std::vector<RecipeMatch> diagnose(const Op& op, const std::string& op_name, const InputSet& in,
                                  const Outputs<ref::mp>& exact,
                                  const std::vector<const ref::Tensor*>& got,
                                  const Recipe& declared, ref::Format storage,
                                  bool variants = true);

// "flash-attention: 98.2% of elements equal, error correlation 0.97"
std::string to_text(const RecipeMatch& m);

}  // namespace lmo::oracle
