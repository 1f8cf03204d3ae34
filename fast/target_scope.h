// Forces Highway's dynamic dispatch to one compiled target for the lifetime of a scope, so that
// tests (and the oracle's per-target `fast-<target>` backends) run every kernel on every target
// the CPU supports. The list of targets is fast/targets.h compiled_targets().
//
// The setting is process-wide (Highway keeps one chosen target): create a ScopedTarget only
// while no other thread calls a fast kernel, and do not nest them. Kernels dispatch once, on
// the calling thread, so their worker threads follow the forced target.
#pragma once

#include <cstdint>

#include "fast/targets.h"

namespace lmo::fast {

class ScopedTarget {
 public:
  // Throws std::invalid_argument unless target is a single target bit that this build compiled
  // and the running CPU supports.
  explicit ScopedTarget(int64_t target);
  explicit ScopedTarget(const SimdTarget& target) : ScopedTarget(target.id) {}
  ~ScopedTarget();
  ScopedTarget(const ScopedTarget&) = delete;
  ScopedTarget& operator=(const ScopedTarget&) = delete;
};

}  // namespace lmo::fast
