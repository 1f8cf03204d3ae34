// One case's golden file written in parts of its rows (`golden --blocks I/N`), on as many
// machines, and joined by `golden --merge` into the very bytes a single run writes. An op with
// independent rows (row_slice.h) evaluates each row alone, so part I evaluates rows
// [I·R/N, (I+1)·R/N) of the case's R rows: the op with those rows (Op::with_rows) on those rows
// of the inputs (row_slice). A part file holds the inputs with rows sliced the same way (the
// others whole), its rows of every output, and the whole file's metadata with "rows":
// {"index", "count", "begin", "end", "of", "row_inputs"}.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "oracle/cases/case.h"
#include "oracle/golden/golden.h"
#include "oracle/golden/safetensors.h"

namespace lmo::oracle {

// Whether a --blocks run splits case c into row parts: its op has independent rows
// (splits_into_rows) and at least as many as there are parts. Other cases are written whole by
// part 0 (and skipped by the others), so that one --blocks run can cover any set of cases.
bool splits_for(const Case& c, const GoldenShard& part);

// "<case file name without .safetensors>.rows-I-of-N.safetensors"
std::string golden_rows_file_name(const std::string& case_id, const GoldenShard& part);

// Part `part` (rows) of case c's golden file. InputError naming the case when its op has no
// independent rows to split (a top-k output, an output without the rows as its leading
// dimension) or fewer rows than parts.
SafetensorsContent golden_rows_content(const Case& c, const GoldenShard& part);

// The whole file from its part files, in any order: every part of one split of one case,
// written by this version, with the same metadata and the same whole inputs; InputError naming
// the part and what is wrong otherwise. The parts are read one tensor at a time (mapped), so the
// join holds the whole file and one tensor's parts, not every part at once.
SafetensorsContent join_row_parts(const std::vector<std::filesystem::path>& parts);

}  // namespace lmo::oracle
