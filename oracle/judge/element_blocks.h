// Judging's element loops run over fixed blocks of elements spread over the reference's threads
// (reference/parallel.h). What a block finds is merged block by block in index order, so the
// verdict does not depend on the thread count: maxima and counts are exact, and the first
// failure is the first block's that has one.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>

#include "reference/parallel.h"

namespace lmo::oracle {

constexpr int64_t kJudgeBlock = 512;

inline int64_t block_count(int64_t n) { return (n + kJudgeBlock - 1) / kJudgeBlock; }

// body(block, begin, end) for each block of [0, n), over the reference's threads.
inline void for_blocks(int64_t n, const std::function<void(int64_t, int64_t, int64_t)>& body) {
  ref::parallel_for(block_count(n), [&](int64_t b) {
    body(b, b * kJudgeBlock, std::min(n, (b + 1) * kJudgeBlock));
  });
}

}  // namespace lmo::oracle
