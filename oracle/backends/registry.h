// How backend families join the registry (backend.h's available_backends()).
#pragma once

#include <memory>
#include <vector>

#include "oracle/backends/backend.h"

namespace lmo::oracle {

void add_reference_backends(std::vector<std::unique_ptr<Backend>>& out);
// One per Highway target compiled and supported by this CPU (backend_fast.cc).
void add_fast_backends(std::vector<std::unique_ptr<Backend>>& out);
// "gpu", when this build has CUDA and query_device() finds a device (backend_gpu.cc).
void add_gpu_backends(std::vector<std::unique_ptr<Backend>>& out);

}  // namespace lmo::oracle
