// What `lmoracle list` says about the oracle itself: its ops (with the F-rows they evaluate and
// each output's tolerance policy), its backends on this machine, and the cases.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "oracle/cases/case.h"

namespace lmo::oracle {

nlohmann::json listing_json(const std::vector<Case>& cases);
std::string listing_text(const std::vector<Case>& cases);

}  // namespace lmo::oracle
