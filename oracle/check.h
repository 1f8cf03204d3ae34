// `lmoracle check`: grades a file of a kernel's outputs against a golden file. The golden file
// is self-describing (golden.h): its metadata holds the case, so the exact outputs and the
// naive f32 run are recomputed from its in.<name> tensors (converted to the actual output's
// format, as golden.h defines out.<name>.<format>), the golden out.<name>.<format> is checked
// to be their correct rounding (a damaged or edited golden file is refused), and each actual
// out.<name> is judged with the op's policy, exactly as `verify` judges a backend.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "oracle/judge.h"

namespace lmo::oracle {

struct CheckedOutput {
  std::string name;
  std::string format;  // of the actual tensor
  Verdict verdict;
  // The element with the largest |ulp| error (-1 when nothing was compared).
  int64_t worst_index = -1;
  double worst_actual = 0, worst_expected = 0;
  int64_t worst_ulps = 0;
  std::string bound;  // the policy's bound, in words
};

struct CheckReport {
  std::string case_id;
  std::vector<CheckedOutput> outputs;
  bool pass = true;
};

// InputError / SafetensorsError for bad input: a missing out.<name> tensor, a wrong shape, an
// unsupported dtype, a golden file without a case or with outputs that are not the correct
// rounding of its own reference.
CheckReport check_golden(const std::filesystem::path& golden, const std::filesystem::path& actual);

std::string to_text(const CheckReport& r);
nlohmann::json to_json(const CheckReport& r);

}  // namespace lmo::oracle
