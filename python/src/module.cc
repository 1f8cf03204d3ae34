// lmoracle._core: the oracle's own C++ (cases, inputs, the reference, the judge, the command
// line) for the Python package. Nothing here computes or judges anything itself: each function
// parses what Python passes, calls the oracle, and hands back tensors as bytes (tensors.h) or
// reports as the JSON and text the command line prints. Cases cross as JSON text (the case-file
// object, case.h), so the package and the case files describe a case the same way.
//
// Long work (generating inputs, the exact reference, judging) runs without the GIL, so other
// Python threads (the package's progress line, a test's own threads) go on meanwhile.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_main.h"
#include "oracle/core/case.h"
#include "oracle/golden/check.h"
#include "oracle/core/op.h"
#include "oracle/core/specials.h"
#include "oracle/backends/system_info.h"
#include "oracle/golden/user_ref.h"
#include "tensors.h"

namespace nb = nanobind;
using nlohmann::json;

namespace {

using lmo::oracle::Case;
using lmo::oracle::InputError;

// A case object from Python (JSON text); `where` names the calling function in messages.
Case parse_case_json(const std::string& text, const std::string& where) {
  json o;
  try {
    o = json::parse(text);
  } catch (const json::exception& e) {
    throw InputError(where, "case", std::string("expected a case as JSON: ") + e.what());
  }
  return lmo::oracle::parse_case(o, where, "case");
}

lmo::ref::Format parse_format(const std::string& name, const std::string& where) {
  const auto dt = lmo::ref::parse_dtype(name);
  if (!dt || !lmo::ref::is_float(*dt)) {
    throw InputError(where, "format",
                     "expected a format name (f64, f32, tf32, bf16, f16, e4m3, e5m2), got \"" +
                         name + "\"");
  }
  return lmo::ref::dtype_format(*dt);
}

// Every case of the case files in dir, as the JSON array of their objects as read.
std::string load_cases(const std::string& dir) {
  json all = json::array();
  for (const Case& c : lmo::oracle::load_case_dir(dir)) all.push_back(c.source);
  return all.dump();
}

std::string ops_json() {
  json all = json::array();
  for (const auto& info : lmo::oracle::op_registry()) {
    all.push_back({{"name", info.name}, {"catalog", info.catalog}, {"summary", info.summary}});
  }
  return all.dump();
}

// The op's inputs and outputs with the case's parameters: names, shapes, kinds.
std::string op_io(const std::string& case_text) {
  const Case c = parse_case_json(case_text, "lmoracle");
  const auto op = lmo::oracle::make_op(c);
  json ins = json::array(), outs = json::array();
  for (const auto& d : lmo::oracle::case_inputs(c, *op)) {
    ins.push_back({{"name", d.name},
                   {"shape", d.shape},
                   {"real", !d.dtype || lmo::ref::is_float(*d.dtype)},
                   {"dtype", d.dtype ? std::string(lmo::ref::dtype_name(*d.dtype)) : ""},
                   {"computed", static_cast<bool>(d.computed)}});
  }
  for (const auto& d : op->outputs()) {
    outs.push_back({{"name", d.name},
                    {"shape", d.shape},
                    {"topk", d.topk},
                    {"format", d.format ? std::string(lmo::ref::format_name(*d.format)) : ""}});
  }
  json points = json::array();
  for (const auto& p : op->rounding_points()) {
    points.push_back({{"name", p.name},
                      {"values", p.choices.empty() ? json("format") : json(p.choices)},
                      {"strict", p.strict},
                      {"what", p.what}});
  }
  return json{{"inputs", ins}, {"outputs", outs}, {"cost", op->cost()}, {"rounding_points", points}}
      .dump();
}

nb::list case_inputs(const std::string& case_text, const std::string& format) {
  const Case c = parse_case_json(case_text, "lmoracle.case");
  const lmo::ref::Format f = parse_format(format, "lmoracle.case");
  lmo::oracle::InputSet in;
  {
    nb::gil_scoped_release unlocked;
    in = lmo::oracle::reference_inputs(c, f);
  }
  std::map<std::string, lmo::ref::Tensor> byname(in.all().begin(), in.all().end());
  return lmo::python::tensors_to_python(byname);
}

// The correctly rounded outputs on the given inputs, and the format they are in ("" = the first
// real input's dtype).
std::pair<nb::list, std::string> reference(const std::string& case_text, const nb::list& inputs,
                                           const std::string& format) {
  const Case c = parse_case_json(case_text, "lmoracle.reference");
  const auto tensors = lmo::python::tensors_from_python(inputs, "inputs");
  std::map<std::string, lmo::ref::Tensor> out;
  std::string fmt = format;
  {
    nb::gil_scoped_release unlocked;
    const auto op = lmo::oracle::make_op(c);
    std::string first_real;
    const auto in = lmo::oracle::user_inputs(*op, c.op, tensors, "inputs", &first_real);
    if (fmt.empty()) fmt = first_real.empty() ? "f32" : first_real;
    const lmo::ref::Format f = parse_format(fmt, "lmoracle.reference");
    fmt = std::string(lmo::ref::format_name(f));
    out = lmo::oracle::user_outputs(*op, in, f);
  }
  return {lmo::python::tensors_to_python(out), fmt};
}

// The report of check as (JSON, text), judged on the given inputs, or on the case's generated
// inputs when inputs is None.
std::pair<std::string, std::string> check(const std::string& case_text, const nb::object& inputs,
                                          const nb::list& outputs, const std::string& recipe,
                                          bool diagnose) {
  const Case c = parse_case_json(case_text, "lmoracle.check");
  lmo::oracle::CheckOptions opt;
  opt.diagnose = diagnose;
  // Python sees a ValueError naming the valid names.
  try {
    opt.recipe = lmo::oracle::parse_recipe(recipe);
    const auto op = lmo::oracle::make_op(c);
    for (lmo::ref::Format f : lmo::ref::kAllFormats) {
      (void)lmo::oracle::bind_recipe(*opt.recipe, c.op, *op, f);
    }
  } catch (const lmo::oracle::RecipeError& e) {
    throw std::invalid_argument(std::string("lmoracle.check: recipe: ") + e.what());
  }
  const auto outs = lmo::python::tensors_from_python(outputs, "outputs");
  std::map<std::string, lmo::ref::Tensor> ins;
  if (!inputs.is_none()) ins = lmo::python::tensors_from_python(nb::cast<nb::list>(inputs), "inputs");
  nb::gil_scoped_release unlocked;
  lmo::oracle::CheckReport r;
  if (inputs.is_none()) {
    r = lmo::oracle::check_outputs(c, outs, opt);
  } else {
    const auto op = lmo::oracle::make_op(c);
    r = lmo::oracle::check_outputs(c, lmo::oracle::user_inputs(*op, c.op, ins, "inputs"), outs,
                                   opt);
  }
  return {lmo::oracle::to_json(r).dump(), lmo::oracle::to_text(r)};
}

// The named recipes as (name, ops, points, source) (oracle/judge/recipe.h).
std::vector<std::tuple<std::string, std::vector<std::string>, std::vector<std::string>, std::string>>
recipes() {
  std::vector<std::tuple<std::string, std::vector<std::string>, std::vector<std::string>,
                         std::string>>
      out;
  for (const lmo::oracle::NamedRecipe& r : lmo::oracle::named_recipes()) {
    std::vector<std::string> points;
    for (const auto& [p, v] : r.points) points.push_back(p + "=" + v);
    out.emplace_back(r.name, r.ops, points, r.source);
  }
  return out;
}

// The special values (specials.h) format f has, by the names a case's "specials" list takes.
std::vector<std::string> specials(const std::string& format) {
  const lmo::ref::Format f = parse_format(format, "lmoracle.specials");
  std::vector<std::string> names;
  for (lmo::oracle::Special s : lmo::oracle::kAllSpecials) {
    if (lmo::oracle::has_special(f, s)) names.emplace_back(lmo::oracle::special_name(s));
  }
  return names;
}

// Throws InputError (ValueError) when the case's op rejects its parameters.
void validate(const std::string& case_text) {
  lmo::oracle::make_op(parse_case_json(case_text, "lmoracle"));
}

int run_main(const std::vector<std::string>& args) {
  std::vector<std::string> owned = args;
  std::vector<char*> argv;
  for (std::string& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  int rc;
  {
    nb::gil_scoped_release unlocked;
    rc = lmoracle_main(static_cast<int>(owned.size()), argv.data());
  }
  std::cout.flush();
  std::cerr.flush();
  return rc;
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "The oracle's C++ for the lmoracle package (use the package, not this module).";
  // Bad input is the caller's mistake: ValueError, with the oracle's message (what, which field,
  // what was expected). Anything else the oracle throws keeps nanobind's mapping
  // (std::invalid_argument → ValueError, other std::exception → RuntimeError).
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  m.def("version", [] { return std::string(lmo::oracle::version()); });
  m.def("builtin_cases_dir", &lmo::oracle::builtin_cases_dir);
  m.def("load_cases", &load_cases, nb::arg("dir"));
  m.def("ops", &ops_json);
  m.def("op_io", &op_io, nb::arg("case"));
  m.def("case_inputs", &case_inputs, nb::arg("case"), nb::arg("format"));
  m.def("reference", &reference, nb::arg("case"), nb::arg("inputs"), nb::arg("format"));
  m.def("check", &check, nb::arg("case"), nb::arg("inputs").none(), nb::arg("outputs"),
        nb::arg("recipe") = "strict", nb::arg("diagnose") = false);
  m.def("recipes", &recipes);
  m.def("validate", &validate, nb::arg("case"));
  m.def("specials", &specials, nb::arg("format"));
  m.def("main", &run_main, nb::arg("argv"));
}
