// gpu/common.cuh's block reductions on the host, for the tests that evaluate a GPU row kernel's
// math (gpu/*_math.h) as the kernel does: kLanes lanes (the block's threads), each folding its
// strided share of the row, then block_reduce's halving tree over the lanes' values
// (buf[i] = op(buf[i], buf[i + stride]) for stride = 128, 64, …, 1).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace lmo::testing::gpu_block {

constexpr int64_t kLanes = 256;  // gpu/common.cuh's kThreads

template <class V, class Op>
V tree(std::vector<V> lanes, Op op) {
  for (size_t stride = lanes.size() / 2; stride > 0; stride /= 2) {
    for (size_t i = 0; i < stride; ++i) lanes[i] = op(lanes[i], lanes[i + stride]);
  }
  return lanes[0];
}

// SumOp: one addition per step (f32, or double for the kernels' double paths).
template <class V>
V tree_sum(std::vector<V> lanes) {
  return tree(std::move(lanes), [](V a, V b) { return a + b; });
}

// MaxOp: nan_max, a NaN wins.
template <class V>
V tree_max(std::vector<V> lanes) {
  return tree(std::move(lanes), [](V a, V b) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
    return a > b ? a : b;
  });
}

// fn(lane) for every lane, in lane order.
template <class Fn>
auto per_lane(const Fn& fn) {
  std::vector<decltype(fn(int64_t{0}))> v(static_cast<size_t>(kLanes));
  for (int64_t lane = 0; lane < kLanes; ++lane) v[static_cast<size_t>(lane)] = fn(lane);
  return v;
}

}  // namespace lmo::testing::gpu_block
