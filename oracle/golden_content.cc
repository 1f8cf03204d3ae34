#include "oracle/golden_content.h"

#include <cmath>

#include "oracle/policy_table.h"

namespace lmo::oracle {

InputSet convert_inputs(const InputSet& in, ref::Format f, bool* exact) {
  InputSet out;
  bool all_exact = true;
  for (const auto& [name, t] : in.all()) {
    if (!ref::is_float(t.dtype())) {
      out.add(name, t);
      continue;
    }
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
      j["naive_compute_format"] = "f32";
      break;
    case PolicyKind::kTopKSet:
      j["tie_margin"] = p.tie_margin;
      break;
  }
  return j;
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

}  // namespace lmo::oracle
