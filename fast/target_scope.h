// Forces Highway's dynamic dispatch to one compiled target for the lifetime of a scope, so that
// tests (and the oracle's per-target `fast-<target>` backends) run every kernel on every target
// the CPU supports. The list of targets is fast/targets.h compiled_targets().
//
// The setting is process-wide (Highway keeps one chosen target): create a ScopedTarget only
// while no other thread calls a fast kernel, and do not nest scopes of different targets.
// Kernels dispatch once, on the calling thread, so their worker threads follow the forced
// target. A scope of the target already forced by an enclosing scope does nothing: forcing and
// releasing a target re-reads the CPU's features (CPUID, a trap to the hypervisor in a virtual
// machine), so a caller timing many short kernel calls (the bench, through the fast backends'
// per-call scopes) forces the target once around them.
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

 private:
  bool owner_ = false;  // false: an enclosing scope forced the same target
};

}  // namespace lmo::fast
