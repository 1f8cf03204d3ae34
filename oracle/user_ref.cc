#include "oracle/user_ref.h"

#include "oracle/case.h"
#include "oracle/golden_content.h"
#include "oracle/system_info.h"

namespace lmo::oracle {

SafetensorsContent user_reference(const std::string& op_name,
                                  const std::vector<std::string>& params,
                                  const std::filesystem::path& in_path,
                                  const std::string& format) {
  nlohmann::json p = nlohmann::json::object();
  for (const std::string& kv : params) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw InputError("command line", "--param", "expected KEY=VALUE, got \"" + kv + "\"");
    }
    const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
    try {
      p[key] = nlohmann::json::parse(value);
    } catch (const nlohmann::json::exception&) {
      p[key] = value;
    }
  }
  const SafetensorsContent file = read_safetensors(in_path);
  const std::string fname = in_path.string();
  // The format: asked for, or the first real input's.
  std::string fmt = format;
  nlohmann::json c = {{"id", "ref/" + op_name}, {"op", op_name}, {"seed", 0},
                      {"formats", {"f32"}}, {"params", p}};
  const Case probe = parse_case(c, "command line", "--op/--param");
  const std::unique_ptr<Op> op = make_op(probe);
  InputSet in;
  for (const InputDecl& d : op->inputs()) {
    auto it = file.tensors.find(d.name);
    if (it == file.tensors.end()) it = file.tensors.find("in." + d.name);
    if (it == file.tensors.end()) {
      throw InputError(fname, d.name,
                       "expected the input tensor \"" + d.name + "\" (or \"in." + d.name +
                           "\") of op " + op_name + ", but it is missing");
    }
    const ref::Tensor& t = it->second;
    if (t.shape() != d.shape) {
      std::string want;
      for (int64_t e : d.shape) want += (want.empty() ? "" : ", ") + std::to_string(e);
      throw InputError(fname, it->first, "expected the shape [" + want + "] the parameters imply");
    }
    const bool want_float = !d.dtype || ref::is_float(*d.dtype);  // a fixed dtype may be real
    if (want_float != ref::is_float(t.dtype())) {
      throw InputError(fname, it->first,
                       want_float ? "expected floating point" : "expected integers (I64, I32 or U8)");
    }
    if (!d.dtype && fmt.empty()) fmt = std::string(ref::dtype_name(t.dtype()));
    in.add(d.name, t);
  }
  if (fmt.empty()) fmt = "f32";
  const auto dt = ref::parse_dtype(fmt);
  if (!dt || !ref::is_float(*dt)) {
    throw InputError("command line", "--format",
                     "expected a format name (f64, f32, tf32, bf16, f16, e4m3, e5m2), got \"" +
                         fmt + "\"");
  }
  const ref::Format f = ref::dtype_format(*dt);
  c["formats"] = {std::string(ref::format_name(f))};
  SafetensorsContent out;
  for (const auto& [name, t] : in.all()) out.tensors.emplace("in." + name, t);
  const Outputs<ref::mp> exact = op->exact(in);
  nlohmann::json policies = nlohmann::json::object();
  const std::vector<OutputDecl> decls = op->outputs();
  const InputSet conv = convert_inputs(in, f);
  const Outputs<ref::mp> exact_f = op->exact(conv);
  for (size_t k = 0; k < decls.size(); ++k) {
    const OutputDecl& d = decls[k];
    out.tensors.emplace("out." + d.name + "." + (d.topk ? "i64" : std::string(ref::format_name(f))),
                        rounded_output(d, exact_f[k], f));
    if (!d.topk) {
      out.tensors.emplace("out." + d.name + ".f64", rounded_output(d, exact[k], ref::Format::f64));
    }
    policies[d.name] = policy_json(op_name, d.name);
  }
  out.metadata["case"] = c.dump();
  out.metadata["input_format"] = "as given";
  out.metadata["reference"] =
      "mp: MPFR with 50 decimal digits (166 bits); every output correctly rounded once";
  out.metadata["policy"] = policies.dump();
  out.metadata["version"] = version();
  return out;
}

}  // namespace lmo::oracle
