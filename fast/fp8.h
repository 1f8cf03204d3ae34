// fp8 scaling on plain pointers (kernels/api/fp8_args.h), mirroring reference/fp8_scaling.h and
// the oracle's ops fp8_quantize, fp8_dequantize and fp8_linear (oracle/ops/fp8.h):
//
//  fp8_quantize: per tile G of x (storage s), amax_G = max |x_i| (NaN if any x_i is), s_G =
//    amax/M rounded once to f32 (the quotient of an f32 and M = 7·2^k, formed in double and
//    rounded to f32: a double rounding that never lands on an f32 midpoint, since amax/M is not
//    dyadic unless exact), or with pow2_scales the least power of two at or above it (UE8M0);
//    amax below amax_floor takes amax_floor. q_i = fp8(clamp(x_i / s_G, ±M)): the quotient
//    correctly rounded in f32 (IEEE division), clamped, rounded to nearest-even in fp8. The f32
//    quotient is within 2^-24 of x_i / s_G, so q_i is the correctly rounded value except where
//    x_i / s_G lies within 2^-21 of an fp8 ulp of a midpoint (the policy's margin).
//  fp8_dequantize: x_i = q_i · s_G in f32, rounded once to s.
//  fp8_linear: y = Σ_kb (A_kb · W_kbᵀ) ⊙ (s_A[·, kb] s_W[·, kb]ᵀ): per block of `block` columns of
//    k, the fp8 products (exact in f32) summed by OpenBLAS sgemm, scaled in f32 and accumulated in
//    f32 (DeepGEMM's promotion), then rounded once to s. A is scaled per 1 × block group, W per
//    block × block tile.
//
// Rows run in parallel (fast/threads.h) in chunks fixed by the shapes; each element depends only
// on its own tile, so the results are bitwise identical for any thread count.
#pragma once

#include <cstdint>

#include "fast/kernel_api.h"
#include "fast/storage.h"

namespace lmo::fast {

// Throws std::invalid_argument for a bad tiling, format, storage, a negative or non-finite
// amax_floor, or a null pointer where elements are touched.
void fp8_quantize(Storage s, const void* x, uint8_t* q, float* scales, const Fp8Tiling& t,
                  Fp8Format f, bool pow2_scales, double amax_floor);
void fp8_dequantize(Storage s, const uint8_t* q, const float* scales, void* x, const Fp8Tiling& t,
                    Fp8Format f);
void fp8_linear(Storage s, const uint8_t* a, const float* a_scales, const uint8_t* w,
                const float* w_scales, void* y, int64_t m, int64_t n, int64_t k, int64_t block,
                Fp8Format f);

// The exact value of each of the 256 patterns of f, as f32 (NaN patterns NaN).
const float* fp8_values(Fp8Format f);
// M: 448 (e4m3), 57344 (e5m2).
float fp8_max(Fp8Format f);

}  // namespace lmo::fast
