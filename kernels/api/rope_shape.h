// The shape argument of F10 RoPE (fast/rope.h, gpu/api.h): one struct for both kernel libraries,
// so their rope and rope_table take the same arguments. Plain C++17 with no other header than
// rope_layout.h, since gpu/api.h and the device kernels (gpu/rope.cuh) are compiled by nvcc.
#pragma once

#include <cstdint>

#include "kernels/api/rope_layout.h"

namespace lmo::kernels {

// x and y [tokens, heads · head_dim]: in every head the first rotary_dims dimensions are rotated
// in the pairs of the layout, the rest copied.
struct RopeShape {
  int64_t tokens = 0;
  int64_t heads = 0;
  int64_t head_dim = 0;
  int64_t rotary_dims = 0;  // r: even, 2 ≤ r ≤ head_dim
  RopeLayout layout = RopeLayout::half_split;
};

}  // namespace lmo::kernels
