// Which Highway SIMD targets this build compiled, and which of them the running CPU supports.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lmo::fast {

struct SimdTarget {
  int64_t id;        // Highway's HWY_* target bit
  std::string name;  // Highway's name for it (e.g. "AVX2", "AVX3", "SSE4", "EMU128")
  bool supported;    // the running CPU can execute it
};

// Targets compiled into the fast kernels, best first.
std::vector<SimdTarget> compiled_targets();

// The target dynamic dispatch picks on this CPU (the best supported one).
std::string dispatched_target();

}  // namespace lmo::fast
