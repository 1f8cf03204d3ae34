#include "oracle/core/version.h"

namespace lmo::oracle {

const char* version() { return LMO_VERSION; }

}  // namespace lmo::oracle
