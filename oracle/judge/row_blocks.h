// An op with independent rows judged a block of rows at a time, as `check` and `verify` judge
// real shapes (oracle/judge/judging.cc, for check and verify): the exact values and naive
// runs of one block in memory at once (oracle/core/row_slice.h), and the second pass an output
// judged as one group may need.
//
// An output judged as one group (naive-relative, group 0) is judged against the whole tensor's
// max|naive − x|. On the first pass each block is judged against the maximum of the blocks so far,
// which is at most the whole one; the interval round(x ± B) only widens with B, so an output with
// no policy failure gets the same verdict (the last block's bound is the whole tensor's). Where
// such an output failed on its policy, every block is judged again against the whole maxima the
// first pass ended with.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "oracle/core/certified.h"
#include "oracle/core/op.h"
#include "oracle/judge/judge.h"
#include "oracle/judge/recipe_judge.h"
#include "oracle/judge/whole_naive_max.h"

namespace lmo::oracle {

// Rows [begin, end) of the op: its op and inputs, exact values and naive runs.
struct RowBlock {
  int64_t begin = 0, end = 0;
  std::unique_ptr<Op> op;
  InputSet in;
  ExactValues balls;                             // the certified balls, where they serve the judge
  Outputs<ref::mp> exact;                        // the exact values otherwise
  std::map<ref::Format, Outputs<double>> naive;  // the naive run in each compute format asked
  // Output k's balls, or null where the block holds mp values.
  const OutputValues<ref::Ball>* balls_of(size_t k) const {
    return balls.balls ? &(*balls.balls)[k] : nullptr;
  }
};

// Where a caller reports the seconds spent (verify's times); null members are not counted.
struct RowBlockTimes {
  double* reference = nullptr;
  double* naive = nullptr;
  double* judging = nullptr;
};

class RowBlocks {
 public:
  // The rows of op in blocks of block_rows, on `in` (in format `storage`, for which the exact
  // values are decided). how[k] judges output k, nullopt for an output not judged here; a naive
  // run in each format of `computes` where a judged output uses one.
  RowBlocks(const Op& op, const InputSet& in, ref::Format storage, BoundRecipe bound,
            std::vector<std::optional<RecipeJudging>> how, std::set<ref::Format> computes,
            int64_t block_rows, RowBlockTimes times = {});

  int64_t rows() const { return rows_; }
  int64_t block_rows() const { return block_rows_; }
  // Elements of output k per row.
  int64_t per_row(size_t k) const { return per_row_[k]; }

  // Block [b, e): its exact values as balls where they serve every judged output (no policy reads
  // annotate_exact's per-element data, arg_error or error_scale) and need_mp is false, else as mp
  // values. On the first pass it adds its naive maxima to the running ones.
  RowBlock block(int64_t b, int64_t e, bool need_mp = false);

  // The judge's reference for output k of bl, in output format `of`, against the naive run in
  // `compute`; for an output judged as one group, against the maximum so far (first pass) or the
  // whole tensor's (second).
  JudgeReference reference(const RowBlock& bl, size_t k, ref::Format compute, ref::Format of) const;

  // Every block through judge(bl); then, where failed() says an output judged as one group failed
  // on its policy, restart() and every block again against the whole maxima.
  void judge_all(const std::function<void(const RowBlock&)>& judge,
                 const std::function<bool()>& failed, const std::function<void()>& restart);

 private:
  const Op& op_;
  const InputSet& in_;
  ref::Format storage_;
  BoundRecipe bound_;
  std::vector<std::optional<RecipeJudging>> how_;
  std::set<ref::Format> computes_;  // empty where no judged output uses the naive run
  int64_t rows_ = 0, block_rows_ = 0;
  std::vector<int64_t> per_row_, whole_elements_;
  RowBlockTimes times_;
  bool balls_serve_ = true, two_passes_ = false, running_ = false;
  std::map<std::pair<size_t, ref::Format>, WholeNaiveMax> whole_max_;
};

}  // namespace lmo::oracle
