// How a benchmark times the kernels of gpu/api.h's calls on their own device buffers, without
// the host copies each call makes (a call uploads its inputs, launches, waits and downloads its
// outputs: timed whole, a memory-bound kernel would measure PCIe). While an observer is installed
// on a thread, each gpu/api.h call made on that thread, once its kernels ran and were checked and
// before it frees its device buffers, hands the observer a replay of its launches. CUDA-free, so
// that code built without nvcc can name it; only the gpu library and its bench install one.
#pragma once

#include <functional>

namespace lmo::gpu {

class LaunchObserver {
 public:
  virtual ~LaunchObserver() = default;
  // `fn` names the call ("gpu::rmsnorm"). replay() enqueues the call's kernel launches again, in
  // their order, on the default stream, with the same arguments and device buffers, and returns
  // without waiting; it throws std::runtime_error for a launch error. The kernels read only their
  // inputs and overwrite their outputs (no atomics, no accumulation: gpu/common.cuh), so a replay
  // does the first run's work again; the host's copies are not touched. replay is valid only
  // during this call. An exception thrown here leaves the api call with it.
  virtual void on_call(const char* fn, const std::function<void()>& replay) = 0;
};

// Installs `o` on the calling thread for this object's lifetime; the one it replaces, if any,
// is restored after.
class ObservedLaunches {
 public:
  explicit ObservedLaunches(LaunchObserver& o);
  ~ObservedLaunches();
  ObservedLaunches(const ObservedLaunches&) = delete;
  ObservedLaunches& operator=(const ObservedLaunches&) = delete;

  // The calling thread's observer, or null.
  static LaunchObserver* current();

 private:
  LaunchObserver* previous_;
};

}  // namespace lmo::gpu
