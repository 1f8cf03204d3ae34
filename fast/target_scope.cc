#include "fast/target_scope.h"

#include <stdexcept>
#include <string>

#include "hwy/targets.h"

namespace lmo::fast {

ScopedTarget::ScopedTarget(int64_t target) {
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
}

ScopedTarget::~ScopedTarget() {
  hwy::SetSupportedTargetsForTest(0);
  hwy::GetChosenTarget().DeInit();
}

}  // namespace lmo::fast
