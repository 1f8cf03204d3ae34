// Cases: the built-in test cases in cases/*.json and any case file a user passes. A file is
//   {"cases": [ {case}, ... ]}        (an optional top-level "comment" string is allowed)
// and a case is
//   {"id": "rmsnorm/llama3-8b",        stable, unique over all files: [a-z0-9][a-z0-9._/-]*
//    "op": "rmsnorm",                  an op of the registry (oracle/core/op.h)
//    "seed": 1,                        the inputs' Philox key (oracle/core/inputs.h)
//    "formats": ["f32", "bf16"],       storage formats to run, each a format name
//    "params": {...},                  the op's parameters (checked by the op)
//    "preset": "llama3-8b",            optional: the M-row preset the shapes come from
//    "reduction": "...",               optional: how the preset's shapes were reduced and why
//    "description": "...",             optional
//    "inputs": {"x": {"dist": "normal", "mean": 3, "std": 1}}}   optional distribution overrides
//                                      ("uniform": "lo", "hi") for the op's real inputs
//                                      and "specials": [{"index": 3, "value": "nan"}, ...]
//                                      (case_specials.h: NaN, ±inf, ±0 … at chosen elements)
// Anything else is an error (InputError: file, field, expectation; exit code 2).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "oracle/core/case_error.h"
#include "oracle/core/op.h"
#include "oracle/rules/recipe.h"
#include "reference/formats.h"

namespace lmo::oracle {

struct Case {
  std::string file;  // where it was read, for messages
  std::string path;  // its field path in the file, "cases[3]"
  std::string id;
  std::string op;
  uint64_t seed = 0;
  std::vector<ref::Format> formats;
  std::string preset;
  std::string reduction;
  std::string description;
  nlohmann::json params;
  nlohmann::json inputs;  // the overrides, an object (possibly empty)
  nlohmann::json source;  // the case object exactly as read
  // The rounding recipe its kernels declare (recipe.h): how `verify` and `check` judge them.
  Recipe recipe;
  // The format of its real inputs when it differs from the outputs' (f32 inputs, bf16 outputs):
  // inputs are drawn in it for every storage format, and the reference of each output format is
  // taken on them as they are. Empty: inputs in each storage format.
  std::optional<ref::Format> input_format;
};

// Parses and checks one case object (file and path are for messages).
Case parse_case(const nlohmann::json& o, const std::string& file, const std::string& path);
// Parses and checks one file (every case's op and parameters included).
std::vector<Case> load_case_file(const std::string& file);
// The same on a file's text (file names it in messages): what load_case_file does after reading.
std::vector<Case> parse_case_document(std::string_view text, const std::string& file);
// Every *.json in dir, in file-name order; IDs must be unique over all of them.
std::vector<Case> load_case_dir(const std::string& dir);
// The built-in cases folder (the source tree's cases/, or $LMO_CASES_DIR when set).
std::string builtin_cases_dir();

// The op with the case's parameters; InputError names the parameter.
std::unique_ptr<Op> make_op(const Case& c);
// The op's input declarations with the case's overrides applied.
std::vector<InputDecl> case_inputs(const Case& c, const Op& op);

}  // namespace lmo::oracle
