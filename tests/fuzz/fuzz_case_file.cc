// libFuzzer target: the case-file parser (oracle/cases/case.h parse_case_document), everything
// `lmoracle verify` does with a file before it allocates a tensor: JSON, every field, the op's
// parameters, input overrides, the declared shapes and the cost estimate. Any byte string must
// either give cases or be refused with InputError (exit code 2 in the program); a crash, a
// sanitizer report or another exception escaping is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "exercise_case.h"
#include "oracle/cases/case.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lmo::oracle;
  try {
    const std::vector<Case> cases =
        parse_case_document(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    for (const Case& c : cases) lmo::fuzz::exercise_case(c);
  } catch (const InputError&) {
    // A refused file: the expected outcome for nearly every input.
  }
  return 0;
}
