// The group limit of a top-k selection (DeepSeek-V3's node-limited routing, F20): the experts
// form `groups` groups of equal size, ranked by a group score over their selection scores (the
// sum of the top two, or the maximum), and only the experts of the best `kept` groups may be
// selected. groups = 1: no limit.
#pragma once

#include <cstdint>

namespace lmo::oracle {

struct TopkGroups {
  int64_t groups = 1;
  int64_t kept = 1;
  bool top2_sum = true;  // false: the group's maximum
};

}  // namespace lmo::oracle
