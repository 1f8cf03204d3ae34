#include "bench/bandwidth.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "bench/timing.h"

namespace lmo::bench {

BandwidthSample measure_bandwidth(int64_t bytes, int repetitions,
                                  const std::function<void()>& kernel,
                                  const std::function<void()>& between) {
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
    if (between) between();
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

}  // namespace lmo::bench
