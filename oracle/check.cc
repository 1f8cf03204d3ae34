#include "oracle/check.h"

#include <cstdio>

#include "oracle/case.h"
#include "oracle/golden_content.h"
#include "oracle/policy_table.h"
#include "oracle/safetensors.h"

namespace lmo::oracle {
namespace {

std::string num(double x) {
  char b[40];
  std::snprintf(b, sizeof b, "%.9g", x);
  return b;
}

std::string bound_text(const Policy& p, ref::Format f, const Verdict& v) {
  switch (p.kind) {
    case PolicyKind::kUlp:
      return std::to_string(p.max_ulps(f)) + " ulp" +
             (p.midpoint_margin > 0 ? " (+1 within " + num(p.midpoint_margin) +
                                          " ulp of a midpoint)"
                                    : "") +
             (p.arg_error > 0 ? " + the argument's rounding × κ" : "");
    case PolicyKind::kNaiveRelative:
      return "round(x ± B), B = " + num(p.naive_factor) + "·max|naive f32 − x| (≤ " +
             num(v.naive_bound) + ")";
    case PolicyKind::kTopKSet:
      return "same set; ties within " + num(p.tie_margin) + " of the row's scale";
  }
  return "";
}

}  // namespace

CheckReport check_golden(const std::filesystem::path& golden, const std::filesystem::path& actual) {
  const SafetensorsContent g = read_safetensors(golden);
  const SafetensorsContent a = read_safetensors(actual);
  const std::string gname = golden.string();
  const auto meta = g.metadata.find("case");
  if (meta == g.metadata.end()) {
    throw InputError(gname, "__metadata__.case",
                     "expected the case JSON (is this a golden file written by lmoracle golden?)");
  }
  nlohmann::json case_json;
  try {
    case_json = nlohmann::json::parse(meta->second);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(gname, "__metadata__.case", std::string("expected JSON: ") + e.what());
  }
  const Case c = parse_case(case_json, gname, "__metadata__.case");
  const std::unique_ptr<Op> op = make_op(c);

  // The inputs as the golden file holds them.
  InputSet in;
  for (const InputDecl& d : op->inputs()) {
    const auto it = g.tensors.find("in." + d.name);
    if (it == g.tensors.end()) {
      throw InputError(gname, "in." + d.name, "expected the input tensor, but it is missing");
    }
    if (it->second.shape() != d.shape) {
      throw InputError(gname, "in." + d.name, "the shape does not match the case");
    }
    in.add(d.name, it->second);
  }

  CheckReport r;
  r.case_id = c.id;
  const std::vector<OutputDecl> decls = op->outputs();
  for (size_t k = 0; k < decls.size(); ++k) {
    const OutputDecl& d = decls[k];
    const std::string key = "out." + d.name;
    const auto it = a.tensors.find(key);
    if (it == a.tensors.end()) {
      std::string have;
      for (const auto& [n, _] : a.tensors) have += (have.empty() ? "" : ", ") + n;
      throw InputError(actual.string(), key,
                       "expected the kernel's output tensor, but it is missing (the file has: " +
                           (have.empty() ? std::string("nothing") : have) + ")");
    }
    const ref::Tensor& got = it->second;
    if (got.shape() != d.shape) {
      std::string want;
      for (int64_t e : d.shape) want += (want.empty() ? "" : ", ") + std::to_string(e);
      throw InputError(actual.string(), key, "expected the shape [" + want + "]");
    }
    const Policy& policy = policy_for(c.op, d.name);
    CheckedOutput co;
    co.name = d.name;
    if (d.topk) {
      if (got.dtype() != ref::DType::i64 && got.dtype() != ref::DType::i32) {
        throw InputError(actual.string(), key, "expected expert indices as I64 or I32");
      }
      co.format = std::string(ref::dtype_name(got.dtype()));
      const Outputs<ref::mp> exact = op->exact(in);
      co.verdict = judge_topk(policy, exact[k].values, d.topk_experts, exact[k].indices, got);
    } else {
      if (!ref::is_float(got.dtype())) {
        throw InputError(actual.string(), key, "expected a floating-point output");
      }
      const ref::Format f = ref::dtype_format(got.dtype());
      co.format = std::string(ref::format_name(f));
      const auto gold = g.tensors.find(key + "." + co.format);
      if (gold == g.tensors.end()) {
        std::string formats;
        for (ref::Format cf : c.formats) {
          formats += (formats.empty() ? "" : ", ") + std::string(ref::format_name(cf));
        }
        throw InputError(actual.string(), key,
                         "the golden file has no " + co.format + " output (it has: " + formats +
                             "); write the kernel's output in one of those");
      }
      const InputSet conv = convert_inputs(in, f);
      const Outputs<ref::mp> exact = op->exact(conv);
      if (rounded_output(d, exact[k], f) != gold->second) {
        throw InputError(gname, key + "." + co.format,
                         "the golden values are not the correct rounding of the case's reference "
                         "(the file was damaged or edited)");
      }
      JudgeOptions jo;
      jo.group = d.group;
      jo.condition = exact[k].condition;
      Outputs<double> naive;
      if (policy.kind == PolicyKind::kNaiveRelative) {
        naive = op->simulated(ref::Format::f32, conv);
        jo.naive = naive[k].values;
      }
      co.verdict = judge(policy, exact[k].values, got, jo);
      co.bound = bound_text(policy, f, co.verdict);
      const int64_t w = co.verdict.metrics.max_ulps_index;
      if (w >= 0) {
        co.worst_index = w;
        co.worst_actual = got.get(w);
        co.worst_expected = gold->second.get(w);
        co.worst_ulps = co.verdict.metrics.max_ulps;
      }
    }
    r.pass = r.pass && co.verdict.pass;
    r.outputs.push_back(std::move(co));
  }
  return r;
}

std::string to_text(const CheckReport& r) {
  std::string s = "case " + r.case_id + "\n";
  for (const CheckedOutput& o : r.outputs) {
    s += "  out." + o.name + " (" + o.format + "): " + (o.verdict.pass ? "pass" : "FAIL") + ", " +
         std::to_string(o.verdict.failed) + " of " + std::to_string(o.verdict.elements) +
         " elements fail";
    if (o.worst_index >= 0) {
      s += "; worst element " + std::to_string(o.worst_index) + ": actual " +
           num(o.worst_actual) + ", expected " + num(o.worst_expected) + ", " +
           std::to_string(o.worst_ulps) + " ulp";
    }
    if (!o.bound.empty()) s += "; bound " + o.bound;
    s += "\n";
    if (!o.verdict.pass) s += "    first failure: " + o.verdict.detail + "\n";
  }
  s += std::string("check: ") + (r.pass ? "pass" : "FAIL") + "\n";
  return s;
}

nlohmann::json to_json(const CheckReport& r) {
  nlohmann::json outs = nlohmann::json::array();
  for (const CheckedOutput& o : r.outputs) {
    outs.push_back(nlohmann::json{{"name", o.name},
                                  {"format", o.format},
                                  {"pass", o.verdict.pass},
                                  {"failed", o.verdict.failed},
                                  {"elements", o.verdict.elements},
                                  {"worst_index", o.worst_index},
                                  {"worst_actual", o.worst_actual},
                                  {"worst_expected", o.worst_expected},
                                  {"worst_ulps", o.worst_ulps},
                                  {"bound", o.bound},
                                  {"detail", o.verdict.detail}});
  }
  return {{"case", r.case_id}, {"pass", r.pass}, {"outputs", outs}};
}

}  // namespace lmo::oracle
