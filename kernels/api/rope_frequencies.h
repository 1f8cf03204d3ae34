// The frequency rule of F10/F11 RoPE as an argument (reference/rope_scaling.h; parameter names as
// in oracle/ops/rope.h): taken by fast/rope.h's rope and, through kernels/api/attention_args.h's
// MlaDecodeArgs, by fast/mla_decode.h and gpu/api_attention.h. Plain C++17 with no other header,
// since gpu/api_attention.h is compiled by nvcc too. The functions that evaluate it
// (rope_inv_freq, rope_cos_sin_factor) are defined in rope_frequencies.cc, in long double.
#pragma once

#include <cstdint>
#include <vector>

namespace lmo::kernels {

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

// θ_k, k < r/2, by the rule, evaluated in long double as reference/rope_scaling.h writes it
// (θ_k = 1 / base^(2k/r); pi θ_k/s; ntk base·s^(r/(r−2)); yarn the released ramp; llama31 the
// wavelength bands). Throws std::invalid_argument for parameters the rule rejects (fast/rope.h
// lists them).
std::vector<long double> rope_inv_freq(int64_t rotary_dims, const RopeFrequencies& f);
// The factor m on cos and sin: 0.1·ln s + 1 for yarn with attention_factor and s > 1, else 1.
long double rope_cos_sin_factor(const RopeFrequencies& f);

}  // namespace lmo::kernels
