// Rows of an op with independent rows (Op::independent_rows): its inputs sliced to a range of
// rows, for golden's and check's blocks of rows (at real shapes the exact values of a whole op
// do not fit in memory) and the certified path's recomputation of undecided rows.
#pragma once

#include <cstdint>

#include "oracle/core/op.h"

namespace lmo::oracle {

// Rows [begin, end) of op's inputs: those with rows (Op::row_input) sliced, each of which must
// have `rows` rows as its leading dimension (std::logic_error otherwise: the op's
// independent_rows() was wrong); the others whole.
InputSet row_slice(const Op& op, const InputSet& in, int64_t rows, int64_t begin, int64_t end);

// Rows [begin, end) of a tensor whose leading dimension holds `rows` rows (std::logic_error
// otherwise).
ref::Tensor slice_rows(const ref::Tensor& t, int64_t rows, int64_t begin, int64_t end);

// The elements of a block of rows: golden and check evaluate an op with independent rows in
// blocks of rows when its outputs hold more than this (2^22 by default; tests lower it to
// compare the two ways).
int64_t row_block_elements();
void set_row_block_elements(int64_t n);
void set_row_block_elements_for_testing(int64_t n);

// The bytes a block of rows holds per output element while it is judged or written: its exact
// values (certified balls, or MPFR numbers), the naive run, the judge's rounded references and
// the outputs' slices. Measured with /usr/bin/time at two block sizes (docs/scale.md): verify of
// rmsnorm 4096 × 2048 in bf16 with 5 fast backends 97 bytes, golden 49; 128 bounds both.
// `--max-memory M` sets the block to M / kBlockBytesPerElement elements (block_for_memory).
constexpr int64_t kBlockBytesPerElement = 128;
int64_t block_for_memory(int64_t bytes);

// Whether op's rows can be evaluated apart: independent rows (at least 2), every output with
// them as its leading dimension, no top-k selection.
bool splits_into_rows(const Op& op);

// Rows per block where op is evaluated in blocks of rows (independent rows, every output with
// them as its leading dimension, no top-k selection, more than row_block_elements() output
// elements), else 0.
int64_t rows_per_block(const Op& op, const std::vector<OutputDecl>& decls);

}  // namespace lmo::oracle
