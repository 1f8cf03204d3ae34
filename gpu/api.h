// CUDA-free host interface to the GPU path: the oracle and the CLI include only this header.
#pragma once

#include <string>

namespace lmo::gpu {

struct DeviceInfo {
  bool present = false;    // a usable CUDA device was found
  std::string name;        // device name, when present
  int compute_major = 0;
  int compute_minor = 0;
  std::string reason;      // why no device is usable, when !present (the CUDA error string)
};

// Query device 0 through the CUDA runtime. Never throws: a missing driver or device is
// reported in `reason`.
DeviceInfo query_device();

}  // namespace lmo::gpu
