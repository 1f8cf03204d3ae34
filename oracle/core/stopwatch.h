// Elapsed wall time, for the phase times verify, drift and the benches report: the steady clock,
// which never goes back when the system clock is set.
#pragma once

#include <chrono>

namespace lmo::oracle {

using SteadyClock = std::chrono::steady_clock;

// Seconds from t0 until now.
inline double seconds_since(SteadyClock::time_point t0) {
  return std::chrono::duration<double>(SteadyClock::now() - t0).count();
}

}  // namespace lmo::oracle
