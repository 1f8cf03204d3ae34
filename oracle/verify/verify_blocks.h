// `verify` of an op with independent rows at real shapes (cross-entropy at 4096 × 128256: 525M
// outputs, whose exact values as mp would take 29 GB and did not fit in 128 GiB beside the
// rest): the backends run the whole op as usual, and their outputs are judged a block of rows
// at a time (oracle/core/row_slice.h), with the exact values and naive runs of one block in
// memory at once. The verdicts are those of run_and_judge (BlockVerdicts).
#pragma once

#include <cstdint>
#include <vector>

#include "oracle/backends/backend.h"
#include "oracle/verify/verify.h"

namespace lmo::oracle {

// One row per backend, as run_and_judge gives for each. block_rows: rows_per_block(op, …) > 0
// (no top-k output). The reference backends write the whole op's exact or simulated values
// (ctx), which at such shapes is their own cost. A row's seconds are its backend call's: the
// blocks' judging is shared by the backends.
std::vector<VerifyRow> run_and_judge_in_blocks(const Case& c, const Op& op, ref::Format storage,
                                               const std::vector<Backend*>& backends,
                                               const RunContext& ctx, int64_t block_rows,
                                               VerifyTimes* times);

}  // namespace lmo::oracle
