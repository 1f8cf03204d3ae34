// The content of a golden file (golden.h describes the layout), shared by `golden`, `check`
// and `ref`: the inputs converted to another storage format, an output's policy as JSON, the
// exact outputs rounded into tensors, and the whole file of one case on given inputs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "oracle/cases/case.h"
#include "oracle/core/certified.h"
#include "oracle/core/op.h"
#include "oracle/golden/safetensors.h"
#include "oracle/judge/rounded_output.h"
#include "oracle/rules/policy.h"

namespace lmo::oracle {

// The real inputs of op converted to format f with round-to-nearest-even (integer inputs and
// those whose dtype the op fixes unchanged). exact is set to whether every value converted
// exactly.
InputSet convert_inputs(const Op& op, const InputSet& in, ref::Format f, bool* exact = nullptr);

// {"kind": ..., constants of that kind..., "justification": ...}
nlohmann::json policy_json(const std::string& op, const std::string& output);
// The golden file's "recipes" metadata: the case's recipe, the op's named recipes and its
// rounding points (recipe.h).
nlohmann::json recipes_json(const Case& c, const Op& op);

// golden_file_content evaluates an op with independent rows (Op::independent_rows) in blocks of
// rows when its outputs hold more than row_block_elements() elements (row_slice.h).

// The golden file of case c (op made from it) on the inputs `in`: in.<name> as given,
// out.<name>.<format> for each of c.formats on `in` converted to that format,
// out.<name>.f64 on `in` itself, top-k indices once as out.<name>.i64 (on `in`), and the
// metadata (case JSON, input_format, reference precision, policies, version).
SafetensorsContent golden_file_content(const Case& c, const Op& op, const InputSet& in,
                                       std::string_view input_format);

// An inputs-only golden file (`golden --inputs-only`): the in.<name> tensors and the metadata
// (case JSON, input_format, version), marked "inputs_only", with "inputs_sha256" so that `check`
// refuses inputs edited after the file was written. A challenge: no answer lies next to the
// inputs, and check computes the expected values only after it has read the kernel's.
SafetensorsContent inputs_only_content(const Case& c, const InputSet& in,
                                       std::string_view input_format);
// The SHA-256 (hex) of a file's in.<name> tensors: each name, dtype, shape and bytes, in name
// order.
std::string inputs_sha256(const SafetensorsContent& content);
// Whether the file was written by `golden --inputs-only`.
bool is_inputs_only(const SafetensorsContent& content);

// The name of a golden output tensor: out.<name>.<format>, or out.<name>.i64 for top-k indices.
std::string golden_output_name(const OutputDecl& d, ref::Format f);

}  // namespace lmo::oracle
