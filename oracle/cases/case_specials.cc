#include "oracle/cases/case_specials.h"

#include <set>

#include "oracle/core/params.h"

namespace lmo::oracle {
namespace {

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

}  // namespace

std::vector<SpecialAt> parse_input_specials(const nlohmann::json& list, int64_t numel,
                                            const std::vector<ref::Format>& formats,
                                            const std::string& file, const std::string& path) {
  if (!list.is_array() || list.empty()) {
    throw InputError(file, path, "expected a non-empty list of {\"index\": i, \"value\": name}");
  }
  std::vector<std::string> names;
  for (Special s : kAllSpecials) names.emplace_back(special_name(s));
  std::vector<SpecialAt> out;
  std::set<int64_t> seen;
  for (size_t k = 0; k < list.size(); ++k) {
    const std::string at = path + "[" + std::to_string(k) + "]";
    if (!list[k].is_object()) {
      throw InputError(file, at, "expected an object {\"index\": i, \"value\": name}");
    }
    ParamReader r(list[k], file, at);
    const int64_t index = r.integer("index", 0, numel - 1);
    const std::string value = r.choice("value", names);
    r.finish();
    if (!seen.insert(index).second)
      r.fail("index", "expected each index once, got " + std::to_string(index) + " again");
    Special kind = Special::nan;
    for (Special s : kAllSpecials) {
      if (special_name(s) == value) kind = s;
    }
    for (ref::Format f : formats) {
      if (!has_special(f, kind)) {
        r.fail("value", value + " is not a value of " + std::string(ref::format_name(f)) +
                            " (it has no infinity), one of the case's formats");
      }
    }
    out.push_back({index, kind});
  }
  return out;
}

std::vector<SpecialAt> case_input_specials(const Case& c, const InputDecl& d) {
  if (!c.inputs.is_object() || !c.inputs.contains(d.name)) return {};
  const nlohmann::json& o = c.inputs[d.name];
  if (!o.is_object() || !o.contains("specials")) return {};
  return parse_input_specials(o["specials"], element_count(d.shape), c.formats, c.file,
                              c.path + ".inputs." + d.name + ".specials");
}

}  // namespace lmo::oracle
