#include "oracle/check/check.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>

#include "oracle/cases/case_inputs.h"
#include "oracle/core/certified.h"
#include "oracle/core/row_slice.h"
#include "oracle/golden/golden_content.h"
#include "oracle/golden/safetensors.h"
#include "oracle/judge/judging.h"
#include "oracle/judge/verdict_text.h"

namespace lmo::oracle {
namespace {

using verdict_text::num;

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s;
  for (int64_t e : shape) s += (s.empty() ? "" : ", ") + std::to_string(e);
  return "[" + s + "]";
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

// The top-k output as given: expert indices in I64 or I32.
void check_indices(const Source& s, const OutputDecl& d, const ref::Tensor& got) {
  if (got.dtype() != ref::DType::i64 && got.dtype() != ref::DType::i32) {
    throw InputError(s.file, s.prefix + d.name,
                     "expected expert indices as I64 or I32, got " +
                         std::string(ref::dtype_name(got.dtype())));
  }
}

CheckReport judge_outputs(const Case& c, const Op& op, const Source& s, const CheckOptions& opt) {
  CheckReport r;
  r.case_id = c.id;
  const Recipe recipe = opt.recipe.value_or(c.recipe);
  r.recipe = recipe.text();
  const std::vector<OutputDecl> decls = op.outputs();
  const ref::Format storage = real_storage(c, s, decls);
  // Each output as the kernel gave it, and the storage formats they are given in: the top-k
  // outputs are judged with the first (the kernel's real storage), and the values on the
  // selection that call found; the recipes are ranked on the outputs of the first real output's.
  std::vector<GivenOutput> given(decls.size());
  std::vector<ref::Format> formats;
  const auto add_format = [&](ref::Format f) {
    if (std::find(formats.begin(), formats.end(), f) == formats.end()) formats.push_back(f);
  };
  std::optional<ref::Format> real_format;
  for (size_t k = 0; k < decls.size(); ++k) {
    if (decls[k].topk) {
      check_indices(s, decls[k], output_of(c, s, decls[k]));
      add_format(storage);
      continue;
    }
    given[k] = given_output(c, s, decls[k], storage);
    if (!real_format) real_format = given[k].f;
    add_format(given[k].f);
  }
  const int64_t rows = op.independent_rows();
  std::map<size_t, CheckedOutput> checked;
  std::optional<std::vector<int64_t>> selection;
  std::optional<InputSet> topk_in;
  const auto judge_format = [&](ref::Format f, bool topk, Diagnosis diagnosis) {
    KernelOutputs ko;  // computing in f32, as the strict recipe's naive kernel does
    ko.tensors.assign(decls.size(), nullptr);
    for (size_t k = 0; k < decls.size(); ++k) {
      if (decls[k].topk ? topk : given[k].f == f) ko.tensors[k] = &output_of(c, s, decls[k]);
    }
    JudgingOptions jo;
    jo.recipe = recipe;
    jo.diagnosis = diagnosis;
    jo.selection = selection;
    if (topk) {
      topk_in = s.topk_inputs();
      jo.topk_in = &*topk_in;
    }
    if (s.golden) {
      // The file's outputs must be the correct rounding of its own reference (of the reference's
      // selection, whichever the values are judged on).
      jo.expected = [&](size_t k, ref::Format of, const ref::Tensor& expected, int64_t b,
                        int64_t e) {
        const OutputDecl& d = decls[k];
        if (d.topk) {
          const std::string gkey = golden_output_name(d, ref::Format::f64);
          const auto g = s.golden->tensors.find(gkey);
          if (g == s.golden->tensors.end() || g->second != expected) {
            throw InputError(s.golden_file, gkey,
                             "expected the reference's selection on the file's inputs; it is "
                             "missing or differs (the file was damaged or edited)");
          }
          return;
        }
        const ref::Tensor& gold = *given[k].gold;
        if ((gold.numel() == expected.numel() ? gold : slice_rows(gold, rows, b, e)) != expected) {
          throw_damaged_golden(s, d, of);
        }
      };
    }
    const InputSet in = s.inputs_in(f);
    return judge_kernels(op, c.op, in, f, {&ko, 1}, jo).front();
  };
  const Diagnosis diagnosis = opt.diagnose ? Diagnosis::kAlways : Diagnosis::kOnFailure;
  for (size_t i = 0; i < formats.size(); ++i) {
    const ref::Format f = formats[i];
    const bool topk = i == 0 && std::any_of(decls.begin(), decls.end(),
                                             [](const OutputDecl& d) { return d.topk; });
    KernelJudgement j = judge_format(f, topk, f == real_format ? diagnosis : Diagnosis::kNever);
    if (j.selection) selection = j.selection;
    for (size_t k = 0; k < decls.size(); ++k) {
      if (!j.outputs[k]) continue;
      OutputJudgement& oj = *j.outputs[k];
      CheckedOutput co;
      co.name = decls[k].name;
      co.format = std::string(ref::dtype_name(output_of(c, s, decls[k]).dtype()));
      co.bound = std::move(oj.bound);
      co.worst_index = oj.worst_index;
      if (oj.worst_index >= 0) {
        co.worst_actual = oj.worst_actual;
        co.worst_expected = oj.worst_expected;
        co.worst_exact = std::move(oj.worst_exact);
        co.worst_ulps = oj.verdict.metrics.max_ulps;
      }
      co.verdict = std::move(oj.verdict);
      checked.emplace(k, std::move(co));
    }
    r.pass = r.pass && j.pass;
    if (f == real_format) r.diagnosis = std::move(j.diagnosis);
  }
  // A failure in another format than the first real output's: the recipes ranked on that one's.
  if (!r.pass && r.diagnosis.empty() && real_format) {
    const bool topk = formats.front() == *real_format &&
                      std::any_of(decls.begin(), decls.end(), [](const OutputDecl& d) { return d.topk; });
    r.diagnosis = judge_format(*real_format, topk, Diagnosis::kAlways).diagnosis;
  }
  for (auto& [k, co] : checked) r.outputs.push_back(std::move(co));
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
  // An inputs-only file (a challenge) holds no outputs to verify its inputs by: its own hash of
  // them does.
  const bool inputs_only = is_inputs_only(g);
  if (inputs_only) {
    const auto h = g.metadata.find("inputs_sha256");
    if (h == g.metadata.end() || h->second != inputs_sha256(g)) {
      throw InputError(gname, "__metadata__.inputs_sha256",
                       "expected the SHA-256 of the file's inputs as written; it is missing or "
                       "differs (the file was damaged or edited)");
    }
  }

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
  s.golden = inputs_only ? nullptr : &g;
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
           ", expected " + num(o.worst_expected) + " (exact " + o.worst_exact + "), " +
           std::to_string(o.worst_ulps) + " ulp";
    }
    if (!o.bound.empty()) s += "; bound " + o.bound;
    s += "\n";
    if (!o.verdict.pass) s += "    first failure: " + o.verdict.detail + "\n";
  }
  if (!r.diagnosis.empty()) {
    s += "  diagnosis (recipes ranked by the share of elements within each one's own bound):\n";
    if (!r.pass && !explains(r.diagnosis.front())) {
      // Not even the best candidate holds every element: the errors are no recipe's, and the
      // worst one is shown with its exact value, for a look at the kernel itself. (A passing
      // kernel is explained by the recipe it passed under, whatever a block's ranking says.)
      s += "    no recipe explains these errors\n";
      for (const CheckedOutput& o : r.outputs) {
        if (o.verdict.pass || o.worst_index < 0) continue;
        s += "    worst element of out." + o.name + ": [" + std::to_string(o.worst_index) +
             "] = " + num(o.worst_actual) + ", exact " + o.worst_exact + "\n";
      }
    }
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
                                  {"worst_exact", o.worst_exact},
                                  {"worst_ulps", o.worst_ulps},
                                  {"bound", o.bound},
                                  {"detail", o.verdict.detail}});
  }
  nlohmann::json diag = nlohmann::json::array();
  for (const RecipeMatch& m : r.diagnosis) {
    diag.push_back({{"recipe", m.recipe},
                    {"explained", m.explained},
                    {"correlation", m.correlation},
                    {"equal", m.equal}});
  }
  return {{"case", r.case_id},
          {"recipe", r.recipe},
          {"pass", r.pass},
          {"outputs", outs},
          {"diagnosis", diag}};
}

}  // namespace lmo::oracle
