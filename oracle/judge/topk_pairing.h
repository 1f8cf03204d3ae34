// A kernel may return its top-k selection in any order: DeepSeek's and vLLM's routers return the
// experts in score order, the reference lists them in ascending expert order. A value output of
// the selection's shape (the gates) is paired element for element with the kernel's indices, so
// before it is judged against the reference's values it is put in the reference's order: each
// value where its expert sits in the expected row. The selection itself is judged as a set
// (judge_topk), so the order of the indices never fails a kernel; a value paired with the wrong
// expert still does.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "reference/tensor.h"

namespace lmo::oracle {

// values and indices [tokens, k] (indices i64 or i32), expected [tokens · k] the reference's
// selection, ascending per row. Returns the values reordered row by row to the expected order; a
// row whose indices are not a permutation of its expected row is returned as it is (its
// selection fails on its own, and its values are then judged in the kernel's order).
// The kernel's selection `indices` [tokens, k] with each row sorted ascending, when some row
// differs from `expected` [tokens · k] (ascending rows) as a set; nullopt when every row holds
// the same experts. For a selection judge_topk passed (k distinct experts per row).
std::optional<std::vector<int64_t>> differing_selection(const ref::Tensor& indices,
                                                        std::span<const int64_t> expected);

ref::Tensor values_in_expected_order(const ref::Tensor& values, const ref::Tensor& indices,
                                     std::span<const int64_t> expected);

}  // namespace lmo::oracle
