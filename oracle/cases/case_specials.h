// Special values (NaN, ±inf, ±0, the format's extremes) at chosen elements of a case's input:
// the "specials" list of an input override,
//   "inputs": {"z": {"specials": [{"index": 3, "value": "neg_inf"}, {"index": 5, "value": "nan"}]}}
// placed over the drawn values (the override's "dist" may be given too, or left to the op's).
// This is how a case file, and so `verify`, `golden` and `check`, carries the inputs that
// docs/nan-inf.md tables. Values are oracle/core/specials.h's names; an index is a flat row-major
// element index of the input.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "oracle/cases/case.h"
#include "oracle/core/op.h"
#include "oracle/core/specials.h"

namespace lmo::oracle {

// Parses and checks one "specials" list for an input of `numel` elements: each entry an object
// {"index": i, "value": name} with 0 <= i < numel, no index twice, and a value every format of
// the case has (e4m3 has no infinity). InputError names file, path[k] and the expectation.
std::vector<SpecialAt> parse_input_specials(const nlohmann::json& list, int64_t numel,
                                            const std::vector<ref::Format>& formats,
                                            const std::string& file, const std::string& path);

// The checked specials of input d of case c (empty when its override has none).
std::vector<SpecialAt> case_input_specials(const Case& c, const InputDecl& d);

}  // namespace lmo::oracle
