// The timing loop of the GPU benchmarks (bench/gpu/device_timing.cu: a call's replayed kernels
// against a device-to-device copy or cuBLAS SGEMM): one untimed
// warm-up call of the kernel and of its yardstick, then `repetitions` calls of each, alternating
// so that clock and thermal drift reach both alike, each timed with cudaEvents on the default
// stream; the medians.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace lmo::gpu::bench_timing {

// Throws std::runtime_error "<who>: <what> failed: <CUDA error name> (<string>)" for an error,
// clearing it first.
inline void check(const char* who, const std::string& what, cudaError_t e) {
  if (e == cudaSuccess) return;
  (void)cudaGetLastError();
  throw std::runtime_error(std::string(who) + ": " + what + " failed: " + cudaGetErrorName(e) +
                           " (" + cudaGetErrorString(e) + ")");
}

struct Medians {
  double kernel = 0;     // seconds
  double yardstick = 0;  // seconds
};

// An enqueued call: what it is (for error messages) and the call.
struct Enqueue {
  std::string what;
  std::function<cudaError_t()> call;
};

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Medians of `repetitions` >= 1 alternating timed calls of kernel and yardstick (see the top).
inline Medians alternating_medians(const char* who, const Enqueue& kernel, const Enqueue& yardstick,
                                   int repetitions) {
  // The events, destroyed on every exit (cudaEventDestroy's result is not reportable from a
  // destructor; a failing destroy would also fail the next checked call).
  struct Events {
    cudaEvent_t start = nullptr, stop = nullptr;
    ~Events() {
      if (stop) (void)cudaEventDestroy(stop);
      if (start) (void)cudaEventDestroy(start);
    }
  } ev;
  check(who, "cudaEventCreate", cudaEventCreate(&ev.start));
  check(who, "cudaEventCreate", cudaEventCreate(&ev.stop));
  const auto timed = [&](const Enqueue& e) {
    check(who, "cudaEventRecord", cudaEventRecord(ev.start));
    check(who, e.what, e.call());
    check(who, "cudaEventRecord", cudaEventRecord(ev.stop));
    check(who, "cudaEventSynchronize", cudaEventSynchronize(ev.stop));
    float ms = 0;
    check(who, "cudaEventElapsedTime", cudaEventElapsedTime(&ms, ev.start, ev.stop));
    return ms * 1e-3;
  };
  timed(kernel);
  timed(yardstick);
  std::vector<double> kt, yt;
  for (int i = 0; i < repetitions; ++i) {
    kt.push_back(timed(kernel));
    yt.push_back(timed(yardstick));
  }
  return {median(kt), median(yt)};
}

}  // namespace lmo::gpu::bench_timing
