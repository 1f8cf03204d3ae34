#include "oracle/judge/whole_naive_max.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "oracle/core/certified.h"
#include "oracle/core/row_slice.h"
#include "oracle/judge/judge.h"

namespace lmo::oracle {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

WholeNaiveMax block_naive_max(const ExactValues& exact, size_t k, std::span<const double> naive) {
  WholeNaiveMax w;
  w.max = exact.balls ? naive_max_error((*exact.balls)[k].values, naive, w.excluded)
                      : naive_max_error(exact.mp[k].values, naive, w.excluded);
  return w;
}

std::map<std::pair<size_t, ref::Format>, WholeNaiveMax> whole_naive_maxima(
    const Op& op, const InputSet& in, int64_t block_rows, ref::Format storage,
    std::span<const ref::Format> computes, const BoundRecipe& bound,
    const std::vector<bool>& one_group, WholeNaiveMaxTimes* times) {
  std::map<std::pair<size_t, ref::Format>, WholeNaiveMax> out;
  const int64_t rows = op.independent_rows();
  for (int64_t b = 0; b < rows; b += block_rows) {
    const int64_t e = std::min(rows, b + block_rows);
    const std::unique_ptr<Op> part = op.with_rows(e - b);
    const InputSet part_in = row_slice(op, in, rows, b, e);
    auto t = Clock::now();
    const ExactValues exact = exact_values(*part, part_in, {&storage, 1});
    if (times) times->reference += since(t);
    for (ref::Format f : computes) {
      t = Clock::now();
      const Outputs<double> naive = part->simulated(f, part_in, bound);
      if (times) times->naive += since(t);
      t = Clock::now();
      for (size_t k = 0; k < one_group.size(); ++k) {
        if (one_group[k]) out[{k, f}].add(block_naive_max(exact, k, naive[k].values));
      }
      if (times) times->maxima += since(t);
    }
  }
  return out;
}

}  // namespace lmo::oracle
