// GoogleTest assertions that grade a kernel's outputs against the oracle, for the kernel tests
// of other projects (find_package(lmoracle), target lmoracle::oracle, plus GTest):
//
//   #include "oracle/check/gtest_reference.h"
//   TEST(MyKernels, RmsNorm) {
//     const lmo::oracle::InputSet in = lmo::oracle::reference_inputs("rmsnorm/llama3-8b", "bf16");
//     std::map<std::string, lmo::ref::Tensor> out;
//     out.emplace("y", my_rmsnorm(in.at("x"), in.at("gamma")));  // a bf16 tensor
//     EXPECT_MATCHES_REFERENCE("rmsnorm/llama3-8b", out);
//   }
//
// The first argument is a case ID of the built-in cases (or of $LMO_CASES_DIR) or a Case
// object (oracle/cases/case.h, e.g. from load_case_file); the second maps each output name of the
// case's op to the kernel's tensor, in the storage format it ran in, computed on
// reference_inputs of that format. A failure prints the verdict of every output: failing
// elements, the worst element with actual, expected and ulp error, and the policy's bound.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

#include "oracle/check/check.h"

namespace lmo::oracle {

// The cases folder of an installed package (the config file defines LMORACLE_CASES_DIR),
// unless $LMO_CASES_DIR overrides it; the source tree's cases/ otherwise.
inline std::string reference_cases_dir() {
#ifdef LMORACLE_CASES_DIR
  if (std::getenv("LMO_CASES_DIR") == nullptr) return LMORACLE_CASES_DIR;
#endif
  return builtin_cases_dir();
}

// The inputs of the case with this ID in a storage format given by name ("bf16", ...).
inline InputSet reference_inputs(const std::string& case_id, const std::string& format) {
  const auto dtype = ref::parse_dtype(format);
  if (!dtype || !ref::is_float(*dtype)) {
    throw InputError("reference_inputs", "format", "expected a format name, got " + format);
  }
  return reference_inputs(find_case(case_id, reference_cases_dir()), ref::dtype_format(*dtype));
}

namespace gtest_detail {

inline Case case_of(const Case& c) { return c; }
inline Case case_of(const std::string& id) { return find_case(id, reference_cases_dir()); }

template <class CaseOrId>
::testing::AssertionResult matches_reference(const char* case_expr, const char* outputs_expr,
                                             const CaseOrId& c,
                                             const std::map<std::string, ref::Tensor>& outputs) {
  try {
    const CheckReport r = check_outputs(case_of(c), outputs);
    if (r.pass) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << outputs_expr << " do not match the reference of " << case_expr << ":\n"
           << to_text(r);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure()
           << "cannot grade " << outputs_expr << " against " << case_expr << ": " << e.what();
  }
}

}  // namespace gtest_detail
}  // namespace lmo::oracle

#define EXPECT_MATCHES_REFERENCE(case_or_id, outputs) \
  EXPECT_PRED_FORMAT2(::lmo::oracle::gtest_detail::matches_reference, case_or_id, outputs)
#define ASSERT_MATCHES_REFERENCE(case_or_id, outputs) \
  ASSERT_PRED_FORMAT2(::lmo::oracle::gtest_detail::matches_reference, case_or_id, outputs)
