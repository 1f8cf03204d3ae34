#include "calls.h"

#include <string>
#include <vector>

#include "oracle/cases/case.h"
#include "oracle/core/op.h"
#include "oracle/core/specials.h"
#include "oracle/core/version.h"
#include "oracle/check/check.h"
#include "oracle/golden/user_ref.h"
#include "oracle/ops/registry.h"

namespace lmo::python {

namespace {

using lmo::oracle::Case;
using lmo::oracle::InputError;
using nlohmann::json;

// A string argument; `where` names the calling function in messages.
std::string string_arg(const Request& q, const std::string& name, const std::string& where) {
  const auto it = q.args.find(name);
  if (it == q.args.end() || !it->is_string()) {
    throw InputError(where, name, "expected a string argument");
  }
  return it->get<std::string>();
}

// A case object from Python (JSON text).
Case case_arg(const Request& q, const std::string& where) {
  const std::string text = string_arg(q, "case", where);
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

std::map<std::string, lmo::ref::Tensor> group(const Request& q, const std::string& name) {
  return tensors_of_group(q.descriptors, q.raw, name);
}

// Every case of the case files in dir, as the JSON array of their objects as read.
Reply load_cases(const Request& q) {
  json all = json::array();
  for (const Case& c : lmo::oracle::load_case_dir(string_arg(q, "dir", "lmoracle.cases"))) {
    all.push_back(c.source);
  }
  return {all.dump(), {}};
}

Reply ops(const Request&) {
  json all = json::array();
  for (const auto& info : lmo::oracle::op_registry()) {
    all.push_back({{"name", info.name}, {"catalog", info.catalog}, {"summary", info.summary}});
  }
  return {all.dump(), {}};
}

// The op's inputs and outputs with the case's parameters: names, shapes, kinds, and its batch
// axis (Op::independent_rows: ops whose rows are independent have them as every output's and
// every row input's leading dimension; 0: not separable).
Reply op_io(const Request& q) {
  const Case c = case_arg(q, "lmoracle");
  const auto op = lmo::oracle::make_op(c);
  const int64_t rows = op->independent_rows();
  json ins = json::array(), outs = json::array();
  for (const auto& d : lmo::oracle::case_inputs(c, *op)) {
    ins.push_back({{"name", d.name},
                   {"shape", d.shape},
                   {"real", !d.dtype || lmo::ref::is_float(*d.dtype)},
                   {"dtype", d.dtype ? std::string(lmo::ref::dtype_name(*d.dtype)) : ""},
                   {"computed", static_cast<bool>(d.computed)},
                   {"row_input", rows > 0 && op->row_input(d.name)}});
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
  return {json{{"inputs", ins},
               {"outputs", outs},
               {"rows", rows},
               {"cost", op->cost()},
               {"rounding_points", points}}
              .dump(),
          {}};
}

Reply case_inputs(const Request& q) {
  const Case c = case_arg(q, "lmoracle.case");
  const lmo::ref::Format f = parse_format(string_arg(q, "format", "lmoracle.case"),
                                          "lmoracle.case");
  const lmo::oracle::InputSet in = lmo::oracle::reference_inputs(c, f);
  return {nullptr, {in.all().begin(), in.all().end()}};
}

// The correctly rounded outputs on the given inputs; value: the format they are in ("" asks
// for the first real input's dtype).
Reply reference(const Request& q) {
  const Case c = case_arg(q, "lmoracle.reference");
  const auto tensors = group(q, "inputs");
  std::string fmt = string_arg(q, "format", "lmoracle.reference");
  const auto op = lmo::oracle::make_op(c);
  std::string first_real;
  const auto in = lmo::oracle::user_inputs(*op, c.op, tensors, "inputs", &first_real);
  if (fmt.empty()) fmt = first_real.empty() ? "f32" : first_real;
  const lmo::ref::Format f = parse_format(fmt, "lmoracle.reference");
  return {std::string(lmo::ref::format_name(f)), lmo::oracle::user_outputs(*op, in, f)};
}

// The recipe text of the request, parsed and bound to the case's op in every format; Python sees
// a ValueError naming the valid names. `where` names the calling function.
lmo::oracle::Recipe recipe_arg(const Request& q, const Case& c, const lmo::oracle::Op& op,
                               const std::string& where) {
  try {
    const lmo::oracle::Recipe r = lmo::oracle::parse_recipe(string_arg(q, "recipe", where));
    for (lmo::ref::Format f : lmo::ref::kAllFormats) {
      (void)lmo::oracle::bind_recipe(r, c.op, op, f);
    }
    return r;
  } catch (const lmo::oracle::RecipeError& e) {
    throw std::invalid_argument(where + ": recipe: " + e.what());
  }
}

// The report of check as [JSON, text], judged on the given inputs, or on the case's generated
// inputs when the request has no "inputs" group.
Reply check(const Request& q) {
  const Case c = case_arg(q, "lmoracle.check");
  lmo::oracle::CheckOptions opt;
  opt.diagnose = q.args.value("diagnose", false);
  const auto op = lmo::oracle::make_op(c);
  opt.recipe = recipe_arg(q, c, *op, "lmoracle.check");
  const auto outs = group(q, "outputs");
  lmo::oracle::CheckReport r;
  if (!has_group(q.args, "inputs")) {
    r = lmo::oracle::check_outputs(c, outs, opt);
  } else {
    r = lmo::oracle::check_outputs(c, lmo::oracle::user_inputs(*op, c.op, group(q, "inputs"),
                                                               "inputs"),
                                   outs, opt);
  }
  return {json::array({lmo::oracle::to_json(r).dump(), lmo::oracle::to_text(r)}), {}};
}

// The named recipes as [name, ops, points, source] (oracle/rules/recipe.h).
Reply recipes(const Request&) {
  json out = json::array();
  for (const lmo::oracle::NamedRecipe& r : lmo::oracle::named_recipes()) {
    std::vector<std::string> points;
    for (const auto& [p, v] : r.points) points.push_back(p + "=" + v);
    out.push_back(json::array({r.name, r.ops, points, r.source}));
  }
  return {out, {}};
}

// The special values (specials.h) format f has, by the names a case's "specials" list takes.
Reply specials(const Request& q) {
  const lmo::ref::Format f = parse_format(string_arg(q, "format", "lmoracle.specials"),
                                          "lmoracle.specials");
  std::vector<std::string> names;
  for (lmo::oracle::Special s : lmo::oracle::kAllSpecials) {
    if (lmo::oracle::has_special(f, s)) names.emplace_back(lmo::oracle::special_name(s));
  }
  return {names, {}};
}

// Throws InputError (ValueError) when the case's op rejects its parameters.
Reply validate(const Request& q) {
  lmo::oracle::make_op(case_arg(q, "lmoracle"));
  return {};
}

// Throws ValueError when the recipe text is malformed or does not apply to the case's op: a
// harness asks before it runs a kernel, not at the first judgement after.
Reply validate_recipe(const Request& q) {
  const Case c = case_arg(q, "lmoracle");
  (void)recipe_arg(q, c, *lmo::oracle::make_op(c), "lmoracle");
  return {};
}

}  // namespace

const std::map<std::string, Call>& calls() {
  static const std::map<std::string, Call> all = {
      {"version", [](const Request&) { return Reply{lmo::oracle::version(), {}}; }},
      {"builtin_cases_dir",
       [](const Request&) { return Reply{lmo::oracle::builtin_cases_dir(), {}}; }},
      {"load_cases", load_cases},
      {"ops", ops},
      {"op_io", op_io},
      {"case_inputs", case_inputs},
      {"reference", reference},
      {"check", check},
      {"recipes", recipes},
      {"validate", validate},
      {"validate_recipe", validate_recipe},
      {"specials", specials},
  };
  return all;
}

}  // namespace lmo::python
