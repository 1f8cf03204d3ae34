#include "oracle/user_ref.h"

#include <cstdio>

#include "oracle/case.h"
#include "oracle/golden_content.h"
#include "oracle/utf8.h"

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
  return {{"id", "ref/" + op_name}, {"op", op_name}, {"seed", 0}, {"formats", {"f32"}},
          {"params", p}};
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
  const std::string fname = in_path.string();
  std::string fmt = format;
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
      throw InputError(fname, it->first,
                       "expected the shape " + shape_text(d.shape) + " the parameters imply, got " +
                           shape_text(t.shape()));
    }
    const bool want_float = !d.dtype || ref::is_float(*d.dtype);  // a fixed dtype may be real
    if (want_float != ref::is_float(t.dtype())) {
      throw InputError(fname, it->first,
                       want_float ? "expected floating point (F64, F32, F16, BF16, F8_E4M3, F8_E5M2)"
                                  : "expected integers (I64, I32 or U8)");
    }
    if (d.bounded) {
      for (int64_t i = 0; i < t.numel(); ++i) {
        const double v = t.get(i);
        if (!(v >= d.a && v < d.b)) {
          char range[96];
          std::snprintf(range, sizeof range, "[%.0f, %.0f)", d.a, d.b);
          throw InputError(fname, it->first,
                           "element " + std::to_string(i) + " is " + std::to_string(int64_t(v)) +
                               ", expected integers in " + range + " as the parameters of op " +
                               op_name + " imply");
        }
      }
    }
    // Without --format the outputs take the first real input's format.
    if (!d.dtype && fmt.empty()) fmt = std::string(ref::dtype_name(t.dtype()));
    in.add(d.name, t);
  }
  if (fmt.empty()) fmt = "f32";
  cj["formats"] = {std::string(ref::format_name(ref::dtype_format(*ref::parse_dtype(fmt))))};
  const Case c = parse_case(cj, "command line", "--op/--param");
  return golden_file_content(c, *op, in, "as given");
}

}  // namespace lmo::oracle
