// The inputs of one case in one storage format, generated from the case's seed (oracle/core/inputs.h):
// real inputs in the storage format, integer inputs in their own dtype. Large tensors are filled
// in parallel slices; every element is a pure function of (seed, name, index), so the bits do
// not depend on the split.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "oracle/cases/case.h"
#include "oracle/core/op.h"
#include "reference/ball.h"
#include "reference/number_types.h"

namespace lmo::oracle {

class NormalReal;

// The Box–Muller values of a case's normal inputs (balls, before their rounding), kept for its
// other storage formats: they are the same in every format, and drawing them (MPFR logarithm,
// square root, sine and cosine) is most of the inputs' time. make_inputs with one draws the values
// at the first format that needs them and rounds the kept values for the others: the same bits.
class NormalDraws {
 public:
  // NormalReal::pair_balls(j) of gen for j < (n + 1) / 2, drawn (in parallel slices) at the
  // first call for this seed, input name, mean, stddev and n (NormalReal::bits_of rounds them,
  // recomputing pair_values(j) where a ball does not decide).
  const std::vector<std::array<ref::Ball, 2>>& pairs(uint64_t seed, const InputDecl& d,
                                                     const NormalReal& gen, int64_t n);

 private:
  std::map<std::tuple<uint64_t, std::string, double, double, int64_t>,
           std::vector<std::array<ref::Ball, 2>>>
      kept_;
};

// Throws InputError (naming the case's input) when a distribution does not fit the format.
// With draws, the normal inputs' values are taken from it (and kept there when first drawn).
InputSet make_inputs(const Case& c, const Op& op, ref::Format storage,
                     NormalDraws* draws = nullptr);

}  // namespace lmo::oracle
