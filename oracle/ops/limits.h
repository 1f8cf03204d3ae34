// Upper bounds for shape parameters in case files. They reject absurd sizes at parse time,
// before anything is allocated (a typo of 10^12 rows must not try to allocate); the total work
// of a case is limited separately by its cost estimate (verify's --max-cost).
#pragma once

#include <cstdint>

namespace lmo::oracle {

inline constexpr int64_t kMaxRows = int64_t{1} << 20;   // tokens, rows, batch positions
inline constexpr int64_t kMaxWidth = int64_t{1} << 20;  // a hidden size or vocabulary
inline constexpr int64_t kMaxHeads = 1024;
inline constexpr int64_t kMaxPosition = int64_t{1} << 40;

}  // namespace lmo::oracle
