// The exact values of an output rounded once into a tensor of its format: what a golden file
// stores and what the judge's reports show as the expected value.
#pragma once

#include <cstddef>
#include <cstdint>

#include "oracle/core/certified.h"
#include "oracle/core/op.h"
#include "reference/formats.h"
#include "reference/tensor.h"

namespace lmo::oracle {

// Output k of the exact values rounded once to f (indices for a top-k output: i64).
ref::Tensor rounded_output(const OutputDecl& d, const OutputValues<ref::mp>& v, ref::Format f);
// The same for output k of an exact_values result (certified.h): the balls' bits where they
// decide every rounding (ref::decided_bits, no mp value), else the mp values'.
ref::Tensor rounded_output(const OutputDecl& d, const ExactValues& e, size_t k, ref::Format f);
// Output k of e, rounded to f, into t's elements from `offset` on: the balls' bits where they
// decide (ref::decided_bits), else the mp values', over the reference's threads.
void put_rounded(ref::Tensor& t, int64_t offset, const OutputDecl& d, const ExactValues& e,
                 size_t k, ref::Format f);

}  // namespace lmo::oracle
