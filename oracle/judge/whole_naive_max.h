// The first pass of judging an op with independent rows a block of rows at a time (check's and
// verify's blocks, oracle/core/row_slice.h): an output judged as one group (naive-relative,
// group 0) needs the whole tensor's max|naive − x| before any of its elements is judged. Each
// block's exact values come as certified balls where the balls decide them (exact_values), and
// the maximum is taken on those without building an mp value per element (judge.h,
// naive_max_error on balls): the same maxima as on exact_outputs' mp values.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "oracle/core/certified.h"
#include "oracle/core/op.h"
#include "oracle/judge/recipe.h"
#include "reference/number_types.h"

namespace lmo::oracle {

struct WholeNaiveMax {
  ref::mp max = 0;       // max|naive − x| over the tensor's elements where both are finite
  int64_t excluded = 0;  // the elements left out of it

  // Adds a block's: the larger maximum, the left-out counts summed.
  void add(const WholeNaiveMax& block) {
    if (block.max > max) max = block.max;
    excluded += block.excluded;
  }
};

// A block's max|naive − x| for output k of its exact values (on the balls where exact_values gave
// them, judge.h) and its naive run.
WholeNaiveMax block_naive_max(const ExactValues& exact, size_t k, std::span<const double> naive);

// Seconds spent, for verify's breakdown.
struct WholeNaiveMaxTimes {
  double reference = 0, naive = 0, maxima = 0;
};

// For each output k with one_group[k] and each compute format in `computes`: the maxima over
// op's `rows` rows, evaluated in blocks of block_rows with exact values in `storage` and the naive
// runs under `bound`. Keyed by (k, compute format).
std::map<std::pair<size_t, ref::Format>, WholeNaiveMax> whole_naive_maxima(
    const Op& op, const InputSet& in, int64_t block_rows, ref::Format storage,
    std::span<const ref::Format> computes, const BoundRecipe& bound,
    const std::vector<bool>& one_group, WholeNaiveMaxTimes* times = nullptr);

}  // namespace lmo::oracle
