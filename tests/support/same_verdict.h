// Two verdicts of the same tensor compared field by field (oracle/judge/judge.h): pass, the first
// failure and its message, the counts by reason, the naive bound, and every metric with the mp
// maxima compared exactly. The NMSE to within `nmse_rel` (0: exactly): a tensor judged in blocks
// merges its sums as wholes (MetricsAccumulator::merge), not bit for bit.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "oracle/judge/judge.h"

namespace lmo::testing {

inline void expect_same_verdict(const oracle::Verdict& a, const oracle::Verdict& b,
                                const std::string& at, double nmse_rel = 0) {
  EXPECT_EQ(a.pass, b.pass) << at;
  EXPECT_EQ(a.reason, b.reason) << at;
  EXPECT_EQ(a.first_index, b.first_index) << at;
  EXPECT_EQ(a.detail, b.detail) << at;
  EXPECT_EQ(a.elements, b.elements) << at;
  EXPECT_EQ(a.failed, b.failed) << at;
  EXPECT_EQ(a.by_reason, b.by_reason) << at;
  EXPECT_EQ(a.forgiven, b.forgiven) << at;
  EXPECT_EQ(a.naive_bound, b.naive_bound) << at;
  EXPECT_EQ(a.naive_excluded, b.naive_excluded) << at;
  EXPECT_EQ(a.metrics.compared, b.metrics.compared) << at;
  EXPECT_EQ(a.metrics.max_ulps, b.metrics.max_ulps) << at;
  EXPECT_EQ(a.metrics.max_ulps_index, b.metrics.max_ulps_index) << at;
  EXPECT_TRUE(a.metrics.max_abs == b.metrics.max_abs) << at;
  EXPECT_TRUE(a.metrics.max_rel == b.metrics.max_rel) << at;
  EXPECT_EQ(a.metrics.min_significant_bits, b.metrics.min_significant_bits) << at;
  if (nmse_rel == 0) {
    EXPECT_EQ(a.metrics.nmse, b.metrics.nmse) << at;
  } else {
    EXPECT_NEAR(a.metrics.nmse, b.metrics.nmse, nmse_rel * std::fabs(a.metrics.nmse)) << at;
  }
}

}  // namespace lmo::testing
