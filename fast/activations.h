// F06 activations, elementwise over n values in storage s (f32 compute, outputs rounded to
// nearest-even). Mirrors reference/activations.h's default (stable) forms:
//   relu(x) = max(0, x) (NaN stays NaN, −0 → +0);
//   gelu(x) = x·Φ(x) = x/2·erfc(−x/√2), with Φ(−|x|) as a rational times e^{−x²/2}
//             (fast/math-inl.h, error analysis there), so GELU keeps its relative accuracy
//             for x ≪ 0;
//   gelu_tanh(x) = x·sigmoid(2u) = x/(1 + e^{−2u}), u = √(2/π)(x + 0.044715x³) rounded in
//             f32 (the policy's argument budget covers it; error analysis in fast/math-inl.h),
//             with SiLU's handling below 2u = −88;
//   silu(x) = x·sigmoid(x) = x/(1 + e^{−x}); below x = −88, where e^{−x} overflows, x·e^x
//             scaled by 2^64 so that only the last product rounds into the subnormal range.
#pragma once

#include <cstdint>

#include "fast/storage.h"  // Storage, Activation

namespace lmo::fast {

// y[i] = act(x[i]), i < n (x == y allowed). Throws std::invalid_argument for n < 0, a null
// pointer with n > 0, or an unknown activation.
void activation(Activation act, Storage s, const void* x, void* y, int64_t n);

}  // namespace lmo::fast
