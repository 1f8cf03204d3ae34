// The judging service: one or more kernels' outputs of one op on one input set, judged against
// the exact reference under the recipe they declare. `check` (a file or tensors of outputs),
// `verify` (every backend of a case), the Python package and the harness all judge through it,
// so that a case is judged the same way whichever door it came in by.
//
// What it does, in order:
//   1. binds the recipe to the op and the storage format (bind_recipe) and takes each output's
//      policy from the op's record (policy_for), as the recipe adjusts it (judging_under);
//   2. judges the top-k outputs (the router's experts) as sets; where a kernel's selection passes
//      but differs from the reference's, the values paired with it (the gates) are judged on the
//      kernel's own selection (Op::with_selection);
//   3. judges every other output element by element (judge.h), against the naive run of the
//      recipe in the kernel's compute format where the policy reads one; at real shapes (an op
//      with independent rows whose outputs exceed a block, row_slice.h) a block of rows at a
//      time (row_blocks.h), with the same verdicts;
//   4. ranks the recipes by how closely each reproduces a failing kernel's outputs (diagnose,
//      recipe_judge.h): on the whole op, or on the block of the first failure.
// Kernels judged in one call share the exact values, the recipe's naive run and each output's
// judge reference (JudgeReference) per compute format.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "oracle/core/guarded_buffer.h"
#include "oracle/core/op.h"
#include "oracle/judge/judge.h"
#include "oracle/judge/recipe_judge.h"
#include "oracle/judge/row_blocks.h"
#include "oracle/rules/policy.h"
#include "oracle/rules/recipe.h"
#include "reference/formats.h"
#include "reference/tensor.h"

namespace lmo::oracle {

// One kernel's outputs of the op.
struct KernelOutputs {
  // Per output of the op (Op::outputs(), in order): the tensor the kernel wrote, with the
  // output's shape and, for a floating output, the dtype of output_format(d, storage); a top-k
  // output holds the expert indices. Null: the output is not judged by this call.
  std::vector<const ref::Tensor*> tensors;
  // Per output, or empty: the guarded buffer the tensor was copied from, whose guards and poison
  // are judged too (judge.h). A buffer's values are judged in the order the kernel wrote them.
  std::vector<const GuardedBuffer*> buffers;
  // The format the kernel computes in, which its naive run is taken in (f32 for a kernel whose
  // intermediates are f32; a double reference backend's is f64).
  ref::Format compute = ref::Format::f32;
};

struct OutputJudgement {
  Verdict verdict;
  std::string bound;  // the policy's bound, in words
  // The element with the largest ulp error (-1 when no finite pair was compared), its value and
  // its correctly rounded reference.
  int64_t worst_index = -1;
  double worst_actual = 0, worst_expected = 0;
  // Its exact reference to 21 significant digits (verdict_text::exact): what a rounded expected
  // value hides when no recipe explains the error.
  std::string worst_exact;
};

struct KernelJudgement {
  bool pass = true;
  // Per output; nullopt where the kernel's tensor was null.
  std::vector<std::optional<OutputJudgement>> outputs;
  // The kernel's top-k selection where it passed but differs from the reference's: the values
  // were judged on it (a later call judging more of this kernel's outputs passes it on).
  std::optional<std::vector<int64_t>> selection;
  // The recipes ranked best first (recipe_judge.h), when JudgingOptions::diagnosis asks.
  std::vector<RecipeMatch> diagnosis;
  // "output <name>: <the first failure>", "" when passing.
  std::string first_failure;
};

enum class Diagnosis { kNever, kOnFailure, kAlways };

struct JudgingOptions {
  Recipe recipe;  // the recipe the kernels declare (the case's, or --recipe)
  Diagnosis diagnosis = Diagnosis::kOnFailure;
  // diagnose()'s variants of the declared recipe (check); false: the named recipes only
  // (verify's failure rows).
  bool diagnose_variants = true;
  // Rows per block: -1 as rows_per_block() decides, 0 the whole op at once.
  int64_t block_rows = -1;
  // The inputs the top-k outputs are judged on where they are not `in` (a golden file's own).
  const InputSet* topk_in = nullptr;
  // A top-k selection of the kernel, judged by an earlier call, that the values are judged on.
  std::optional<std::vector<int64_t>> selection;
  // The op's exact values on `in` (rounded to the storage) and its strict naive run per compute
  // format, where the caller has them already (verify's reference backends read them).
  std::function<const Outputs<ref::mp>&()> exact;
  std::function<const Outputs<double>&(ref::Format compute)> strict_naive;
  // Called with each judged output's correctly rounded reference for rows [begin, end) (the whole
  // op: 0 and its rows), in the format `of` it is judged in (i64 indices for a top-k output), of
  // the op's own selection: for a caller that compares it with a stored copy (check, against a
  // golden file). An exception it throws ends the judging.
  std::function<void(size_t k, ref::Format of, const ref::Tensor& expected, int64_t begin,
                     int64_t end)>
      expected;
  RowBlockTimes times;  // the blocked path's seconds, where a caller counts them
};

// Judges each kernel's outputs of op (named op_name, as in its record) on `in`, the inputs as
// the kernels read them in `storage`. One judgement per kernel, in order. RecipeError when the
// recipe does not fit the op; std::invalid_argument (from judge.h) on a tensor of the wrong
// size.
std::vector<KernelJudgement> judge_kernels(const Op& op, const std::string& op_name,
                                           const InputSet& in, ref::Format storage,
                                           std::span<const KernelOutputs> kernels,
                                           const JudgingOptions& options);

// A policy's bound in words, as judged in format f ("2 ulp", "round(x ± B), B = …").
std::string bound_text(const Policy& p, ref::Format f, const Verdict& v,
                       const std::string& recipe = "strict");

}  // namespace lmo::oracle
