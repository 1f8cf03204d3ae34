#include "oracle/judge/judging.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <utility>

#include "oracle/core/certified.h"
#include "oracle/core/row_slice.h"
#include "oracle/judge/rounded_output.h"
#include "oracle/judge/topk_pairing.h"
#include "oracle/judge/verdict_text.h"
#include "oracle/ops/policy_table.h"
#include "oracle/ops/registry.h"
#include "reference/ball_rounding.h"

namespace lmo::oracle {
namespace {

using verdict_text::num;

// x's correctly rounded value in format of, as a double (what the reports show as expected).
double rounded(ref::Format of, const ref::mp& x) {
  return ref::decode<double>(of, ref::encode(of, x));
}

bool diagnoses(Diagnosis d, bool pass) {
  return d == Diagnosis::kAlways || (d == Diagnosis::kOnFailure && !pass);
}

void note_failure(KernelJudgement& j, const std::string& name, const Verdict& v) {
  if (!v.pass && j.pass) {
    j.pass = false;
    j.first_failure = "output " + name + ": " + v.detail;
  }
}

// What every path shares: the op's outputs, the bound recipe and each output's judging.
struct Setup {
  std::vector<OutputDecl> decls;
  BoundRecipe bound;
  std::vector<RecipeJudging> how;
};

Setup setup(const Op& op, const std::string& op_name, ref::Format storage, const Recipe& recipe) {
  Setup s;
  s.decls = op.outputs();
  s.bound = bind_recipe(recipe, op_name, op, storage);
  for (const OutputDecl& d : s.decls) {
    s.how.push_back(judging_under(policy_for(op_name, d.name), d, s.bound));
  }
  return s;
}

bool judged(std::span<const KernelOutputs> kernels, size_t k) {
  return std::any_of(kernels.begin(), kernels.end(), [&](const KernelOutputs& ko) {
    return k < ko.tensors.size() && ko.tensors[k] != nullptr;
  });
}

const GuardedBuffer* buffer_of(const KernelOutputs& ko, size_t k) {
  return k < ko.buffers.size() ? ko.buffers[k] : nullptr;
}

// The whole op at once: top-k outputs as sets, then the values on each kernel's selection.
std::vector<KernelJudgement> judge_whole(const Op& op, const std::string& op_name,
                                         const InputSet& in, ref::Format storage,
                                         std::span<const KernelOutputs> kernels,
                                         const JudgingOptions& o) {
  const Setup su = setup(op, op_name, storage, o.recipe);
  const std::vector<OutputDecl>& decls = su.decls;
  std::optional<Outputs<ref::mp>> own_exact;
  const auto exact = [&]() -> const Outputs<ref::mp>& {
    if (o.exact) return o.exact();
    if (!own_exact) own_exact = exact_outputs(op, in, {&storage, 1});
    return *own_exact;
  };
  std::optional<Outputs<ref::mp>> topk_exact;
  const auto selection_exact = [&]() -> const Outputs<ref::mp>& {
    if (!o.topk_in) return exact();
    if (!topk_exact) topk_exact = exact_outputs(op, *o.topk_in);
    return *topk_exact;
  };
  // Per compute format, shared by the kernels judged on the case's own selection: the recipe's
  // naive run and each output's judge reference.
  std::map<ref::Format, Outputs<double>> recipe_runs;
  std::map<std::pair<size_t, ref::Format>, JudgeReference> references;
  bool expected_told = false;

  std::vector<KernelJudgement> out(kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    const KernelOutputs& ko = kernels[i];
    KernelJudgement& j = out[i];
    j.outputs.resize(decls.size());
    const auto tensor = [&](size_t k) { return k < ko.tensors.size() ? ko.tensors[k] : nullptr; };
    // Top-k outputs first.
    for (size_t k = 0; k < decls.size(); ++k) {
      const OutputDecl& d = decls[k];
      if (!d.topk || !tensor(k)) continue;
      const Outputs<ref::mp>& sx = selection_exact();
      if (o.expected && !expected_told) o.expected(k, ref::Format::f64,
                                                   rounded_output(d, sx[k], ref::Format::f64), 0,
                                                   op.independent_rows());
      const Policy& policy = su.how[k].policy;
      const GuardedBuffer* buf = buffer_of(ko, k);
      OutputJudgement oj;
      oj.verdict = buf ? judge_topk(policy, sx[k].values, d.topk_experts, sx[k].indices, *buf,
                                    d.topk_groups)
                       : judge_topk(policy, sx[k].values, d.topk_experts, sx[k].indices,
                                    *tensor(k), d.topk_groups);
      oj.bound = bound_text(policy, ref::Format::f64, oj.verdict);
      if (oj.verdict.pass) {
        if (auto sel = differing_selection(*tensor(k), sx[k].indices)) j.selection = std::move(sel);
      }
      note_failure(j, d.name, oj.verdict);
      j.outputs[k] = std::move(oj);
    }
    // The values, on the kernel's own selection where it differs.
    const std::optional<std::vector<int64_t>>& selection = j.selection ? j.selection : o.selection;
    std::unique_ptr<Op> own = selection ? op.with_selection(*selection) : nullptr;
    std::optional<Outputs<ref::mp>> own_values;
    if (own) own_values = exact_outputs(*own, in, {&storage, 1});
    const Outputs<ref::mp>& values = own ? *own_values : exact();
    const Op& values_op = own ? *own : op;
    std::optional<Outputs<double>> own_run;
    std::vector<ref::Tensor> ordered(decls.size());  // the values in the reference's order
    std::vector<const ref::Tensor*> got(decls.size(), nullptr);
    for (size_t k = 0; k < decls.size(); ++k) {
      const OutputDecl& d = decls[k];
      if (d.topk || !tensor(k)) continue;
      const RecipeJudging& how = su.how[k];
      const ref::Format of = output_format(d, storage);
      const GuardedBuffer* buf = buffer_of(ko, k);
      // Values paired with a top-k selection (the router's gates) are judged in the reference's
      // order of experts, whatever order the kernel returned its selection in (topk_pairing.h).
      const ref::Tensor* given = tensor(k);
      for (size_t t = 0; t < decls.size() && !buf; ++t) {
        if (!decls[t].topk || decls[t].shape != d.shape || !tensor(t)) continue;
        ordered[k] = values_in_expected_order(*given, *tensor(t), values[t].indices);
        given = &ordered[k];
      }
      got[k] = given;
      if (o.expected && !expected_told) {
        o.expected(k, of, rounded_output(d, own ? exact()[k] : values[k], of), 0,
                   op.independent_rows());
      }
      const OutputValues<double>* naive = nullptr;
      if (how.uses_naive) {
        if (own) {
          if (!own_run) own_run = values_op.simulated(ko.compute, in, su.bound);
          naive = &(*own_run)[k];
        } else if (su.bound.is_strict() && o.strict_naive) {
          naive = &o.strict_naive(ko.compute)[k];
        } else {
          auto it = recipe_runs.find(ko.compute);
          if (it == recipe_runs.end()) {
            it = recipe_runs.emplace(ko.compute, op.simulated(ko.compute, in, su.bound)).first;
          }
          naive = &it->second[k];
        }
      }
      const JudgeOptions jo = judge_options(how, values[k], naive, ko.compute, su.bound);
      OutputJudgement oj;
      if (buf && !own) {
        const std::pair<size_t, ref::Format> key(k, ko.compute);
        auto it = references.find(key);
        if (it == references.end()) {
          it = references
                   .emplace(std::piecewise_construct, std::forward_as_tuple(key),
                            std::forward_as_tuple(how.policy, values[k].values, of, jo))
                   .first;
        }
        oj.verdict = judge(it->second, *buf);
      } else if (buf) {
        oj.verdict = judge(how.policy, values[k].values, *buf, jo);
      } else {
        oj.verdict = judge(how.policy, values[k].values, *given, jo);
      }
      oj.bound = bound_text(how.policy, of, oj.verdict, o.recipe.text());
      const int64_t w = oj.verdict.metrics.max_ulps_index;
      if (w >= 0) {
        oj.worst_index = w;
        oj.worst_actual = given->get(w);
        oj.worst_expected = rounded(of, values[k].values[static_cast<size_t>(w)]);
        oj.worst_exact = verdict_text::exact(values[k].values[static_cast<size_t>(w)]);
      }
      note_failure(j, d.name, oj.verdict);
      j.outputs[k] = std::move(oj);
    }
    expected_told = expected_told || static_cast<bool>(o.expected);
    if (diagnoses(o.diagnosis, j.pass)) {
      j.diagnosis = diagnose(values_op, op_name, in, values, got, o.recipe, storage,
                             o.diagnose_variants, ko.compute);
    }
  }
  return out;
}

// An op with independent rows and no top-k output, a block of rows at a time (row_blocks.h).
std::vector<KernelJudgement> judge_blocks(const Op& op, const std::string& op_name,
                                          const InputSet& in, ref::Format storage,
                                          std::span<const KernelOutputs> kernels,
                                          const JudgingOptions& o, int64_t block_rows) {
  const Setup su = setup(op, op_name, storage, o.recipe);
  const std::vector<OutputDecl>& decls = su.decls;
  const int64_t rows = op.independent_rows();
  std::vector<std::optional<RecipeJudging>> how(decls.size());
  std::vector<int64_t> per_row(decls.size());
  for (size_t k = 0; k < decls.size(); ++k) {
    per_row[k] = ref::checked_numel(decls[k].shape) / rows;
    if (!judged(kernels, k)) continue;
    how[k] = su.how[k];
    if (how[k]->group > 0 && per_row[k] % how[k]->group != 0) {
      throw std::logic_error("judging: output " + decls[k].name + " of " + op_name +
                             " has groups across its rows");
    }
  }
  std::set<ref::Format> computes;
  for (const KernelOutputs& ko : kernels) computes.insert(ko.compute);
  RowBlocks blocks(op, in, storage, su.bound, how, computes, block_rows, o.times);
  struct Judged {
    std::optional<BlockVerdicts> verdicts;
    int64_t worst_index = -1;
    double worst_expected = 0;
    std::string worst_exact;
  };
  std::vector<std::vector<Judged>> js(kernels.size(), std::vector<Judged>(decls.size()));
  const auto tensor = [&](size_t i, size_t k) {
    return k < kernels[i].tensors.size() ? kernels[i].tensors[k] : nullptr;
  };
  const auto restart = [&] {
    for (size_t i = 0; i < kernels.size(); ++i) {
      for (size_t k = 0; k < decls.size(); ++k) {
        js[i][k] = Judged{};
        if (tensor(i, k)) js[i][k].verdicts.emplace(output_format(decls[k], storage));
      }
    }
  };
  const auto judge_block = [&](const RowBlock& bl) {
    const std::vector<OutputDecl> block_decls = bl.op->outputs();
    for (size_t k = 0; k < decls.size(); ++k) {
      if (!how[k]) continue;
      const ref::Format of = output_format(decls[k], storage);
      const OutputValues<ref::Ball>* balls = bl.balls_of(k);
      if (o.expected) {
        o.expected(k, of,
                   balls ? rounded_output(block_decls[k], bl.balls, k, of)
                         : rounded_output(block_decls[k], bl.exact[k], of),
                   bl.begin, bl.end);
      }
      // One reference per compute format, shared by the kernels that compute in it.
      std::map<ref::Format, JudgeReference> references;
      for (size_t i = 0; i < kernels.size(); ++i) {
        if (!tensor(i, k)) continue;
        const ref::Format c = kernels[i].compute;
        auto it = references.find(c);
        if (it == references.end()) it = references.emplace(c, blocks.reference(bl, k, c, of)).first;
        Judged& jd = js[i][k];
        jd.verdicts->add(it->second, *tensor(i, k), buffer_of(kernels[i], k));
        // The worst element's reference, while its block's exact values are at hand.
        const int64_t w = jd.verdicts->result().metrics.max_ulps_index;
        if (w != jd.worst_index) {
          jd.worst_index = w;
          const auto at = static_cast<size_t>(w - bl.begin * per_row[k]);
          jd.worst_expected =
              ref::decode<double>(of, balls ? ref::decided_bits(balls->values[at], of)
                                            : ref::encode(of, bl.exact[k].values[at]));
          // Of a certified ball, its midpoint: the exact value lies within the ball's radius.
          jd.worst_exact =
              verdict_text::exact(balls ? ref::to_mp(balls->values[at]) : bl.exact[k].values[at]);
        }
      }
    }
  };
  const auto one_group_policy_failure = [&] {
    for (size_t i = 0; i < kernels.size(); ++i) {
      for (size_t k = 0; k < decls.size(); ++k) {
        if (tensor(i, k) && how[k]->uses_naive && how[k]->group == 0 &&
            js[i][k].verdicts->result().count(FailReason::kPolicy) > 0) {
          return true;
        }
      }
    }
    return false;
  };
  restart();
  blocks.judge_all(judge_block, one_group_policy_failure, restart);

  std::vector<KernelJudgement> out(kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    KernelJudgement& j = out[i];
    j.outputs.resize(decls.size());
    int64_t failed_row = -1;
    for (size_t k = 0; k < decls.size(); ++k) {
      if (!tensor(i, k)) continue;
      OutputJudgement oj;
      oj.verdict = js[i][k].verdicts->result(buffer_of(kernels[i], k));
      oj.bound = bound_text(how[k]->policy, output_format(decls[k], storage), oj.verdict,
                            o.recipe.text());
      if (js[i][k].worst_index >= 0) {
        oj.worst_index = js[i][k].worst_index;
        oj.worst_actual = tensor(i, k)->get(oj.worst_index);
        oj.worst_expected = js[i][k].worst_expected;
        oj.worst_exact = js[i][k].worst_exact;
      }
      if (!oj.verdict.pass && j.pass) {
        failed_row =
            std::clamp<int64_t>(oj.verdict.first_index, 0, per_row[k] * rows - 1) / per_row[k];
      }
      note_failure(j, decls[k].name, oj.verdict);
      j.outputs[k] = std::move(oj);
    }
    if (!diagnoses(o.diagnosis, j.pass)) continue;
    // The recipes ranked on the block of the first failure (the whole op's exact values are what
    // this path avoids holding); on the first block where asked of a passing kernel.
    const int64_t b = std::max<int64_t>(failed_row, 0) / block_rows * block_rows;
    const int64_t e = std::min(rows, b + block_rows);
    const RowBlock bl = blocks.block(b, e, true);
    std::vector<ref::Tensor> sliced(decls.size());
    std::vector<const ref::Tensor*> got(decls.size(), nullptr);
    for (size_t k = 0; k < decls.size(); ++k) {
      if (!tensor(i, k)) continue;
      sliced[k] = slice_rows(*tensor(i, k), rows, b, e);
      got[k] = &sliced[k];
    }
    j.diagnosis = diagnose(*bl.op, op_name, bl.in, bl.exact, got, o.recipe, storage,
                           o.diagnose_variants, kernels[i].compute);
  }
  return out;
}

}  // namespace

std::vector<KernelJudgement> judge_kernels(const Op& op, const std::string& op_name,
                                           const InputSet& in, ref::Format storage,
                                           std::span<const KernelOutputs> kernels,
                                           const JudgingOptions& options) {
  const int64_t block_rows =
      options.block_rows >= 0 ? options.block_rows : rows_per_block(op, op.outputs());
  if (block_rows > 0 && !options.selection) {
    return judge_blocks(op, op_name, in, storage, kernels, options, block_rows);
  }
  return judge_whole(op, op_name, in, storage, kernels, options);
}

std::string bound_text(const Policy& p, ref::Format f, const Verdict& v,
                       const std::string& recipe) {
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

}  // namespace lmo::oracle
