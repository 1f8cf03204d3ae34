#include "oracle/golden/golden_content.h"

#include <algorithm>
#include <cmath>

#include "oracle/core/certified.h"
#include "oracle/core/version.h"
#include "oracle/judge/policy_table.h"

namespace lmo::oracle {

InputSet convert_inputs(const Op& op, const InputSet& in, ref::Format f, bool* exact) {
  // Inputs whose dtype the op fixes (integers, an f32 RoPE table, fp8 values and their f32
  // scales) are read in it whatever the storage format (make_inputs): kept as they are.
  std::vector<std::string> fixed;
  for (const InputDecl& d : op.inputs()) {
    if (d.dtype) fixed.push_back(d.name);
  }
  InputSet out;
  bool all_exact = true;
  for (const auto& [name, t] : in.all()) {
    if (!ref::is_float(t.dtype()) || std::find(fixed.begin(), fixed.end(), name) != fixed.end()) {
      out.add(name, t);
      continue;
    }
    // Tensor::set rounds to nearest-even from the double, which holds every stored value of
    // every format exactly: one rounding, no double rounding.
    ref::Tensor c(ref::format_dtype(f), t.shape());
    for (int64_t i = 0; i < t.numel(); ++i) {
      const double v = t.get(i);
      c.set(i, v);
      all_exact = all_exact && (c.get(i) == v || (std::isnan(v) && std::isnan(c.get(i))));
    }
    out.add(name, std::move(c));
  }
  if (exact) *exact = all_exact;
  return out;
}

nlohmann::json policy_json(const std::string& op, const std::string& output) {
  const PolicyEntry& e = policy_entry(op, output);
  const Policy& p = e.policy;
  nlohmann::json j = {{"kind", std::string(policy_kind_name(p.kind))},
                      {"justification", std::string(e.justification)}};
  switch (p.kind) {
    case PolicyKind::kUlp:
      j["ulps_wide"] = p.ulps_wide;
      j["ulps_narrow"] = p.ulps_narrow;
      j["midpoint_margin"] = p.midpoint_margin;
      j["arg_error"] = p.arg_error;
      break;
    case PolicyKind::kNaiveRelative:
      j["naive_factor"] = p.naive_factor;
      j["output_ulps"] = p.output_ulps;
      j["compute_ulps"] = p.compute_ulps;
      if (p.error_scale > 0) j["error_scale"] = p.error_scale;
      j["naive_compute_format"] = "f32";
      break;
    case PolicyKind::kTopKSet:
      j["tie_margin"] = p.tie_margin;
      break;
  }
  return j;
}

nlohmann::json recipes_json(const Case& c, const Op& op) {
  // What `check --recipe` can judge this file's outputs under (recipe.h): the case's own
  // recipe, the named recipes for its op, and the op's rounding points for custom ones.
  nlohmann::json named = nlohmann::json::array();
  for (const NamedRecipe& r : named_recipes()) {
    bool applies = r.ops.empty();
    for (const std::string& o : r.ops) applies = applies || o == c.op;
    if (applies) named.push_back(r.name);
  }
  nlohmann::json points = nlohmann::json::array();
  for (const RoundingPoint& p : op.rounding_points()) {
    points.push_back({{"name", p.name},
                      {"values", p.choices.empty() ? nlohmann::json("format")
                                                   : nlohmann::json(p.choices)},
                      {"strict", p.strict},
                      {"what", p.what}});
  }
  return {{"declared", with_implied_points(c.recipe, c.op, op).text()},
          {"named", named},
          {"points", points},
          {"ftz", true},
          {"fma", true}};
}

ref::Tensor rounded_output(const OutputDecl& d, const OutputValues<ref::mp>& v, ref::Format f) {
  if (d.topk) {
    ref::Tensor t(ref::DType::i64, d.shape);
    for (int64_t i = 0; i < t.numel(); ++i) {
      t.set(i, static_cast<double>(v.indices.at(static_cast<size_t>(i))));
    }
    return t;
  }
  ref::Tensor t(ref::format_dtype(f), d.shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    t.set_bits(i, ref::encode(f, v.values.at(static_cast<size_t>(i))));
  }
  return t;
}

std::string golden_output_name(const OutputDecl& d, ref::Format f) {
  return "out." + d.name + "." + (d.topk ? std::string("i64") : std::string(ref::format_name(f)));
}

SafetensorsContent golden_file_content(const Case& c, const Op& op, const InputSet& in,
                                       std::string_view input_format) {
  SafetensorsContent out;
  for (const auto& [name, t] : in.all()) out.tensors.emplace("in." + name, t);
  const std::vector<OutputDecl> decls = op.outputs();
  const Outputs<ref::mp> exact_given = exact_outputs(op, in, c.formats);
  for (ref::Format f : c.formats) {
    // A kernel storing format f reads its inputs in f; where the conversion is exact (f at
    // least as wide as every input) those are the given inputs and their exact run is reused.
    // A case with its own input_format: every output format on those very inputs.
    bool same_inputs = true;
    const InputSet converted =
        c.input_format ? InputSet{} : convert_inputs(op, in, f, &same_inputs);
    const Outputs<ref::mp> other =
        same_inputs ? Outputs<ref::mp>{} : exact_outputs(op, converted, c.formats);
    const Outputs<ref::mp>& exact = same_inputs ? exact_given : other;
    for (size_t k = 0; k < decls.size(); ++k) {
      if (decls[k].topk) continue;
      const ref::Format of = output_format(decls[k], f);
      out.tensors.emplace(golden_output_name(decls[k], of), rounded_output(decls[k], exact[k], of));
    }
  }
  nlohmann::json policies = nlohmann::json::object();
  for (size_t k = 0; k < decls.size(); ++k) {
    // out.<name>.f64 for users' own metrics; top-k indices have no format and are stored
    // once, out.<name>.i64, the selection on the inputs as the file holds them.
    out.tensors.emplace(golden_output_name(decls[k], ref::Format::f64),
                        rounded_output(decls[k], exact_given[k], ref::Format::f64));
    policies[decls[k].name] = policy_json(c.op, decls[k].name);
  }
  out.metadata["case"] = c.source.dump();
  out.metadata["input_format"] = std::string(input_format);
  out.metadata["reference"] =
      "mp: MPFR with 50 decimal digits (166 bits); every output correctly rounded once from it";
  out.metadata["policy"] = policies.dump();
  out.metadata["recipes"] = recipes_json(c, op).dump();
  out.metadata["version"] = version();
  return out;
}

}  // namespace lmo::oracle
