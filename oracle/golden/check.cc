#include "oracle/golden/check.h"

#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>

#include "oracle/core/case_inputs.h"
#include "oracle/core/certified.h"
#include "oracle/core/row_slice.h"
#include "oracle/golden/golden_content.h"
#include "oracle/golden/safetensors.h"
#include "oracle/judge/policy_table.h"
#include "oracle/judge/row_blocks.h"
#include "oracle/judge/topk_pairing.h"
#include "reference/ball_rounding.h"

namespace lmo::oracle {
namespace {

std::string num(double x) {
  char b[40];
  std::snprintf(b, sizeof b, "%.9g", x);
  return b;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s;
  for (int64_t e : shape) s += (s.empty() ? "" : ", ") + std::to_string(e);
  return "[" + s + "]";
}

std::string bound_text(const Policy& p, ref::Format f, const Verdict& v,
                       const std::string& recipe = "strict") {
  switch (p.kind) {
    case PolicyKind::kUlp:
      return std::to_string(p.max_ulps(f)) + " ulp" +
             (p.midpoint_margin > 0
                  ? " (+1 within " + num(p.midpoint_margin) + " ulp of a rounding midpoint)"
                  : "") +
             (p.arg_error > 0 ? " + the argument's rounding × κ" : "");
    case PolicyKind::kNaiveRelative: {
      const std::string run = recipe == "strict" ? "naive f32" : "recipe " + recipe;
      std::string sampled =
          num(p.naive_factor) + "·max|" + run + " − x| (≤ " + num(v.naive_bound) + ")";
      if (p.error_scale > 0) {
        sampled = "max(" + sampled + ", " + num(p.error_scale) + "·u·S, S the op's error scale)";
      }
      return "round(x ± B), B = " + sampled + " + " + num(p.output_ulps - 0.5) + " ulp + " +
             num(p.compute_ulps) + " f32 ulp";
    }
    case PolicyKind::kTopKSet:
      return "same set; ties within " + num(p.tie_margin) + " of the row's largest |score|";
  }
  return "";
}

// Where a kernel's outputs come from and what they are judged on.
struct Source {
  std::string file;  // for messages: the actual file, or "kernel outputs"
  const std::map<std::string, ref::Tensor>* outputs;
  // The inputs as the kernel read them when it stored format f.
  std::function<InputSet(ref::Format)> inputs_in;
  // The inputs of the top-k selection.
  std::function<InputSet()> topk_inputs;
  // The golden file's tensors, when grading against one (its rounding is verified).
  const SafetensorsContent* golden = nullptr;
  std::string golden_file;
  // Output names: "out.<name>" in files, "<name>" in memory.
  std::string prefix;
};

// The kernel's output tensor for d, with the case's shape (InputError otherwise).
const ref::Tensor& output_of(const Case& c, const Source& s, const OutputDecl& d) {
  const std::string key = s.prefix + d.name;
  const auto it = s.outputs->find(key);
  if (it == s.outputs->end()) {
    std::string have;
    for (const auto& [n, _] : *s.outputs) have += (have.empty() ? "" : ", ") + n;
    throw InputError(s.file, key,
                     "expected the kernel's output tensor, but it is missing (there is: " +
                         (have.empty() ? std::string("nothing") : have) + ")");
  }
  if (it->second.shape() != d.shape) {
    throw InputError(s.file, key,
                     "expected the shape " + shape_text(d.shape) + " of case " + c.id + ", got " +
                         shape_text(it->second.shape()));
  }
  return it->second;
}

// A top-k output (the router's experts), judged as sets under the recipe's tie margin.
// `selection` receives the kernel's selection where it passes but differs from the reference's.
CheckedOutput judge_selection(const Case& c, const Op& op, const Source& s, const OutputDecl& d,
                              size_t k, const BoundRecipe& bound,
                              std::optional<std::vector<int64_t>>& selection) {
  const ref::Tensor& got = output_of(c, s, d);
  CheckedOutput co;
  co.name = d.name;
  co.format = std::string(ref::dtype_name(got.dtype()));
  if (got.dtype() != ref::DType::i64 && got.dtype() != ref::DType::i32) {
    throw InputError(s.file, s.prefix + d.name,
                     "expected expert indices as I64 or I32, got " + co.format);
  }
  const Outputs<ref::mp> exact = exact_outputs(op, s.topk_inputs());
  if (s.golden) {
    const std::string gkey = golden_output_name(d, ref::Format::f64);
    const auto g = s.golden->tensors.find(gkey);
    if (g == s.golden->tensors.end() ||
        g->second != rounded_output(d, exact[k], ref::Format::f64)) {
      throw InputError(s.golden_file, gkey,
                       "expected the reference's selection on the file's inputs; it is "
                       "missing or differs (the file was damaged or edited)");
    }
  }
  const Policy policy = judging_under(policy_for(c.op, d.name), d, bound).policy;
  co.verdict =
      judge_topk(policy, exact[k].values, d.topk_experts, exact[k].indices, got, d.topk_groups);
  co.bound = bound_text(policy, ref::Format::f64, co.verdict);
  if (co.verdict.pass) selection = differing_selection(got, exact[k].indices);
  return co;
}

// The storage format of the kernel's real outputs (the first float one stored in it), else the
// case's first (an op whose outputs all have formats of their own has one, parse_case).
ref::Format real_storage(const Case& c, const Source& s, const std::vector<OutputDecl>& decls) {
  for (const OutputDecl& d : decls) {
    const auto it = s.outputs->find(s.prefix + d.name);
    if (!d.topk && !d.format && it != s.outputs->end() && ref::is_float(it->second.dtype())) {
      return ref::dtype_format(it->second.dtype());
    }
  }
  return c.formats.front();
}

// A floating output as the kernel gave it, checked against the case: its tensor, the storage
// format f the kernel ran in, the format `of` it is stored in (f, unless the output has a
// format of its own), and the golden file's tensor of it when grading against one.
struct GivenOutput {
  const ref::Tensor* got = nullptr;
  ref::Format f = ref::Format::f32;
  ref::Format of = ref::Format::f32;
  const ref::Tensor* gold = nullptr;
};

GivenOutput given_output(const Case& c, const Source& s, const OutputDecl& d, ref::Format storage) {
  const std::string key = s.prefix + d.name;
  GivenOutput g;
  g.got = &output_of(c, s, d);
  const std::string format(ref::dtype_name(g.got->dtype()));
  if (!ref::is_float(g.got->dtype())) {
    throw InputError(s.file, key, "expected a floating-point output, got " + format);
  }
  g.f = d.format ? storage : ref::dtype_format(g.got->dtype());
  g.of = output_format(d, g.f);
  if (g.got->dtype() != ref::format_dtype(g.of)) {
    throw InputError(s.file, key,
                     "expected " + std::string(ref::format_name(g.of)) + " (op " + c.op +
                         " stores this output in it whatever the storage format), got " + format);
  }
  if (s.golden) {
    const auto it = s.golden->tensors.find(golden_output_name(d, g.of));
    if (it == s.golden->tensors.end()) {
      std::string formats;
      for (ref::Format cf : c.formats) {
        formats += (formats.empty() ? "" : ", ") + std::string(ref::format_name(cf));
      }
      throw InputError(s.file, key,
                       "the golden file has no " + format + " output (it has: " + formats +
                           "); write the kernel's output in one of those");
    }
    g.gold = &it->second;
  }
  return g;
}

void throw_damaged_golden(const Source& s, const OutputDecl& d, ref::Format of) {
  throw InputError(s.golden_file, golden_output_name(d, of),
                   "expected the correct rounding of the case's reference on the file's "
                   "inputs; the values differ (the file was damaged or edited)");
}

CheckReport judge_outputs_in_blocks(const Case& c, const Op& op, const Source& s,
                                    const CheckOptions& opt, int64_t block_rows);

CheckReport judge_outputs(const Case& c, const Op& case_op, const Source& s,
                          const CheckOptions& opt) {
  // At real shapes (an op with independent rows whose outputs exceed a block) the exact values
  // of the whole op would not fit in memory: a block of rows at a time.
  if (const int64_t block_rows = rows_per_block(case_op, case_op.outputs()); block_rows > 0) {
    return judge_outputs_in_blocks(c, case_op, s, opt, block_rows);
  }
  CheckReport r;
  r.case_id = c.id;
  const Recipe recipe = opt.recipe.value_or(c.recipe);
  r.recipe = recipe.text();
  const std::vector<OutputDecl> decls = case_op.outputs();
  // The top-k outputs first. Where a kernel's selection differs from the reference's within
  // the tie margin, the values paired with it (the gates) are judged on the kernel's own
  // selection: the op with it fixed (Op::with_selection).
  std::map<size_t, CheckedOutput> selections;
  std::unique_ptr<Op> on_kernel_selection;
  const ref::Format storage = real_storage(c, s, decls);
  const BoundRecipe selection_bound = bind_recipe(recipe, c.op, case_op, storage);
  for (size_t k = 0; k < decls.size(); ++k) {
    if (!decls[k].topk) continue;
    std::optional<std::vector<int64_t>> selection;
    selections.emplace(k, judge_selection(c, case_op, s, decls[k], k, selection_bound, selection));
    if (selection) on_kernel_selection = case_op.with_selection(std::move(*selection));
  }
  const Op& op = on_kernel_selection ? *on_kernel_selection : case_op;
  std::vector<const ref::Tensor*> real_outputs(decls.size(), nullptr);
  std::vector<ref::Tensor> ordered_outputs(decls.size());
  std::optional<ref::Format> real_format;
  std::map<ref::Format, Outputs<double>> naive_by_format;
  std::map<ref::Format, std::pair<InputSet, Outputs<ref::mp>>> exact_by_format;
  const auto exact_in = [&](ref::Format f) -> const std::pair<InputSet, Outputs<ref::mp>>& {
    auto it = exact_by_format.find(f);
    if (it == exact_by_format.end()) {
      InputSet in = s.inputs_in(f);
      Outputs<ref::mp> exact = exact_outputs(op, in, {&f, 1});
      it = exact_by_format.emplace(f, std::make_pair(std::move(in), std::move(exact))).first;
    }
    return it->second;
  };
  // With the kernel's selection, the golden file still holds the reference's own: its exact
  // values once per format, for every output compared with the file.
  std::map<ref::Format, Outputs<ref::mp>> case_exact_by_format;
  const auto case_exact_in = [&](ref::Format f, const InputSet& in) -> const Outputs<ref::mp>& {
    auto it = case_exact_by_format.find(f);
    if (it == case_exact_by_format.end()) {
      it = case_exact_by_format.emplace(f, exact_outputs(case_op, in, {&f, 1})).first;
    }
    return it->second;
  };
  for (size_t k = 0; k < decls.size(); ++k) {
    const OutputDecl& d = decls[k];
    if (d.topk) {
      r.pass = r.pass && selections.at(k).verdict.pass;
      r.outputs.push_back(std::move(selections.at(k)));
      continue;
    }
    const GivenOutput given = given_output(c, s, d, storage);
    const ref::Tensor& got = *given.got;
    const ref::Format f = given.f, of = given.of;
    const ref::Tensor* gold = given.gold;
    const Policy& policy = policy_for(c.op, d.name);
    CheckedOutput co;
    co.name = d.name;
    co.format = std::string(ref::dtype_name(got.dtype()));
    const auto& [in, exact] = exact_in(f);
    // Values paired with a top-k selection (the router's gates) are judged in the reference's
    // order of experts, whatever order the kernel returned its selection in (topk_pairing.h).
    ref::Tensor ordered = got;
    for (size_t t = 0; t < decls.size(); ++t) {
      if (!decls[t].topk || decls[t].shape != d.shape) continue;
      const auto idx = s.outputs->find(s.prefix + decls[t].name);
      if (idx != s.outputs->end() && idx->second.shape() == d.shape &&
          !ref::is_float(idx->second.dtype())) {
        ordered = values_in_expected_order(got, idx->second, exact[t].indices);
      }
    }
    const ref::Tensor expected = rounded_output(d, exact[k], of);
    // The file holds the values of the reference's own selection.
    if (gold && *gold != (on_kernel_selection ? rounded_output(d, case_exact_in(f, in)[k], of)
                                              : expected)) {
      throw_damaged_golden(s, d, of);
    }
    const BoundRecipe bound = bind_recipe(recipe, c.op, op, f);
    const RecipeJudging how = judging_under(policy, d, bound);
    const OutputValues<double>* naive = nullptr;
    if (how.uses_naive) {
      // One run of the recipe per storage format serves every output (cross-entropy has 3).
      auto nit = naive_by_format.find(f);
      if (nit == naive_by_format.end()) {
        nit = naive_by_format.emplace(f, op.simulated(ref::Format::f32, in, bound)).first;
      }
      naive = &nit->second[k];
    }
    const JudgeOptions jo = judge_options(how, exact[k], naive, ref::Format::f32, bound);
    co.verdict = judge(how.policy, exact[k].values, ordered, jo);
    co.bound = bound_text(how.policy, of, co.verdict, r.recipe);
    if (!real_format || *real_format == f) {
      real_format = f;
      ordered_outputs[k] = ordered;
      real_outputs[k] = &ordered_outputs[k];
    }
    const int64_t w = co.verdict.metrics.max_ulps_index;
    if (w >= 0) {
      co.worst_index = w;
      co.worst_actual = ordered.get(w);
      co.worst_expected = expected.get(w);
      co.worst_ulps = co.verdict.metrics.max_ulps;
    }
    r.pass = r.pass && co.verdict.pass;
    r.outputs.push_back(std::move(co));
  }
  if (real_format && (!r.pass || opt.diagnose)) {
    const auto& [in, exact] = exact_in(*real_format);
    r.diagnosis = diagnose(op, c.op, in, exact, real_outputs, recipe, *real_format);
  }
  return r;
}

// judge_outputs for an op with independent rows and no top-k output, a block of rows at a time
// (oracle/judge/row_blocks.h): the same verdicts (BlockVerdicts) with the exact values of one block
// in memory at once, one pass over the blocks per storage format the outputs are given in.
CheckReport judge_outputs_in_blocks(const Case& c, const Op& op, const Source& s,
                                    const CheckOptions& opt, int64_t block_rows) {
  CheckReport r;
  r.case_id = c.id;
  const Recipe recipe = opt.recipe.value_or(c.recipe);
  r.recipe = recipe.text();
  const std::vector<OutputDecl> decls = op.outputs();
  const ref::Format storage = real_storage(c, s, decls);
  const int64_t rows = op.independent_rows();
  struct Judged {
    GivenOutput given;
    RecipeJudging how;
    int64_t per_row = 0;
    std::optional<BlockVerdicts> verdicts;
    int64_t worst_index = -1;
    double worst_expected = 0;
  };
  std::vector<Judged> outs(decls.size());
  std::set<ref::Format> formats;  // the storage formats the outputs are given in
  for (size_t k = 0; k < decls.size(); ++k) {
    Judged& o = outs[k];
    o.given = given_output(c, s, decls[k], storage);
    o.how = judging_under(policy_for(c.op, decls[k].name), decls[k],
                          bind_recipe(recipe, c.op, op, o.given.f));
    o.per_row = ref::checked_numel(decls[k].shape) / rows;
    if (o.how.group > 0 && o.per_row % o.how.group != 0) {
      throw std::logic_error("check: output " + decls[k].name + " of " + c.op +
                             " has groups across its rows");
    }
    formats.insert(o.given.f);
  }
  std::vector<const ref::Tensor*> real_outputs(decls.size(), nullptr);
  const ref::Format real_format = outs.front().given.f;
  int64_t diagnose_row = -1;
  for (const ref::Format f : formats) {
    const InputSet in = s.inputs_in(f);
    std::vector<std::optional<RecipeJudging>> how(decls.size());
    for (size_t k = 0; k < decls.size(); ++k) {
      if (outs[k].given.f == f) how[k] = outs[k].how;
    }
    RowBlocks blocks(op, in, f, bind_recipe(recipe, c.op, op, f), how, {ref::Format::f32},
                     block_rows);
    const auto restart = [&] {
      for (Judged& o : outs) {
        if (o.given.f != f) continue;
        o.verdicts.emplace(o.given.of);
        o.worst_index = -1;
      }
    };
    const auto judge = [&](const RowBlock& bl) {
      const std::vector<OutputDecl> block_decls = bl.op->outputs();
      for (size_t k = 0; k < decls.size(); ++k) {
        Judged& o = outs[k];
        if (o.given.f != f) continue;
        const OutputValues<ref::Ball>* balls = bl.balls_of(k);
        const OutputValues<ref::mp>* x = balls ? nullptr : &bl.exact[k];
        if (o.given.gold && slice_rows(*o.given.gold, rows, bl.begin, bl.end) !=
                                (balls ? rounded_output(block_decls[k], bl.balls, k, o.given.of)
                                       : rounded_output(block_decls[k], *x, o.given.of))) {
          throw_damaged_golden(s, decls[k], o.given.of);
        }
        JudgeReference judged = blocks.reference(bl, k, ref::Format::f32, o.given.of);
        o.verdicts->add(judged, *o.given.got);
        // The worst element's reference, while its block's exact values are at hand.
        const int64_t w = o.verdicts->result().metrics.max_ulps_index;
        if (w != o.worst_index) {
          o.worst_index = w;
          const auto at = static_cast<size_t>(w - bl.begin * o.per_row);
          o.worst_expected = ref::decode<double>(
              o.given.of, balls ? ref::decided_bits(balls->values[at], o.given.of)
                                : ref::encode(o.given.of, x->values[at]));
        }
      }
    };
    const auto one_group_policy_failure = [&] {
      for (const Judged& o : outs) {
        if (o.given.f == f && o.how.uses_naive && o.how.group == 0 &&
            o.verdicts->result().count(FailReason::kPolicy) > 0) {
          return true;
        }
      }
      return false;
    };
    restart();
    blocks.judge_all(judge, one_group_policy_failure, restart);
  }
  for (size_t k = 0; k < decls.size(); ++k) {
    Judged& o = outs[k];
    CheckedOutput co;
    co.name = decls[k].name;
    co.format = std::string(ref::dtype_name(o.given.got->dtype()));
    co.verdict = o.verdicts->result();
    co.bound = bound_text(o.how.policy, o.given.of, co.verdict, r.recipe);
    if (o.worst_index >= 0) {
      co.worst_index = o.worst_index;
      co.worst_actual = o.given.got->get(o.worst_index);
      co.worst_expected = o.worst_expected;
      co.worst_ulps = co.verdict.metrics.max_ulps;
    }
    if (o.given.f == real_format) real_outputs[k] = o.given.got;
    if (r.pass && !co.verdict.pass && diagnose_row < 0) {
      diagnose_row = co.verdict.first_index / o.per_row;
    }
    r.pass = r.pass && co.verdict.pass;
    r.outputs.push_back(std::move(co));
  }
  if (diagnose_row < 0 && opt.diagnose) diagnose_row = 0;
  if (diagnose_row >= 0) {
    // The recipes ranked on the block of the first failure (the whole op's exact values are
    // what this path avoids holding).
    const int64_t b = diagnose_row / block_rows * block_rows, e = std::min(rows, b + block_rows);
    const std::unique_ptr<Op> part = op.with_rows(e - b);
    const InputSet in = row_slice(op, s.inputs_in(real_format), rows, b, e);
    std::vector<ref::Tensor> sliced(decls.size());
    std::vector<const ref::Tensor*> block_outputs(decls.size(), nullptr);
    for (size_t k = 0; k < decls.size(); ++k) {
      if (!real_outputs[k]) continue;
      sliced[k] = slice_rows(*real_outputs[k], rows, b, e);
      block_outputs[k] = &sliced[k];
    }
    r.diagnosis = diagnose(*part, c.op, in, exact_outputs(*part, in, {&real_format, 1}),
                           block_outputs, recipe, real_format);
  }
  return r;
}

}  // namespace

CheckReport check_golden(const std::filesystem::path& golden, const std::filesystem::path& actual,
                         const CheckOptions& options) {
  const SafetensorsContent a = read_safetensors(actual);
  // The golden file's inputs, top-k indices and the outputs in the formats the actual file
  // holds: its f64 outputs (half of a bf16 file's bytes and more) only where the kernel wrote
  // f64 (the others are never read).
  const SafetensorsContent g = read_safetensors(golden, [&](const std::string& key) {
    if (!key.starts_with("out.") || !key.ends_with(".f64")) return true;
    const auto it = a.tensors.find(key.substr(0, key.size() - 4));
    return it != a.tensors.end() && it->second.dtype() == ref::DType::f64;
  });
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
      throw InputError(gname, "in." + d.name,
                       "expected the shape " + shape_text(d.shape) + " of the case, got " +
                           shape_text(it->second.shape()));
    }
    in.add(d.name, it->second);
  }
  Source s;
  s.file = actual.string();
  s.outputs = &a.tensors;
  // A case with its own input_format judges every output format on the file's inputs as they
  // are (golden.h); the others on them converted to the output's format.
  s.inputs_in = [&](ref::Format f) { return c.input_format ? in : convert_inputs(*op, in, f); };
  s.topk_inputs = [&] { return in; };
  s.golden = &g;
  s.golden_file = gname;
  s.prefix = "out.";
  return judge_outputs(c, *op, s, options);
}

Case find_case(const std::string& id, const std::string& cases_dir) {
  for (Case& c : load_case_dir(cases_dir)) {
    if (c.id == id) return std::move(c);
  }
  throw InputError(cases_dir, "id", "expected a case with ID \"" + id + "\" in the case files");
}

InputSet reference_inputs(const Case& c, ref::Format f) { return make_inputs(c, *make_op(c), f); }

CheckReport check_outputs(const Case& c, const std::map<std::string, ref::Tensor>& outputs,
                          const CheckOptions& options) {
  const std::unique_ptr<Op> op = make_op(c);
  // The storage format the kernel ran in: that of its real outputs.
  std::optional<ref::Format> storage;
  for (const OutputDecl& d : op->outputs()) {
    const auto it = outputs.find(d.name);
    if (d.topk || d.format || it == outputs.end() || !ref::is_float(it->second.dtype())) continue;
    const ref::Format f = ref::dtype_format(it->second.dtype());
    if (storage && *storage != f) {
      throw InputError("kernel outputs", d.name,
                       "expected every real output in one storage format, got " +
                           std::string(ref::format_name(*storage)) + " and " +
                           std::string(ref::format_name(f)));
    }
    storage = f;
  }
  const ref::Format topk_format = storage.value_or(c.formats.front());
  Source s;
  s.file = "kernel outputs";
  s.outputs = &outputs;
  s.inputs_in = [&](ref::Format f) { return make_inputs(c, *op, f); };
  s.topk_inputs = [&] { return make_inputs(c, *op, topk_format); };
  return judge_outputs(c, *op, s, options);
}

CheckReport check_outputs(const Case& c, const InputSet& in,
                          const std::map<std::string, ref::Tensor>& outputs,
                          const CheckOptions& options) {
  const std::unique_ptr<Op> op = make_op(c);
  Source s;
  s.file = "kernel outputs";
  s.outputs = &outputs;
  // The inputs as the kernel read them, whatever format its outputs are in (f32 inputs with
  // bf16 outputs, or bf16 inputs with f32 outputs): the reference of what it was given.
  s.inputs_in = [&](ref::Format) { return in; };
  s.topk_inputs = [&] { return in; };
  return judge_outputs(c, *op, s, options);
}

std::string to_text(const CheckReport& r) {
  std::string s = "case " + r.case_id + "\n";
  if (r.recipe != "strict") s += "  recipe " + r.recipe + "\n";
  for (const CheckedOutput& o : r.outputs) {
    s += "  out." + o.name + " (" + o.format + "): " + (o.verdict.pass ? "pass" : "FAIL") + ", " +
         std::to_string(o.verdict.failed) + " of " + std::to_string(o.verdict.elements) +
         " elements fail";
    if (o.worst_index >= 0) {
      s += "; worst element " + std::to_string(o.worst_index) + ": actual " + num(o.worst_actual) +
           ", expected " + num(o.worst_expected) + ", " + std::to_string(o.worst_ulps) + " ulp";
    }
    if (!o.bound.empty()) s += "; bound " + o.bound;
    s += "\n";
    if (!o.verdict.pass) s += "    first failure: " + o.verdict.detail + "\n";
  }
  if (!r.diagnosis.empty()) {
    s += "  diagnosis (recipes ranked by how closely each reproduces the outputs):\n";
    for (size_t i = 0; i < r.diagnosis.size() && i < 5; ++i) {
      s += "    " + to_text(r.diagnosis[i]) + "\n";
    }
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
  nlohmann::json diag = nlohmann::json::array();
  for (const RecipeMatch& m : r.diagnosis) {
    diag.push_back({{"recipe", m.recipe}, {"equal", m.equal}, {"correlation", m.correlation}});
  }
  return {{"case", r.case_id},
          {"recipe", r.recipe},
          {"pass", r.pass},
          {"outputs", outs},
          {"diagnosis", diag}};
}

}  // namespace lmo::oracle
