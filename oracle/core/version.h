// This program's version (CMake's project version), which golden files and manifests record.
#pragma once

namespace lmo::oracle {

const char* version();

}  // namespace lmo::oracle
