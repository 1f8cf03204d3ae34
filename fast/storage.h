// The scalar conversions between the storage formats (kernels/api/storage.h) and float (the compute type). bfloat16 and float16 values are held as their uint16_t bit
// patterns. The SIMD versions of the same conversions are in fast/storage-inl.h; both round to
// nearest-even, keep NaN a NaN (quieted, sign and top payload bits kept) and overflow to ±inf,
// so a kernel's stored result is the correctly rounded f32 result.
//
// Why not Highway's own: in Highway 1.0.3, bf16 DemoteTo/BF16FromF32 truncate, and f16
// DemoteTo/PromoteTo on targets without F16C (SSE4, SSSE3, EMU128) truncate, flush values below
// 2^-24 to zero and turn f16 inf/NaN into finite numbers.
#pragma once

#include <bit>
#include <cstdint>

#include "fast/kernel_api.h"  // Storage

namespace lmo::fast {

// bf16 → f32 is exact: the pattern is the top half of the f32 pattern.
inline float f32_from_bf16(uint16_t b) { return std::bit_cast<float>(uint32_t{b} << 16); }

// f32 → bf16, round to nearest-even. Adding 0x7FFF + (the kept lsb) to the pattern carries into
// the kept half exactly when the dropped half exceeds half an ulp, or equals it with an odd kept
// half; a carry out of the largest finite binade lands on the infinity pattern, as IEEE rounding
// requires. NaN is excluded first (the carry could turn a NaN with a low payload into inf).
inline uint16_t bf16_from_f32(float f) {
  const uint32_t b = std::bit_cast<uint32_t>(f);
  if ((b & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((b >> 16) | 0x0040u);
  return static_cast<uint16_t>((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
}

// f16 → f32, exact (F. Giesen's half_to_float): move exponent and fraction into place, rebias;
// inf/NaN get the f32 all-ones exponent, subnormals are renormalized by one exact subtraction.
inline float f32_from_f16(uint16_t h) {
  constexpr uint32_t kShiftedExp = 0x7C00u << 13;
  uint32_t o = (uint32_t{h} & 0x7FFFu) << 13;
  const uint32_t exp = o & kShiftedExp;
  o += (127u - 15u) << 23;
  if (exp == kShiftedExp) {
    o += (128u - 16u) << 23;
  } else if (exp == 0) {
    o += 1u << 23;
    o = std::bit_cast<uint32_t>(std::bit_cast<float>(o) - std::bit_cast<float>(113u << 23));
  }
  return std::bit_cast<float>(o | ((uint32_t{h} & 0x8000u) << 16));
}

// f32 → f16, round to nearest-even (F. Giesen's float_to_half_fast3_rtne):
//  - |f| ≥ 2^16: inf, or a quiet NaN for NaN;
//  - |f| < 2^-14 (f16 subnormal or zero): adding 0.5 (= 2^-1, whose ulp is 2^-24, the f16
//    subnormal quantum) rounds |f| to a multiple of 2^-24 with the FPU's nearest-even rounding,
//    and the fraction bits of the sum are the f16 pattern;
//  - otherwise rebias and add 0xFFF + (the kept lsb) before dropping 13 bits (as for bf16); a
//    carry out of the top binade yields the inf pattern 0x7C00.
inline uint16_t f16_from_f32(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  const uint32_t sign = u & 0x80000000u;
  u ^= sign;
  uint32_t o;
  if (u >= (127u + 16u) << 23) {
    o = u > 0x7F800000u ? 0x7E00u : 0x7C00u;
  } else if (u < 113u << 23) {
    constexpr uint32_t kMagic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    o = std::bit_cast<uint32_t>(std::bit_cast<float>(u) + std::bit_cast<float>(kMagic)) - kMagic;
  } else {
    const uint32_t odd = (u >> 13) & 1u;
    o = (u + ((15u - 127u) << 23) + 0xFFFu + odd) >> 13;
  }
  return static_cast<uint16_t>(o | (sign >> 16));
}

// Element i of an array in storage s, as float; and the store of v rounded to s.
inline float load_f32(Storage s, const void* p, int64_t i) {
  switch (s) {
    case Storage::f32:
      return static_cast<const float*>(p)[i];
    case Storage::bf16:
      return f32_from_bf16(static_cast<const uint16_t*>(p)[i]);
    case Storage::f16:
      return f32_from_f16(static_cast<const uint16_t*>(p)[i]);
  }
  return 0.0f;
}

inline void store_f32(Storage s, void* p, int64_t i, float v) {
  switch (s) {
    case Storage::f32:
      static_cast<float*>(p)[i] = v;
      return;
    case Storage::bf16:
      static_cast<uint16_t*>(p)[i] = bf16_from_f32(v);
      return;
    case Storage::f16:
      static_cast<uint16_t*>(p)[i] = f16_from_f32(v);
      return;
  }
}

}  // namespace lmo::fast
