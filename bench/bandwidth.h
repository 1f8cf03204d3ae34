// Bandwidth measurement of memory-bound kernels against memcpy, in the same run.
//
// A memory-bound kernel is as fast as the bytes it must move (each input read once, each output
// written once) allow. The yardstick is a memcpy of the same total traffic measured in the same
// process, between the kernel's own repetitions, so the ratio does not depend on the machine's
// absolute speed, its frequency state or other load (both sides see the same conditions).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace lmo::bench {

struct BandwidthSample {
  double seconds = 0;         // median wall time of one kernel call
  double bytes_per_s = 0;     // the kernel's compulsory traffic / seconds
  double memcpy_seconds = 0;  // median wall time of the same-traffic memcpy
  double memcpy_bytes_per_s = 0;
  double ratio = 0;  // bytes_per_s / memcpy_bytes_per_s
  int repetitions = 0;
};

// Runs kernel() and a memcpy moving `bytes` in total (bytes/2 read, bytes/2 written, between
// buffers of their own as large as the kernel's traffic, so neither fits in a cache) alternately
// `repetitions` times after one warm-up call of each, and reports the medians. bytes must be
// positive and even. `between`, if set, runs after each repetition's pair, untimed here: a
// related measurement that should see the same machine state (e.g. CacheBatches::time_once).
BandwidthSample measure_bandwidth(int64_t bytes, int repetitions,
                                  const std::function<void()>& kernel,
                                  const std::function<void()>& between = {});

}  // namespace lmo::bench
