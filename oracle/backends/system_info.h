// What this build and this machine offer: the number formats, the SIMD targets compiled and
// supported, and the CUDA build and device. `lmoracle list` prints it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fast/targets.h"
#include "oracle/core/version.h"  // IWYU pragma: export

namespace lmo::oracle {

struct SystemInfo {
  std::string version;
  std::vector<fast::SimdTarget> simd_targets;
  std::string simd_dispatched;
  bool cuda_compiled = false;
  bool cuda_device = false;
  std::string cuda_device_name;  // or, without a device, the reason
};

SystemInfo system_info();

nlohmann::json to_json(const SystemInfo& info);
std::string to_text(const SystemInfo& info);

}  // namespace lmo::oracle
