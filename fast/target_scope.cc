#include "fast/target_scope.h"

#include <atomic>
#include <stdexcept>
#include <string>

#include "hwy/targets.h"

namespace lmo::fast {
namespace {
// The target the outermost live scope forced; 0: none.
std::atomic<int64_t> g_forced{0};
}  // namespace

ScopedTarget::ScopedTarget(int64_t target) {
  if (target != 0 && g_forced.load() == target) return;
  bool known = false;
  for (const SimdTarget& t : compiled_targets()) {
    if (t.id != target) continue;
    known = true;
    if (!t.supported) {
      throw std::invalid_argument("ScopedTarget: target " + t.name +
                                  " is compiled but this CPU does not support it");
    }
  }
  if (!known) {
    throw std::invalid_argument("ScopedTarget: target " + std::to_string(target) +
                                " is not one of the compiled targets");
  }
  // The mock makes SupportedTargets() return only `target`; DeInit makes the next
  // HWY_DYNAMIC_DISPATCH re-read it (it resolves the table index from SupportedTargets()).
  hwy::SetSupportedTargetsForTest(target);
  hwy::GetChosenTarget().DeInit();
  g_forced = target;
  owner_ = true;
}

ScopedTarget::~ScopedTarget() {
  if (!owner_) return;
  g_forced = 0;
  hwy::SetSupportedTargetsForTest(0);
  hwy::GetChosenTarget().DeInit();
}

}  // namespace lmo::fast
