#include "oracle/verify/verify.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <tuple>

#include "oracle/backends/kernel_call.h"
#include "oracle/core/case_inputs.h"
#include "oracle/core/certified.h"
#include "oracle/core/row_slice.h"
#include "oracle/core/stopwatch.h"
#include "oracle/judge/policy_table.h"
#include "oracle/judge/recipe_judge.h"
#include "oracle/judge/topk_pairing.h"
#include "oracle/verify/verify_blocks.h"

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

VerifyRow run_and_judge(const Case& c, const Op& op, ref::Format storage, Backend& backend,
                        const RunContext& ctx, VerifyTimes* times, SharedJudging* shared) {
  VerifyRow row;
  row.case_id = c.id;
  row.op = c.op;
  row.backend = backend.name();
  row.format = storage;
  const std::vector<OutputDecl> decls = op.outputs();
  std::vector<GuardedBuffer> bufs = armed_outputs(op, storage);
  // The reference values first, so their time is not charged to the backend.
  const Outputs<ref::mp>& exact = ctx.exact();
  const auto t0 = SteadyClock::now();
  try {
    backend.run(ctx, bufs);
  } catch (const std::exception& e) {
    row.pass = false;
    row.detail = std::string("the backend threw: ") + e.what();
    row.seconds = seconds_since(t0);
    return row;
  }
  const bool is_ref = backend.name().rfind("ref", 0) == 0;
  if (times && !is_ref) times->backends += seconds_since(t0);
  const auto t1 = SteadyClock::now();
  // The case's recipe (recipe.h): strict unless the case or --recipe names another.
  const BoundRecipe bound = bind_recipe(c.recipe, c.op, op, storage);
  // The top-k outputs first. Where a backend's selection differs from the reference's within
  // the tie margin, the values paired with it (the gates) are judged on the backend's own
  // selection, as check does (Op::with_selection): exact values and naive run of that op.
  std::map<size_t, Verdict> selections;
  std::unique_ptr<Op> own;
  for (size_t k = 0; k < decls.size(); ++k) {
    const OutputDecl& d = decls[k];
    if (!d.topk) continue;
    const Policy policy = judging_under(policy_for(c.op, d.name), d, bound).policy;
    Verdict v = judge_topk(policy, exact[k].values, d.topk_experts, exact[k].indices, bufs[k],
                           d.topk_groups);
    if (v.pass) {
      if (auto sel = differing_selection(bufs[k].tensor(), exact[k].indices)) {
        own = op.with_selection(std::move(*sel));
      }
    }
    selections.emplace(k, std::move(v));
  }
  std::optional<Outputs<ref::mp>> own_exact;
  if (own) own_exact = exact_outputs(*own, ctx.in);
  const Outputs<ref::mp>& values_exact = own ? *own_exact : exact;
  const Op& values_op = own ? *own : op;
  std::optional<Outputs<double>> recipe_run;
  for (size_t k = 0; k < decls.size(); ++k) {
    const OutputDecl& d = decls[k];
    const RecipeJudging how = judging_under(policy_for(c.op, d.name), d, bound);
    const Policy& policy = how.policy;
    Verdict v;
    if (d.topk) {
      v = std::move(selections.at(k));
    } else {
      const OutputValues<double>* naive = nullptr;
      if (how.uses_naive) {
        if (bound.is_strict() && !own) {
          naive = &ctx.simulated(backend.compute_format())[k];
        } else {
          if (!recipe_run) {
            recipe_run = values_op.simulated(backend.compute_format(), ctx.in, bound);
          }
          naive = &(*recipe_run)[k];
        }
      }
      const JudgeOptions jo =
          judge_options(how, values_exact[k], naive, backend.compute_format(), bound);
      // Shared judging holds the case's own values: not for a backend's own selection.
      if (shared && !own) {
        const std::pair<size_t, ref::Format> key(k, jo.compute);
        auto it = shared->find(key);
        if (it == shared->end()) {
          it = shared
                   ->emplace(std::piecewise_construct, std::forward_as_tuple(key),
                             std::forward_as_tuple(policy, exact[k].values,
                                                   output_format(d, storage), jo))
                   .first;
        }
        v = judge(it->second, bufs[k]);
      } else {
        v = judge(policy, values_exact[k].values, bufs[k], jo);
      }
      row.max_ulps = std::max(row.max_ulps, v.metrics.max_ulps);
      row.max_rel = std::max(row.max_rel, static_cast<double>(v.metrics.max_rel));
    }
    if (!v.pass && row.pass) {
      row.pass = false;
      row.detail = "output " + d.name + ": " + v.detail;
    }
    row.outputs.push_back({d.name, std::move(v)});
  }
  if (!row.pass && op.rounding_points().size() > 0) {
    // Which named recipe the backend's outputs follow (recipe_judge.h): the failure's signature.
    // Ops without rounding points have only strict to offer: nothing to rank.
    std::vector<ref::Tensor> tensors;
    tensors.reserve(decls.size());
    for (size_t k = 0; k < decls.size(); ++k) tensors.push_back(bufs[k].tensor());
    std::vector<const ref::Tensor*> got;
    for (size_t k = 0; k < decls.size(); ++k) {
      got.push_back(decls[k].topk ? nullptr : &tensors[k]);
    }
    const std::vector<RecipeMatch> diag =
        diagnose(values_op, c.op, ctx.in, values_exact, got, c.recipe, storage, false);
    if (!diag.empty()) row.detail += " (closest recipe: " + to_text(diag.front()) + ")";
  }
  if (times) times->judging += seconds_since(t1);
  row.seconds = seconds_since(t0);
  return row;
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
      if (const int64_t block_rows = rows_per_block(*op, op->outputs()); block_rows > 0) {
        for (VerifyRow& row :
             run_and_judge_in_blocks(c, *op, storage, runnable, ctx, block_rows, &rep.times)) {
          (row.pass ? rep.passed : rep.failed) += 1;
          rep.rows.push_back(std::move(row));
        }
        continue;
      }
      SharedJudging shared;
      for (Backend* b : runnable) {
        VerifyRow row = run_and_judge(c, *op, storage, *b, ctx, &rep.times, &shared);
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
