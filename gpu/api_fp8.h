// CUDA-free host interface (gpu/api.h's conventions) of fp8 scaling, with fast/fp8.h's arguments,
// meaning and validation (kernels/api/fp8_args.h: std::invalid_argument naming the function, the
// parameter and the expectation, before any CUDA call):
//  fp8_quantize: per tile, s = f32(max(amax, amax_floor)/M) (or UE8M0 with pow2_scales) and
//    q = fp8(clamp(x / s, ±M)), the quotient an IEEE f32 division;
//  fp8_dequantize: x = q·s in f32, rounded once to s;
//  fp8_linear: y = Σ_kb (A_kb·W_kbᵀ) ⊙ (s_A s_W) in DeepGEMM's order: per block of k the exact
//    fp8 products summed in f32, scaled in f32 and accumulated in f32, rounded once to s.
// Numerics (gpu/fp8_math.h): f32 throughout, every operation rounded once (the strict recipe),
// sums in a fixed order; the only double is each tile's scale quotient, as in fast/.
#pragma once

#include <cstdint>

#include "gpu/api.h"
#include "kernels/api/fp8_args.h"

namespace lmo::gpu {

using kernels::Fp8Format;
using kernels::Fp8Tiling;

void fp8_quantize(Storage s, const void* x, uint8_t* q, float* scales, const Fp8Tiling& t,
                  Fp8Format f, bool pow2_scales, double amax_floor);
void fp8_dequantize(Storage s, const uint8_t* q, const float* scales, void* x, const Fp8Tiling& t,
                    Fp8Format f);
void fp8_linear(Storage s, const uint8_t* a, const float* a_scales, const uint8_t* w,
                const float* w_scales, void* y, int64_t m, int64_t n, int64_t k, int64_t block,
                Fp8Format f);

}  // namespace lmo::gpu
