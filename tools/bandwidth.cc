#include "bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace lmo::tools {
namespace {

double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(t1 - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

BandwidthSample measure_bandwidth(int64_t bytes, int repetitions,
                                  const std::function<void()>& kernel) {
  if (bytes <= 0 || bytes % 2 != 0) {
    throw std::invalid_argument("measure_bandwidth: bytes must be positive and even");
  }
  if (repetitions < 1) throw std::invalid_argument("measure_bandwidth: repetitions must be >= 1");
  const size_t half = static_cast<size_t>(bytes / 2);
  // Written once before timing, so the pages are mapped and the copy's first touch is not timed.
  std::vector<unsigned char> src(half, 0x5A), dst(half, 0);
  const std::function<void()> copy = [&] {
    std::memcpy(dst.data(), src.data(), half);
    // Keep the compiler from treating the copy as dead.
    asm volatile("" : : "r"(dst.data()) : "memory");
  };
  kernel();
  copy();
  std::vector<double> k, c;
  for (int r = 0; r < repetitions; ++r) {
    k.push_back(seconds_of(kernel));
    c.push_back(seconds_of(copy));
  }
  BandwidthSample s;
  s.repetitions = repetitions;
  s.seconds = median(k);
  s.memcpy_seconds = median(c);
  s.bytes_per_s = static_cast<double>(bytes) / s.seconds;
  s.memcpy_bytes_per_s = static_cast<double>(bytes) / s.memcpy_seconds;
  s.ratio = s.bytes_per_s / s.memcpy_bytes_per_s;
  return s;
}

}  // namespace lmo::tools
