// The per-element math of the fp8 kernels (gpu/fp8.cuh) as __host__ __device__ functions, so that
// a host test (tests/kernels/gpu_fp8_math_test.cc) runs the kernels' own arithmetic and judges it
// against the exact reference on a machine without a device. Plain C++ when not compiled by nvcc;
// no CUDA header. Each function follows fast/fp8.cc and fast/fp8_linear.cc, rounding for rounding:
//
//  decode:    an fp8 pattern's value, exact in f32 (OCP E4M3FN: bias 7, no infinity, S.1111.111
//             NaN; E5M2: bias 15, IEEE-like), from its fields, as fast/fp8_values.cc's table.
//  encode:    an f32 clamped to ±M and rounded to nearest-even in fp8 by integer arithmetic on
//             its pattern (fast/fp8.cc's Fp8Bits): normal range, the significand rounded at its
//             fp8 width and the exponent rebiased; subnormal range, |v| scaled exactly to fp8's
//             subnormal quantum and rounded to an integer, ties to even. NaN gives 0x7F.
//  scale:     s = amax/M rounded once to f32, or with pow2 the least power of two at or above
//             it (UE8M0); amax below amax_floor takes amax_floor. The quotient is formed in double
//             and rounded to f32, as fast/ does: amax_floor is a double that f32 need not hold,
//             and amax/M, M = 7·2^k, is never within double's rounding of an f32 midpoint unless
//             exact, so the result is the correctly rounded one. One division per tile.
//  quantize:  q = encode(x / s), the quotient an IEEE f32 division (0 ulp).
//  dequantize: x = decode(q)·s, one IEEE f32 product (0 ulp), then the store's rounding.
//  linear_element: one element of the block-scaled linear layer in DeepGEMM's order: per block of
//             `block` columns of k, the fp8 products (exact in f32: at most 4 + 4 significant
//             bits, exponents within f32's range) summed in f32 in ascending k, the block's sum
//             scaled by (s_A·s_W) in f32 and accumulated in f32 in ascending block order.
#pragma once

#include <cmath>
#include <cstdint>

#include "gpu/f32_ops.h"
#include "kernels/api/fp8_args.h"

namespace lmo::gpu::fp8_math {

using kernels::Fp8Format;

// M: 448 (E4M3), 57344 (E5M2).
LMO_HD inline float max_of(Fp8Format f) { return f == Fp8Format::e4m3 ? 448.0f : 57344.0f; }

LMO_HD inline float decode(uint8_t p, Fp8Format f) {
  const bool e4m3 = f == Fp8Format::e4m3;
  const int man_bits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15, top = e4m3 ? 15 : 31;
  const int e = (p >> man_bits) & top;
  const int mant = p & ((1 << man_bits) - 1);
  float v;
  if (e == top && (e4m3 ? mant == 7 : mant != 0)) {
    v = f32::from_bits(0x7FC00000u);  // NaN
  } else if (e == top && !e4m3) {
    v = f32::from_bits(0x7F800000u);  // E5M2's infinity
  } else if (e == 0) {
    v = ::ldexpf(static_cast<float>(mant), 1 - bias - man_bits);
  } else {
    v = ::ldexpf(static_cast<float>(mant | (1 << man_bits)), e - bias - man_bits);
  }
  return (p & 0x80) ? -v : v;
}

template <int kMan, int kBias>
LMO_HD uint8_t encode_as(float v, float max) {
  if (v != v) return 0x7F;
  v = v > max ? max : (v < -max ? -max : v);
  const uint32_t u = f32::bits_of(v);
  const uint32_t sign = (u >> 24) & 0x80u;
  const uint32_t a = u & 0x7FFFFFFFu;
  uint32_t bits;
  if (a < (static_cast<uint32_t>(127 + 1 - kBias) << 23)) {
    // Below fp8's smallest normal: |v| in units of the quantum 2^(1 − kBias − kMan), an exact
    // scaling by a power of two, rounded to an integer, ties to even (rintf in the default
    // rounding mode); 2^kMan, the smallest normal's pattern, is reached by rounding up.
    const float scaled = f32::mul(f32::from_bits(a), static_cast<float>(1u << (kBias - 1 + kMan)));
    bits = static_cast<uint32_t>(::rintf(scaled));
  } else {
    // Half an fp8 ulp less one f32 ulp plus the kept lsb, then cut: nearest-even.
    constexpr int kShift = 23 - kMan;
    const uint32_t lsb = (a >> kShift) & 1u;
    const uint32_t up = a + ((1u << (kShift - 1)) - 1u) + lsb;
    bits = (up >> kShift) - (static_cast<uint32_t>(127 - kBias) << kMan);
  }
  return static_cast<uint8_t>(bits | sign);
}

LMO_HD inline uint8_t encode(float v, Fp8Format f) {
  return f == Fp8Format::e4m3 ? encode_as<3, 7>(v, 448.0f) : encode_as<2, 15>(v, 57344.0f);
}

// The scale of a tile from its max |x| (nan: the tile holds a NaN).
LMO_HD inline float scale(float amax, bool nan, Fp8Format f, bool pow2, double amax_floor) {
  if (nan) return f32::from_bits(0x7FC00000u);
  const double a = static_cast<double>(amax) < amax_floor ? amax_floor : static_cast<double>(amax);
  const double ratio = a / static_cast<double>(max_of(f));
  if (!pow2) return static_cast<float>(ratio);
  int e = 0;
  const double m = ::frexp(ratio, &e);  // ratio = m·2^e, m in [0.5, 1)
  return static_cast<float>(m == 0.5 ? ratio : ::ldexp(1.0, e));
}

LMO_HD inline uint8_t quantize(float x, float s, Fp8Format f) { return encode(f32::div(x, s), f); }

LMO_HD inline float dequantize(uint8_t q, float s, Fp8Format f) {
  return f32::mul(decode(q, f), s);
}

// The index of the scale of element (r, c) (Fp8Tiling's members are host functions: its tile
// grid is spelled out here).
LMO_HD inline int64_t tile_of(int64_t r, int64_t c, const kernels::Fp8Tiling& t) {
  const int64_t across = (t.cols + t.tile_cols - 1) / t.tile_cols;
  return (r / t.tile_rows) * across + c / t.tile_cols;
}

// y[i, j] of y = Σ_kb (A_kb · W_kbᵀ) ⊙ (s_A s_W): a is row i of A (k patterns), a_scales its
// ⌈k/block⌉ group scales, w row j of W, w_scales the scales of W's block row j / block.
LMO_HD inline float linear_element(const uint8_t* a, const float* a_scales, const uint8_t* w,
                                   const float* w_scales, int64_t k, int64_t block, Fp8Format f) {
  float acc = 0.0f;
  for (int64_t k0 = 0, kb = 0; k0 < k; k0 += block, ++kb) {
    const int64_t k1 = k0 + block < k ? k0 + block : k;
    float part = 0.0f;
    for (int64_t c = k0; c < k1; ++c) {
      part = f32::add(part, f32::mul(decode(a[c], f), decode(w[c], f)));
    }
    acc = f32::add(acc, f32::mul(f32::mul(a_scales[kb], w_scales[kb]), part));
  }
  return acc;
}

}  // namespace lmo::gpu::fp8_math
