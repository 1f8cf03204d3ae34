// Helpers of the error sweeps in tools/ (softcap_error_sweep, activation_error_sweep): f32 bit
// patterns, errors in ulps of the exact value, and the worst case of a range. Measurements to
// read and report, not tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "fast/target_scope.h"
#include "fast/targets.h"

namespace lmo::tools {

inline float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline uint32_t to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// The f32 ulp at exact: 2^(e − 23) for |exact| in [2^e, 2^(e+1)), 2^-149 in the subnormal range.
inline long double ulp_f32(long double exact) {
  int e;
  std::frexp(static_cast<double>(exact), &e);
  return std::ldexp(1.0L, e - 24 < -149 ? -149 : e - 24);
}

// |got − exact| in units of the f32 ulp at exact.
inline double ulps(float got, long double exact) {
  return static_cast<double>(std::fabs(static_cast<long double>(got) - exact) / ulp_f32(exact));
}

// The largest error of a range and where it occurred.
struct Worst {
  double err = 0;
  float at = 0;
  void add(double e, float z) {
    if (e > err) {
      err = e;
      at = z;
    }
  }
};

// Runs sweep() once per SIMD target this CPU supports, with dispatch forced to it and its name
// printed first: every target, or those named in argv[first, argc) (e.g. AVX2 SSE4).
template <class Sweep>
void for_each_chosen_target(int argc, char** argv, int first, const Sweep& sweep) {
  for (const lmo::fast::SimdTarget& t : lmo::fast::compiled_targets()) {
    if (!t.supported) continue;
    bool chosen = argc <= first;
    for (int a = first; a < argc; ++a) chosen = chosen || t.name == argv[a];
    if (!chosen) continue;
    lmo::fast::ScopedTarget scope(t);
    std::printf("%s\n", t.name.c_str());
    sweep();
    std::fflush(stdout);
  }
}

}  // namespace lmo::tools
