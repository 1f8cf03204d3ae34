// The catalog's F-rows (../shared/FORMULAS.md) and where the reference implements each:
// the header and the functions. `lmoracle list` prints this table; the oracle's op registry
// refers to the same IDs.
#pragma once

#include <span>
#include <string_view>

namespace lmo::ref {

struct CatalogRow {
  std::string_view id;         // "F01" … "F23"
  std::string_view name;       // the catalog's name for the row
  std::string_view header;     // reference/<header>
  std::string_view functions;  // the entry points, comma-separated
};

std::span<const CatalogRow> formula_catalog();

}  // namespace lmo::ref
