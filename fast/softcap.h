// F14 logit soft-capping, elementwise: y = cap·tanh(z/cap) (z/cap a division, as the reference
// writes it; tanh in f32 from fast/math-inl.h, ≤ 2.2 ulp), storage s in and out.
#pragma once

#include <cstdint>

#include "fast/storage.h"

namespace lmo::fast {

// y[i] = cap·tanh(z[i]/cap), i < n. Throws std::invalid_argument for n < 0, a null pointer with
// n > 0, or a cap that is not finite and > 0.
void softcap(Storage s, const void* z, void* y, int64_t n, float cap);

}  // namespace lmo::fast
