// libFuzzer target: the parameters of `lmoracle ref --op NAME --param K=V ...` (user_case_json,
// then the case and op checks that run before any file is read). The input's first line is the
// op name and every further line one --param argument. Each must either give an op, with its
// declared shapes and cost, or be refused with InputError (exit 2 in the program).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "exercise_case.h"
#include "oracle/cases/case.h"
#include "oracle/golden/user_ref.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lmo::oracle;
  std::vector<std::string> lines(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      lines.emplace_back();
    } else {
      lines.back() += static_cast<char>(data[i]);
    }
  }
  const std::string op_name = lines.front();
  lines.erase(lines.begin());
  try {
    lmo::fuzz::exercise_case(
        parse_case(user_case_json(op_name, lines), "command line", "--op/--param"));
  } catch (const InputError&) {
    // Refused parameters: exit 2 in the program.
  }
  return 0;
}
