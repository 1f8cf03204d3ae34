// Grading a kernel's outputs with the case's tolerance policies, exactly as `verify` judges a
// backend (judge.h; the naive yardstick of the naive-relative policy is the reference run in
// f32, the compute format of the project's own kernels):
//  - `lmoracle check` grades a file of a kernel's outputs (out.<name>, any supported dtype)
//    against a golden file (golden.h). The golden file is self-describing: its metadata holds
//    the case, so the exact outputs are recomputed from its in.<name> tensors (converted to
//    each actual output's format, as golden.h defines out.<name>.<format>), the golden
//    out.<name>.<format> is checked to be their correct rounding (a damaged or edited golden
//    file is refused), and each actual output is judged;
//  - C++ kernel tests grade outputs in memory (check_outputs; gtest_reference.h wraps it as
//    EXPECT_MATCHES_REFERENCE) on the inputs reference_inputs() generates, those of `verify`.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "oracle/cases/case.h"
#include "oracle/judge/judge.h"
#include "oracle/rules/recipe.h"
#include "oracle/judge/recipe_judge.h"

namespace lmo::oracle {

struct CheckedOutput {
  std::string name;
  std::string format;  // of the actual tensor
  Verdict verdict;
  // The element with the largest ulp error (-1 when no finite pair was compared).
  int64_t worst_index = -1;
  double worst_actual = 0, worst_expected = 0;  // expected: the correctly rounded reference
  std::string worst_exact;  // the exact reference, 21 significant digits (verdict_text::exact)
  int64_t worst_ulps = 0;
  std::string bound;  // the policy's bound, in words
};

struct CheckReport {
  std::string case_id;
  std::string recipe = "strict";  // the recipe judged under (its text)
  std::vector<CheckedOutput> outputs;
  bool pass = true;
  // The recipes ranked by how closely each reproduces the outputs (recipe_judge.h), best first:
  // filled when the check fails, or always with CheckOptions::diagnose.
  std::vector<RecipeMatch> diagnosis;
};

struct CheckOptions {
  // The recipe the kernel declares (recipe.h); nullopt: the case's own ("recipe" field), else
  // strict. RecipeError (std::invalid_argument) when it does not fit the op.
  std::optional<Recipe> recipe;
  bool diagnose = false;  // rank the recipes even when the check passes
};

// InputError / SafetensorsError for bad input: a missing out.<name> tensor, a wrong shape, an
// unsupported dtype, a golden file without a case or with outputs that are not the correct
// rounding of its own reference.
CheckReport check_golden(const std::filesystem::path& golden, const std::filesystem::path& actual,
                         const CheckOptions& options = {});

// The case with this ID among the case files of cases_dir (InputError when there is none).
Case find_case(const std::string& id, const std::string& cases_dir = builtin_cases_dir());
// The inputs of case c in storage format f: the very bits `verify` gives every backend.
InputSet reference_inputs(const Case& c, ref::Format f);
// Grades a kernel's outputs by output name (each real output in the storage format f the
// kernel ran in, on reference_inputs(c, f); top-k indices as i64 or i32). InputError for a
// missing output, a wrong shape or dtype, or real outputs in more than one format.
CheckReport check_outputs(const Case& c, const std::map<std::string, ref::Tensor>& outputs,
                          const CheckOptions& options = {});
// The same on inputs the caller gives (a kernel run on its own tensors): every output is judged
// against the reference on `in` exactly as given, so inputs and outputs may be in different
// formats (f32 in, bf16 out: the reference of the f32 values the kernel read). `in` holds the op's inputs with their
// shapes (user_inputs, user_ref.h, checks them).
CheckReport check_outputs(const Case& c, const InputSet& in,
                          const std::map<std::string, ref::Tensor>& outputs,
                          const CheckOptions& options = {});

std::string to_text(const CheckReport& r);
nlohmann::json to_json(const CheckReport& r);

}  // namespace lmo::oracle
