#include "cache_rate.h"

#include <stdexcept>
#include <vector>

#include "timing.h"

namespace lmo::tools {

CacheSample measure_cache_rate(int64_t bytes, int64_t batch_bytes, int repetitions,
                               const std::function<void()>& kernel) {
  if (bytes <= 0 || batch_bytes <= 0) {
    throw std::invalid_argument("measure_cache_rate: bytes and batch_bytes must be positive");
  }
  if (repetitions < 1) throw std::invalid_argument("measure_cache_rate: repetitions must be >= 1");
  const int64_t calls = (batch_bytes + bytes - 1) / bytes;
  const std::function<void()> batch = [&] {
    for (int64_t i = 0; i < calls; ++i) kernel();
  };
  kernel();  // maps the pages and loads the buffers into the caches
  std::vector<double> t;
  for (int r = 0; r < repetitions; ++r) t.push_back(seconds_of(batch) / static_cast<double>(calls));
  CacheSample s;
  s.repetitions = repetitions;
  s.calls = calls;
  s.seconds = median(t);
  s.bytes_per_s = static_cast<double>(bytes) / s.seconds;
  return s;
}

}  // namespace lmo::tools
