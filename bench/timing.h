// Wall-clock helpers shared by the bench's same-run comparisons (bandwidth.cc, flop_rate.cc).
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace lmo::bench {

// Seconds one call of f takes (steady clock).
inline double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(t1 - t0).count();
}

// The median of a non-empty sample (the mean of the two middle values for an even count).
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace lmo::bench
