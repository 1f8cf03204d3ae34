#include "oracle/judge/row_blocks.h"

#include "oracle/core/row_slice.h"
#include "oracle/core/stopwatch.h"

namespace lmo::oracle {
namespace {

// Adds the seconds since t0 to *to, where the caller counts them.
void count(double* to, SteadyClock::time_point t0) {
  if (to) *to += seconds_since(t0);
}

bool one_group(const RecipeJudging& h) { return h.uses_naive && h.group == 0; }

}  // namespace

RowBlocks::RowBlocks(const Op& op, const InputSet& in, ref::Format storage, BoundRecipe bound,
                     std::vector<std::optional<RecipeJudging>> how, std::set<ref::Format> computes,
                     int64_t block_rows, RowBlockTimes times)
    : op_(op),
      in_(in),
      storage_(storage),
      bound_(std::move(bound)),
      how_(std::move(how)),
      rows_(op.independent_rows()),
      block_rows_(block_rows),
      times_(times) {
  const std::vector<OutputDecl> decls = op.outputs();
  bool naive = false;
  for (size_t k = 0; k < decls.size(); ++k) {
    whole_elements_.push_back(ref::checked_numel(decls[k].shape));
    per_row_.push_back(whole_elements_.back() / rows_);
    if (!how_[k]) continue;
    naive = naive || how_[k]->uses_naive;
    two_passes_ = two_passes_ || one_group(*how_[k]);
    balls_serve_ = balls_serve_ && !reads_exact_annotations(how_[k]->policy);
  }
  if (naive) computes_ = std::move(computes);
}

RowBlock RowBlocks::block(int64_t b, int64_t e, bool need_mp) {
  RowBlock bl;
  bl.begin = b;
  bl.end = e;
  bl.op = op_.with_rows(e - b);
  bl.in = row_slice(op_, in_, rows_, b, e);
  auto t = SteadyClock::now();
  ExactValues x = exact_values(*bl.op, bl.in, {&storage_, 1});
  count(times_.reference, t);
  t = SteadyClock::now();
  for (ref::Format f : computes_) bl.naive.emplace(f, bl.op->simulated(f, bl.in, bound_));
  count(times_.naive, t);
  t = SteadyClock::now();
  for (size_t k = 0; running_ && k < how_.size(); ++k) {
    if (!how_[k] || !one_group(*how_[k])) continue;
    for (ref::Format f : computes_) {
      whole_max_[{k, f}].add(block_naive_max(x, k, bl.naive.at(f)[k].values));
    }
  }
  count(times_.judging, t);
  t = SteadyClock::now();
  if (x.balls && balls_serve_ && !need_mp) {
    bl.balls = std::move(x);
  } else {
    bl.exact = exact_outputs_of(*bl.op, bl.in, std::move(x));
  }
  count(times_.reference, t);
  return bl;
}

JudgeReference RowBlocks::reference(const RowBlock& bl, size_t k, ref::Format compute,
                                    ref::Format of) const {
  const RecipeJudging& how = *how_[k];
  const OutputValues<ref::Ball>* balls = bl.balls_of(k);
  const OutputValues<double>* naive = how.uses_naive ? &bl.naive.at(compute)[k] : nullptr;
  JudgeOptions jo = balls ? judge_options(how, *balls, naive, compute, bound_)
                          : judge_options(how, bl.exact[k], naive, compute, bound_);
  jo.whole_elements = whole_elements_[k];
  jo.offset = bl.begin * per_row_[k];
  if (one_group(how)) {
    const WholeNaiveMax& m = whole_max_.at({k, compute});
    jo.whole_naive_max = m.max;
    jo.whole_naive_excluded = m.excluded;
  }
  return balls ? JudgeReference(how.policy, balls->values, of, jo)
               : JudgeReference(how.policy, bl.exact[k].values, of, jo);
}

void RowBlocks::judge_all(const std::function<void(const RowBlock&)>& judge,
                          const std::function<bool()>& failed,
                          const std::function<void()>& restart) {
  const auto pass = [&] {
    for (int64_t b = 0; b < rows_; b += block_rows_)
      judge(block(b, std::min(rows_, b + block_rows_)));
  };
  running_ = two_passes_;
  pass();
  if (two_passes_ && failed()) {
    running_ = false;  // whole_max_ now holds the whole tensor's maxima: judge again against them
    restart();
    pass();
  }
  running_ = false;  // a later block (a diagnosis's) must not count its maximum again
}

}  // namespace lmo::oracle
