// The F06 activations a kernel library takes as an argument (fast/activations.h, fast/glu.h,
// gpu/api.h): one enum for both libraries, so the oracle passes its choice through unmapped.
#pragma once

#include <cstdint>

namespace lmo::kernels {

enum class Activation : uint8_t { relu, gelu, gelu_tanh, silu };

}  // namespace lmo::kernels
