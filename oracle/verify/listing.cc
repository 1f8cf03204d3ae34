#include "oracle/verify/listing.h"

#include <sstream>

#include "oracle/backends/backend.h"
#include "oracle/ops/policy_table.h"
#include "oracle/ops/registry.h"
#include "oracle/rules/recipe.h"

namespace lmo::oracle {
namespace {

std::string formats_of(const Case& c) {
  std::string s;
  // Appended piece by piece: building `"," + name` as a temporary (operator+ on a const char*)
  // trips GCC 12's -Wrestrict false positive inside std::string.
  for (ref::Format f : c.formats) {
    if (!s.empty()) s += ',';
    s += ref::format_name(f);
  }
  return s;
}

}  // namespace

nlohmann::json listing_json(const std::vector<Case>& cases) {
  nlohmann::json j;
  j["oracle_ops"] = nlohmann::json::array();
  for (const OpInfo& o : op_registry()) {
    j["oracle_ops"].push_back({{"name", o.name}, {"catalog", o.catalog}, {"summary", o.summary}});
  }
  // The named recipes as the text listing has them: the ops each describes (empty: every op),
  // the points it sets, and the implementation it follows.
  j["recipes"] = nlohmann::json::array();
  for (const NamedRecipe& r : named_recipes()) {
    nlohmann::json points = nlohmann::json::object();
    for (const auto& [p, v] : r.points) points[p] = v;
    j["recipes"].push_back(
        {{"name", r.name}, {"ops", r.ops}, {"points", points}, {"source", r.source}});
  }
  j["backends"] = nlohmann::json::array();
  for (const auto& b : available_backends()) {
    j["backends"].push_back(
        {{"name", b->name()}, {"default", b->in_default_run()}, {"description", b->description()}});
  }
  j["cases"] = nlohmann::json::array();
  for (const Case& c : cases) {
    nlohmann::json formats = nlohmann::json::array();
    for (ref::Format f : c.formats) formats.push_back(std::string(ref::format_name(f)));
    j["cases"].push_back(
        {{"id", c.id}, {"op", c.op}, {"formats", formats}, {"preset", c.preset}, {"file", c.file}});
  }
  return j;
}

std::string listing_text(const std::vector<Case>& cases) {
  std::ostringstream o;
  o << "\nOracle ops (name  F-rows  summary):\n";
  for (const OpInfo& op : op_registry()) {
    o << "  " << op.name << "  " << op.catalog << "  " << op.summary << "\n";
  }
  o << "\nRounding recipes (check/verify --recipe; name  ops  points):\n";
  for (const NamedRecipe& r : named_recipes()) {
    std::string ops, points;
    for (const std::string& op : r.ops) ops += (ops.empty() ? "" : ",") + op;
    for (const auto& [p, v] : r.points) points += (points.empty() ? "" : ",") + p + "=" + v;
    o << "  " << r.name << "  " << (ops.empty() ? "every op" : ops) << "  "
      << (points.empty() ? "f32 compute, one rounding at the store" : points) << "\n";
  }
  o << "\nBackends on this machine (* = in verify's default run):\n";
  for (const auto& b : available_backends()) {
    o << "  " << (b->in_default_run() ? "* " : "  ") << b->name() << "  " << b->description()
      << "\n";
  }
  o << "\nCases (" << cases.size() << "; id  op  formats  preset):\n";
  for (const Case& c : cases) {
    o << "  " << c.id << "  " << c.op << "  " << formats_of(c)
      << (c.preset.empty() ? "" : "  " + c.preset) << "\n";
  }
  return o.str();
}

}  // namespace lmo::oracle
