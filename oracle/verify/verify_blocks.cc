#include "oracle/verify/verify_blocks.h"

#include <algorithm>
#include <chrono>
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
#include "oracle/judge/policy_table.h"
#include "oracle/judge/recipe_judge.h"
#include "oracle/judge/whole_naive_max.h"

namespace lmo::oracle {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A backend's run: its outputs (whole) and, output by output, the verdicts of the blocks so far.
struct Run {
  Backend* backend = nullptr;
  VerifyRow row;
  std::vector<GuardedBuffer> bufs;
  std::vector<ref::Tensor> got;  // the buffers' payloads, copied once
  bool ran = false;
  std::vector<BlockVerdicts> verdicts;
};

// What one block of rows needs: its op and inputs, exact values, and the naive run in each
// compute format the backends judged against it use.
struct Block {
  std::unique_ptr<Op> op;
  InputSet in;
  ExactValues balls;       // the certified balls, where they serve the judge
  Outputs<ref::mp> exact;  // the exact values otherwise
  std::map<ref::Format, Outputs<double>> naive;
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
    const auto t0 = Clock::now();
    try {
      b->run(ctx, r.bufs);
      r.ran = true;
      for (const GuardedBuffer& buf : r.bufs) r.got.push_back(buf.tensor());
    } catch (const std::exception& e) {
      r.row.pass = false;
      r.row.detail = std::string("the backend threw: ") + e.what();
    }
    r.row.seconds = since(t0);
    if (times && b->name().rfind("ref", 0) != 0) times->backends += r.row.seconds;
    runs.push_back(std::move(r));
  }
  std::vector<RecipeJudging> how;
  std::vector<int64_t> per_row;
  bool two_passes = false;
  std::set<ref::Format> computes;  // of the backends that ran, where an output needs the naive run
  for (const OutputDecl& d : decls) {
    how.push_back(judging_under(policy_for(c.op, d.name), d, bound));
    per_row.push_back(ref::checked_numel(d.shape) / rows);
    two_passes = two_passes || (how.back().uses_naive && how.back().group == 0);
    if (!how.back().uses_naive) continue;
    for (const Run& r : runs) {
      if (r.ran) computes.insert(r.backend->compute_format());
    }
  }
  const bool any_ran = std::any_of(runs.begin(), runs.end(), [](const Run& r) { return r.ran; });
  // The certified balls serve the judge where no output's policy reads annotate_exact's
  // per-element data (arg_error, error_scale): it then makes mp values only where doubles
  // cannot answer (judge.h).
  const bool balls_serve = std::none_of(how.begin(), how.end(), [](const RecipeJudging& h) {
    return reads_exact_annotations(h.policy);
  });
  // The whole tensor's max|naive − x| per output judged as one group and compute format: each
  // block is judged against the maximum of the blocks so far (at most the whole one; round(x ± B)
  // only widens with B, so an output without a policy failure gets the same verdict, the last
  // block's bound being the whole tensor's); after a policy failure of such an output, the blocks
  // are judged again against the whole maximum the pass ended with (check.cc does the same).
  std::map<std::pair<size_t, ref::Format>, WholeNaiveMax> whole_max;
  bool running_max = false;
  const auto block = [&](int64_t b, int64_t e, bool need_mp) {
    Block bl;
    bl.op = op.with_rows(e - b);
    bl.in = row_slice(op, ctx.in, rows, b, e);
    auto t = Clock::now();
    ExactValues x = exact_values(*bl.op, bl.in, {&storage, 1});
    if (times) times->reference += since(t);
    t = Clock::now();
    for (ref::Format f : computes) bl.naive.emplace(f, bl.op->simulated(f, bl.in, bound));
    if (times) times->naive += since(t);
    t = Clock::now();
    for (size_t k = 0; running_max && k < decls.size(); ++k) {
      if (!how[k].uses_naive || how[k].group != 0) continue;
      for (ref::Format f : computes) {
        whole_max[{k, f}].add(block_naive_max(x, k, bl.naive.at(f)[k].values));
      }
    }
    if (times) times->judging += since(t);
    t = Clock::now();
    if (x.balls && balls_serve && !need_mp) {
      bl.balls = std::move(x);
    } else {
      bl.exact = exact_outputs_of(*bl.op, bl.in, std::move(x));
    }
    if (times) times->reference += since(t);
    return bl;
  };
  const auto judge_blocks = [&] {
    for (Run& r : runs) {
      r.verdicts.clear();
      for (const OutputDecl& d : decls) r.verdicts.emplace_back(output_format(d, storage));
    }
    for (int64_t b = 0; any_ran && b < rows; b += block_rows) {
      const Block bl = block(b, std::min(rows, b + block_rows), false);
      const auto t = Clock::now();
      for (size_t k = 0; k < decls.size(); ++k) {
        // One reference per compute format, shared by the backends that compute in it.
        std::map<ref::Format, JudgeReference> judged;
        for (Run& r : runs) {
          if (!r.ran) continue;
          const ref::Format f = r.backend->compute_format();
          auto it = judged.find(f);
          if (it == judged.end()) {
            const OutputValues<ref::Ball>* balls = bl.balls.balls ? &(*bl.balls.balls)[k] : nullptr;
            const OutputValues<double>* naive = how[k].uses_naive ? &bl.naive.at(f)[k] : nullptr;
            JudgeOptions jo = balls ? judge_options(how[k], *balls, naive, f, bound)
                                    : judge_options(how[k], bl.exact[k], naive, f, bound);
            jo.whole_elements = ref::checked_numel(decls[k].shape);
            jo.offset = b * per_row[k];
            if (how[k].uses_naive && how[k].group == 0) {
              const auto& [worst, left_out] = whole_max.at({k, f});
              jo.whole_naive_max = worst;
              jo.whole_naive_excluded = left_out;
            }
            const ref::Format of = output_format(decls[k], storage);
            it = balls ? judged
                             .emplace(std::piecewise_construct, std::forward_as_tuple(f),
                                      std::forward_as_tuple(how[k].policy, balls->values, of, jo))
                             .first
                       : judged
                             .emplace(
                                 std::piecewise_construct, std::forward_as_tuple(f),
                                 std::forward_as_tuple(how[k].policy, bl.exact[k].values, of, jo))
                             .first;
          }
          r.verdicts[k].add(it->second, r.got[k], &r.bufs[k]);
        }
      }
      if (times) times->judging += since(t);
    }
  };
  const auto one_group_policy_failure = [&] {
    for (const Run& r : runs) {
      for (size_t k = 0; r.ran && k < decls.size(); ++k) {
        if (how[k].uses_naive && how[k].group == 0 &&
            r.verdicts[k].result().count(FailReason::kPolicy) > 0) {
          return true;
        }
      }
    }
    return false;
  };
  running_max = two_passes;
  judge_blocks();
  if (two_passes && any_ran && one_group_policy_failure()) {
    running_max = false;  // whole_max now holds the whole tensor's maxima: judge again against them
    judge_blocks();
  }
  running_max = false;  // the diagnosis's block below must not count its maximum again
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
          failed_row = std::clamp<int64_t>(v.first_index, 0, per_row[k] * rows - 1) / per_row[k];
        }
        r.row.outputs.push_back({decls[k].name, std::move(v)});
      }
      if (failed_row >= 0 && !op.rounding_points().empty()) {
        // The closest recipe, ranked on the block of the first failure (run_and_judge ranks
        // them on the whole op, whose exact values this path does not hold).
        const int64_t b = failed_row / block_rows * block_rows;
        const int64_t e = std::min(rows, b + block_rows);
        const Block bl = block(b, e, true);
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
