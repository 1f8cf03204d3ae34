// `lmoracle ref`: the reference on a user's own tensors (for instance dumped from their model).
// The op and its parameters make a case; the inputs come from a safetensors file (tensor
// "<name>" or "in.<name>" for each input of the op, with the op's shapes); the result is written
// as a golden file (golden.h layout: in.<name>, out.<name>.<format>, out.<name>.f64, metadata),
// so `lmoracle check --golden` accepts it as it is.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "oracle/safetensors.h"

namespace lmo::oracle {

// The case `lmoracle ref` makes of --op and --param (its "formats" is ["f32"] until the inputs
// are read): each param is "key=value", the value read as JSON when it parses (numbers, true,
// false, lists, quoted strings), else as a bare string. InputError (exit 2) for a param without
// '='. A pure function of its arguments, so it can be fuzzed (tests/fuzz/fuzz_ref_params.cc).
nlohmann::json user_case_json(const std::string& op, const std::vector<std::string>& params);

// params: "key=value" strings; a value is read as JSON when it parses (numbers, true, false,
// lists, quoted strings), else as a bare string. format: "" = the dtype of the first real input.
SafetensorsContent user_reference(const std::string& op, const std::vector<std::string>& params,
                                  const std::filesystem::path& in, const std::string& format);

}  // namespace lmo::oracle
