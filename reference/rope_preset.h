// The RoPE frequencies a model preset asks for: F10's θ_k = base^(−2k/r), or, when the preset
// names an F11 scaling (presets.h RopeScaling), the frequencies of that rule in rope_scaling.h.
// Shared by the decoder stack (decoder.h) and MLA (mla.h), so a preset's scaling is applied the
// same way to every rotated query and key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reference/numeric.h"
#include "reference/presets.h"
#include "reference/rope.h"
#include "reference/rope_scaling.h"

namespace lmo::ref {

// A decimal constant of a preset (a string_view, not NUL-terminated) rounded once to T.
template <class T>
T preset_constant(std::string_view decimal) {
  return constant<T>(std::string(decimal).c_str());
}

// θ (r/2 values, r = rotary_dims) for the given base and optional scaling, evaluated in T by
// rope_inv_freq, rope_inv_freq_llama3 (Llama 3.1) or rope_inv_freq_yarn (the released YaRN rule,
// which is what DeepSeek-V2/V3 use). YaRN's attention temperature is not part of the frequencies:
// where and how a model applies it differs (decoder.h documents its choice).
template <class T>
std::vector<T> rope_inv_freq_for(int64_t rotary_dims, const T& base,
                                 const std::optional<RopeScaling>& scaling) {
  if (!scaling) return rope_inv_freq(rotary_dims, base);
  const RopeScaling& s = *scaling;
  switch (s.kind) {
    case RopeScalingKind::kLlama3:
      return rope_inv_freq_llama3(rotary_dims, base, preset_constant<T>(s.factor),
                                  preset_constant<T>(s.low_freq_factor),
                                  preset_constant<T>(s.high_freq_factor), s.original_context);
    case RopeScalingKind::kYarn:
      return rope_inv_freq_yarn(rotary_dims, base, preset_constant<T>(s.factor), s.original_context,
                                preset_constant<T>(s.beta_fast), preset_constant<T>(s.beta_slow));
  }
  throw std::invalid_argument("rope_inv_freq_for: unknown RopeScalingKind " +
                              std::to_string(static_cast<int>(s.kind)));
}

}  // namespace lmo::ref
