// Rows of an op with independent rows (Op::independent_rows): its inputs sliced to a range of
// rows, for golden's blocks of rows and the certified path's recomputation of undecided rows.
#pragma once

#include <cstdint>

#include "oracle/core/op.h"

namespace lmo::oracle {

// Rows [begin, end) of op's inputs: those with rows (Op::row_input) sliced, each of which must
// have `rows` rows as its leading dimension (std::logic_error otherwise: the op's
// independent_rows() was wrong); the others whole.
InputSet row_slice(const Op& op, const InputSet& in, int64_t rows, int64_t begin, int64_t end);

}  // namespace lmo::oracle
