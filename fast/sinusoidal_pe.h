// F07 sinusoidal position encoding (Vaswani et al. 2017 §3.5) on plain pointers, mirroring
// reference/positional.h sinusoidal_pe and the oracle's op sinusoidal_pe:
//   pe[t, 2i] = sin(p_t / base^(2i/d)),   pe[t, 2i+1] = cos(p_t / base^(2i/d)),   i < d/2,
// for integer positions p_t, stored in s rounded to nearest-even. The angles are formed as in
// fast/rope.h: 1 / base^(2i/d) in long double, the angle in turns dropped to its fraction exactly
// (fast/angles-inl.h), cos and sin in double, one rounding to f32 and one to s. f32 cannot form
// these angles: at p = 10^6 the f32 angle is off by up to 2^-5 rad.
// Tokens run in parallel (fast/threads.h); each row depends only on its own position, so results
// are bitwise identical for any thread count.
#pragma once

#include <cstdint>

#include "fast/storage.h"

namespace lmo::fast {

// Throws std::invalid_argument for tokens < 0, d < 2 or odd, a null pointer with tokens > 0, a
// position beyond 2^53 in magnitude, or base not finite or ≤ 1.
void sinusoidal_pe(Storage s, const int64_t* positions, void* pe, int64_t tokens, int64_t d,
                   double base = 10000);

}  // namespace lmo::fast
