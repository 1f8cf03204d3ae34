#include "oracle/rules/policy.h"

namespace lmo::oracle {

std::string_view policy_kind_name(PolicyKind k) {
  switch (k) {
    case PolicyKind::kUlp:
      return "ulp";
    case PolicyKind::kNaiveRelative:
      return "naive_relative";
    case PolicyKind::kTopKSet:
      return "topk_set";
  }
  return "?";
}

bool is_narrow(ref::Format f) { return ref::spec(f).precision() <= kNarrowPrecision; }

}  // namespace lmo::oracle
