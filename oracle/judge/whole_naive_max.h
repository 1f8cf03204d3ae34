// The whole tensor's max|naive − x| of an output judged as one group (naive-relative, group 0)
// when an op with independent rows is judged a block of rows at a time (check's and verify's
// blocks, oracle/core/row_slice.h): the blocks' maxima merged as they come. Each block's exact
// values come as certified balls where the balls decide them (exact_values), and its maximum is
// taken on those without building an mp value per element (judge.h, naive_max_error on balls):
// the same maximum as on exact_outputs' mp values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "oracle/core/certified.h"
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

}  // namespace lmo::oracle
