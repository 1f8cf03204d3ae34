#include <cuda_runtime.h>

#include "gpu/api.h"

namespace lmo::gpu {

DeviceInfo query_device() {
  DeviceInfo info;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    info.reason = cudaGetErrorString(err);
    (void)cudaGetLastError();  // clear the sticky error so later calls start clean
    return info;
  }
  if (count == 0) {
    info.reason = "no CUDA device";
    return info;
  }
  cudaDeviceProp prop{};
  err = cudaGetDeviceProperties(&prop, 0);
  if (err != cudaSuccess) {
    info.reason = cudaGetErrorString(err);
    return info;
  }
  info.present = true;
  info.name = prop.name;
  info.compute_major = prop.major;
  info.compute_minor = prop.minor;
  return info;
}

}  // namespace lmo::gpu
