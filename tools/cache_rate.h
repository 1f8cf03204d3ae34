// The rate of a memory-bound kernel when memory is not the limit: the same kernel on buffers
// that stay in the caches, called back to back.
//
// A kernel below memcpy's bandwidth at a large size is either waiting for memory (then it is
// faster in cache, and memory-side work such as prefetching or fewer passes can help) or busy
// computing (then it is as slow in cache as out of it, and only fewer instructions per element
// help). Its in-cache bytes per second over the large-size memcpy of the same run tells which.
#pragma once

#include <cstdint>
#include <functional>

namespace lmo::tools {

struct CacheSample {
  double seconds = 0;      // median wall time of one kernel call (a batch's time / calls)
  double bytes_per_s = 0;  // the kernel's compulsory traffic per call / seconds
  int64_t calls = 0;       // kernel calls in each timed batch
  int repetitions = 0;
};

// Runs kernel() (moving `bytes` per call, on buffers small enough to stay in the caches) once to
// bring them in, then times `repetitions` batches of back-to-back calls and reports the median.
// A batch has as many calls as move at least batch_bytes in total (at least one call), so that
// the clock's resolution and overhead are negligible against a batch however small one call is.
// bytes and batch_bytes must be positive, repetitions at least 1.
CacheSample measure_cache_rate(int64_t bytes, int64_t batch_bytes, int repetitions,
                               const std::function<void()>& kernel);

}  // namespace lmo::tools
