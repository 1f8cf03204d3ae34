// The inputs of one case in one storage format, generated from the case's seed (oracle/inputs.h):
// real inputs in the storage format, integer inputs in their own dtype. Large tensors are filled
// in parallel slices; every element is a pure function of (seed, name, index), so the bits do
// not depend on the split.
#pragma once

#include "oracle/case.h"
#include "oracle/op.h"

namespace lmo::oracle {

// Throws InputError (naming the case's input) when a distribution does not fit the format.
InputSet make_inputs(const Case& c, const Op& op, ref::Format storage);

}  // namespace lmo::oracle
