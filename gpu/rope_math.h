// The per-pair math of the RoPE kernels (gpu/rope.cuh) as __host__ __device__ functions, so that
// a host test (tests/kernels/gpu_rope_math_test.cc) runs the kernels' own arithmetic and judges
// it against the exact reference on a machine without a device. Plain C++ when not compiled by
// nvcc; no CUDA header.
//
// It is fast/rope.cc on a target with FMA, operation for operation, so the two libraries give the
// same bits there:
//   c_k, s_k   from positions: cos and sin of 2π·p·f_k in double (gpu/angles.h, fast's
//              CosSinOfTurns; f_k = θ_k / 2π in turns, kernels/api/turns.h), times YaRN's
//              attention factor m (or 1) in double, each rounded once to f32; from a table: the
//              stored value widened exactly to f32.
//   rotation   in f32, one fma per output, the other product rounded apart (gpu/f32_ops.h):
//                half-split   y_a = fma(x_a, c, −(x_b·s)),  y_b = fma(x_a, s, x_b·c)
//                interleaved  y_a = fma(x_a, c, −(x_b·s)),  y_b = fma(x_b, c, x_a·s)
//              (fast's two loops fuse different products of y_b; both are the strict recipe's
//              dot product of two terms with one rounding saved, within the policy's bound).
#pragma once

#include <cstdint>

#include "gpu/angles.h"
#include "gpu/f32_ops.h"
#include "kernels/api/rope_shape.h"

namespace lmo::gpu::rope_math {

// c_k and s_k of position p: cos/sin(2π·p·(hi + lo)) · factor, each rounded once to f32.
LMO_HD inline void cos_sin(double p, double hi, double lo, double factor, float& c, float& s) {
  double cd = 0.0, sd = 0.0;
  cos_sin_of_turns(p, hi, lo, cd, sd);
  c = static_cast<float>(mul_rn(cd, factor));
  s = static_cast<float>(mul_rn(sd, factor));
}

// The rotated pair (y_a, y_b) of (x_a, x_b) by (c, s), in the layout's order of operations.
LMO_HD inline void rotate(kernels::RopeLayout layout, float xa, float xb, float c, float s,
                          float& ya, float& yb) {
  ya = f32::fma(xa, c, -f32::mul(xb, s));
  yb = layout == kernels::RopeLayout::interleaved ? f32::fma(xb, c, f32::mul(xa, s))
                                                  : f32::fma(xa, s, f32::mul(xb, c));
}

// The offsets, within a token's row of heads · head_dim values, of pair k of head h.
LMO_HD inline void pair_offsets(const kernels::RopeShape& sh, int64_t h, int64_t k, int64_t& a,
                                int64_t& b) {
  const bool interleaved = sh.layout == kernels::RopeLayout::interleaved;
  a = h * sh.head_dim + (interleaved ? 2 * k : k);
  b = h * sh.head_dim + (interleaved ? 2 * k + 1 : k + sh.rotary_dims / 2);
}

}  // namespace lmo::gpu::rope_math
