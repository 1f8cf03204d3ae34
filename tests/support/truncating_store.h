// A store that truncates instead of rounding: each value taken to f32, then its low 16 bits
// dropped (f32 → bf16 toward zero, as some Triton interpreter versions store). The mutation tests
// of the GPU host math and of declared recipes plant it in a correct kernel's outputs.
#pragma once

#include <cstdint>
#include <cstring>

#include "oracle/core/op.h"

namespace lmo::testing {

inline double truncated_to_bf16(double v) {
  const auto f = static_cast<float>(v);
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  u &= 0xFFFF0000u;
  float t;
  std::memcpy(&t, &u, sizeof t);
  return t;
}

// Every output's values truncated to bf16.
inline void truncate_to_bf16(oracle::Outputs<double>& o) {
  for (oracle::OutputValues<double>& out : o) {
    for (double& v : out.values) v = truncated_to_bf16(v);
  }
}

}  // namespace lmo::testing
