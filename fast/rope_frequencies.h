// The frequency rule of F10/F11 RoPE as an argument (reference/rope_scaling.h; parameter names as
// in oracle/ops/rope.h): taken by fast/rope.h's rope and, through fast/attention_args.h's
// MlaDecodeArgs, by fast/mla_decode.h and gpu/api_attention.h. Plain C++17 with no other header,
// since gpu/api_attention.h is compiled by nvcc too; fast/rope.h declares the functions that
// evaluate it (rope_inv_freq, rope_cos_sin_factor).
#pragma once

#include <cstdint>

namespace lmo::fast {

enum class RopeScaling : uint8_t { none, pi, ntk, yarn, llama31 };

struct RopeFrequencies {
  double base = 10000;
  RopeScaling scaling = RopeScaling::none;
  double factor = 1;                                 // s (pi, ntk, yarn, llama31)
  int64_t original_context = 0;                      // L (yarn, llama31)
  double low_freq_factor = 1, high_freq_factor = 4;  // llama31
  double beta_fast = 32, beta_slow = 1;              // yarn (as released: ramp in the index k)
  bool attention_factor = false;  // yarn: cos and sin times 0.1·ln s + 1 (HF rope_type "yarn")
};

}  // namespace lmo::fast
