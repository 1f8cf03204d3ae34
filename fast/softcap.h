// F14 logit soft-capping, elementwise: y = cap·tanh(z/cap) in f32 (fast/math-inl.h SoftcapF:
// z + z·t²·P(t²) with t = z·(1/cap) below |t| = 0.625, the exponential form beyond; measured
// 1.07 and 1.48 ulp on AVX2, 1.14 and 1.73 on targets without FMA, where the policy allows 3),
// storage s in and out.
#pragma once

#include <cstdint>

#include "fast/storage.h"

namespace lmo::fast {

// y[i] = cap·tanh(z[i]/cap), i < n. Throws std::invalid_argument for n < 0, a null pointer with
// n > 0, or a cap that is not finite and > 0.
void softcap(Storage s, const void* z, void* y, int64_t n, float cap);

}  // namespace lmo::fast
