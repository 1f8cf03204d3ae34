// The table of tolerance policies: every op of the registry with its policies, their constants
// and a one-line justification each, derived from the ops' records (OpInfo::policies,
// oracle/core/op.h; written in oracle/ops/<family>.cc). Policies: oracle/rules/policy.h.
#pragma once

#include <span>
#include <string_view>

#include "oracle/rules/policy.h"

namespace lmo::oracle {

struct PolicyEntry {
  std::string_view op;      // the registry's op name
  std::string_view output;  // the output it covers; "" = every output of the op
  Policy policy;
  std::string_view justification;  // one line: why this policy and these constants
};

// All entries, in registry order.
std::span<const PolicyEntry> policy_table();

// The entry for (op, output): the row naming that output, else the op's "" row. Throws
// std::invalid_argument for an unknown op (the message lists every known op), or for an output
// the op does not declare when it has no "" row (the message lists the op's outputs; an op with
// several differently judged outputs, such as moe_router, needs the output named).
const PolicyEntry& policy_entry(std::string_view op, std::string_view output = {});
inline const Policy& policy_for(std::string_view op, std::string_view output = {}) {
  return policy_entry(op, output).policy;
}

}  // namespace lmo::oracle
