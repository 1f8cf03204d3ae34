// Pieces shared by `golden`, `check` and `ref`: the inputs of a golden file converted to another
// storage format, an output's policy as JSON, and the exact outputs rounded into tensors.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "oracle/op.h"
#include "oracle/policy.h"

namespace lmo::oracle {

// The real inputs converted to format f with round-to-nearest-even (integer inputs unchanged).
// exact is set to whether every value converted exactly.
InputSet convert_inputs(const InputSet& in, ref::Format f, bool* exact = nullptr);

// {"kind": ..., constants of that kind..., "justification": ...}
nlohmann::json policy_json(const std::string& op, const std::string& output);

// Output k of the exact values rounded once to f (indices for a top-k output: i64).
ref::Tensor rounded_output(const OutputDecl& d, const OutputValues<ref::mp>& v, ref::Format f);

}  // namespace lmo::oracle
