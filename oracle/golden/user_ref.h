// `lmoracle ref`: the reference on a user's own tensors (for instance dumped from their model).
// The op and its parameters make a case; the inputs come from a safetensors file (tensor
// "<name>" or "in.<name>" for each input of the op, with the op's shapes); the result is written
// as a golden file (golden.h layout: in.<name>, out.<name>.<format>, out.<name>.f64, metadata),
// so `lmoracle check --golden` accepts it as it is.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "oracle/cases/case.h"
#include "oracle/golden/safetensors.h"

namespace lmo::oracle {

// The case `lmoracle ref` makes of --op and --param (its "formats" is ["f32"] until the inputs
// are read): each param is "key=value", the value read as JSON when it parses (numbers, true,
// false, lists, quoted strings), else as a bare string. InputError (exit 2) for a param without
// '='. A pure function of its arguments, so it can be fuzzed (tests/fuzz/fuzz_ref_params.cc).
nlohmann::json user_case_json(const std::string& op, const std::vector<std::string>& params);
// The same case from parameters already in JSON (an object), with the given seed and formats
// (format names). InputError when params is not an object.
nlohmann::json user_case_json(const std::string& op, const nlohmann::json& params, uint64_t seed,
                              const std::vector<std::string>& formats);

// The op's inputs from named tensors (each input of the op as "<name>" or "in.<name>"), each
// checked for its shape and kind (real or integer); `source` names them in messages ("file.st",
// "inputs"). *first_real_dtype receives the dtype name of the first real input ("" if none).
// InputError names the input and what was expected.
InputSet user_inputs(const Op& op, const std::string& op_name,
                     const std::map<std::string, ref::Tensor>& tensors, const std::string& source,
                     std::string* first_real_dtype = nullptr);

// The correctly rounded outputs, by output name, of the op on the inputs `in` for a kernel
// storing format f: each real output from the exact run on `in` converted to f (as
// out.<name>.<format> of a golden file), top-k indices (i64) from the run on `in` itself.
std::map<std::string, ref::Tensor> user_outputs(const Op& op, const InputSet& in, ref::Format f);

// params: "key=value" strings; a value is read as JSON when it parses (numbers, true, false,
// lists, quoted strings), else as a bare string. format: "" = the dtype of the first real input.
SafetensorsContent user_reference(const std::string& op, const std::vector<std::string>& params,
                                  const std::filesystem::path& in, const std::string& format);

}  // namespace lmo::oracle
