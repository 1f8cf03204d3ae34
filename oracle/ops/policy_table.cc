#include "oracle/ops/policy_table.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "oracle/core/op.h"
#include "oracle/ops/registry.h"

namespace lmo::oracle {
namespace {

// The table, in registry order: each record's policies, viewing the record's own strings (the
// registry lives as long as the program).
std::vector<PolicyEntry> build_table() {
  std::vector<PolicyEntry> t;
  for (const OpInfo& o : op_registry()) {
    if (o.policies.empty()) throw std::logic_error("op '" + o.name + "' has no tolerance policy");
    for (const OutputPolicy& p : o.policies) {
      t.push_back({o.name, p.output, p.policy, p.justification});
    }
  }
  return t;
}

const std::vector<PolicyEntry>& table() {
  static const std::vector<PolicyEntry> t = build_table();
  return t;
}

std::string known_ops() {
  std::string s;
  std::string_view last;
  for (const PolicyEntry& e : table()) {
    if (e.op == last) continue;
    if (!s.empty()) s += ", ";
    s += e.op;
    last = e.op;
  }
  return s;
}

}  // namespace

std::span<const PolicyEntry> policy_table() { return table(); }

const PolicyEntry& policy_entry(std::string_view op, std::string_view output) {
  const PolicyEntry* fallback = nullptr;
  std::string outputs;
  bool known = false;
  for (const PolicyEntry& e : table()) {
    if (e.op != op) continue;
    known = true;
    if (!output.empty() && e.output == output) return e;
    if (e.output.empty()) {
      fallback = &e;
    } else {
      if (!outputs.empty()) outputs += ", ";
      outputs += e.output;
    }
  }
  if (!known) {
    throw std::invalid_argument("no tolerance policy for op '" + std::string(op) +
                                "'; known ops: " + known_ops());
  }
  if (fallback) return *fallback;
  throw std::invalid_argument("op '" + std::string(op) + "' has outputs judged differently (" +
                              outputs + "); got output '" + std::string(output) +
                              "', expected one of them");
}

}  // namespace lmo::oracle
