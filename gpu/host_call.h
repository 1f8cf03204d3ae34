// One host call of gpu/api.h's functions (gpu/api.cc, gpu/api_attention.cc): the device
// buffers it owns, the checks of its CUDA calls (a failure throws std::runtime_error naming the
// function, the CUDA call and the error), and the storage check and the byte sizes of stored
// arrays; and the replay of its launches an installed launch observer receives
// (gpu/launch_observer.h). Internal to gpu/.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/api.h"
#include "gpu/launch_observer.h"
#include "kernels/api/validate.h"  // check_storage

namespace lmo::gpu::detail {

using kernels::storage_bytes;
using kernels::detail::check_storage;

inline size_t bytes_of(Storage s, int64_t count) {
  return static_cast<size_t>(count) * storage_bytes(s);
}

// One host call: the device buffers it owns and the checks of its CUDA calls. The buffers are
// freed, with the result checked, by finish(); the destructor frees what is left only on the
// exception path, where an error is already on its way (its cudaFree results are not
// reportable there).
class Call {
 public:
  explicit Call(const char* fn) : fn_(fn) {}
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  ~Call() {
    for (void* p : owned_) (void)cudaFree(p);
  }

  void check(const char* what, cudaError_t e) const {
    if (e == cudaSuccess) return;
    (void)cudaGetLastError();  // clear a non-sticky error so that later calls start clean
    throw std::runtime_error(std::string(fn_) + ": " + what + " failed: " + cudaGetErrorName(e) +
                             " (" + cudaGetErrorString(e) + ")");
  }

  void* alloc(size_t bytes) {
    void* p = nullptr;
    check("cudaMalloc", cudaMalloc(&p, bytes));
    owned_.push_back(p);
    return p;
  }

  // n floats on the device, or null for none (a launch's optional scratch).
  float* alloc_floats(int64_t n) {
    return n > 0 ? static_cast<float*>(alloc(static_cast<size_t>(n) * sizeof(float))) : nullptr;
  }

  void* upload(const void* host, size_t bytes) {
    void* p = alloc(bytes);
    check("cudaMemcpy (host to device)", cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice));
    return p;
  }

  // Enqueues launch() (a callable returning the launcher's cudaError_t), then checks the launch's
  // own error and the kernel's (reported when the stream completes). With a launch observer
  // installed on this thread, the launch is kept for the replay finish() hands it: the launch
  // must then capture its arguments by value (pointers to the call's device buffers).
  template <class Launch>
  void run(Launch launch) {
    check("kernel launch", launch());
    check("kernel execution (cudaStreamSynchronize)", cudaStreamSynchronize(nullptr));
    if (ObservedLaunches::current()) launches_.emplace_back(std::move(launch));
  }

  void download(void* host, const void* dev, size_t bytes) const {
    check("cudaMemcpy (device to host)", cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
  }

  // Hands the observer, if one is installed, the replay of this call's launches while its device
  // buffers still exist; then frees them, checking each free.
  void finish() {
    if (LaunchObserver* o = ObservedLaunches::current(); o && !launches_.empty()) {
      o->on_call(fn_, [this] {
        for (const std::function<cudaError_t()>& l : launches_)
          check("kernel launch (replay)", l());
      });
    }
    launches_.clear();
    std::vector<void*> owned;
    owned.swap(owned_);
    for (void* p : owned) check("cudaFree", cudaFree(p));
  }

 private:
  const char* fn_;
  std::vector<void*> owned_;
  std::vector<std::function<cudaError_t()>> launches_;  // kept only while observed
};

}  // namespace lmo::gpu::detail
