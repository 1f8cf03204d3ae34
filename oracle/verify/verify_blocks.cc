#include "oracle/verify/verify_blocks.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>

#include "oracle/backends/kernel_call.h"
#include "oracle/core/certified.h"
#include "oracle/core/row_slice.h"
#include "oracle/core/stopwatch.h"
#include "oracle/judge/policy_table.h"
#include "oracle/judge/recipe_judge.h"
#include "oracle/judge/row_blocks.h"

namespace lmo::oracle {
namespace {

// A backend's run: its outputs (whole) and, output by output, the verdicts of the blocks so far.
struct Run {
  Backend* backend = nullptr;
  VerifyRow row;
  std::vector<GuardedBuffer> bufs;
  std::vector<ref::Tensor> got;  // the buffers' payloads, copied once
  bool ran = false;
  std::vector<BlockVerdicts> verdicts;
};

}  // namespace

std::vector<VerifyRow> run_and_judge_in_blocks(const Case& c, const Op& op, ref::Format storage,
                                               const std::vector<Backend*>& backends,
                                               const RunContext& ctx, int64_t block_rows,
                                               VerifyTimes* times) {
  const std::vector<OutputDecl> decls = op.outputs();
  const int64_t rows = op.independent_rows();
  const BoundRecipe bound = bind_recipe(c.recipe, c.op, op, storage);
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
  std::vector<std::optional<RecipeJudging>> how;
  std::set<ref::Format> computes;  // of the backends that ran
  for (const OutputDecl& d : decls)
    how.push_back(judging_under(policy_for(c.op, d.name), d, bound));
  for (const Run& r : runs) {
    if (r.ran) computes.insert(r.backend->compute_format());
  }
  const bool any_ran = std::any_of(runs.begin(), runs.end(), [](const Run& r) { return r.ran; });
  RowBlocks blocks(
      op, ctx.in, storage, bound, how, computes, block_rows,
      times ? RowBlockTimes{&times->reference, &times->naive, &times->judging} : RowBlockTimes{});
  const auto restart = [&] {
    for (Run& r : runs) {
      r.verdicts.clear();
      for (const OutputDecl& d : decls) r.verdicts.emplace_back(output_format(d, storage));
    }
  };
  const auto judge = [&](const RowBlock& bl) {
    const auto t = SteadyClock::now();
    for (size_t k = 0; k < decls.size(); ++k) {
      // One reference per compute format, shared by the backends that compute in it.
      std::map<ref::Format, JudgeReference> judged;
      for (Run& r : runs) {
        if (!r.ran) continue;
        const ref::Format f = r.backend->compute_format();
        auto it = judged.find(f);
        if (it == judged.end()) {
          it =
              judged.emplace(f, blocks.reference(bl, k, f, output_format(decls[k], storage))).first;
        }
        r.verdicts[k].add(it->second, r.got[k], &r.bufs[k]);
      }
    }
    if (times) times->judging += seconds_since(t);
  };
  const auto one_group_policy_failure = [&] {
    for (const Run& r : runs) {
      for (size_t k = 0; r.ran && k < decls.size(); ++k) {
        if (how[k]->uses_naive && how[k]->group == 0 &&
            r.verdicts[k].result().count(FailReason::kPolicy) > 0) {
          return true;
        }
      }
    }
    return false;
  };
  restart();
  if (any_ran) blocks.judge_all(judge, one_group_policy_failure, restart);
  std::vector<VerifyRow> out;
  for (Run& r : runs) {
    if (r.ran) {
      int64_t failed_row = -1;
      for (size_t k = 0; k < decls.size(); ++k) {
        Verdict v = r.verdicts[k].result(&r.bufs[k]);
        r.row.max_ulps = std::max(r.row.max_ulps, v.metrics.max_ulps);
        r.row.max_rel = std::max(r.row.max_rel, static_cast<double>(v.metrics.max_rel));
        if (!v.pass && r.row.pass) {
          r.row.pass = false;
          r.row.detail = "output " + decls[k].name + ": " + v.detail;
          failed_row = std::clamp<int64_t>(v.first_index, 0, blocks.per_row(k) * rows - 1) /
                       blocks.per_row(k);
        }
        r.row.outputs.push_back({decls[k].name, std::move(v)});
      }
      if (failed_row >= 0 && !op.rounding_points().empty()) {
        // The closest recipe, ranked on the block of the first failure (run_and_judge ranks
        // them on the whole op, whose exact values this path does not hold).
        const int64_t b = failed_row / block_rows * block_rows;
        const int64_t e = std::min(rows, b + block_rows);
        const RowBlock bl = blocks.block(b, e, true);
        std::vector<ref::Tensor> sliced;
        sliced.reserve(decls.size());
        for (size_t k = 0; k < decls.size(); ++k) {
          sliced.push_back(slice_rows(r.got[k], rows, b, e));
        }
        std::vector<const ref::Tensor*> got;
        for (const ref::Tensor& t : sliced) got.push_back(&t);
        const std::vector<RecipeMatch> diag =
            diagnose(*bl.op, c.op, bl.in, bl.exact, got, c.recipe, storage, false);
        if (!diag.empty()) r.row.detail += " (closest recipe: " + to_text(diag.front()) + ")";
      }
    }
    out.push_back(std::move(r.row));
  }
  return out;
}

}  // namespace lmo::oracle
