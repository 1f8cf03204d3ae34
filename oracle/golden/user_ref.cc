#include "oracle/golden/user_ref.h"

#include <cstdio>

#include "oracle/core/certified.h"
#include "oracle/core/utf8.h"
#include "oracle/golden/golden_content.h"

namespace lmo::oracle {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s;
  for (int64_t e : shape) s += (s.empty() ? "" : ", ") + std::to_string(e);
  return "[" + s + "]";
}

}  // namespace

nlohmann::json user_case_json(const std::string& op_name, const std::vector<std::string>& params) {
  // Arguments are arbitrary bytes, but the case they become is JSON text, which must be UTF-8
  // (nlohmann's dump throws on anything else, deep inside the messages about the case).
  const auto require_utf8 = [](const std::string& text, const char* field) {
    if (const auto bad = first_invalid_utf8(text)) {
      throw InputError("command line", field,
                       "expected UTF-8 text, but byte " + std::to_string(*bad) + " of " +
                           quote_for_message(text) + " is not well-formed UTF-8");
    }
  };
  require_utf8(op_name, "--op");
  nlohmann::json p = nlohmann::json::object();
  for (const std::string& kv : params) {
    require_utf8(kv, "--param");
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw InputError("command line", "--param", "expected KEY=VALUE, got " + quote_for_message(kv));
    }
    const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
    try {
      p[key] = nlohmann::json::parse(value);
    } catch (const nlohmann::json::exception&) {
      p[key] = value;
    }
  }
  return user_case_json(op_name, p, 0, {"f32"});
}

nlohmann::json user_case_json(const std::string& op_name, const nlohmann::json& params,
                              uint64_t seed, const std::vector<std::string>& formats) {
  if (!params.is_object()) {
    throw InputError("parameters", "params", "expected an object of named parameters");
  }
  return {{"id", "ref/" + op_name}, {"op", op_name}, {"seed", seed}, {"formats", formats},
          {"params", params}};
}

InputSet user_inputs(const Op& op, const std::string& op_name,
                     const std::map<std::string, ref::Tensor>& tensors, const std::string& source,
                     std::string* first_real_dtype) {
  if (first_real_dtype) first_real_dtype->clear();
  InputSet in;
  for (const InputDecl& d : op.inputs()) {
    auto it = tensors.find(d.name);
    if (it == tensors.end()) it = tensors.find("in." + d.name);
    if (it == tensors.end()) {
      std::string have;
      for (const auto& [n, _] : tensors) have += (have.empty() ? "" : ", ") + n;
      throw InputError(source, d.name,
                       "expected the input tensor \"" + d.name + "\" (or \"in." + d.name +
                           "\") of op " + op_name + ", but it is missing (there is: " +
                           (have.empty() ? std::string("nothing") : have) + ")");
    }
    const ref::Tensor& t = it->second;
    if (t.shape() != d.shape) {
      throw InputError(source, it->first,
                       "expected the shape " + shape_text(d.shape) + " the parameters imply, got " +
                           shape_text(t.shape()));
    }
    const bool want_float = !d.dtype || ref::is_float(*d.dtype);  // a fixed dtype may be real
    if (want_float != ref::is_float(t.dtype())) {
      throw InputError(source, it->first,
                       want_float ? "expected floating point (F64, F32, F16, BF16, F8_E4M3, F8_E5M2)"
                                  : "expected integers (I64, I32 or U8)");
    }
    if (d.bounded) {
      for (int64_t i = 0; i < t.numel(); ++i) {
        const double v = t.get(i);
        if (!(v >= d.a && v < d.b)) {
          char range[96];
          std::snprintf(range, sizeof range, "[%.0f, %.0f)", d.a, d.b);
          throw InputError(source, it->first,
                           "element " + std::to_string(i) + " is " + std::to_string(int64_t(v)) +
                               ", expected integers in " + range + " as the parameters of op " +
                               op_name + " imply");
        }
      }
    }
    if (first_real_dtype && !d.dtype && first_real_dtype->empty()) {
      *first_real_dtype = std::string(ref::dtype_name(t.dtype()));
    }
    in.add(d.name, t);
  }
  return in;
}

std::map<std::string, ref::Tensor> user_outputs(const Op& op, const InputSet& in, ref::Format f) {
  const std::vector<OutputDecl> decls = op.outputs();
  bool same_inputs = true;
  const InputSet converted = convert_inputs(op, in, f, &same_inputs);
  const Outputs<ref::mp> exact = exact_outputs(op, converted, {&f, 1});
  bool any_topk = false;
  for (const OutputDecl& d : decls) any_topk = any_topk || d.topk;
  // The selection on the inputs as given, as golden_file_content stores it.
  const Outputs<ref::mp> given =
      any_topk && !same_inputs ? exact_outputs(op, in) : Outputs<ref::mp>{};
  std::map<std::string, ref::Tensor> out;
  for (size_t k = 0; k < decls.size(); ++k) {
    if (decls[k].topk) {
      out.emplace(decls[k].name,
                  rounded_output(decls[k], same_inputs ? exact[k] : given[k], ref::Format::f64));
    } else {
      out.emplace(decls[k].name, rounded_output(decls[k], exact[k], output_format(decls[k], f)));
    }
  }
  return out;
}

SafetensorsContent user_reference(const std::string& op_name,
                                  const std::vector<std::string>& params,
                                  const std::filesystem::path& in_path, const std::string& format) {
  if (!format.empty()) {
    const auto dt = ref::parse_dtype(format);
    if (!dt || !ref::is_float(*dt)) {
      throw InputError(
          "command line", "--format",
          "expected a format name (f64, f32, tf32, bf16, f16, e4m3, e5m2), got \"" + format + "\"");
    }
  }
  // The case the file will describe; its format is settled once the inputs are read.
  nlohmann::json cj = user_case_json(op_name, params);
  const std::unique_ptr<Op> op = make_op(parse_case(cj, "command line", "--op/--param"));

  const SafetensorsContent file = read_safetensors(in_path);
  std::string first_real;
  const InputSet in = user_inputs(*op, op_name, file.tensors, in_path.string(), &first_real);
  // Without --format the outputs take the first real input's format.
  std::string fmt = !format.empty() ? format : !first_real.empty() ? first_real : "f32";
  cj["formats"] = {std::string(ref::format_name(ref::dtype_format(*ref::parse_dtype(fmt))))};
  const Case c = parse_case(cj, "command line", "--op/--param");
  return golden_file_content(c, *op, in, "as given");
}

}  // namespace lmo::oracle

