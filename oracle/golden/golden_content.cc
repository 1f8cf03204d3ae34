#include "oracle/golden/golden_content.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>

#include "oracle/core/certified.h"
#include "oracle/core/row_slice.h"
#include "oracle/core/sha256.h"
#include "oracle/core/version.h"
#include "oracle/ops/policy_table.h"
#include "oracle/judge/rounded_output.h"
#include "oracle/ops/registry.h"
#include "reference/ball_rounding.h"
#include "reference/parallel.h"

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
    if (t.dtype() == ref::format_dtype(f)) {  // already in f: the same values
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
    if (describes(r, c.op)) named.push_back(r.name);
  }
  nlohmann::json points = nlohmann::json::array();
  for (const RoundingPoint& p : op.rounding_points()) {
    points.push_back(
        {{"name", p.name},
         {"values", p.choices.empty() ? nlohmann::json("format") : nlohmann::json(p.choices)},
         {"strict", p.strict},
         {"what", p.what}});
  }
  return {{"declared", with_implied_points(c.recipe, c.op, op).text()},
          {"named", named},
          {"points", points},
          {"ftz", true},
          {"fma", true}};
}

std::string golden_output_name(const OutputDecl& d, ref::Format f) {
  return "out." + d.name + "." + (d.topk ? std::string("i64") : std::string(ref::format_name(f)));
}

SafetensorsContent golden_file_content(const Case& c, const Op& op, const InputSet& in,
                                       std::string_view input_format) {
  SafetensorsContent out;
  for (const auto& [name, t] : in.all()) out.tensors.emplace("in." + name, t);
  const std::vector<OutputDecl> decls = op.outputs();
  // A kernel storing format f reads its inputs in f; where the conversion is exact (f at least
  // as wide as every input) those are the given inputs and their exact run is reused. A case
  // with its own input_format: every output format on those very inputs.
  std::vector<std::optional<InputSet>> converted(c.formats.size());
  bool all_same = true;
  for (size_t i = 0; i < c.formats.size(); ++i) {
    if (c.input_format) continue;
    bool same = true;
    bool stored = true;  // every real input already in the format: nothing to convert
    for (const auto& [name, t] : in.all()) {
      stored =
          stored && (!ref::is_float(t.dtype()) || t.dtype() == ref::format_dtype(c.formats[i]));
    }
    if (stored) continue;
    InputSet conv = convert_inputs(op, in, c.formats[i], &same);
    if (!same) converted[i] = std::move(conv);
    all_same = all_same && same;
  }
  const int64_t block = all_same ? rows_per_block(op, decls) : 0;
  if (block > 0) {
    // Blocks of rows: each output tensor filled block by block, the exact values of one block
    // alive at a time (the bytes are the whole op's: its rows are independent).
    std::map<std::string, ref::Tensor> tensors;
    const auto add = [&](size_t k, ref::Format of) {
      tensors.emplace(golden_output_name(decls[k], of),
                      ref::Tensor(ref::format_dtype(of), decls[k].shape));
    };
    for (size_t k = 0; k < decls.size(); ++k) {
      for (ref::Format f : c.formats) add(k, output_format(decls[k], f));
      add(k, ref::Format::f64);
    }
    const int64_t rows = op.independent_rows();
    for (int64_t b = 0; b < rows; b += block) {
      const int64_t e = std::min(rows, b + block);
      const std::unique_ptr<Op> part = op.with_rows(e - b);
      const ExactValues v = exact_values(*part, row_slice(op, in, rows, b, e), c.formats);
      for (size_t k = 0; k < decls.size(); ++k) {
        const int64_t offset = b * (ref::checked_numel(decls[k].shape) / rows);
        for (ref::Format f : c.formats) {
          const ref::Format of = output_format(decls[k], f);
          put_rounded(tensors.at(golden_output_name(decls[k], of)), offset, decls[k], v, k, of);
        }
        put_rounded(tensors.at(golden_output_name(decls[k], ref::Format::f64)), offset, decls[k], v,
                    k, ref::Format::f64);
      }
    }
    for (auto& [name, t] : tensors) out.tensors.emplace(name, std::move(t));
  } else {
    const ExactValues given = exact_values(op, in, c.formats);
    for (size_t i = 0; i < c.formats.size(); ++i) {
      const ExactValues other =
          converted[i] ? exact_values(op, *converted[i], c.formats) : ExactValues{};
      const ExactValues& exact = converted[i] ? other : given;
      for (size_t k = 0; k < decls.size(); ++k) {
        if (decls[k].topk) continue;
        const ref::Format of = output_format(decls[k], c.formats[i]);
        out.tensors.emplace(golden_output_name(decls[k], of),
                            rounded_output(decls[k], exact, k, of));
      }
    }
    for (size_t k = 0; k < decls.size(); ++k) {
      // out.<name>.f64 for users' own metrics; top-k indices have no format and are stored
      // once, out.<name>.i64, the selection on the inputs as the file holds them.
      out.tensors.emplace(golden_output_name(decls[k], ref::Format::f64),
                          rounded_output(decls[k], given, k, ref::Format::f64));
    }
  }
  nlohmann::json policies = nlohmann::json::object();
  for (const OutputDecl& d : decls) policies[d.name] = policy_json(c.op, d.name);
  out.metadata["case"] = c.source.dump();
  out.metadata["input_format"] = std::string(input_format);
  out.metadata["reference"] =
      "mp: MPFR with 50 decimal digits (166 bits); every output correctly rounded once from it";
  out.metadata["policy"] = policies.dump();
  out.metadata["recipes"] = recipes_json(c, op).dump();
  out.metadata["version"] = version();
  return out;
}

SafetensorsContent inputs_only_content(const Case& c, const InputSet& in,
                                       std::string_view input_format) {
  SafetensorsContent out;
  for (const auto& [name, t] : in.all()) out.tensors.emplace("in." + name, t);
  out.metadata["case"] = c.source.dump();
  out.metadata["input_format"] = std::string(input_format);
  out.metadata["version"] = version();
  out.metadata["inputs_only"] = "true";
  out.metadata["inputs_sha256"] = inputs_sha256(out);
  return out;
}

std::string inputs_sha256(const SafetensorsContent& content) {
  Sha256 h;
  for (const auto& [key, t] : content.tensors) {  // a map: in name order
    if (!key.starts_with("in.")) continue;
    std::string head = key + "\n" + std::string(ref::dtype_name(t.dtype()));
    for (int64_t e : t.shape()) head += " " + std::to_string(e);
    h.update(std::string_view(head + "\n"));
    h.update(t.bytes());
  }
  return to_hex(h.finish());
}

bool is_inputs_only(const SafetensorsContent& content) {
  const auto it = content.metadata.find("inputs_only");
  return it != content.metadata.end() && it->second == "true";
}

}  // namespace lmo::oracle
