// One host call of gpu/api.h's functions (gpu/api.cc, gpu/api_attention.cc): the device
// buffers it owns, the checks of its CUDA calls (a failure throws std::runtime_error naming the
// function, the CUDA call and the error), and the storage check and the byte sizes of stored
// arrays. Internal to gpu/.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/api.h"
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

  void* upload(const void* host, size_t bytes) {
    void* p = alloc(bytes);
    check("cudaMemcpy (host to device)", cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice));
    return p;
  }

  // The launch's own error, then the kernel's (reported when the stream completes).
  void run(cudaError_t launched) const {
    check("kernel launch", launched);
    check("kernel execution (cudaStreamSynchronize)", cudaStreamSynchronize(nullptr));
  }

  void download(void* host, const void* dev, size_t bytes) const {
    check("cudaMemcpy (device to host)", cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
  }

  void finish() {
    std::vector<void*> owned;
    owned.swap(owned_);
    for (void* p : owned) check("cudaFree", cudaFree(p));
  }

 private:
  const char* fn_;
  std::vector<void*> owned_;
};

}  // namespace lmo::gpu::detail
