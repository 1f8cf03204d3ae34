#include "bench/cache_rate.h"

#include <stdexcept>
#include <utility>

#include "bench/timing.h"

namespace lmo::bench {

CacheBatches::CacheBatches(int64_t bytes, int64_t batch_bytes, std::function<void()> kernel)
    : bytes_(bytes), calls_(0), kernel_(std::move(kernel)) {
  if (bytes <= 0 || batch_bytes <= 0) {
    throw std::invalid_argument("CacheBatches: bytes and batch_bytes must be positive");
  }
  calls_ = (batch_bytes + bytes - 1) / bytes;
}

void CacheBatches::time_once() {
  kernel_();
  const std::function<void()> batch = [this] {
    for (int64_t i = 0; i < calls_; ++i) kernel_();
  };
  seconds_.push_back(seconds_of(batch) / static_cast<double>(calls_));
}

CacheSample CacheBatches::sample() const {
  if (seconds_.empty()) throw std::logic_error("CacheBatches::sample: no batch was timed");
  CacheSample s;
  s.repetitions = static_cast<int>(seconds_.size());
  s.calls = calls_;
  s.seconds = median(seconds_);
  s.bytes_per_s = static_cast<double>(bytes_) / s.seconds;
  return s;
}

}  // namespace lmo::bench
