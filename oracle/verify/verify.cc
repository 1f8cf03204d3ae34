#include "oracle/verify/verify.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <tuple>

#include "oracle/backends/kernel_call.h"
#include "oracle/cases/case_inputs.h"
#include "oracle/core/certified.h"
#include "oracle/core/row_slice.h"
#include "oracle/core/stopwatch.h"
#include "oracle/ops/policy_table.h"
#include "oracle/judge/judging.h"
#include "oracle/ops/registry.h"

namespace lmo::oracle {
namespace {

std::string fmt(ref::Format f) { return std::string(ref::dtype_name(ref::format_dtype(f))); }

}  // namespace

std::vector<Backend*> select_backends(const std::vector<std::unique_ptr<Backend>>& all,
                                      const std::vector<std::string>& names) {
  std::vector<Backend*> out;
  if (names.empty()) {
    for (const auto& b : all) {
      if (b->in_default_run()) out.push_back(b.get());
    }
    return out;
  }
  for (const std::string& n : names) {
    bool found = false;
    for (const auto& b : all) {
      if (!backend_selected_by(n, b->name())) continue;
      found = true;
      if (std::find(out.begin(), out.end(), b.get()) == out.end()) out.push_back(b.get());
    }
    if (!found) {
      std::string known;
      for (const auto& b : all) known += (known.empty() ? "" : ", ") + b->name();
      throw InputError("command line", "--backend",
                       "unknown backend \"" + n + "\" (available here: " + known +
                           "; \"fast\" selects every fast-<target>)");
    }
  }
  return out;
}

std::vector<Case> filter_cases(const std::vector<Case>& cases, const std::string& filter) {
  if (filter.empty()) return cases;
  std::regex re;
  try {
    re = std::regex(filter);
  } catch (const std::regex_error& e) {
    throw InputError("command line", "--filter",
                     "expected a regular expression, got \"" + filter + "\": " + e.what());
  }
  std::vector<Case> out;
  for (const Case& c : cases) {
    if (std::regex_search(c.id, re)) out.push_back(c);
  }
  return out;
}

double case_bytes(const Case& c, const Op& op) {
  double most = 0;
  for (ref::Format f : c.formats) {
    const auto real = static_cast<double>(ref::dtype_size(ref::format_dtype(f)));
    double bytes = 0;
    for (const InputDecl& d : op.inputs()) {
      double n = 1;
      for (int64_t e : d.shape) n *= static_cast<double>(e);
      bytes += n * (d.dtype ? static_cast<double>(ref::dtype_size(*d.dtype)) : real);
    }
    for (const OutputDecl& d : op.outputs()) {
      double n = 1;
      for (int64_t e : d.shape) n *= static_cast<double>(e);
      bytes += n * (d.topk     ? static_cast<double>(ref::dtype_size(ref::DType::i64))
                    : d.format ? static_cast<double>(ref::dtype_size(ref::format_dtype(*d.format)))
                               : real);
    }
    most = std::max(most, bytes);
  }
  return most;
}

void check_costs(const std::vector<Case>& cases, const VerifyOptions& o) {
  for (const Case& c : cases) {
    const std::unique_ptr<Op> op = make_op(c);
    const double cost = op->cost() * static_cast<double>(c.formats.size());
    if (cost > o.max_cost) {
      // The memory too, from the declared shapes alone: nothing has been allocated yet.
      char buf[240];
      std::snprintf(buf, sizeof buf,
                    "the reference cost estimate %.3g operations exceeds the limit %.3g "
                    "(raise it with --max-cost, or reduce the shapes); its inputs and outputs "
                    "alone would take %.3g bytes",
                    cost, o.max_cost, case_bytes(c, *op));
      throw InputError(c.file, c.path, std::string("case ") + c.id + ": " + buf);
    }
  }
}

std::vector<VerifyRow> run_and_judge(const Case& c, const Op& op, ref::Format storage,
                                     const std::vector<Backend*>& backends,
                                     const RunContext& ctx, VerifyTimes* times,
                                     int64_t block_rows) {
  const std::vector<OutputDecl> decls = op.outputs();
  if (block_rows < 0) block_rows = rows_per_block(op, decls);
  // The whole op's reference values first, so their time is not charged to a backend (at real
  // shapes the blocks hold their own, one block at a time).
  if (block_rows == 0) (void)ctx.exact();
  struct Run {
    Backend* backend = nullptr;
    VerifyRow row;
    std::vector<GuardedBuffer> bufs;
    std::vector<ref::Tensor> got;  // the buffers' payloads, copied once
    bool ran = false;
  };
  std::vector<Run> runs;
  for (Backend* b : backends) {
    Run r;
    r.backend = b;
    r.row.case_id = c.id;
    r.row.op = c.op;
    r.row.backend = b->name();
    r.row.format = storage;
    r.bufs = armed_outputs(op, storage);
    const auto t0 = SteadyClock::now();
    try {
      b->run(ctx, r.bufs);
      r.ran = true;
      for (const GuardedBuffer& buf : r.bufs) r.got.push_back(buf.tensor());
    } catch (const std::exception& e) {
      r.row.pass = false;
      r.row.detail = std::string("the backend threw: ") + e.what();
    }
    r.row.seconds = seconds_since(t0);
    if (times && b->name().rfind("ref", 0) != 0) times->backends += r.row.seconds;
    runs.push_back(std::move(r));
  }
  // Each backend is judged under the recipe it follows (recipe.h, judged_recipe: the case's,
  // or its own declaration where the case names none, with its declared modifiers): one
  // judge_kernels call per recipe, the backends that share one judged together (sharing its
  // naive run and each output's reference), in order of first appearance.
  const KernelEntry entry = kernel_entry(c.op);
  std::vector<std::pair<Recipe, std::vector<Run*>>> groups;
  for (Run& r : runs) {
    const Recipe recipe = judged_recipe(c.recipe, r.backend->declared_recipe(entry));
    r.row.recipe = recipe.text();
    if (!r.ran) continue;
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const auto& x) { return x.first == recipe; });
    if (g == groups.end()) g = groups.insert(groups.end(), {recipe, {}});
    g->second.push_back(&r);
  }
  for (auto& [recipe, judged] : groups) {
    std::vector<KernelOutputs> kernels;
    for (Run* r : judged) {
      KernelOutputs ko;
      ko.compute = r->backend->compute_format();
      for (size_t k = 0; k < decls.size(); ++k) {
        ko.tensors.push_back(&r->got[k]);
        ko.buffers.push_back(&r->bufs[k]);
      }
      kernels.push_back(std::move(ko));
    }
    // A failing row names the named recipe that explains it, or says that none does; ops
    // without rounding points have only strict to offer: nothing to rank.
    JudgingOptions jo;
    jo.recipe = recipe;
    jo.diagnosis = op.rounding_points().empty() ? Diagnosis::kNever : Diagnosis::kOnFailure;
    jo.diagnose_variants = false;
    jo.block_rows = block_rows;
    if (block_rows == 0) {
      jo.exact = ctx.exact;
      jo.strict_naive = ctx.simulated;
    } else if (times) {
      jo.times = {&times->reference, &times->naive, &times->judging};
    }
    const auto t1 = SteadyClock::now();
    std::vector<KernelJudgement> js;
    try {
      js = judge_kernels(op, c.op, ctx.in, storage, kernels, jo);
    } catch (const RecipeError& e) {
      // The case's own recipe not fitting the op is bad input, as before; a backend's declaration
      // not fitting it is that backend's error: its rows fail, the other groups are judged.
      if (recipe == c.recipe) throw;
      for (Run* r : judged) {
        r->row.pass = false;
        r->row.detail = "the backend's declared recipe " + recipe.text() +
                        " does not fit op " + c.op + ": " + e.what();
      }
      continue;
    }
    if (times && block_rows == 0) times->judging += seconds_since(t1);
    for (size_t i = 0; i < js.size(); ++i) {
      VerifyRow& row = judged[i]->row;
      for (size_t k = 0; k < decls.size(); ++k) {
        Verdict& v = js[i].outputs[k]->verdict;
        if (!decls[k].topk) {
          row.max_ulps = std::max(row.max_ulps, v.metrics.max_ulps);
          row.max_rel = std::max(row.max_rel, static_cast<double>(v.metrics.max_rel));
        }
        row.outputs.push_back({decls[k].name, std::move(v)});
      }
      row.pass = js[i].pass;
      row.detail = js[i].first_failure;
      if (!js[i].diagnosis.empty()) {
        const RecipeMatch& best = js[i].diagnosis.front();
        row.detail += explains(best) ? " (diagnosis: explained by " + to_text(best) + ")"
                                     : " (diagnosis: no recipe explains these errors; closest " +
                                           to_text(best) + ")";
      }
    }
  }
  std::vector<VerifyRow> rows;
  for (Run& r : runs) rows.push_back(std::move(r.row));
  return rows;
}

VerifyRow run_and_judge(const Case& c, const Op& op, ref::Format storage, Backend& backend,
                        const RunContext& ctx, VerifyTimes* times) {
  return std::move(run_and_judge(c, op, storage, {&backend}, ctx, times).front());
}

VerifyReport verify(const std::vector<Case>& cases, const std::vector<Backend*>& backends,
                    const VerifyOptions& o,
                    const std::function<void(int64_t, int64_t, const std::string&)>& progress) {
  VerifyReport rep;
  int64_t total = 0;
  for (const Case& c : cases) {
    for (ref::Format f : c.formats) {
      total +=
          o.formats.empty() || std::find(o.formats.begin(), o.formats.end(), f) != o.formats.end();
    }
  }
  int64_t done = 0;
  for (const Case& c : cases) {
    bool counted = false;
    const std::unique_ptr<Op> op = make_op(c);
    NormalDraws draws;  // the case's normal inputs, drawn once for all its formats
    for (ref::Format storage : c.formats) {
      if (!o.formats.empty() &&
          std::find(o.formats.begin(), o.formats.end(), storage) == o.formats.end()) {
        continue;
      }
      if (progress) progress(done, total, c.id + " " + fmt(storage));
      ++done;
      std::vector<Backend*> runnable;
      for (Backend* b : backends) {
        // The kernel backends read their inputs in their storage format; a case with inputs in
        // another format runs on the reference backends only.
        const bool mixed = c.input_format && *c.input_format != storage;
        const std::string why = mixed && b->name().rfind("ref", 0) != 0
                                    ? "inputs in " +
                                          std::string(ref::format_name(*c.input_format)) +
                                          ", outputs in " + std::string(ref::format_name(storage)) +
                                          ": kernel backends take one storage format"
                                    : b->unsupported(c, *op, storage);
        if (why.empty()) {
          runnable.push_back(b);
          continue;
        }
        ++rep.skipped;
        auto s = std::find_if(rep.skips.begin(), rep.skips.end(),
                              [&](const VerifyReport::Skip& k) { return k.reason == why; });
        if (s == rep.skips.end()) s = rep.skips.insert(rep.skips.end(), {why, {}, 0});
        ++s->count;
        if (std::find(s->backends.begin(), s->backends.end(), b->name()) == s->backends.end()) {
          s->backends.push_back(b->name());
        }
      }
      if (runnable.empty()) continue;
      if (!counted) ++rep.cases;
      counted = true;
      auto t0 = SteadyClock::now();
      const InputSet in = make_inputs(c, *op, storage, &draws);
      rep.times.inputs += seconds_since(t0);
      std::optional<Outputs<ref::mp>> exact;
      std::map<ref::Format, Outputs<double>> sims;
      RunContext ctx{c,
                     *op,
                     storage,
                     in,
                     [&]() -> const Outputs<ref::mp>& {
                       if (!exact) {
                         const auto t = SteadyClock::now();
                         exact = exact_outputs(*op, in, {&storage, 1});
                         rep.times.reference += seconds_since(t);
                       }
                       return *exact;
                     },
                     [&](ref::Format f) -> const Outputs<double>& {
                       auto it = sims.find(f);
                       if (it == sims.end()) {
                         const auto t = SteadyClock::now();
                         it = sims.emplace(f, op->simulated(f, in)).first;
                         rep.times.naive += seconds_since(t);
                       }
                       return it->second;
                     }};
      // At real shapes, an op with independent rows is judged a block of rows at a time.
      for (VerifyRow& row : run_and_judge(c, *op, storage, runnable, ctx, &rep.times)) {
        (row.pass ? rep.passed : rep.failed) += 1;
        rep.rows.push_back(std::move(row));
      }
    }
  }
  return rep;
}

std::string to_table(const VerifyReport& r) {
  size_t w = 4;
  for (const VerifyRow& row : r.rows) w = std::max(w, row.case_id.size());
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-*s  %-10s  %-6s  %8s  %11s  %s\n", static_cast<int>(w), "case",
                "backend", "format", "max ulp", "max rel err", "verdict");
  out += buf;
  for (const VerifyRow& row : r.rows) {
    std::snprintf(buf, sizeof buf, "%-*s  %-10s  %-6s  %8lld  %11.3g  %s\n", static_cast<int>(w),
                  row.case_id.c_str(), row.backend.c_str(), fmt(row.format).c_str(),
                  static_cast<long long>(row.max_ulps), row.max_rel, row.pass ? "pass" : "FAIL");
    out += buf;
  }
  bool header = false;
  for (const VerifyRow& row : r.rows) {
    if (row.pass) continue;
    if (!header) out += "\nfailures:\n";
    header = true;
    out += "  " + row.case_id + " [" + row.backend + ", " + fmt(row.format) + "]: " + row.detail +
           "\n";
  }
  if (!r.skips.empty()) out += "\nnot run (unsupported, not a failure):\n";
  for (const VerifyReport::Skip& s : r.skips) {
    std::string names;
    for (const std::string& b : s.backends) names += (names.empty() ? "" : ", ") + b;
    out += "  " + s.reason + ": " + names + " (" + std::to_string(s.count) + " case-format runs)\n";
  }
  return out;
}

nlohmann::json to_json(const VerifyReport& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const VerifyRow& row : r.rows) {
    nlohmann::json outs = nlohmann::json::array();
    for (const OutputVerdict& o : row.outputs) {
      outs.push_back(nlohmann::json{{"name", o.name},
                                    {"pass", o.verdict.pass},
                                    {"reason", std::string(fail_reason_name(o.verdict.reason))},
                                    {"failed", o.verdict.failed},
                                    {"elements", o.verdict.elements},
                                    {"forgiven", o.verdict.forgiven},
                                    {"max_ulps", o.verdict.metrics.max_ulps},
                                    {"max_rel", static_cast<double>(o.verdict.metrics.max_rel)},
                                    {"naive_bound", o.verdict.naive_bound},
                                    {"detail", o.verdict.detail}});
    }
    rows.push_back(nlohmann::json{{"case", row.case_id},
                                  {"op", row.op},
                                  {"backend", row.backend},
                                  {"format", fmt(row.format)},
                                  {"verdict", row.pass ? "pass" : "fail"},
                                  {"max_ulps", row.max_ulps},
                                  {"max_rel", row.max_rel},
                                  {"recipe", row.recipe},
                                  {"detail", row.detail},
                                  {"outputs", outs},
                                  {"seconds", row.seconds}});
  }
  nlohmann::json skips = nlohmann::json::array();
  for (const VerifyReport::Skip& s : r.skips) {
    skips.push_back({{"reason", s.reason}, {"backends", s.backends}, {"count", s.count}});
  }
  return {{"rows", rows},
          {"cases", r.cases},
          {"passed", r.passed},
          {"failed", r.failed},
          {"skipped", r.skipped},
          {"skips", skips},
          {"seconds",
           {{"inputs", r.times.inputs},
            {"reference", r.times.reference},
            {"naive", r.times.naive},
            {"backends", r.times.backends},
            {"judging", r.times.judging}}}};
}

}  // namespace lmo::oracle
