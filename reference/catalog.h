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
  // Entry points as "header: f1, f2; other_header: f3" (headers under reference/); the first
  // header holds the row's formula. tests/reference/catalog_test.cc checks each name is in its header.
  std::string_view functions;
};

std::span<const CatalogRow> formula_catalog();

}  // namespace lmo::ref
