// CUDA-free host interface (gpu/api.h's conventions) of F07, the sinusoidal position encoding,
// with fast/sinusoidal_pe.h's argument shapes and validation (std::invalid_argument naming the
// function, the parameter and the expectation, before any CUDA call).
//
// Numerics: the frequencies 1/base^(2i/d) in turns, formed on the host in long double as
// fast/sinusoidal_pe.h does; the angle's whole turns dropped exactly and cos and sin evaluated in
// double on the device (gpu/angles.h, the same operations as the fast kernel's), each value
// rounded once to f32 and then to the storage, nearest-even. At positions up to 2^20 every f32
// value lies within 2^-24 of the exact one (the naive f32 encoding misses by 2^-5 rad there).
#pragma once

#include <cstdint>

#include "gpu/api.h"

namespace lmo::gpu {

// pe[t, 2i] = sin(p_t / base^(2i/d)), pe[t, 2i+1] = cos(p_t / base^(2i/d)), i < d/2, for the
// integer positions p_t; pe is tokens × d in s. Throws std::invalid_argument for tokens < 0, d < 2
// or odd, a null pointer with tokens > 0, a position beyond 2^53 in magnitude, or base not finite
// or ≤ 1.
void sinusoidal_pe(Storage s, const int64_t* positions, void* pe, int64_t tokens, int64_t d,
                   double base = 10000);

}  // namespace lmo::gpu
