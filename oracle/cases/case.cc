#include "oracle/cases/case.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <sstream>

#include "oracle/cases/case_specials.h"
#include "oracle/core/utf8.h"
#include "oracle/ops/registry.h"
#include "reference/presets.h"

#ifndef LMO_CASES_DIR
#define LMO_CASES_DIR "cases"
#endif

namespace lmo::oracle {
namespace {

std::string show(const nlohmann::json& v) { return json_for_message(v); }

const nlohmann::json* get(const nlohmann::json& o, const char* key) {
  const auto it = o.find(key);
  return it == o.end() ? nullptr : &*it;
}

std::string string_field(const nlohmann::json& o, const std::string& file, const std::string& at,
                         const char* key, bool required) {
  const nlohmann::json* v = get(o, key);
  if (!v) {
    if (required) throw InputError(file, at + "." + key, "expected a string, but it is missing");
    return "";
  }
  if (!v->is_string()) throw InputError(file, at + "." + key, "expected a string, got " + show(*v));
  return v->get<std::string>();
}

Case parse_case_impl(const nlohmann::json& o, const std::string& file, const std::string& at) {
  if (!o.is_object()) throw InputError(file, at, "expected a case object, got " + show(o));
  static const std::vector<std::string> kKeys = {"id",     "op",        "seed",        "formats",
                                                 "params", "preset",    "reduction",   "description",
                                                 "inputs", "recipe", "input_format"};
  for (auto it = o.begin(); it != o.end(); ++it) {
    if (std::find(kKeys.begin(), kKeys.end(), it.key()) == kKeys.end()) {
      throw InputError(file, at + "." + it.key(),
                       "unknown field (a case has: id, op, seed, formats, params, preset, "
                       "reduction, description, inputs, recipe, input_format)");
    }
  }
  Case c;
  c.file = file;
  c.path = at;
  c.source = o;
  c.id = string_field(o, file, at, "id", true);
  static const std::regex kId("[a-z0-9][a-z0-9._/-]{0,119}");
  if (!std::regex_match(c.id, kId)) {
    throw InputError(file, at + ".id",
                     "expected 1 to 120 characters of [a-z0-9._/-] starting with a letter or "
                     "digit, got \"" + c.id + "\"");
  }
  c.op = string_field(o, file, at, "op", true);
  if (!find_op(c.op)) {
    throw InputError(file, at + ".op",
                     "unknown op \"" + c.op + "\" (known ops: " + known_op_names() + ")");
  }
  const nlohmann::json* seed = get(o, "seed");
  if (!seed || !seed->is_number_integer() ||
      (!seed->is_number_unsigned() && seed->get<int64_t>() < 0)) {
    throw InputError(file, at + ".seed",
                     "expected a non-negative integer below 2^64, got " +
                         (seed ? show(*seed) : std::string("nothing")));
  }
  c.seed = seed->get<uint64_t>();
  const nlohmann::json* formats = get(o, "formats");
  if (!formats || !formats->is_array() || formats->empty()) {
    throw InputError(file, at + ".formats",
                     "expected a non-empty list of format names (f64, f32, tf32, bf16, f16, "
                     "e4m3, e5m2), got " + (formats ? show(*formats) : std::string("nothing")));
  }
  for (size_t i = 0; i < formats->size(); ++i) {
    const nlohmann::json& f = (*formats)[i];
    const std::string where = at + ".formats[" + std::to_string(i) + "]";
    const std::optional<ref::DType> d =
        f.is_string() ? ref::parse_dtype(f.get<std::string>()) : std::nullopt;
    if (!d || !ref::is_float(*d)) {
      throw InputError(file, where,
                       "expected a format name (f64, f32, tf32, bf16, f16, e4m3, e5m2), got " +
                           show(f));
    }
    const ref::Format fmt = ref::dtype_format(*d);
    if (std::find(c.formats.begin(), c.formats.end(), fmt) != c.formats.end()) {
      throw InputError(file, where, "format " + show(f) + " is listed twice");
    }
    c.formats.push_back(fmt);
  }
  const std::string input_format = string_field(o, file, at, "input_format", false);
  if (!input_format.empty()) {
    const std::optional<ref::DType> d = ref::parse_dtype(input_format);
    if (!d || !ref::is_float(*d)) {
      throw InputError(file, at + ".input_format",
                       "expected a format name (f64, f32, tf32, bf16, f16, e4m3, e5m2), got \"" +
                           input_format + "\"");
    }
    c.input_format = ref::dtype_format(*d);
  }
  c.preset = string_field(o, file, at, "preset", false);
  if (!c.preset.empty()) {
    try {
      (void)ref::preset(c.preset);
    } catch (const std::invalid_argument& e) {
      throw InputError(file, at + ".preset", e.what());
    }
  }
  c.reduction = string_field(o, file, at, "reduction", false);
  c.description = string_field(o, file, at, "description", false);
  const nlohmann::json* params = get(o, "params");
  if (!params) throw InputError(file, at + ".params", "expected an object, but it is missing");
  c.params = *params;
  const nlohmann::json* inputs = get(o, "inputs");
  c.inputs = inputs ? *inputs : nlohmann::json::object();
  if (!c.inputs.is_object()) {
    throw InputError(file, at + ".inputs", "expected an object of input overrides, got " +
                                               show(c.inputs));
  }
  // Build the op once now, so every parameter error surfaces when the file is read.
  const std::unique_ptr<Op> op = make_op(c);
  (void)case_inputs(c, *op);
  if (c.formats.size() > 1 && outputs_fix_their_formats(op->outputs())) {
    throw InputError(file, at + ".formats",
                     "expected one format (that of its inputs): op " + c.op +
                         " stores its outputs in formats of their own, so a file holds one "
                         "run's; write one case per input format");
  }
  const std::string recipe = string_field(o, file, at, "recipe", false);
  if (!recipe.empty()) {
    try {
      c.recipe = parse_recipe(recipe);
      // Bound once per format, so a point the op lacks surfaces now too.
      for (ref::Format f : c.formats) (void)bind_recipe(c.recipe, c.op, *op, f);
    } catch (const RecipeError& e) {
      throw InputError(file, at + ".recipe", e.what());
    }
  }
  return c;
}

}  // namespace

Case parse_case(const nlohmann::json& o, const std::string& file, const std::string& path) {
  return parse_case_impl(o, file, path);
}

std::unique_ptr<Op> make_op(const Case& c) {
  const OpInfo* info = find_op(c.op);
  if (!info) {
    throw InputError(c.file, c.path + ".op",
                     "unknown op \"" + c.op + "\" (known ops: " + known_op_names() + ")");
  }
  ParamReader r(c.params, c.file, c.path + ".params");
  std::unique_ptr<Op> op;
  try {
    op = info->make(r);
  } catch (const std::invalid_argument& e) {
    // A cross-parameter check of the reference (a divisibility, a dimension).
    throw InputError(c.file, c.path + ".params", e.what());
  }
  r.finish();
  return op;
}

std::vector<InputDecl> case_inputs(const Case& c, const Op& op) {
  std::vector<InputDecl> decls = op.inputs();
  for (auto it = c.inputs.begin(); it != c.inputs.end(); ++it) {
    const std::string at = c.path + ".inputs." + it.key();
    auto d = std::find_if(decls.begin(), decls.end(),
                          [&](const InputDecl& x) { return x.name == it.key(); });
    if (d == decls.end() || d->dtype || d->computed) {
      std::string names;
      for (const InputDecl& x : decls) {
        if (!x.dtype && !x.computed) names += (names.empty() ? "" : ", ") + x.name;
      }
      throw InputError(c.file, at, "not a real input of op " + c.op + " (its real inputs: " +
                                       names + ")");
    }
    // "specials" (case_specials.h) is checked on its own; with it, "dist" may be left out.
    nlohmann::json rest = it.value();
    const bool specials = rest.is_object() && rest.contains("specials");
    if (specials) rest.erase("specials");
    ParamReader r(rest, c.file, at);
    const std::string dist =
        r.choice("dist", {"normal", "uniform"},
                 specials ? std::optional<std::string>("") : std::optional<std::string>());
    if (specials) (void)case_input_specials(c, *d);
    if (dist == "normal") {
      d->dist = Dist::kNormal;
      d->a = r.real("mean", -1e30, 1e30);
      d->b = r.real("std", 1e-30, 1e30);
    } else if (dist == "uniform") {
      d->dist = Dist::kUniform;
      d->a = r.real("lo", -1e30, 1e30);
      d->b = r.real("hi", -1e30, 1e30);
      if (!(d->a < d->b)) r.fail("hi", "expected hi > lo");
    }
    r.finish();
  }
  return decls;
}

std::vector<Case> load_case_file(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file, "", "cannot open the case file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_case_document(ss.str(), file);
}

std::vector<Case> parse_case_document(std::string_view text, const std::string& file) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file, "", std::string("expected JSON: ") + e.what());
  }
  if (!j.is_object()) throw InputError(file, "", "expected an object {\"cases\": [...]}");
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() != "cases" && it.key() != "comment") {
      throw InputError(file, it.key(), "unknown top-level field (expected \"cases\", \"comment\")");
    }
  }
  const nlohmann::json* cases = get(j, "cases");
  if (!cases || !cases->is_array()) {
    throw InputError(file, "cases", "expected a list of cases");
  }
  std::vector<Case> out;
  std::map<std::string, std::string> seen;
  for (size_t i = 0; i < cases->size(); ++i) {
    const std::string at = "cases[" + std::to_string(i) + "]";
    Case c = parse_case((*cases)[i], file, at);
    if (const auto [it, fresh] = seen.emplace(c.id, at); !fresh) {
      throw InputError(file, at + ".id", "the id \"" + c.id + "\" is already used by " + it->second);
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<Case> load_case_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(dir, "", "expected a folder of case files");
  std::vector<std::string> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<Case> all;
  std::map<std::string, std::string> seen;
  for (const std::string& f : files) {
    for (Case& c : load_case_file(f)) {
      if (const auto [it, fresh] = seen.emplace(c.id, f + ": " + c.path); !fresh) {
        throw InputError(f, c.path + ".id",
                         "the id \"" + c.id + "\" is already used by " + it->second);
      }
      all.push_back(std::move(c));
    }
  }
  return all;
}

std::string builtin_cases_dir() {
  if (const char* env = std::getenv("LMO_CASES_DIR"); env && *env) return env;
  return LMO_CASES_DIR;
}

}  // namespace lmo::oracle
