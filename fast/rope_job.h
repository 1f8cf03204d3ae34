// The arguments of one RoPE call as the per-target kernels of fast/rope.cc receive them (after
// the entry points of fast/rope.h checked them and formed the frequencies).
#pragma once

#include <cstddef>
#include <cstdint>

namespace lmo::fast::detail {

struct RopeJob {
  int64_t tokens = 0, heads = 0, head_dim = 0;
  size_t half = 0;  // r/2
  bool interleaved = false;
  // rope (angles from positions): the frequencies in turns (kernels/api/turns.h), zero-padded to whole
  // f64 vectors of every target, and the factor on cos and sin.
  const double* turns_hi = nullptr;
  const double* turns_lo = nullptr;
  double factor = 1;
};

}  // namespace lmo::fast::detail
