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
#include <vector>

namespace lmo::bench {

struct CacheSample {
  double seconds = 0;      // median wall time of one kernel call (a batch's time / calls)
  double bytes_per_s = 0;  // the kernel's compulsory traffic per call / seconds
  int64_t calls = 0;       // kernel calls in each timed batch
  int repetitions = 0;
};

// Timed batches of back-to-back calls of kernel() (moving `bytes` per call, on buffers small
// enough to stay in the caches). A batch has as many calls as move at least batch_bytes in total
// (at least one call), so that the clock's resolution and overhead are negligible against a batch
// however small one call is. The batches are taken one at a time (time_once), so that a caller
// can interleave them with the large-size measurements they are compared with: all of them then
// see the same machine state, where a block of batches after the large runs would see a later one.
class CacheBatches {
 public:
  // bytes and batch_bytes must be positive.
  CacheBatches(int64_t bytes, int64_t batch_bytes, std::function<void()> kernel);
  // One untimed call first, which brings the buffers back into the caches after whatever ran in
  // between, then one timed batch.
  void time_once();
  // The median over the batches timed so far (at least one).
  CacheSample sample() const;

 private:
  int64_t bytes_, calls_;
  std::function<void()> kernel_;
  std::vector<double> seconds_;  // per call, one entry per batch
};

}  // namespace lmo::bench
