// Highway skeleton: this file is compiled once per target, so the per-target function below
// exists for exactly the targets every fast kernel is compiled for.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/targets.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {
int64_t CurrentTarget() { return HWY_TARGET; }
}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "fast/targets.h"
#include "hwy/targets.h"

namespace lmo::fast {
HWY_EXPORT(CurrentTarget);

std::vector<SimdTarget> compiled_targets() {
  std::vector<SimdTarget> out;
  const int64_t supported = hwy::SupportedTargets();
  // HWY_TARGETS lists the compiled targets as bits; a lower bit is a better target.
  for (int64_t bits = HWY_TARGETS; bits != 0; bits &= bits - 1) {
    const int64_t t = bits & -bits;
    out.push_back({t, hwy::TargetName(t), (supported & t) != 0});
  }
  return out;
}

std::string dispatched_target() {
  return hwy::TargetName(HWY_DYNAMIC_DISPATCH(CurrentTarget)());
}
}  // namespace lmo::fast
#endif  // HWY_ONCE
